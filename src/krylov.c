/* The dense steps of the matrix-free solver's block Krylov iteration
 * (R/matrix_free.R), on the n x b blocks beside its passes: the basis's
 * cross products, the Ritz vectors and their residuals, and the
 * orthonormalization of each new block against the basis. They are a
 * small part of a fit's arithmetic, but they run in the calling process
 * while future's workers wait, so their time bounds what workers gain
 * (a 1-thread fit at n = 30000 spent 17% of its time in them with R's
 * crossprod(), %*% and LINPACK's QR). Every product goes through
 * matrix_product_floor() (blas.c): the register tiles with R's reference BLAS,
 * an optimized BLAS for large products. None of them copies the basis:
 * they read its first `used` columns in place. Their O(n b) loops (the
 * centering, the subtractions, the residuals, the Gram-Schmidt steps
 * within a block) run on the fit's threads too, split so that every
 * number is computed as on one thread: by whole columns, or by rows at
 * multiples of 4 (the vector width of gemv_add()) and columns at multiples
 * of 4 (gemv_t()'s groups). The same bits for any thread count. */
#include "fastkpca.h"
#include "tiles.h"
#include <float.h>
#include <string.h>

/* The fewest multiply-adds' worth of work a parallel region of these
 * steps gets: the thread-work setting (tile_thread_work(), tiles.c) over
 * KRYLOV_THREAD_SHARE, 10^6 by default. The setting is for the solvers'
 * thousands of regions, each of which waits a time slice for its threads
 * on a busy machine; the steps between passes make about ten a pass, so
 * that loss is bounded there, and on an idle machine their products and
 * loops on two threads took the time outside the passes of a fit at
 * n = 20000 from 0.40 to 0.33 s (bench/threads.R's child "mf", measured
 * with the setting at 10^6 for the whole fit). */
#define KRYLOV_THREAD_SHARE 32.0

static double krylov_thread_work(void)
{
    return tile_thread_work() / KRYLOV_THREAD_SHARE;
}

/* A double of an O(n b) loop (read, written, its page touched) costs about
 * what KRYLOV_LOOP_WORK multiply-adds of the tiles cost. */
#define KRYLOV_LOOP_WORK 30.0

/* The threads an O(n b) loop over `doubles` numbers runs on. */
static int loop_threads(double doubles, int threads)
{
    return threads > 1 && doubles * KRYLOV_LOOP_WORK >= krylov_thread_work() ? threads : 1;
}

/* The threads of a loop over b whole columns of n rows: loop_threads(),
 * at most one per column, at least one. */
static int column_threads(int n, int b, int threads)
{
    int nt = loop_threads((double) n * b, threads);
    return nt > b ? (b > 0 ? b : 1) : nt;
}

/* The products of these steps (blas.c's matrix_product(), with their own
 * floor). */
static void krylov_product(int m, int n, int k, const double *A, int lda, int transa,
                           const double *B, int ldb, int transb, double *C, int ldc,
                           int threads)
{
    matrix_product_floor(m, n, k, A, lda, transa, B, ldb, transb, 0.0, C, ldc, threads,
                         krylov_thread_work());
}

/* The threads of orthonormal_block() on n x b: it passes two barriers per
 * round of each column (about a hundred a block), with about 4 n b
 * multiply-adds' worth of gemv work between them (its vector loops run at
 * about a quarter of the tiles' rate): by the thread-work setting itself,
 * as the solvers' regions; at least 4 rows per thread. */
static int block_threads(int n, int b, int threads)
{
    int nt = threads > 1 && 4.0 * n * b >= tile_thread_work() ? threads : 1;
    if (nt > n / 4) nt = n / 4 > 0 ? n / 4 : 1;
    return nt;
}

/* The Euclidean norm of x (n), summed in order. */
static double column_norm(int n, const double *x)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

/* W (n x b) minus its part in the span of Q's first `used` columns,
 * twice (classical Gram-Schmidt twice: one round leaves rounding along Q
 * in proportion to what it removed, the second removes that). C (used x
 * b) and T (n x b) are scratch. The products on the tiles (their own
 * threads), the subtraction by columns on the threads. */
static void remove_basis(int n, int b, double *W, const double *Q, int used, double *C,
                         double *T, int threads)
{
    if (used == 0 || b == 0) return;
    int nt = column_threads(n, b, threads);
#ifndef _OPENMP
    (void) nt;
#endif
    for (int round = 0; round < 2; round++) {
        krylov_product(used, b, n, Q, n, 1, W, n, 0, C, used, threads);
        krylov_product(n, b, used, Q, n, 0, C, used, 0, T, n, threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
        for (int j = 0; j < b; j++) {
            double *w = W + (size_t) j * n;
            const double *t = T + (size_t) j * n;
            for (int i = 0; i < n; i++) w[i] -= t[i];
        }
    }
}

/* The share of a thread t of nt in `units` units: [*u0, *u1). */
static void thread_share(int units, int t, int nt, int *u0, int *u1)
{
    *u0 = (int) ((long long) units * t / nt);
    *u1 = (int) ((long long) units * (t + 1) / nt);
}

/* w (n) -= W[, 0:kept] (W[, 0:kept]' w), thread t's share of it, within
 * orthonormal_block()'s parallel region of T threads: the dot products
 * (into h) by groups of 4 columns, then the update of rows r0..r1-1, a
 * barrier after each (the next step reads what every thread wrote). */
static void project_out_kept(simd_path path, int n, int kept, const double *W, double *w,
                             double *h, int t, int T, int r0, int r1)
{
    int g0, g1;
    thread_share((kept + 3) / 4, t, T, &g0, &g1);
    int c0 = 4 * g0, c1 = 4 * g1 < kept ? 4 * g1 : kept;
    if (c1 > c0) gemv_t_path(path, n, c1 - c0, W + (size_t) c0 * n, n, w, h + c0);
#ifdef _OPENMP
#pragma omp barrier
#endif
    if (r1 > r0) gemv_add_path(path, r1 - r0, kept, W + r0, n, h, -1.0, w + r0);
#ifdef _OPENMP
#pragma omp barrier
#endif
}

/* The columns of W (n x b), made orthonormal one after the other against
 * those kept before them (Gram-Schmidt twice per column), each kept only
 * if more than 1e-10 of its length `before` (measured before any
 * projection) is left; kept columns are moved to the front. Returns how
 * many are kept; *smallest_left gets the smallest share of its length
 * that a kept column kept. h (b) is scratch. On threads (one parallel
 * region, no R): the dot products with the kept columns (gemv_t()) split
 * by groups of 4 columns, the update (gemv_add()) and the division split
 * by rows at multiples of 4, each column's norm summed by one thread: the
 * bits of one thread. */
static int orthonormal_block(int n, int b, double *W, const double *before, double *h,
                             double *smallest_left, int threads)
{
    simd_path path = simd_active();
    int nt = block_threads(n, b, threads);
    int kept_all = 0;
    double smallest_all = 1.0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#else
    (void) nt;
#endif
    {
        int t, T;
        thread_team(&t, &T);
        int q0, q1;
        thread_share(n / 4, t, T, &q0, &q1);
        int r0 = 4 * q0, r1 = t == T - 1 ? n : 4 * q1;
        /* every thread makes the same decisions from the same numbers: its
         * own count of the columns kept */
        int kept = 0;
        double smallest = 1.0;
        for (int j = 0; j < b; j++) {
            double *w = W + (size_t) j * n;
            for (int round = 0; round < 2 && kept > 0; round++)
                project_out_kept(path, n, kept, W, w, h, t, T, r0, r1);
            double left = column_norm(n, w);
            double length = before[j] > DBL_MIN ? before[j] : DBL_MIN;
            if (!(left > 1e-10 * length)) continue;
            /* every thread has read w before any overwrites it */
#ifdef _OPENMP
#pragma omp barrier
#endif
            double *dest = W + (size_t) kept * n;
            for (int i = r0; i < r1; i++) dest[i] = w[i] / left;
            if (left / length < smallest) smallest = left / length;
            kept++;
            /* the column is whole before the next one reads it */
#ifdef _OPENMP
#pragma omp barrier
#endif
        }
        if (t == 0) {
            kept_all = kept;
            smallest_all = smallest;
        }
    }
    *smallest_left = smallest_all;
    return kept_all;
}

/* A column that lost this much of its length to the projections before
 * it was divided by what was left carries the projections' rounding
 * magnified by up to 1 / share: the whole orthonormalization is repeated
 * on the result ("twice is enough"). Above it, one round leaves the
 * orthogonality at a few hundred times the rounding unit. */
#define KRYLOV_REPEAT_SHARE 1e-3

/* The columns of W that orthonormal_columns() takes: NULL for all *b of
 * them, else the 1-based numbers in columns_ (checked), *b their count. */
static const int *chosen_columns(SEXP columns_, int *b)
{
    if (isNull(columns_)) return NULL;
    if (!isInteger(columns_)) error_argument("'columns' must be NULL or integers");
    const int *columns = INTEGER(columns_);
    for (R_xlen_t j = 0; j < XLENGTH(columns_); j++)
        if (columns[j] == NA_INTEGER || columns[j] < 1 || columns[j] > *b)
            error_argument("'columns' must be column numbers of 'W'");
    *b = (int) XLENGTH(columns_);
    return columns;
}

/* W (n x b) <- the chosen columns of src (all for columns NULL), less
 * their means when center is set (center_columns()'s bits), whole columns
 * per thread. */
static void copy_columns(int n, int b, const double *src, const int *columns, int center,
                         double *W, int threads)
{
    int nt = column_threads(n, b, threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#else
    (void) nt;
#endif
    for (int j = 0; j < b; j++) {
        const double *from = src + (size_t) (columns ? columns[j] - 1 : j) * n;
        double *to = W + (size_t) j * n;
        if (center) center_in_columns(n, 1, from, to, 1.0, 1);
        else memcpy(to, from, (size_t) n * sizeof(double));
    }
}

/* orthonormal_columns(W, columns, center, Q, used, threads): the columns
 * of W (those named by `columns`, 1-based, or all for NULL; less their
 * means when center is TRUE: center_columns()'s bits) made orthonormal and
 * orthogonal to Q's first `used` columns (the basis; a matrix of 0 columns
 * for none); columns that nothing new is left of (1e-10 of their length)
 * are dropped. W is not changed. R/matrix_free.R's orthonormal_columns(). */
SEXP orthonormal_columns(SEXP W_, SEXP columns_, SEXP center_, SEXP Q_, SEXP used_,
                         SEXP threads_)
{
    engine_entered(__func__);
    check_double_matrix(W_, "W");
    check_double_matrix(Q_, "Q");
    int n = nrows(W_), b = ncols(W_);
    if (nrows(Q_) != n) error_argument("'Q' must have nrow(W) rows");
    const int *columns = chosen_columns(columns_, &b);
    if (!isLogical(center_) || XLENGTH(center_) != 1 || LOGICAL(center_)[0] == NA_LOGICAL)
        error_argument("'center' must be TRUE or FALSE");
    int center = LOGICAL(center_)[0];
    int used = as_count(used_, "used", 0, ncols(Q_));
    int threads = as_threads(threads_);
    const double *Q = used > 0 ? REAL(Q_) : NULL;
    /* the result, worked on in place: returned as it is when every column
     * is kept, the usual case (no second n x b matrix, nor its copy) */
    SEXP full = PROTECT(allocMatrix(REALSXP, n, b));
    double *W = REAL(full);
    copy_columns(n, b, REAL(W_), columns, center, W, threads);
    double *before = (double *) R_alloc(b > 0 ? b : 1, sizeof(double));
    double *h = (double *) R_alloc(b > 0 ? b : 1, sizeof(double));
    double *C = (double *) R_alloc((size_t) (used > 0 ? used : 1) * (b > 0 ? b : 1),
                                   sizeof(double));
    double *T = used > 0 ? (double *) R_alloc((size_t) n * (b > 0 ? b : 1), sizeof(double))
                         : NULL;
    int kept = b;
    for (int time = 0; time < 2 && kept > 0; time++) {
        int nt = column_threads(n, kept, threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#else
        (void) nt;
#endif
        for (int j = 0; j < kept; j++) before[j] = column_norm(n, W + (size_t) j * n);
        remove_basis(n, kept, W, Q, used, C, T, threads);
        double smallest_left;
        kept = orthonormal_block(n, kept, W, before, h, &smallest_left, threads);
        if (smallest_left >= KRYLOV_REPEAT_SHARE) break;
    }
    if (kept == b) {
        UNPROTECT(1);
        return full;
    }
    SEXP out = PROTECT(allocMatrix(REALSXP, n, kept));
    if (kept > 0) memcpy(REAL(out), W, (size_t) n * kept * sizeof(double));
    UNPROTECT(2);
    return out;
}

/* basis_matrix(X, ncv, threads): a new basis matrix, n x ncv (n =
 * nrow(X), ncol(X) <= ncv <= n), X in its first columns and zeros after:
 * the basis's Q and AQ (krylov_basis() in R/matrix_free.R), most of the
 * solver's memory (25 MB at n = 20000 and 80 columns). Made here by whole
 * columns on the threads, so that its new pages are first touched (their
 * page faults taken) there, not by R's fill of matrix(0, n, ncv) and its
 * copy of X on the main thread. */
SEXP basis_matrix(SEXP X_, SEXP ncv_, SEXP threads_)
{
    engine_entered(__func__);
    check_double_matrix(X_, "X");
    int n = nrows(X_), p = ncols(X_);
    if (n < 1) error_argument("'X' must have at least one row");
    int ncv = as_count(ncv_, "ncv", p > 1 ? p : 1, n);
    int threads = as_threads(threads_);
    SEXP out = PROTECT(allocMatrix(REALSXP, n, ncv));
    const double *X = REAL(X_);
    double *M = REAL(out);
    int nt = column_threads(n, ncv, threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#else
    (void) nt;
#endif
    for (int j = 0; j < ncv; j++) {
        double *to = M + (size_t) j * n;
        if (j < p) memcpy(to, X + (size_t) j * n, (size_t) n * sizeof(double));
        else memset(to, 0, (size_t) n * sizeof(double));
    }
    UNPROTECT(1);
    return out;
}

/* center_columns(V, scale, threads): (V - 1 colMeans(V)') / scale, with the
 * bits of R's V - rep(colMeans(V), each = nrow(V)) (then / scale; scale 1
 * divides nothing), whole columns per thread. R/matrix_free.R's
 * center_columns(), and the centering of every product of the fit's
 * operator (centered_product(), R/eigen.R). */
SEXP center_columns(SEXP V_, SEXP scale_, SEXP threads_)
{
    engine_entered(__func__);
    check_double_matrix(V_, "V");
    int n = nrows(V_), b = ncols(V_);
    if (n < 1 || b < 1) error_argument("'V' must have at least one row and one column");
    double scale = as_number(scale_, "scale");
    if (!(scale > 0) || !R_FINITE(scale)) error_argument("'scale' must be a positive number");
    int threads = as_threads(threads_);
    SEXP out = PROTECT(allocMatrix(REALSXP, n, b));
    center_in_columns(n, b, REAL(V_), REAL(out), scale, column_threads(n, b, threads));
    UNPROTECT(1);
    return out;
}

/* dense_product(A, B, trans_a, threads): op(A) %*% B (op(A) = t(A) when
 * trans_a) by krylov_product() (blas.c's rule: the tiles with the reference
 * BLAS, on the threads): the products of the matrix-free fit's Nystrom
 * start (R/matrix_free.R's matrix_free_nystrom()). */
SEXP dense_product(SEXP A_, SEXP B_, SEXP trans_a_, SEXP threads_)
{
    engine_entered(__func__);
    check_double_matrix(A_, "A");
    check_double_matrix(B_, "B");
    if (!isLogical(trans_a_) || XLENGTH(trans_a_) != 1 || LOGICAL(trans_a_)[0] == NA_LOGICAL)
        error_argument("'trans_a' must be TRUE or FALSE");
    int ta = LOGICAL(trans_a_)[0];
    int threads = as_threads(threads_);
    int m = ta ? ncols(A_) : nrows(A_), k = ta ? nrows(A_) : ncols(A_), n = ncols(B_);
    if (nrows(B_) != k) error_argument("'A' and 'B' are not conformable");
    SEXP out = PROTECT(allocMatrix(REALSXP, m, n));
    if (m > 0 && n > 0) {
        if (k == 0) memset(REAL(out), 0, (size_t) m * n * sizeof(double));
        else krylov_product(m, n, k, REAL(A_), nrows(A_), ta, REAL(B_), k, 0, REAL(out), m,
                            threads);
    }
    UNPROTECT(1);
    return out;
}

/* top_eigen_pairs(A, f): the f largest eigenpairs of the symmetric A (its
 * lower triangle) by dsyevr for those alone (top_eigen_exact(), eigen.c),
 * on a copy: list(values (decreasing), vectors). The matrix-free fit's
 * Nystrom start needs the leading block of a landmarks x landmarks
 * matrix, not all of its eigenvectors (R's eigen()). */
SEXP top_eigen_pairs(SEXP A_, SEXP f_)
{
    engine_entered(__func__);
    check_double_matrix(A_, "A");
    int n = nrows(A_);
    if (ncols(A_) != n || n < 1) error_argument("'A' must be a square matrix");
    int f = as_count(f_, "f", 1, n);
    double *A = (double *) R_alloc((size_t) n * n, sizeof(double));
    memcpy(A, REAL(A_), (size_t) n * n * sizeof(double));
    SEXP values = PROTECT(allocVector(REALSXP, f));
    SEXP vectors = PROTECT(allocMatrix(REALSXP, n, f));
    int found = top_eigen_exact(A, n, f, REAL(values), REAL(vectors));
    if (found != f) error_numerical("dsyevr found %d of the %d eigenpairs asked for", found, f);
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(ans, 0, values);
    SET_VECTOR_ELT(ans, 1, vectors);
    const char *names[] = {"values", "vectors"};
    set_list_names(ans, names);
    UNPROTECT(3);
    return ans;
}

/* rayleigh_ritz_vectors(Q, AQ, used, Y, values, threads): the Ritz
 * vectors X = Q[, 1:used] Y, their products AX = AQ[, 1:used] Y, the
 * residuals R = AX - X diag(values) and their norms, as
 * list(X, AX, R, norms). R/matrix_free.R's rayleigh_ritz_vectors(). */
SEXP rayleigh_ritz_vectors(SEXP Q_, SEXP AQ_, SEXP used_, SEXP Y_, SEXP values_,
                           SEXP threads_)
{
    engine_entered(__func__);
    check_double_matrix(Q_, "Q");
    check_double_matrix(AQ_, "AQ");
    check_double_matrix(Y_, "Y");
    int n = nrows(Q_), p = ncols(Y_);
    if (nrows(AQ_) != n || ncols(AQ_) != ncols(Q_))
        error_argument("'AQ' must have the dimensions of 'Q'");
    int used = as_count(used_, "used", 1, ncols(Q_));
    int threads = as_threads(threads_);
    if (nrows(Y_) != used) error_argument("'Y' must have 'used' rows");
    if (!isReal(values_) || XLENGTH(values_) != p)
        error_argument("'values' must be ncol(Y) doubles");
    SEXP X = PROTECT(allocMatrix(REALSXP, n, p));
    SEXP AX = PROTECT(allocMatrix(REALSXP, n, p));
    SEXP R = PROTECT(allocMatrix(REALSXP, n, p));
    SEXP norms = PROTECT(allocVector(REALSXP, p));
    krylov_product(n, p, used, REAL(Q_), n, 0, REAL(Y_), used, 0, REAL(X), n, threads);
    krylov_product(n, p, used, REAL(AQ_), n, 0, REAL(Y_), used, 0, REAL(AX), n,
                   threads);
    const double *values = REAL(values_);
    double *Xp = REAL(X), *AXp = REAL(AX), *Rp = REAL(R), *np = REAL(norms);
    int nt = column_threads(n, p, threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#else
    (void) nt;
#endif
    for (int j = 0; j < p; j++) {
        const double *x = Xp + (size_t) j * n, *ax = AXp + (size_t) j * n;
        double *r = Rp + (size_t) j * n;
        for (int i = 0; i < n; i++) r[i] = ax[i] - x[i] * values[j];
        np[j] = column_norm(n, r);
    }
    SEXP out = PROTECT(allocVector(VECSXP, 4));
    SET_VECTOR_ELT(out, 0, X);
    SET_VECTOR_ELT(out, 1, AX);
    SET_VECTOR_ELT(out, 2, R);
    SET_VECTOR_ELT(out, 3, norms);
    SEXP names = PROTECT(allocVector(STRSXP, 4));
    SET_STRING_ELT(names, 0, mkChar("X"));
    SET_STRING_ELT(names, 1, mkChar("AX"));
    SET_STRING_ELT(names, 2, mkChar("R"));
    SET_STRING_ELT(names, 3, mkChar("norms"));
    setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(6);
    return out;
}

/* basis_cross_product(A, B, ka, kb, threads): t(A[, 1:ka]) %*% B[, 1:kb]
 * (ka x kb), the columns read in place. R/matrix_free.R's
 * basis_cross_product(). */
SEXP basis_cross_product(SEXP A_, SEXP B_, SEXP ka_, SEXP kb_, SEXP threads_)
{
    engine_entered(__func__);
    check_double_matrix(A_, "A");
    check_double_matrix(B_, "B");
    int n = nrows(A_);
    if (nrows(B_) != n) error_argument("'A' and 'B' must have as many rows");
    int ka = as_count(ka_, "ka", 0, ncols(A_)), kb = as_count(kb_, "kb", 0, ncols(B_));
    int threads = as_threads(threads_);
    SEXP out = PROTECT(allocMatrix(REALSXP, ka, kb));
    if (ka > 0 && kb > 0) {
        if (n == 0) memset(REAL(out), 0, (size_t) ka * kb * sizeof(double));
        else krylov_product(ka, kb, n, REAL(A_), n, 1, REAL(B_), n, 0, REAL(out), ka,
                            threads);
    }
    UNPROTECT(1);
    return out;
}
