/* The dense steps of the matrix-free solver's block Krylov iteration
 * (R/matrix_free.R), on the n x b blocks beside its passes: the basis's
 * cross products, the Ritz vectors and their residuals, and the
 * orthonormalization of each new block against the basis. They are a
 * small part of a fit's arithmetic, but they run in the calling process
 * while future's workers wait, so their time bounds what workers gain
 * (a 1-thread fit at n = 30000 spent 17% of its time in them with R's
 * crossprod(), %*% and LINPACK's QR). Every product goes through
 * matrix_product() (blas.c): the register tiles with R's reference BLAS,
 * an optimized BLAS for large products. None of them copies the basis:
 * they read its first `used` columns in place. */
#include "fastkpca.h"
#include <float.h>
#include <string.h>

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
 * b) and T (n x b) are scratch. */
static void remove_basis(int n, int b, double *W, const double *Q, int used, double *C,
                         double *T, int threads)
{
    if (used == 0 || b == 0) return;
    size_t nb = (size_t) n * b;
    for (int round = 0; round < 2; round++) {
        matrix_product(used, b, n, Q, n, 1, W, n, 0, 0.0, C, used, threads);
        matrix_product(n, b, used, Q, n, 0, C, used, 0, 0.0, T, n, threads);
        for (size_t i = 0; i < nb; i++) W[i] -= T[i];
    }
}

/* The columns of W (n x b), made orthonormal one after the other against
 * those kept before them (Gram-Schmidt twice per column), each kept only
 * if more than 1e-10 of its length `before` (measured before any
 * projection) is left; kept columns are moved to the front. Returns how
 * many are kept; *smallest_left gets the smallest share of its length
 * that a kept column kept. h (b) is scratch. */
static int orthonormal_block(int n, int b, double *W, const double *before, double *h,
                             double *smallest_left)
{
    int kept = 0;
    *smallest_left = 1.0;
    for (int j = 0; j < b; j++) {
        double *w = W + (size_t) j * n;
        for (int round = 0; round < 2 && kept > 0; round++) {
            gemv_t(n, kept, W, n, w, h);
            gemv_add(n, kept, W, n, h, -1.0, w);
        }
        double left = column_norm(n, w);
        double length = before[j] > DBL_MIN ? before[j] : DBL_MIN;
        if (!(left > 1e-10 * length)) continue;
        double *dest = W + (size_t) kept * n;
        for (int i = 0; i < n; i++) dest[i] = w[i] / left;
        if (left / length < *smallest_left) *smallest_left = left / length;
        kept++;
    }
    return kept;
}

/* A column that lost this much of its length to the projections before
 * it was divided by what was left carries the projections' rounding
 * magnified by up to 1 / share: the whole orthonormalization is repeated
 * on the result ("twice is enough"). Above it, one round leaves the
 * orthogonality at a few hundred times the rounding unit. */
#define KRYLOV_REPEAT_SHARE 1e-3

/* orthonormal_columns(W, Q, used, threads): the columns of W made
 * orthonormal and orthogonal to Q's first `used` columns (the basis; a
 * matrix of 0 columns for none); columns that nothing new is left of
 * (1e-10 of their length) are dropped. W is not changed.
 * R/matrix_free.R's orthonormal_columns(). */
SEXP orthonormal_columns(SEXP W_, SEXP Q_, SEXP used_, SEXP threads_)
{
    engine_entered(__func__);
    check_double_matrix(W_, "W");
    check_double_matrix(Q_, "Q");
    int n = nrows(W_), b = ncols(W_);
    if (nrows(Q_) != n) error_argument("'Q' must have nrow(W) rows");
    int used = as_count(used_, "used", 0, ncols(Q_));
    int threads = as_threads(threads_);
    const double *Q = used > 0 ? REAL(Q_) : NULL;
    double *W = (double *) R_alloc((size_t) n * (b > 0 ? b : 1), sizeof(double));
    if (b > 0) memcpy(W, REAL(W_), (size_t) n * b * sizeof(double));
    double *before = (double *) R_alloc(b > 0 ? b : 1, sizeof(double));
    double *h = (double *) R_alloc(b > 0 ? b : 1, sizeof(double));
    double *C = (double *) R_alloc((size_t) (used > 0 ? used : 1) * (b > 0 ? b : 1),
                                   sizeof(double));
    double *T = used > 0 ? (double *) R_alloc((size_t) n * (b > 0 ? b : 1), sizeof(double))
                         : NULL;
    int kept = b;
    for (int time = 0; time < 2 && kept > 0; time++) {
        for (int j = 0; j < kept; j++) before[j] = column_norm(n, W + (size_t) j * n);
        remove_basis(n, kept, W, Q, used, C, T, threads);
        double smallest_left;
        kept = orthonormal_block(n, kept, W, before, h, &smallest_left);
        if (smallest_left >= KRYLOV_REPEAT_SHARE) break;
    }
    SEXP out = PROTECT(allocMatrix(REALSXP, n, kept));
    if (kept > 0) memcpy(REAL(out), W, (size_t) n * kept * sizeof(double));
    UNPROTECT(1);
    return out;
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
    matrix_product(n, p, used, REAL(Q_), n, 0, REAL(Y_), used, 0, 0.0, REAL(X), n, threads);
    matrix_product(n, p, used, REAL(AQ_), n, 0, REAL(Y_), used, 0, 0.0, REAL(AX), n,
                   threads);
    const double *values = REAL(values_);
    for (int j = 0; j < p; j++) {
        const double *x = REAL(X) + (size_t) j * n, *ax = REAL(AX) + (size_t) j * n;
        double *r = REAL(R) + (size_t) j * n;
        for (int i = 0; i < n; i++) r[i] = ax[i] - x[i] * values[j];
        REAL(norms)[j] = column_norm(n, r);
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
        else matrix_product(ka, kb, n, REAL(A_), n, 1, REAL(B_), n, 0, 0.0, REAL(out), ka,
                            threads);
    }
    UNPROTECT(1);
    return out;
}
