/* Step 3: top eigenpairs of the centered kernel matrix with LAPACK.
 *
 * Both routines read the lower triangle of A and destroy it. Results come
 * back in decreasing order of eigenvalue, with the eigenvectors as columns.
 * top_eigen_exact is dsyevr as R's eigen() calls it (the Lanczos solver's
 * small problems use it too); exact_eigen is the fit's exact solver, which
 * chooses the tridiagonal method. The exact solver runs dsytrd's and
 * dormtr's blocked loops itself, checking for an interrupt between blocks
 * of bounded work (tuning.eigen_check_work): a large fit stops within a
 * fraction of a second of Ctrl-C, instead of minutes later, when one
 * LAPACK call ends. */
#include "fastkpca.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* Reverse the order of k eigenpairs (LAPACK returns ascending order). */
static void reverse_pairs(int n, int k, double *values, double *vectors)
{
    for (int a = 0, b = k - 1; a < b; a++, b--) {
        double t = values[a]; values[a] = values[b]; values[b] = t;
        double *va = vectors + (size_t) a * n, *vb = vectors + (size_t) b * n;
        for (int i = 0; i < n; i++) { t = va[i]; va[i] = vb[i]; vb[i] = t; }
    }
}

/* Fix each column's sign so that its largest-magnitude entry (the first
 * such where several tie) is positive: the one sign rule of every fit
 * (the iterative solver's vectors in fit.c and the Nystrom coefficients in
 * nystrom.c use it too), applied here so that R need not copy hundreds of
 * columns. */
void orient_columns(int n, int k, double *vectors)
{
    for (int j = 0; j < k; j++) {
        double *v = vectors + (size_t) j * n, best = -1.0;
        int at = 0;
        for (int i = 0; i < n; i++)
            if (fabs(v[i]) > best) { best = fabs(v[i]); at = i; }
        if (v[at] < 0)
            for (int i = 0; i < n; i++) v[i] = -v[i];
    }
}

/* The f largest eigenpairs with dsyevr, RANGE = 'I' (il = n - f + 1, iu = n).
 * values: length f; vectors: n x f. */
int top_eigen_exact(double *A, int n, int f, double *values, double *vectors)
{
    const char jobz = 'V', range = 'I', uplo = 'L';
    double vl = 0.0, vu = 0.0, abstol = 0.0, work_query;
    int il = n - f + 1, iu = n, found = 0, info = 0, lwork = -1, liwork = -1,
        iwork_query;
    int *isuppz = (int *) R_alloc(2 * (size_t) (f > 0 ? f : 1), sizeof(int));
    /* dsyevr's W must hold n values (dstebz writes them all), even for RANGE = 'I' */
    double *w = (double *) R_alloc((size_t) n, sizeof(double));

    F77_CALL(dsyevr)(&jobz, &range, &uplo, &n, A, &n, &vl, &vu, &il, &iu, &abstol,
                     &found, w, vectors, &n, isuppz, &work_query, &lwork,
                     &iwork_query, &liwork, &info FCONE FCONE FCONE);
    check_lapack_info(info, "dsyevr");
    lwork = (int) work_query;
    liwork = iwork_query;
    double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
    int *iwork = (int *) R_alloc((size_t) liwork, sizeof(int));
    F77_CALL(dsyevr)(&jobz, &range, &uplo, &n, A, &n, &vl, &vu, &il, &iu, &abstol,
                     &found, w, vectors, &n, isuppz, work, &lwork, iwork,
                     &liwork, &info FCONE FCONE FCONE);
    check_lapack_info(info, "dsyevr");
    memcpy(values, w, (size_t) found * sizeof(double));
    reverse_pairs(n, found, values, vectors);
    return found;
}

/* Scale A's lower triangle as dsyevr does, when its largest entry (anrm,
 * found by the centering's pass over it, not by another) is beyond about
 * 1e77 or below 1e-146 (bisection squares the entries, which would
 * overflow or underflow). Returns the factor; eigenvalues are divided by it
 * at the end. */
static double scale_lower(double *A, int n, double anrm)
{
    double smlnum = DBL_MIN / DBL_EPSILON, rmin = sqrt(smlnum),
        rmax = fmin(sqrt(1.0 / smlnum), 1.0 / sqrt(sqrt(DBL_MIN))), sigma = 1.0;
    if (anrm > 0.0 && anrm < rmin) sigma = rmin / anrm;
    else if (anrm > rmax) sigma = rmax / anrm;
    if (sigma != 1.0)
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) A[i + (size_t) j * n] *= sigma;
    return sigma;
}

/* ILAENV, LAPACK's choice of block sizes (ispec 1: the block size, 3: the
 * crossover to unblocked code), so that the blocked steps here block as
 * dsytrd and dormqr themselves would. Not declared by R's headers. */
extern int F77_NAME(ilaenv)(const int *ispec, const char *name, const char *opts,
                            const int *n1, const int *n2, const int *n3, const int *n4
                            FCLEN FCLEN);

static int lapack_block(int ispec, const char *name, const char *opts, int n1, int n2,
                        int n3)
{
    int n4 = -1;
    return F77_CALL(ilaenv)(&ispec, name, opts, &n1, &n2, &n3, &n4
#ifdef FC_LEN_T
                            , (FC_LEN_T) strlen(name), (FC_LEN_T) strlen(opts)
#endif
                            );
}

/* The Householder reduction of A's lower triangle to the tridiagonal
 * (diag, offdiag); the reflectors stay in A and tau.
 *
 * This is dsytrd (lower), driven panel by panel from here so that an
 * interrupt is honoured between panels instead of after minutes inside one
 * LAPACK call: dlatrd reduces a panel of columns and returns W, dsyr2k
 * applies A22 -= V W' + W V' to the trailing matrix (each step by
 * blas.c's tridiagonal_panel() and symmetric_rank2k_update(), on the tiles
 * or LAPACK's and the BLAS's as its rule says), and dsytd2 reduces the
 * last block unblocked. The panel width is LAPACK's (ILAENV), narrowed where
 * a panel of it would exceed tuning.eigen_check_work (n above about 5800). */
static void reduce_tridiagonal(double *A, int n, double *diag, double *offdiag,
                               double *tau, int threads)
{
    const char uplo = 'L';
    int info = 0, nb = lapack_block(1, "DSYTRD", "L", n, -1, -1), nx = n;
    if (nb > 1 && nb < n) {
        int cross = lapack_block(3, "DSYTRD", "L", n, -1, -1);
        nx = cross > nb ? cross : nb;
        if (nx >= n) nx = n;
    } else {
        nb = 1;
    }
    double *W = (double *) R_alloc((size_t) n * nb, sizeof(double));
    /* the steps' scratch, taken once for every panel */
    double *panel_work = n > nx
        ? (double *) R_alloc(tridiagonal_panel_work(n, nb) + 1, sizeof(double)) : NULL;
    double *update_work = n > nx
        ? (double *) R_alloc(rank2k_update_work() + 1, sizeof(double)) : NULL;
    int i = 0;
    while (i < n - nx) {
        int m = n - i, panel = nb;
        if ((double) m * m * panel > tuning.eigen_check_work) {
            panel = (int) (tuning.eigen_check_work / ((double) m * m));
            if (panel < 1) panel = 1;
        }
        double *Aii = A + i + (size_t) i * n;
        /* a region per column: one thread on a busy machine (threads.c) */
        int nt = threads_unless_busy(threads);
        tridiagonal_panel(m, panel, Aii, n, offdiag + i, tau + i, W, n, panel_work, nt);
        R_CheckUserInterrupt();
        symmetric_rank2k_update(m - panel, panel, Aii + panel, W + panel, n,
                                Aii + panel + (size_t) panel * n, n, update_work, nt);
        /* dlatrd leaves the reflectors' first entries in the subdiagonal */
        for (int j = i; j < i + panel; j++) {
            A[j + 1 + (size_t) j * n] = offdiag[j];
            diag[j] = A[j + (size_t) j * n];
        }
        i += panel;
        R_CheckUserInterrupt();
        progress_at(PROGRESS_REDUCE, 1.0 - pow((double) (n - i) / n, 3));
    }
    int m = n - i;
    F77_CALL(dsytd2)(&uplo, &m, A + i + (size_t) i * n, &n, diag + i, offdiag + i,
                     tau + i, &info FCONE);
    check_lapack_info(info, "dsytd2");
}

/* Z (n x k) <- Q Z, Q the orthogonal factor of the reduction held in A and
 * tau: eigenvectors of the tridiagonal become eigenvectors of A.
 *
 * This is dormtr (side L, lower, no transpose), which is dormqr on rows 2..n
 * with the reflectors below the subdiagonal, driven from here as dormqr
 * drives it (blocks of LAPACK's size, from the last reflector to the first,
 * each by blas.c's block_reflector_apply(): dlarft and dlarfb, or their
 * steps on the tiles), with Z cut into column blocks of bounded work and an
 * interrupt check after each; small ones by dormtr itself where blas.c's
 * rule sends them to LAPACK (back_transform_at_once()). */
static void back_transform(double *A, int n, const double *tau, double *Z, int k,
                           int threads)
{
    int m = n - 1, nq = n - 1;  /* Q acts on rows 2..n, with n - 1 reflectors */
    if (k == 0 || m < 1) return;
    if (back_transform_at_once(A, n, tau, Z, k)) return;
    int nb = lapack_block(1, "DORMQR", "LN", m, k, nq);
    if (nb > 64) nb = 64;  /* dormqr's NBMAX */
    if (nb < 1) nb = 1;
    int cols = (int) (tuning.eigen_check_work / (2.0 * m * nb));
    if (cols < 8) cols = 8;
    if (cols > k) cols = k;
    int ldt = nb;
    double *T = (double *) R_alloc((size_t) ldt * nb, sizeof(double));
    double *work = (double *) R_alloc((size_t) cols * nb, sizeof(double));
    double *scratch = (double *) R_alloc(block_reflector_work(nq, nb) + 1, sizeof(double));
    double *V = A + 1;  /* A(2, 1): the reflectors of dormqr */
    double *C = Z + 1;        /* Z(2, 1) */
    for (int i = ((nq - 1) / nb) * nb; i >= 0; i -= nb) {
        int ib = nq - i < nb ? nq - i : nb, rows = nq - i;
        block_reflector_apply(V + i + (size_t) i * n, n, rows, ib, tau + i, T, ldt, C + i,
                              n, k, cols, scratch, work, threads_unless_busy(threads));
        progress_at(PROGRESS_BACK, pow((double) (nq - i) / nq, 2));
    }
}

/* An upper bound of the tridiagonal's spectrum (Gershgorin), so that an
 * interval (lower, upper] holds every eigenvalue above lower. */
static double spectrum_upper_bound(const double *diag, const double *offdiag, int n)
{
    double upper = 0.0;
    for (int i = 0; i < n; i++) {
        double r = fabs(diag[i]) + (i > 0 ? fabs(offdiag[i - 1]) : 0.0)
            + (i < n - 1 ? fabs(offdiag[i]) : 0.0);
        if (r > upper) upper = r;
    }
    return 2.0 * upper + 1.0;
}


/* The reduction of a fit's buffer: the tridiagonal (diag, offdiag), and
 * what maps its eigenvectors back, held in A and tau: dsytrd's reflectors
 * (band 0), or the two stages' (band b > 0, band_reduction.c). */
typedef struct {
    int n, band;
    double *diag, *offdiag, *tau;
} reduction;

/* A (scaled) reduced to the tridiagonal: in two stages (band_reduction.c)
 * from tuning.band_min_rows on, with a band of tuning.band_width
 * subdiagonals, else dsytrd's steps (reduce_tridiagonal()). The smallest
 * n (ENGINE_TUNING, fastkpca.h): with R's reference BLAS, 2000; with an
 * optimized one, whose own dsytrd and dormtr run at its product rate, none
 * by default (the largest int). Measured by bench/two-stage.R on the
 * project machine (AVX-512, idle, the default call): on 2 threads two
 * stages took 1.30, 1.15, 0.98, 0.86 and 0.67 times one stage's time at
 * n = 1000, 1500, 2000, 3000 and 6000; on 1 thread 1.24 at 1000, 1.19 at
 * 2000, 0.88 at 3000. The band width and the groups of the
 * back-transformation (b = 48, g = 24) were within the noise of b = 32 to
 * 96 and g = 24 to 48 at n = 3000 on one thread, and stage 2, the part
 * least shared among threads, grows with b. */
static void reduce(double *A, int n, reduction *red, int threads)
{
    red->n = n;
    red->diag = (double *) R_alloc((size_t) n, sizeof(double));
    red->offdiag = (double *) R_alloc((size_t) n, sizeof(double));
    red->tau = (double *) R_alloc((size_t) n, sizeof(double));
    int b = tuning.band_width;
    red->band = n >= tuning.band_min_rows && n > 2 * b ? b : 0;
    stage_clock_mark(STAGE_OTHER);  /* the scaling */
    if (red->band > 0) {
        band_reduce(A, n, red->band, red->tau, threads);
        stage_clock_mark(STAGE_1);
        band_chase(A, n, red->band, red->diag, red->offdiag, threads);
        stage_clock_mark(STAGE_2);
    } else {
        reduce_tridiagonal(A, n, red->diag, red->offdiag, red->tau, threads);
        stage_clock_mark(STAGE_1);
    }
    R_CheckUserInterrupt();
    progress_at(PROGRESS_REDUCE, 1.0);
}

/* The wanted eigenpairs of A once reduced (A scaled by sigma): the top f
 * (f > 0) or every eigenvalue above lower (f = 0, lower already scaled),
 * in decreasing order, with signs fixed; *values is R_alloc'ed, the
 * vectors (n x found) are in the store's space (*vectors). */
static int reduced_pairs(double *A, const reduction *red, double sigma, int f,
                         double lower, int method, double **values, double **vectors,
                         vector_store store, int threads)
{
    int n = red->n;
    char range = f > 0 ? 'I' : 'V';
    int il = f > 0 ? n - f + 1 : 0, iu = f > 0 ? n : 0;
    double upper = spectrum_upper_bound(red->diag, red->offdiag, n);
    if (f == 0 && !(lower < upper)) return 0;
    double *w = (double *) R_alloc((size_t) n, sizeof(double));
    double *Z = NULL;
    int found = -1;
    if (method == EXACT_MRRR)
        found = tridiagonal_mrrr(red->diag, red->offdiag, n, range, lower, upper, il, iu,
                                 w, &Z, store, threads);
    else if (method == EXACT_DSTEMR)
        found = tridiagonal_dstemr(red->diag, red->offdiag, n, range, lower, upper, il, iu,
                                   w, &Z, store);
    if (found < 0)
        found = tridiagonal_bisection(red->diag, red->offdiag, n, range, lower, upper, il,
                                      iu, w, &Z, store);
    R_CheckUserInterrupt();
    progress_at(PROGRESS_SOLVE, 1.0);
    stage_clock_mark(STAGE_TRIDIAGONAL);
    if (red->band > 0) {
        band_back_transform(A, n, red->band, red->tau, Z, found, threads);
    } else {
        back_transform(A, n, red->tau, Z, found, threads);
        stage_clock_mark(STAGE_BACK_1);
    }

    reverse_pairs(n, found, w, Z);
    /* a threshold keeps what is above it (MRRR counted by a Sturm sequence,
     * then computed by index: one at the boundary may land on it) */
    if (f == 0)
        while (found > 0 && !(w[found - 1] > lower)) found--;
    for (int k = 0; k < found; k++) w[k] /= sigma;
    orient_columns(n, found, Z);
    *values = w;
    *vectors = Z;
    return found;
}

/* The exact eigenpairs of a fit: the top f (f > 0) or every eigenvalue
 * above lower (f = 0), in decreasing order; *values is R_alloc'ed, the
 * vectors (n x found, or more columns when some at the threshold were
 * dropped) are written once, in the store's space (*vectors).
 *
 * Both methods reduce A to tridiagonal form (reduce()), solve the
 * tridiagonal problem for the wanted pairs only (tridiagonal.c), and map
 * the vectors back, so the vectors take n x found and never a second
 * n x n matrix:
 *   EXACT_MRRR: dstemr's steps (multiple relatively robust
 *     representations), O(n k) for k vectors, its bisections and vectors
 *     in pieces and groups on the threads (tridiagonal_mrrr()), with
 *     bisection as the fallback if it fails (EXACT_DSTEMR: LAPACK's dstemr
 *     itself, the tests' oracle);
 *   EXACT_BISECTION: dstebz and dstein, what dsyevr runs for a subset;
 *     dstein reorthogonalises vectors within clusters of close
 *     eigenvalues, up to O(n k^2). For f > 0 these are dsyevr's own steps
 *     (scaling, dsytrd, dstebz, dstein, dormtr), run one by one here so
 *     that the reduction and the back-transformation can be interrupted.
 * The rule that picks one (fastkpca:::exact_method in R/eigen.R) is
 * measured by bench/exact-rule.R. */
int exact_eigen(double *A, int n, double largest, int f, double lower, int method,
                double **values, double **vectors, vector_store store, int threads)
{
    if (method != EXACT_MRRR && method != EXACT_BISECTION && method != EXACT_DSTEMR)
        error_argument("unknown exact eigen method %d", method);
    *values = NULL;
    *vectors = NULL;
    double sigma = scale_lower(A, n, largest);
    reduction red;
    reduce(A, n, &red, threads);
    return reduced_pairs(A, &red, sigma, f, lower * sigma, method, values, vectors, store,
                         threads);
}

/* The fewest leading eigenpairs whose eigenvalues reach a proportion of the
 * total variance: kpca(variance = p).
 *
 * total is trace(A), the sum of all eigenvalues, which centering gives for
 * free. After the reduction, dsterf finds every eigenvalue of the
 * tridiagonal matrix without vectors (O(n^2), on copies), the count k comes
 * from their cumulative sums from the largest, and only then are the k
 * eigenpairs computed, as exact_eigen() computes the top k. *values is
 * R_alloc'ed, the vectors in the store's space; the count is at least 1. */
int variance_eigen(double *A, int n, double largest, double proportion, double total,
                   int method, double **values, double **vectors, vector_store store,
                   int threads)
{
    if (method != EXACT_MRRR && method != EXACT_BISECTION && method != EXACT_DSTEMR)
        error_argument("unknown exact eigen method %d", method);
    *values = NULL;
    *vectors = NULL;
    double sigma = scale_lower(A, n, largest);
    total *= sigma;
    reduction red;
    reduce(A, n, &red, threads);

    /* all eigenvalues, ascending, on copies (dsterf destroys its input) */
    int info = 0;
    double *all = (double *) R_alloc((size_t) n, sizeof(double));
    double *off_copy = (double *) R_alloc((size_t) n, sizeof(double));
    memcpy(all, red.diag, (size_t) n * sizeof(double));
    if (n > 1) memcpy(off_copy, red.offdiag, (size_t) (n - 1) * sizeof(double));
    F77_CALL(dsterf)(&n, all, off_copy, &info);
    check_lapack_info(info, "dsterf");

    /* the count: the sums are compared with a tolerance of rounding in n
     * terms, so that variance = 1 stops at the rank instead of running into
     * the eigenvalues that are zero up to rounding */
    double target = proportion * total, sum_abs = 0.0, cum = 0.0;
    for (int i = 0; i < n; i++) sum_abs += fabs(all[i]);
    double slack = 8.0 * n * DBL_EPSILON * sum_abs;
    int k = 0;
    while (k < n && all[n - 1 - k] > 0.0) {
        cum += all[n - 1 - k];
        k++;
        if (cum >= target - slack) break;
    }
    if (k == 0) k = 1; /* no positive eigenvalue: R reports it */
    return reduced_pairs(A, &red, sigma, k, 0.0, method, values, vectors, store, threads);
}
