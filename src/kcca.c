/* Kernel canonical correlation (R/kcca.R): a low-rank factor of each view's
 * kernel matrix by pivoted incomplete Cholesky, for any kernel of the
 * engine (src/kernel.c), so that no n x n matrix is formed.
 *
 * K ~ G G', G n x M, built one column per pivot: the next pivot is the row
 * with the largest residual diagonal d_i = K_ii - sum_l G_il^2; its column
 * is (K[, p] - G G[p, ]') / sqrt(d_p). The columns of K are evaluated one
 * at a time (n kernel values each), so the cost is O(n M (d + M)) and the
 * memory O(n M). The factor stops when the residual trace falls to
 * tol * trace(K), when the largest residual diagonal is not positive (for
 * kernels that are not positive semidefinite, or a factor that is exact),
 * or at max_rank columns. For pivot rows p_1..p_M, G[p_j, l] = 0 for l > j,
 * so the M x M matrix L = G[pivots, ] is lower triangular and
 * G = K[, pivots] L^-T: a new row z has the factor row L^-1 k(pivots, z),
 * which R/kcca.R uses to predict. */
#include "fastkpca.h"
#include <math.h>
#include <string.h>

/* The factor's columns are kept in blocks of this many (R_alloc, freed when
 * the .Call returns): growing it never copies, and the memory is the
 * columns made plus one block at most. */
#define ICHOL_BLOCK_COLUMNS 32

typedef struct {
    double **blocks;  /* blocks of ICHOL_BLOCK_COLUMNS columns, n x block */
    int n, rank;
} ichol_factor;

static double *ichol_column(const ichol_factor *f, int j)
{
    return f->blocks[j / ICHOL_BLOCK_COLUMNS] + (size_t) (j % ICHOL_BLOCK_COLUMNS) * f->n;
}

/* A new column j, in a new block when the last one is full. */
static double *ichol_new_column(ichol_factor *f, int j)
{
    if (j % ICHOL_BLOCK_COLUMNS == 0)
        f->blocks[j / ICHOL_BLOCK_COLUMNS] =
            (double *) R_alloc((size_t) f->n * ICHOL_BLOCK_COLUMNS, sizeof(double));
    return ichol_column(f, j);
}

/* col -= G[, 0:j] G[p, 0:j]', one block at a time (grow: scratch of j), by
 * blas.c's matrix_vector_add(), the column update of kica's incomplete
 * Cholesky too (ichol.c). */
static void ichol_subtract(const ichol_factor *f, int j, int p, double *grow, double *col)
{
    int n = f->n;
    for (int l = 0; l < j; l++) grow[l] = ichol_column(f, l)[p];
    for (int b = 0; b * ICHOL_BLOCK_COLUMNS < j; b++) {
        int cols = j - b * ICHOL_BLOCK_COLUMNS;
        if (cols > ICHOL_BLOCK_COLUMNS) cols = ICHOL_BLOCK_COLUMNS;
        matrix_vector_add(n, cols, f->blocks[b], n, grow + b * ICHOL_BLOCK_COLUMNS, -1.0,
                          col);
    }
}

/* The largest residual diagonal (pivots have 0) and its row. */
static int ichol_next_pivot(const double *diag, int n, double *best)
{
    int p = -1;
    double v = 0.0;
    for (int i = 0; i < n; i++)
        if (diag[i] > v) { v = diag[i]; p = i; }
    *best = v;
    return p;
}

/* The factor of the kernel matrix of the prepared points pts (n of them);
 * pivots (0-based) gets the pivot rows. Returns the residual trace. */
static double ichol_kernel(const kernel_eval *k, const kernel_points *pts, double tol,
                           int max_rank, ichol_factor *f, int *pivots, double *trace)
{
    int n = pts->n;
    double *diag = (double *) R_alloc((size_t) n, sizeof(double));
    kernel_diagonal(k, pts, diag);
    double total = 0.0, residual = 0.0;
    for (int i = 0; i < n; i++) {
        if (diag[i] < 0.0) diag[i] = 0.0;   /* not positive semidefinite */
        total += diag[i];
    }
    *trace = total;
    residual = total;
    const double **wbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    double *grow = (double *) R_alloc((size_t) max_rank + 1, sizeof(double));

    while (f->rank < max_rank && residual > tol * total) {
        double dp;
        int p = ichol_next_pivot(diag, n, &dp);
        /* nothing positive left: the factor is exact (or the kernel is not
         * positive semidefinite) */
        if (p < 0 || dp <= 1e-14 * total / n) break;
        int j = f->rank;
        double *col = ichol_new_column(f, j);
        kernel_points pv = kernel_points_view(k, pts, p, 1, wbuf);
        const void *vmax = vmaxget();       /* kernel_block's scratch, per column */
        /* one thread: kernel_block shares out columns, and there is one */
        kernel_block(k, pts, &pv, 0, col, 1, "");
        vmaxset(vmax);
        ichol_subtract(f, j, p, grow, col);
        double s = sqrt(dp);
        for (int i = 0; i < n; i++) col[i] /= s;
        col[p] = s;
        residual = 0.0;
        for (int i = 0; i < n; i++) {
            double v = diag[i] - col[i] * col[i];
            diag[i] = v > 0.0 ? v : 0.0;
            residual += diag[i];
        }
        diag[p] = 0.0;
        /* earlier pivots have exactly 0 here (rounding aside): keeps
         * G[pivots, ] lower triangular */
        for (int l = 0; l < j; l++) col[pivots[l]] = 0.0;
        pivots[j] = p;
        f->rank = j + 1;
        R_CheckUserInterrupt();
    }
    return residual;
}

/* .Call: the incomplete Cholesky factor of the kernel matrix of the rows
 * of x. x: n x d double matrix, or sparse rows; kernel: a program from
 * fastkpca:::kernel_program(); weights: the conformal weights of the rows;
 * tol: stop when the residual trace is at most tol * trace(K); max_rank:
 * the most columns. Returns list(G (n x M),
 * pivots (1-based rows, in order), residual (trace of K - G G'), trace). */
SEXP kcca_ichol(SEXP x, SEXP kernel, SEXP weights, SEXP tol, SEXP max_rank)
{
    engine_entered(__func__);
    kernel_eval k;
    /* the rows of x: a double matrix or sparse rows */
    kernel_call_read(kernel, NULL, R_NilValue, NULL, x, "x", &k);
    kernel_points pts;
    kernel_points_fixed(&k, x, weights, &pts);
    int n = pts.n;
    if (n < 1) error_argument("'x' must have at least 1 row");
    double eps = as_number(tol, "tol");
    if (!(eps >= 0.0 && eps < 1.0)) error_argument("'tol' must be in [0, 1)");
    int mr = as_count(max_rank, "max_rank", 1, n);

    ichol_factor f = { NULL, n, 0 };
    f.blocks = (double **) R_alloc((size_t) mr / ICHOL_BLOCK_COLUMNS + 1, sizeof(double *));
    int *piv = (int *) R_alloc((size_t) mr, sizeof(int));
    double trace;
    double residual = ichol_kernel(&k, &pts, eps, mr, &f, piv, &trace);

    SEXP G = PROTECT(allocMatrix(REALSXP, n, f.rank));
    for (int j = 0; j < f.rank; j++)
        memcpy(REAL(G) + (size_t) j * n, ichol_column(&f, j), (size_t) n * sizeof(double));
    SEXP pivots = PROTECT(allocVector(INTSXP, f.rank));
    for (int j = 0; j < f.rank; j++) INTEGER(pivots)[j] = piv[j] + 1;
    SEXP ans = PROTECT(allocVector(VECSXP, 4));
    SET_VECTOR_ELT(ans, 0, G);
    SET_VECTOR_ELT(ans, 1, pivots);
    SET_VECTOR_ELT(ans, 2, ScalarReal(residual));
    SET_VECTOR_ELT(ans, 3, ScalarReal(trace));
    const char *names[] = {"G", "pivots", "residual", "trace"};
    set_list_names(ans, names);
    UNPROTECT(3);
    return ans;
}
