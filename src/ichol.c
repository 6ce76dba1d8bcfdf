/* Kernel ICA, step 2: incomplete Cholesky decomposition of the Gaussian Gram
 * matrix of one estimated source (Bach and Jordan 2002, section 4.2; Fine and
 * Scheinberg 2001).
 *
 * K[a, b] = exp(-(y_a - y_b)^2 / (2 sigma^2)) is approximated by G G', G of
 * size n x M, pivoting greedily on the largest residual diagonal entry and
 * stopping as soon as the trace of the residual K - G G' is at most tol. The
 * Gaussian kernel has K[a, a] = 1, so the residual diagonal starts at 1 and
 * K itself is never formed: column p of K is computed when p becomes a pivot. */
#include "fastkpca.h"
#include <math.h>
#include <string.h>

/* Columns allocated at first; the buffer doubles when a source needs more. */
#define ICHOL_FIRST_CAPACITY 32

/* Returns the rank M and sets *G to an n x M column-major factor (R_alloc'ed,
 * leading dimension n). pivots (length n, may be NULL) receives the 0-based
 * pivot rows in order. *residual_trace receives trace(K - G G'). */
int ichol_gauss(const double *y, int n, double sigma, double tol, double **G,
                int *pivots, double *residual_trace)
{
    const double inv2s2 = 1.0 / (2.0 * sigma * sigma);
    const int one = 1;
    const double minus_one = -1.0, plus_one = 1.0;
    const char trans = 'N';
    int capacity = n < ICHOL_FIRST_CAPACITY ? n : ICHOL_FIRST_CAPACITY;
    double *g = (double *) R_alloc((size_t) n * (capacity > 0 ? capacity : 1),
                                   sizeof(double));
    double *diag = (double *) R_alloc((size_t) n, sizeof(double));
    double *prow = (double *) R_alloc((size_t) (n > 0 ? n : 1), sizeof(double));
    char *used = R_alloc((size_t) (n > 0 ? n : 1), sizeof(char));
    memset(used, 0, (size_t) n);
    for (int a = 0; a < n; a++) diag[a] = 1.0;
    double trace = (double) n;
    int k = 0;

    while (k < n && trace > tol) {
        int p = 0;
        double best = -1.0;
        for (int a = 0; a < n; a++)
            if (!used[a] && diag[a] > best) { best = diag[a]; p = a; }
        /* rounding can leave the residual trace above tol with every entry
         * at zero (or negative): nothing left to pivot on */
        if (best <= 0.0) break;
        if (k == capacity) {
            int bigger = 2 * capacity < n ? 2 * capacity : n;
            double *h = (double *) R_alloc((size_t) n * bigger, sizeof(double));
            memcpy(h, g, (size_t) n * capacity * sizeof(double));
            g = h;
            capacity = bigger;
        }
        double *col = g + (size_t) k * n;
        const double yp = y[p];
        for (int a = 0; a < n; a++) {
            double t = y[a] - yp;
            col[a] = exp(-t * t * inv2s2);
        }
        /* col -= G[, 1:k] G[p, 1:k]' */
        if (k > 0) {
            for (int l = 0; l < k; l++) prow[l] = g[p + (size_t) l * n];
            F77_CALL(dgemv)(&trans, &n, &k, &minus_one, g, &n, prow, &one, &plus_one,
                            col, &one FCONE);
        }
        const double root = sqrt(best);
        used[p] = 1;
        if (pivots) pivots[k] = p;
        trace = 0.0;
        for (int a = 0; a < n; a++) {
            if (used[a]) {
                /* exact zeros below the pivots already taken */
                col[a] = (a == p) ? root : 0.0;
                diag[a] = 0.0;
            } else {
                col[a] /= root;
                diag[a] -= col[a] * col[a];
                trace += diag[a] > 0.0 ? diag[a] : 0.0;
            }
        }
        k++;
    }
    *G = g;
    *residual_trace = trace;
    return k;
}

/* .Call entry point for tests: ichol(y, sigma, tol) ->
 * list(G = n x M factor, pivots = 1-based pivot rows, residual = trace). */
SEXP kica_ichol(SEXP y, SEXP sigma, SEXP tol)
{
    if (!isReal(y)) error("'y' must be a double vector");
    if (!isReal(sigma) || XLENGTH(sigma) != 1 || !(REAL(sigma)[0] > 0))
        error("'sigma' must be a single positive number");
    if (!isReal(tol) || XLENGTH(tol) != 1 || !(REAL(tol)[0] >= 0))
        error("'tol' must be a single non-negative number");
    if (XLENGTH(y) > INT_MAX) error("'y' is too long");
    int n = (int) XLENGTH(y);
    int *piv = (int *) R_alloc((size_t) (n > 0 ? n : 1), sizeof(int));
    double *g, resid;
    int k = ichol_gauss(REAL(y), n, REAL(sigma)[0], REAL(tol)[0], &g, piv, &resid);

    SEXP ans = PROTECT(allocVector(VECSXP, 3));
    SEXP gm = PROTECT(allocMatrix(REALSXP, n, k));
    if (k > 0) memcpy(REAL(gm), g, (size_t) n * k * sizeof(double));
    SEXP pv = PROTECT(allocVector(INTSXP, k));
    for (int l = 0; l < k; l++) INTEGER(pv)[l] = piv[l] + 1;
    SET_VECTOR_ELT(ans, 0, gm);
    SET_VECTOR_ELT(ans, 1, pv);
    SET_VECTOR_ELT(ans, 2, ScalarReal(resid));
    SEXP nms = PROTECT(allocVector(STRSXP, 3));
    SET_STRING_ELT(nms, 0, mkChar("G"));
    SET_STRING_ELT(nms, 1, mkChar("pivots"));
    SET_STRING_ELT(nms, 2, mkChar("residual"));
    setAttrib(ans, R_NamesSymbol, nms);
    UNPROTECT(4);
    return ans;
}
