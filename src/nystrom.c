/* Centered Nystrom kernel PCA: pass 1 over row blocks (the sufficient
 * statistics), the landmark coefficients, and k-means++ landmarks. Pass 2 (the scores) is the
 * projection of rows in project.c, which predict() uses too.
 *
 * Pass 1 computes, block by block (and within a block, panel by panel of
 * rows: panel_rows()), the kernel between the rows and the m landmarks
 * (panel x m, never n x m) and sums
 *   sum_i (k_i - c) and sum_i (k_i - c)(k_i - c)' (m x m),
 * with k_i the kernel between row i and the landmarks and c a shift close
 * to their mean (so that the centered covariance does not come from the
 * difference of two large numbers). These are sums over rows, so chunks of
 * rows can be summed apart and added (R/nystrom.R).
 *
 * The rank-k update (the n m^2 part of a fit) is syrk_lower_add(), in
 * register tiles (tiles.c) rather than the BLAS's dsyrk: every entry of the
 * result is summed in the same order whatever the number of threads. */
#include "fastkpca.h"
#include "simd.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* Rows per panel of a block: a block's kernel is computed and folded into
 * the sums one panel of rows at a time, so that the rank-k update reads it
 * from the cache; a whole block's kernel (2^22 doubles) went to memory and
 * back. On one thread, 2^16 doubles (512 KB, the core's L2 cache); with
 * more, 2^20 (8 MB, the last-level cache), as each panel costs two parallel
 * regions, whose start and end cost more than the smaller panel saves (at
 * n = 10^6, m = 200: 8% faster on one thread with the small panels, 4%
 * slower on two). A multiple of SYRK_KC rows, so that the update's slices,
 * and hence every sum, are those of the whole block, for any panel. */
static int panel_rows(int m, int threads)
{
    int doubles = threads > 1 ? 1 << 20 : 1 << 16;
    int rows = doubles / (m > 0 ? m : 1) / SYRK_KC * SYRK_KC;
    return rows < SYRK_KC ? SYRK_KC : rows;
}

/* The statistics of one block of rows (bp, prepared) with the landmarks
 * (lp) added to the totals S (m) and G (m x m, lower triangle): the block's
 * own sums bs and bg start from zero, so that the totals are sums of whole
 * blocks. The block's kernel goes through Kt panel by panel, each panel's
 * as m x panel_rows(), the landmarks as its rows (syrk_lower_add() reads
 * it a row of the block at a time). */
static void add_block_statistics(const kernel_eval *k, const kernel_points *bp,
                                 const kernel_points *lp, int m, const double *shift,
                                 double *Kt, double *bs, double *bg, double *S, double *G,
                                 int threads)
{
    int nb = bp->n, pr = panel_rows(m, threads);
    const double **wb = (const double **) R_alloc((size_t) k->nweights + 1,
                                                  sizeof(double *));
    memset(bs, 0, (size_t) m * sizeof(double));
    memset(bg, 0, (size_t) m * m * sizeof(double));
    for (int p0 = 0; p0 < nb; p0 += pr) {
        int np = nb - p0 < pr ? nb - p0 : pr;
        kernel_points panel = kernel_points_view(k, bp, p0, np, wb);
        const void *vmax = vmaxget();
        kernel_block(k, lp, &panel, 0, Kt, threads, "");
        vmaxset(vmax);
        syrk_lower_add(Kt, np, m, shift, bg, bs, threads);
    }
    for (int j = 0; j < m; j++) {
        S[j] += bs[j];
        for (int i = j; i < m; i++) G[i + (size_t) j * m] += bg[i + (size_t) j * m];
    }
}

/* .Call, pass 1: the sufficient statistics of the rows of x for the
 * landmarks, over blocks of rows, in one call: the kernel program is parsed
 * and the landmarks prepared (shifted by their column means, as predict()
 * shifts them, and transposed) once; each block's kernel with the
 * landmarks (block x m) is then folded into the sums. Each block's sums
 * start from zero and are added to the totals, so the result does not
 * depend on anything but the block size.
 * x: n x d double matrix (the data); landmarks: m x d double matrix (for
 * a string kernel, two character vectors, indexed together once); kernel: a program from fastkpca:::kernel_program(); xweights, lweights:
 * the conformal weights of the rows of x and of the landmarks; shift: m
 * doubles, c; block_rows: integer, rows per block, 1 to n; threads; step:
 * NULL or a function called after each block (a progress bar).
 * Returns list(sums = sum_i (k_i - c), cross = sum_i (k_i - c)(k_i - c)',
 * m x m, symmetric). */
SEXP nystrom_statistics(SEXP x, SEXP landmarks, SEXP kernel, SEXP xweights,
                        SEXP lweights, SEXP shift, SEXP block_rows, SEXP threads,
                        SEXP step)
{
    engine_entered(__func__);
    kernel_eval k;
    int nthreads = kernel_call_read(kernel, threads, x, "x", landmarks, "landmarks", &k);
    int n = k.n_moving, m = k.n_fixed;
    if (m < 1) error_argument("'landmarks' must have at least one row");
    if (!isReal(shift) || XLENGTH(shift) != m) error_argument("'shift' must hold %d doubles", m);
    int block = as_count(block_rows, "block_rows", 1, n);
    check_step(step);

    kernel_points lp;
    const double *lshift = kernel_points_fixed(&k, landmarks, lweights, &lp);
    check_weights(&k, xweights, "xweights");

    SEXP sums = PROTECT(allocVector(REALSXP, m));
    SEXP cross = PROTECT(allocMatrix(REALSXP, m, m));
    double *S = REAL(sums), *G = REAL(cross);
    memset(S, 0, (size_t) m * sizeof(double));
    memset(G, 0, (size_t) m * m * sizeof(double));
    int pr = panel_rows(m, nthreads) < block ? panel_rows(m, nthreads) : block;
    double *Kt = (double *) R_alloc((size_t) pr * m, sizeof(double));
    double *bs = (double *) R_alloc((size_t) m, sizeof(double));
    double *bg = (double *) R_alloc((size_t) m * m, sizeof(double));
    for (int row0 = 0; row0 < n; row0 += block) {
        int nb = n - row0 < block ? n - row0 : block;
        const void *vmax = vmaxget();
        kernel_points bp;
        kernel_points_rows(&k, x, row0, nb, lshift, xweights, &bp);
        add_block_statistics(&k, &bp, &lp, m, REAL(shift), Kt, bs, bg, S, G, nthreads);
        vmaxset(vmax);
        call_step(step);
    }
    for (int j = 0; j < m; j++)
        for (int i = j + 1; i < m; i++) G[j + (size_t) i * m] = G[i + (size_t) j * m];

    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(ans, 0, sums);
    SET_VECTOR_ELT(ans, 1, cross);
    const char *names[] = {"sums", "cross"};
    set_list_names(ans, names);
    UNPROTECT(3);
    return ans;
}

/* .Call: the coefficients of a Nystrom fit on its landmarks,
 * alpha = sqrt(n) T W, with each column's sign fixed by orient_columns()
 * (eigen.c), the one rule for the signs of every fit.
 * basis: m x r double matrix T = U diag(s^-1/2); vectors: r x k double
 * matrix W; n: the number of rows, a double >= 1. Returns m x k. */
SEXP nystrom_alpha(SEXP basis, SEXP vectors, SEXP n)
{
    engine_entered(__func__);
    check_double_matrix(basis, "basis");
    check_double_matrix(vectors, "vectors");
    int m = nrows(basis), r = ncols(basis), k = ncols(vectors);
    if (m < 1 || r < 1) error_argument("'basis' must have at least 1 row and 1 column");
    if (nrows(vectors) != r)
        error_argument("'vectors' must have %d rows, not %d", r, nrows(vectors));
    double rows = as_number(n, "n");
    if (rows < 1) error_argument("'n' must be at least 1");
    SEXP ans = PROTECT(allocMatrix(REALSXP, m, k));
    double *A = REAL(ans);
    if (k > 0) {
        double root = sqrt(rows);
        matrix_product(m, k, r, REAL(basis), m, 0, REAL(vectors), r, 0, 0.0, A, m, 1);
        /* sqrt(n) * (T %*% W), in that order, as R computed it */
        for (size_t t = 0; t < (size_t) m * k; t++) A[t] = root * A[t];
        orient_columns(m, k, A);
    }
    UNPROTECT(1);
    return ans;
}

/* One k-means++ draw: d2 (the squared feature-space distance of each row
 * to its nearest landmark) updated with the new landmark c, whose kernel
 * column is kc; then the next landmark drawn with probability proportional
 * to d2: the first row whose running sum passes u, so that a row with
 * d2 = 0 is never chosen, whatever the rounding. Returns -1 when every row
 * is at distance 0 (or the distances overflow). */
static int kmeanspp_next(double *d2, const double *diag, const double *kc, int n, int c)
{
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        double dist = sq_distance_from_norms(diag[i], diag[c], kc[i]);
        if (isnan(dist)) dist = 0.0;  /* never drawn */
        if (dist < d2[i]) d2[i] = dist;
        if (i == c) d2[i] = 0.0; /* a landmark is never drawn again */
        total += d2[i];
    }
    if (!(total > 0.0) || simd_not_finite(total)) return -1;
    double u = unif_rand() * total, run = 0.0;
    int next = -1;
    for (int i = 0; i < n; i++) {
        if (d2[i] <= 0.0) continue;
        next = i;
        run += d2[i];
        if (run > u) break;
    }
    return next;
}

/* .Call: m landmark rows by kernel k-means++ seeding (D^2 sampling in
 * feature space; Arthur and Vassilvitskii 2007, Oglic and Gaertner 2017):
 * the first uniformly, each next one with probability proportional to its
 * squared feature-space distance k(x,x) + k(c,c) - 2 k(x,c) to the nearest
 * landmark so far. Uses R's random number generator.
 * x: n x d double matrix; m: integer, 1..n; kernel: a program; weights: the
 * conformal weights of the rows of x; step: NULL or a function called
 * after each landmark but the last (the tests count the landmarks drawn
 * after an interrupt). One thread: each draw needs the one before.
 * Returns the m row numbers (from 1), or fewer if the rest of the data are
 * at distance 0 from the landmarks already (duplicated rows). */
SEXP nystrom_kmeanspp(SEXP x, SEXP m_, SEXP kernel, SEXP weights, SEXP step)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_call_read(kernel, NULL, R_NilValue, NULL, x, "x", &k);
    if (k.any_string)
        error_argument("'kernel' is a string kernel: k-means++ landmarks are rows of numbers");
    int n = k.n_fixed, d = k.d;
    int m = as_count(m_, "m", 1, n > 0 ? n : 1);
    if (n < 1 || d < 1) error_argument("'x' must have at least 1 row and 1 column");
    check_step(step);

    kernel_points p;
    kernel_points_fixed(&k, x, weights, &p);
    const double **wb = (const double **) R_alloc((size_t) k.nweights + 1, sizeof(double *));

    double *diag = (double *) R_alloc((size_t) n, sizeof(double));
    kernel_diagonal(&k, &p, diag);

    double *d2 = (double *) R_alloc((size_t) n, sizeof(double));
    double *kc = (double *) R_alloc((size_t) n, sizeof(double));
    for (int i = 0; i < n; i++) d2[i] = R_PosInf;
    SEXP chosen = PROTECT(allocVector(INTSXP, m));
    int *idx = INTEGER(chosen), got = 0;

    GetRNGstate();
    int c = (int) R_unif_index((double) n);
    while (1) {
        idx[got++] = c + 1;
        if (got == m) break;
        /* kc[i] = k(x_i, x_c): one column of n rows, a tight loop on one
         * thread (as n columns of one row, the per-column overhead costs
         * more than the kernel values; and a parallel region per landmark
         * waits, on a busy machine, for a second thread to be scheduled) */
        kernel_points v = kernel_points_view(&k, &p, c, 1, wb);
        const void *vmax = vmaxget();
        kernel_block(&k, &p, &v, 0, kc, 1, "");
        vmaxset(vmax);
        int next = kmeanspp_next(d2, diag, kc, n, c);
        if (next < 0) break;
        c = next;
        if (!isNull(step)) {
            /* R's generator state is R's while step runs, which may draw */
            PutRNGstate();
            call_step(step);
            GetRNGstate();
        }
    }
    PutRNGstate();
    SEXP ans = PROTECT(allocVector(INTSXP, got));
    memcpy(INTEGER(ans), idx, (size_t) got * sizeof(int));
    UNPROTECT(2);
    return ans;
}
