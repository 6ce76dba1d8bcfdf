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

/* Columns of the factor's buffer, at most; a source that needs more gets a
 * temporary larger buffer. */
#define ICHOL_CAPACITY 64

/* Buffers for ichol_gauss, allocated once (R_alloc) and reused for every
 * source: fresh buffers for each of the thousands of factors of a kica()
 * fit cost page faults and garbage collections. */
void ichol_work_init(ichol_work *w, int n)
{
    w->n = n;
    w->capacity = n < ICHOL_CAPACITY ? n : ICHOL_CAPACITY;
    size_t len = (size_t) (n > 0 ? n : 1);
    w->g = (double *) R_alloc(len * (w->capacity > 0 ? w->capacity : 1), sizeof(double));
    w->diag = (double *) R_alloc(len, sizeof(double));
    w->prow = (double *) R_alloc(len, sizeof(double));
    w->used = R_alloc(len, sizeof(char));
}

/* The unused row with the largest residual diagonal entry (the first on
 * ties), its entry in *best (-1 when every row is used). */
static int largest_residual(const double *diag, const char *used, int n, double *best)
{
    int p = 0;
    *best = -1.0;
    for (int a = 0; a < n; a++)
        if (!used[a] && diag[a] > *best) { *best = diag[a]; p = a; }
    return p;
}

/* Column k of the factor, for pivot p: K[, p] - G[, 1:k] G[p, 1:k]' into col
 * (G: n x k, leading dimension n; prow: scratch of k). */
static void residual_column(const double *y, int n, int p, double inv2s2,
                            const double *g, int k, double *prow, double *col)
{
    const double yp = y[p];
    /* the Gaussian kernel's exp by the fast kernels' vector exp (within
     * 1 ulp of exp(), kernel_fast.c): exp() was a tenth of kica's time */
    kernel_spec rbf = {.code = KERNEL_RBF, .sigma = inv2s2};
    for (int a = 0; a < n; a++) {
        double t = y[a] - yp;
        col[a] = t * t;
    }
    kernel_fast_transform(&rbf, col, n);
    if (k == 0) return;
    for (int l = 0; l < k; l++) prow[l] = g[p + (size_t) l * n];
    /* col -= G prow, by the tiles or the BLAS as blas.c decides */
    matrix_vector_add(n, k, g, n, prow, -1.0, col);
}

/* Returns the rank M and sets *G to the n x M column-major factor (leading
 * dimension n), in w->g unless it needed more than w->capacity columns (then
 * R_alloc'ed). */
int ichol_gauss(const double *y, double sigma, double tol, ichol_work *w, double **G)
{
    const int n = w->n;
    const double inv2s2 = 1.0 / (2.0 * sigma * sigma);
    int capacity = w->capacity;
    double *g = w->g, *diag = w->diag;
    char *used = w->used;
    memset(used, 0, (size_t) n);
    for (int a = 0; a < n; a++) diag[a] = 1.0;
    double trace = (double) n, best;
    int k = 0;
    while (k < n && trace > tol) {
        int p = largest_residual(diag, used, n, &best);
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
        residual_column(y, n, p, inv2s2, g, k, w->prow, col);
        const double root = sqrt(best);
        used[p] = 1;
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
    return k;
}
