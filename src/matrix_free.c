/* The one heavy step of the matrix-free exact solver (R/matrix_free.R):
 * Y = K[rows, ] V, the uncentered kernel matrix's rows times a block of
 * vectors, with the kernel computed tile by tile and never stored.
 *
 * For each block of rows (at most MF_ROW_BLOCK, fewer for large n so that
 * an interrupt check comes at least every MF_CHECK_VALUES kernel values),
 * the kernel between those rows and MF_COL_BLOCK training rows at a time
 * is computed into one tile (kernel_block(), threaded, the fast register
 * tiles where the kernel has them), and the tile times the matching rows
 * of V is added to the block's rows of Y in the product tiles of tiles.c
 * (tile_gemm(), also with an optimized BLAS: its dgemm would sum in an
 * order that depends on the rows in the call).
 *
 * Every entry of Y is summed over the training rows in increasing order,
 * and every kernel value is computed the same way wherever it sits in a
 * tile (kernel_simd.h), so a row's result does not depend on which rows
 * share its call, on the block sizes or on the number of threads: the
 * passes give the same numbers for any split of the rows among the
 * workers of future::plan() (R/matrix_free.R).
 *
 * The kernels of kernel_fast.c (one base kernel of an inner product or a
 * distance) go another way (fast_block_product()): the square of the
 * call's rows against themselves is computed by the tiles of its lower
 * triangle, each used for both of its blocks of rows (half the kernel
 * values: all of them when one process has all the rows), the columns
 * outside it by whole blocks of rows per thread, each thread with its own
 * tile. kernel_fast_tile() and the one-thread tile product need no R API,
 * so both halves of the work run on every thread (with kernel_block()
 * sharing each tile's columns among the threads, the product of a tile,
 * below tiles.c's threshold for threads, ran on one thread while the
 * others waited: 1.33x on 2 threads). Each row still gets its terms in
 * increasing column order: the same numbers, to the last bit. */
#include "fastkpca.h"

#define MF_ROW_BLOCK 256
#define MF_COL_BLOCK 2048
#define MF_CHECK_VALUES 33554432.0   /* 2^25 kernel values between checks */
#define MF_SYM_BLOCK 256             /* rows and columns of a tile of the symmetric product */

/* Y (rows x b) += K[first + 0 .. rows - 1, c_lo .. c_hi - 1] V[c_lo ..
 * c_hi - 1, ] for a kernel of kernel_fast.c (plan: the call's rows against
 * all n points), the blocks of rb rows spread over the threads: each
 * thread computes a block's kernel tile by tile into its own tile and
 * adds each tile times the matching rows of V (n x b) to the block's rows
 * of Y, on its own. One parallel region per group of blocks of about
 * threads x MF_CHECK_VALUES kernel values, with the interrupt check and
 * the error for values that are not finite between groups, on the main
 * thread. */
static void block_product_by_rows(const kernel_eval *k, const kernel_fast_plan *plan,
                                  int rows, int rb, int c_lo, int c_hi, const double *V,
                                  int n, int b, double *Y, double *T, int threads)
{
    int nblocks = (rows + rb - 1) / rb;
    int group = (int) (threads * MF_CHECK_VALUES / ((double) rb * (c_hi - c_lo)));
    if (group < threads) group = threads;
    for (int g0 = 0; g0 < nblocks; g0 += group) {
        int g1 = nblocks - g0 < group ? nblocks : g0 + group, bad = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(|:bad) \
    if (threads > 1)
#endif
        for (int blk = g0; blk < g1; blk++) {
#ifdef _OPENMP
            double *Tt = T + (size_t) omp_get_thread_num() * rb * MF_COL_BLOCK;
#else
            double *Tt = T;
#endif
            int i0 = blk * rb, nr = rows - i0 < rb ? rows - i0 : rb;
            for (int j0 = c_lo; j0 < c_hi; j0 += MF_COL_BLOCK) {
                int nc = c_hi - j0 < MF_COL_BLOCK ? c_hi - j0 : MF_COL_BLOCK;
                bad |= kernel_fast_tile(plan, i0, nr, j0, nc, Tt);
                tile_gemm_add(nr, b, nc, Tt, nr, V + j0, n, Y + i0, rows);
            }
        }
        if (bad) kernel_nonfinite_error(k, "");
        R_CheckUserInterrupt();
    }
}

/* Y (rows x b) += K[R, R] V[R, ] for the call's rows R = first + 0 ..
 * rows - 1, for a kernel of kernel_fast.c, with each tile of the square's
 * lower triangle computed once and used twice: tile (I, J), J < I, of
 * MF_SYM_BLOCK rows and columns adds K[I, J] V[J] to Y[I] and
 * K[I, J]' V[I] to Y[J]. A kernel value is the same either way round
 * (kernel_simd.h: the squares of a - b and b - a, the terms of an inner
 * product, are equal), and the tiles add their terms to Y one by one
 * (tiles.c), so Y[i] gets the terms of the columns j in increasing order,
 * as a whole row gives them, if row block R gets tiles (R, 0), ...,
 * (R, R), then (R + 1, R), (R + 2, R), ...: tile (I, J) after (I, J - 1)
 * and after (I - 1, J). The tiles of one anti-diagonal I + J = c write
 * disjoint rows, and run on the threads together; one parallel region per
 * anti-diagonal (or per group of its tiles, for a long one), with the
 * interrupt check and the error for values that are not finite between
 * them. */
static void symmetric_block_product(const kernel_eval *k, const kernel_fast_plan *plan,
                                    int first, int rows, const double *V, int n, int b,
                                    double *Y, double *T, int threads)
{
    const int S = MF_SYM_BLOCK;
    int N = (rows + S - 1) / S;
    /* tiles per parallel region: about threads x MF_CHECK_VALUES values
     * (a long anti-diagonal is split: its tiles write disjoint rows) */
    int group = (int) (threads * MF_CHECK_VALUES / ((double) S * S));
    for (int c = 0; c <= 2 * (N - 1); c++) {
        int jlo = c - (N - 1) > 0 ? c - (N - 1) : 0, jhi = c / 2;
        for (int g0 = jlo; g0 <= jhi; g0 += group) {
            int g1 = jhi - g0 < group ? jhi : g0 + group - 1, bad = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(|:bad) \
    if (threads > 1 && g1 > g0)
#endif
            for (int J = g0; J <= g1; J++) {
#ifdef _OPENMP
                double *Tt = T + (size_t) omp_get_thread_num() * S * S;
#else
                double *Tt = T;
#endif
                int I = c - J;
                int i0 = I * S, ni = rows - i0 < S ? rows - i0 : S;
                int j0 = J * S, nj = rows - j0 < S ? rows - j0 : S;
                bad |= kernel_fast_tile(plan, i0, ni, first + j0, nj, Tt);
                tile_gemm_add(ni, b, nj, Tt, ni, V + first + j0, n, Y + i0, rows);
                if (J < I)
                    tile_gemm(nj, b, ni, Tt, ni, 1, V + first + i0, n, 0, 1.0, Y + j0, rows,
                              1);
            }
            if (bad) kernel_nonfinite_error(k, "");
            R_CheckUserInterrupt();
        }
    }
}

/* Y (rows x b) = K[R, ] V for the call's rows R = first + 0 .. rows - 1
 * and a kernel of kernel_fast.c: the columns before R, the square K[R, R]
 * by its lower triangle's tiles (half its kernel values), then the columns
 * after R, so that every row gets its terms in increasing column order.
 * One process with all the rows computes half the kernel matrix; each of
 * W workers computes its rows' whole width less half its square. */
static void fast_block_product(const kernel_eval *k, const kernel_points *xp, int first,
                               int rows, int rb, const double *V, int n, int b, double *Y,
                               int threads)
{
    const double **wbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    kernel_points a = kernel_points_view(k, xp, first, rows, wbuf);
    kernel_fast_plan *plan = kernel_fast_prepare(k->bases, &a, xp);
    size_t per_thread = (size_t) rb * MF_COL_BLOCK;
    if (per_thread < (size_t) MF_SYM_BLOCK * MF_SYM_BLOCK)
        per_thread = (size_t) MF_SYM_BLOCK * MF_SYM_BLOCK;
    double *T = (double *) R_alloc((size_t) threads * per_thread, sizeof(double));
    tile_kernels_ready();
    if (first > 0)
        block_product_by_rows(k, plan, rows, rb, 0, first, V, n, b, Y, T, threads);
    symmetric_block_product(k, plan, first, rows, V, n, b, Y, T, threads);
    if (first + rows < n)
        block_product_by_rows(k, plan, rows, rb, first + rows, n, V, n, b, Y, T, threads);
}

/* .Call (kernel_block_product() in R/matrix_free.R): K[rows, ] V, a
 * length(rows) x ncol(V) double matrix, K the kernel matrix of the rows of
 * x. x: n x d double matrix (all training rows; their column means shift
 * the distance kernels, as in the exact fit), or n strings for a string
 * kernel; row0, nrow: integers, the
 * rows row0 + 1 ... row0 + nrow (1-based, as R counts); kernel: a program
 * from fastkpca:::kernel_program(); weights: the conformal weights of the
 * rows of x; V: n x b double matrix; threads. */
SEXP kernel_block_product(SEXP x, SEXP row0, SEXP nrow, SEXP kernel, SEXP weights, SEXP V,
                          SEXP threads)
{
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    int nthreads = as_threads(threads);
    /* the rows of x, or its strings for a string kernel (indexed here) */
    kernel_point_sets(&k, R_NilValue, NULL, x, "x", nthreads);
    check_double_matrix(V, "V");
    int n = k.any_string ? (int) XLENGTH(x) : nrows(x), b = ncols(V);
    if (n < 1) error_argument("'x' must have at least one row");
    if (nrows(V) != n) error_argument("'V' must have %d rows, not %d", n, nrows(V));
    int first = as_count(row0, "row0", 0, n - 1);
    int rows = as_count(nrow, "nrow", 1, n - first);

    kernel_points xp;
    kernel_points_fixed(&k, x, weights, &xp);
    const double **rbuf = (const double **) R_alloc((size_t) k.nweights + 1,
                                                    sizeof(double *));
    const double **cbuf = (const double **) R_alloc((size_t) k.nweights + 1,
                                                    sizeof(double *));
    int rb = (int) (MF_CHECK_VALUES / n);
    rb = rb > MF_ROW_BLOCK ? MF_ROW_BLOCK : rb < 8 ? 8 : rb / 8 * 8;

    SEXP ans = PROTECT(allocMatrix(REALSXP, rows, b));
    double *Y = REAL(ans);
    for (R_xlen_t i = 0; i < XLENGTH(ans); i++) Y[i] = 0.0;
    if (k.nops == 1 && kernel_fast_supported(k.bases)) {
        fast_block_product(&k, &xp, first, rows, rb, REAL(V), n, b, Y, nthreads);
        UNPROTECT(1);
        return ans;
    }
    double *T = (double *) R_alloc((size_t) rb * MF_COL_BLOCK, sizeof(double));
    for (int i0 = 0; i0 < rows; i0 += rb) {
        int nr = rows - i0 < rb ? rows - i0 : rb;
        kernel_points a = kernel_points_view(&k, &xp, first + i0, nr, rbuf);
        for (int j0 = 0; j0 < n; j0 += MF_COL_BLOCK) {
            int nc = n - j0 < MF_COL_BLOCK ? n - j0 : MF_COL_BLOCK;
            const void *vmax = vmaxget();
            kernel_points c = kernel_points_view(&k, &xp, j0, nc, cbuf);
            kernel_block(&k, &a, &c, 0, T, nthreads, "");
            vmaxset(vmax);
            tile_gemm(nr, b, nc, T, nr, 0, REAL(V) + j0, n, 0, 1.0, Y + i0, rows,
                      nthreads);
        }
        R_CheckUserInterrupt();
    }
    UNPROTECT(1);
    return ans;
}

/* .Call (oriented_columns() in R/matrix_free.R): a copy of the n x k double
 * matrix V with the sign rule of every fit applied (orient_columns() in
 * eigen.c). */
SEXP oriented_columns(SEXP V)
{
    if (!isReal(V) || !isMatrix(V) || nrows(V) < 1 || ncols(V) < 1)
        error_argument("'V' must be a double matrix with at least one row and one column");
    SEXP ans = PROTECT(duplicate(V));
    orient_columns(nrows(ans), ncols(ans), REAL(ans));
    UNPROTECT(1);
    return ans;
}
