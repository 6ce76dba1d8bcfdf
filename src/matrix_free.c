/* The one heavy step of the matrix-free exact solver (R/matrix_free.R):
 * Y = K[rows, ] V, the uncentered kernel matrix's rows times a block of
 * vectors, with the kernel computed tile by tile and never stored.
 *
 * The kernels of kernel_fast.c (one base kernel of an inner product or a
 * distance) use the symmetry of K. The columns (and rows) are cut into
 * at most MF_GROUPS groups, at places that depend on n alone
 * (matrix_free_groups()), and an entry of Y is the sum over the groups,
 * in increasing order, of its group sums: the group sum P[r, c] of a row
 * of group r sums its terms over the columns of group c in increasing
 * order (the tiles of tiles.c add their terms one by one). A pair of
 * groups (g, h), h < g, gives both P[g, h] and P[h, g] from the same
 * kernel values; the square of a group, P[g, g], comes from the tiles of
 * its lower triangle (tile_pipeline(), both). So each kernel
 * value of the lower triangle is computed once: n^2 / 2 values per pass,
 * whoever computes the pairs. One process computes every pair and adds
 * each group sum to Y as soon as the sums before it are there
 * (all_rows_product()); future's workers each compute a share of the
 * pairs (kernel_pair_products()) and return their group sums, which the
 * caller adds in the same order (R/matrix_free.R). A kernel value is the
 * same either way round and wherever it sits in a tile (kernel_simd.h:
 * the squares of a - b and b - a, the terms of an inner product, are
 * equal), so the passes give the same numbers to the last bit for any
 * tile size, number of threads, share of the pairs among the workers and
 * plan. A call on part of the rows (by_rows_product()) sums each row over
 * the same groups in the same order, by whole blocks of rows per thread:
 * the same numbers again.
 *
 * Other kernels sum each row's terms over all the columns in increasing
 * order, by blocks of rows (at most MF_ROW_BLOCK, fewer for large n so
 * that an interrupt check comes at least every MF_CHECK_VALUES kernel
 * values) whose kernel with MF_COL_BLOCK columns at a time is computed
 * into one tile (kernel_block(), threaded) and multiplied by the matching
 * rows of V (tile_gemm(), also with an optimized BLAS, whose dgemm would
 * sum in an order that depends on the rows in the call); workers take
 * whole rows.
 *
 * Every call counts the kernel values it computed (the attribute
 * "kernel_values" of its answer). */
#include "fastkpca.h"
#include <string.h>
#include <limits.h>

#define MF_ROW_BLOCK 256
#define MF_COL_BLOCK 2048
#define MF_CHECK_VALUES 33554432.0   /* 2^25 kernel values between checks */
#define MF_SYM_BLOCK 256             /* default rows and columns of a tile of the symmetric product */
#define MF_GROUPS 8                  /* the most groups of rows and columns */

/* The groups of n rows: returns their number G and sets starts[0 .. G]
 * (starts[G] = n). Groups of equal size, a multiple of 8 rows (the
 * kernel's tiles start on a multiple of 8), the last one smaller. */
static int mf_groups(int n, int *starts)
{
    /* (in 64 bits: n may be as large as INT_MAX) */
    long long width = ((long long) n + MF_GROUPS - 1) / MF_GROUPS;
    width = (width + 7) / 8 * 8;
    int G = (int) (((long long) n + width - 1) / width);
    for (int g = 0; g < G; g++) starts[g] = (int) (g * width);
    starts[G] = n;
    return G;
}

/* Y (rows x b, leading dimension ldy) += K[first + 0 .. rows - 1, c_lo ..
 * c_hi - 1] V[c_lo .. c_hi - 1, ] (plan: the rows first .. first + rows -
 * 1 against all n points), the blocks of rb rows spread over the threads:
 * each thread computes a block's kernel tile by tile into its own tile
 * and adds each tile times the matching rows of V (n x b) to the block's
 * rows of Y, on its own. One parallel region per group of blocks of about
 * threads x MF_CHECK_VALUES kernel values, with the interrupt check and
 * the error for values that are not finite between groups, on the main
 * thread, then step (NULL or an R function). */
static void block_product_by_rows(const kernel_eval *k, const kernel_tiles *plan,
                                  int rows, int rb, int c_lo, int c_hi, const double *V,
                                  int n, int b, double *Y, int ldy, double *T, int threads,
                                  double *count, SEXP step)
{
    int nblocks = (rows + rb - 1) / rb;
    int group = (int) (threads * MF_CHECK_VALUES / ((double) rb * (c_hi - c_lo)));
    if (group < threads) group = threads;
    for (int g0 = 0; g0 < nblocks; g0 += group) {
        int g1 = nblocks - g0 < group ? nblocks : g0 + group, bad = 0;
        double values = 0.0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) \
    reduction(|:bad) reduction(+:values) if (threads > 1)
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
                bad |= kernel_tile(plan, i0, nr, j0, nc, Tt);
                values += (double) nr * nc;
                tile_gemm_add(nr, b, nc, Tt, nr, V + j0, n, Y + i0, ldy);
            }
        }
        *count += values;
        if (bad) kernel_nonfinite_error(k, "");
        R_CheckUserInterrupt();
        call_step(step);
    }
}

/* The tiles of K[R, C] for the rows R = r0 + 0 .. mr - 1 and the columns
 * C = c0 + 0 .. mc - 1 (plan: all n rows against all n points; r0 a
 * multiple of 8), each computed once and used twice: tile (I, J) of S
 * rows and columns adds K[I, J] V[J] to Yr[I] (mr x b, leading dimension
 * ldr) and K[I, J]' V[I] to Yc[J] (mc x b, leading dimension ldc). For a
 * pair of groups (square = 0), every tile of the rectangle. For the
 * square of a group (square = 1: R = C, Yc = Yr), the tiles J <= I of its
 * lower triangle, the transpose for J < I only.
 *
 * Each row of Yr gets its terms in increasing column order (a row block
 * adds its tiles J = 0, 1, ... in turn), and each row of Yc in increasing
 * row order: row block I adds K[I, J]' V[I] to Yc[J] only once row block
 * I - 1 has added its own (done[I - 1] > J, written by that thread after
 * its tile J, read by this one before adding), and in the square, Y[J]
 * gets its own row's tiles (J, 0 .. J) before any transpose, since row J
 * + 1 waits for done[J] > J. The row blocks go to the threads in
 * increasing order (schedule(dynamic)), each computing its kernel tiles
 * without waiting and only the transposes after its predecessor, so the
 * threads run one tile apart with no barrier between the tiles; one
 * parallel region per band of row blocks (about threads x MF_CHECK_VALUES
 * kernel values, at least 8 row blocks per thread), with the interrupt
 * check and the error for values that are not finite between bands, on
 * the main thread, then step (NULL or an R function). The same numbers
 * for any number of threads. */
static void tile_pipeline(const kernel_eval *k, const kernel_tiles *plan, int r0, int mr,
                          int c0, int mc, int square, const double *V, int n, int b,
                          double *Yr, int ldr, double *Yc, int ldc, double *T, int threads,
                          int S, double *count, SEXP step)
{
    int NI = (mr + S - 1) / S, NJ = (mc + S - 1) / S;
    int *done = (int *) R_alloc((size_t) NI, sizeof(int));
    for (int I = 0; I < NI; I++) done[I] = 0;
    double row_values = (double) S * (square ? mc / 2.0 + S : mc);
    int band = (int) (threads * MF_CHECK_VALUES / row_values);
    if (band < 8 * threads) band = 8 * threads;
    for (int b0 = 0; b0 < NI; b0 += band) {
        int b1 = NI - b0 < band ? NI : b0 + band, bad = 0;
        double values = 0.0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) \
    reduction(|:bad) reduction(+:values) if (threads > 1 && b1 - b0 > 1)
#endif
        for (int I = b0; I < b1; I++) {
#ifdef _OPENMP
            double *Tt = T + (size_t) omp_get_thread_num() * S * S;
#else
            double *Tt = T;
#endif
            int i0 = I * S, ni = mr - i0 < S ? mr - i0 : S;
            int jend = square ? I + 1 : NJ;
            for (int J = 0; J < jend; J++) {
                int j0 = J * S, nj = mc - j0 < S ? mc - j0 : S;
                bad |= kernel_tile(plan, r0 + i0, ni, c0 + j0, nj, Tt);
                values += (double) ni * nj;
                tile_gemm_add(ni, b, nj, Tt, ni, V + c0 + j0, n, Yr + i0, ldr);
                if (!square || J < I) {
                    if (I > b0) {
                        int ahead;
                        do {
#ifdef _OPENMP
#pragma omp atomic read
#endif
                            ahead = done[I - 1];
                        } while (ahead <= J);
#ifdef _OPENMP
#pragma omp flush
#endif
                    }
                    tile_gemm(nj, b, ni, Tt, ni, 1, V + r0 + i0, n, 0, 1.0, Yc + j0, ldc, 1);
                }
#ifdef _OPENMP
#pragma omp flush
#pragma omp atomic write
#endif
                done[I] = J + 1;
            }
        }
        *count += values;
        if (bad) kernel_nonfinite_error(k, "");
        R_CheckUserInterrupt();
        call_step(step);
    }
}

/* Y (m x b) += Z (m x b), both with leading dimension ld for Y, m for Z:
 * one group sum added to the running sums of its rows. */
static void add_group_sum(int m, int b, const double *Z, double *Y, int ld)
{
    for (int j = 0; j < b; j++)
        for (int i = 0; i < m; i++) Y[i + (size_t) j * ld] += Z[i + (size_t) j * m];
}

static void zero(double *Z, size_t len)
{
    for (size_t i = 0; i < len; i++) Z[i] = 0.0;
}

/* The plan of all n rows against all n points, and each thread's tile of
 * S x S (or of rb x MF_COL_BLOCK where rb > 0) doubles. */
static kernel_tiles *all_rows_plan(const kernel_eval *k, const kernel_points *xp, int n,
                                   int threads)
{
    const double **wbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    kernel_points a = kernel_points_view(k, xp, 0, n, wbuf);
    return kernel_tiles_prepare(k, &a, xp, threads);
}

static double *thread_tiles(int threads, int S, int rb)
{
    size_t per_thread = (size_t) S * S;
    if ((size_t) rb * MF_COL_BLOCK > per_thread) per_thread = (size_t) rb * MF_COL_BLOCK;
    double *T = (double *) R_alloc((size_t) threads * per_thread, sizeof(double));
    tile_kernels_ready();
    return T;
}

/* Y (n x b, zero) = K V for all n rows, in one process: the pairs (g, h),
 * h <= g, g by g and h by h, so that each group sum is added to its rows'
 * running sums after those of the groups before it: P[g, 0 .. g - 1] come
 * with the pairs (g, h), P[g, g] with the square, and P[h, g] for h < g
 * after P[h, 0 .. g - 1] (the squares and pairs of the g before). A row
 * group's first sum (c = 0) is summed in Y itself, the others in scratch
 * and added, as the caller of the workers does. */
static void all_rows_product(const kernel_eval *k, const kernel_points *xp, const double *V,
                             int n, int b, double *Y, int threads, int S, double *count,
                             SEXP step)
{
    kernel_tiles *plan = all_rows_plan(k, xp, n, threads);
    double *T = thread_tiles(threads, S, 0);
    int *starts = (int *) R_alloc(MF_GROUPS + 1, sizeof(int));
    int G = mf_groups(n, starts), width = starts[1];
    double *Zr = (double *) R_alloc((size_t) width * b, sizeof(double));
    double *Zc = (double *) R_alloc((size_t) width * b, sizeof(double));
    for (int g = 0; g < G; g++) {
        int rg = starts[g], mg = starts[g + 1] - rg;
        for (int h = 0; h <= g; h++) {
            int rh = starts[h], mh = starts[h + 1] - rh;
            double *Yg = h == 0 ? Y + rg : Zr;
            int ldg = h == 0 ? n : mg;
            if (h > 0) zero(Zr, (size_t) mg * b);
            if (h == g) {
                tile_pipeline(k, plan, rg, mg, rg, mg, 1, V, n, b, Yg, ldg, Yg, ldg, T, threads, S,
                              count, step);
            } else {
                zero(Zc, (size_t) mh * b);
                tile_pipeline(k, plan, rg, mg, rh, mh, 0, V, n, b, Yg, ldg, Zc, mh, T, threads,
                              S, count, step);
                add_group_sum(mh, b, Zc, Y + rh, n);
            }
            if (h > 0) add_group_sum(mg, b, Zr, Y + rg, n);
        }
    }
}

/* Y (rows x b, zero) = K[R, ] V for the rows R = first + 0 .. rows - 1:
 * each row's group sums (by block_product_by_rows()), added group after
 * group as all_rows_product() adds them. */
static void by_rows_product(const kernel_eval *k, const kernel_points *xp, int first,
                            int rows, int rb, const double *V, int n, int b, double *Y,
                            int threads, double *count, SEXP step)
{
    const double **wbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    kernel_points a = kernel_points_view(k, xp, first, rows, wbuf);
    kernel_tiles *plan = kernel_tiles_prepare(k, &a, xp, threads);
    double *T = thread_tiles(threads, 0, rb);
    int *starts = (int *) R_alloc(MF_GROUPS + 1, sizeof(int));
    int G = mf_groups(n, starts);
    double *Z = G > 1 ? (double *) R_alloc((size_t) rows * b, sizeof(double)) : NULL;
    for (int c = 0; c < G; c++) {
        if (c == 0) {
            block_product_by_rows(k, plan, rows, rb, starts[0], starts[1], V, n, b, Y, rows, T,
                                  threads, count, step);
            continue;
        }
        zero(Z, (size_t) rows * b);
        block_product_by_rows(k, plan, rows, rb, starts[c], starts[c + 1], V, n, b, Z, rows, T,
                              threads, count, step);
        add_group_sum(rows, b, Z, Y, rows);
    }
}

/* The kernel program and the points of x (all n training rows; their
 * column means shift the distance kernels, as in the exact fit), checked:
 * the common start of the entry points below. */
static int mf_setup(SEXP x, SEXP kernel, SEXP weights, SEXP V, SEXP threads, kernel_eval *k,
                    kernel_points *xp, int *nthreads)
{
    kernel_eval_from_R(kernel, k);
    *nthreads = as_threads(threads);
    /* the rows of x, or its strings for a string kernel (indexed here) */
    kernel_point_sets(k, R_NilValue, NULL, x, "x", *nthreads);
    check_double_matrix(V, "V");
    int n = k->any_string ? (int) XLENGTH(x) : data_rows(x);
    if (n < 1) error_argument("'x' must have at least one row");
    if (nrows(V) != n) error_argument("'V' must have %d rows, not %d", n, nrows(V));
    kernel_points_fixed(k, x, weights, xp);
    return n;
}

static int mf_shares_tiles(const kernel_eval *k)
{
    return kernel_tiles_shared(k);
}

static int mf_tile(SEXP tile)
{
    int S = as_count(tile, "tile", 8, 4096);
    if (S % 8) error_argument("'tile' must be a multiple of 8, not %d", S);
    return S;
}

static void set_count(SEXP ans, double count)
{
    SEXP c = PROTECT(ScalarReal(count));
    setAttrib(ans, install("kernel_values"), c);
    UNPROTECT(1);
}

/* .Call (kernel_block_product() in R/matrix_free.R): K[rows, ] V, a
 * length(rows) x ncol(V) double matrix with the attribute kernel_values
 * (the kernel values computed), K the kernel matrix of the rows of x.
 * x: n x d double matrix, or n strings for a string kernel; row0, nrow:
 * integers, the rows row0 + 1 ... row0 + nrow (1-based, as R counts);
 * kernel: a program from fastkpca:::kernel_program(); weights: the
 * conformal weights of the rows of x; V: n x b double matrix; threads;
 * tile: the rows and columns of the symmetric product's tiles (a
 * multiple of 8; the numbers do not depend on it); step: NULL or a
 * function called after each interrupt check (the tests count the work
 * done after an interrupt). */
SEXP kernel_block_product(SEXP x, SEXP row0, SEXP nrow, SEXP kernel, SEXP weights, SEXP V,
                          SEXP threads, SEXP tile, SEXP step)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_points xp;
    int nthreads;
    int n = mf_setup(x, kernel, weights, V, threads, &k, &xp, &nthreads), b = ncols(V);
    int first = as_count(row0, "row0", 0, n - 1);
    int rows = as_count(nrow, "nrow", 1, n - first);
    int S = mf_tile(tile);
    check_step(step);
    int rb = (int) (MF_CHECK_VALUES / n);
    rb = rb > MF_ROW_BLOCK ? MF_ROW_BLOCK : rb < 8 ? 8 : rb / 8 * 8;
    double count = 0.0;

    SEXP ans = PROTECT(allocMatrix(REALSXP, rows, b));
    double *Y = REAL(ans);
    for (R_xlen_t i = 0; i < XLENGTH(ans); i++) Y[i] = 0.0;
    if (mf_shares_tiles(&k)) {
        if (first == 0 && rows == n)
            all_rows_product(&k, &xp, REAL(V), n, b, Y, nthreads, S, &count, step);
        else
            by_rows_product(&k, &xp, first, rows, rb, REAL(V), n, b, Y, nthreads, &count,
                            step);
        set_count(ans, count);
        UNPROTECT(1);
        return ans;
    }
    const double **rbuf = (const double **) R_alloc((size_t) k.nweights + 1,
                                                    sizeof(double *));
    const double **cbuf = (const double **) R_alloc((size_t) k.nweights + 1,
                                                    sizeof(double *));
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
            count += (double) nr * nc;
            tile_gemm(nr, b, nc, T, nr, 0, REAL(V) + j0, n, 0, 1.0, Y + i0, rows,
                      nthreads);
        }
        R_CheckUserInterrupt();
        call_step(step);
    }
    set_count(ans, count);
    UNPROTECT(1);
    return ans;
}

/* .Call (kernel_pair_products() in R/matrix_free.R): a worker's share of
 * a pass, for a kernel that shares tiles (kernel_shares_tiles()). pairs:
 * an integer matrix of 2 rows, each column a pair of groups (g, h), h <=
 * g, 0-based (matrix_free_groups()); the other arguments as for
 * kernel_block_product(). Returns a list of 2 elements per pair: the
 * group sums P[g, h] (rows of group g x b) and P[h, g] (NULL when h = g),
 * with the attribute kernel_values. */
SEXP kernel_pair_products(SEXP x, SEXP pairs, SEXP kernel, SEXP weights, SEXP V,
                          SEXP threads, SEXP tile)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_points xp;
    int nthreads;
    int n = mf_setup(x, kernel, weights, V, threads, &k, &xp, &nthreads), b = ncols(V);
    int S = mf_tile(tile);
    if (!mf_shares_tiles(&k))
        error_argument("the kernel does not share tiles: pass whole rows instead");
    if (!isInteger(pairs) || !isMatrix(pairs) || nrows(pairs) != 2)
        error_argument("'pairs' must be an integer matrix of 2 rows");
    int *starts = (int *) R_alloc(MF_GROUPS + 1, sizeof(int));
    int G = mf_groups(n, starts), np = ncols(pairs);
    const int *P = INTEGER(pairs);
    for (int p = 0; p < np; p++) {
        int g = P[2 * p], h = P[2 * p + 1];
        if (g == NA_INTEGER || h == NA_INTEGER || h < 0 || g >= G || h > g)
            error_argument("'pairs' must hold groups h <= g below %d", G);
    }
    kernel_tiles *plan = all_rows_plan(&k, &xp, n, nthreads);
    double *T = thread_tiles(nthreads, S, 0);
    double count = 0.0;
    SEXP ans = PROTECT(allocVector(VECSXP, 2 * (R_xlen_t) np));
    for (int p = 0; p < np; p++) {
        int g = P[2 * p], h = P[2 * p + 1];
        int rg = starts[g], mg = starts[g + 1] - rg, rh = starts[h], mh = starts[h + 1] - rh;
        SEXP Pg = allocMatrix(REALSXP, mg, b);
        SET_VECTOR_ELT(ans, 2 * p, Pg);
        zero(REAL(Pg), (size_t) mg * b);
        if (g == h) {
            tile_pipeline(&k, plan, rg, mg, rg, mg, 1, REAL(V), n, b, REAL(Pg), mg, REAL(Pg), mg,
                          T, nthreads, S, &count, R_NilValue);
            continue;
        }
        SEXP Ph = allocMatrix(REALSXP, mh, b);
        SET_VECTOR_ELT(ans, 2 * p + 1, Ph);
        zero(REAL(Ph), (size_t) mh * b);
        tile_pipeline(&k, plan, rg, mg, rh, mh, 0, REAL(V), n, b, REAL(Pg), mg, REAL(Ph), mh, T,
                      nthreads, S, &count, R_NilValue);
    }
    set_count(ans, count);
    UNPROTECT(1);
    return ans;
}

/* .Call (matrix_free_groups() in R/matrix_free.R): the 0-based first rows
 * of the groups of n rows, and n after the last (mf_groups()). */
SEXP matrix_free_groups(SEXP n)
{
    engine_entered(__func__);
    int rows = as_count(n, "n", 1, INT_MAX);
    int starts[MF_GROUPS + 1];
    int G = mf_groups(rows, starts);
    SEXP ans = PROTECT(allocVector(INTSXP, G + 1));
    for (int g = 0; g <= G; g++) INTEGER(ans)[g] = starts[g];
    UNPROTECT(1);
    return ans;
}

/* .Call (matrix_free_fold() in R/matrix_free.R): K V (n x b) from the
 * workers' group sums, given as a list of G x G matrices, sums[r + G c]
 * = P[r, c] (0-based; rows of group r, b columns): each group of rows gets
 * its sums added in increasing order of their group of columns, the first
 * as it is, as all_rows_product() adds them, so the same bits as one
 * process. */
SEXP matrix_free_fold(SEXP n_, SEXP b_, SEXP sums)
{
    engine_entered(__func__);
    int n = as_count(n_, "n", 1, INT_MAX), b = as_count(b_, "b", 1, INT_MAX);
    int starts[MF_GROUPS + 1];
    int G = mf_groups(n, starts);
    if (TYPEOF(sums) != VECSXP || XLENGTH(sums) != (R_xlen_t) G * G)
        error_argument("'sums' must be a list of the %d x %d group sums", G, G);
    for (int r = 0; r < G; r++)
        for (int c = 0; c < G; c++) {
            SEXP P = VECTOR_ELT(sums, r + (R_xlen_t) G * c);
            if (!isReal(P) || !isMatrix(P) || nrows(P) != starts[r + 1] - starts[r] ||
                ncols(P) != b)
                error_argument("group sum (%d, %d) must be a double matrix of the rows of "
                               "group %d and %d columns", r + 1, c + 1, r + 1, b);
        }
    SEXP Y = PROTECT(allocMatrix(REALSXP, n, b));
    for (int r = 0; r < G; r++) {
        int rows = starts[r + 1] - starts[r];
        for (int j = 0; j < b; j++) {
            double *y = REAL(Y) + (size_t) j * n + starts[r];
            const double *first = REAL(VECTOR_ELT(sums, r)) + (size_t) j * rows;
            memcpy(y, first, (size_t) rows * sizeof(double));
            for (int c = 1; c < G; c++) {
                const double *p = REAL(VECTOR_ELT(sums, r + (R_xlen_t) G * c)) +
                                  (size_t) j * rows;
                for (int i = 0; i < rows; i++) y[i] += p[i];
            }
        }
    }
    UNPROTECT(1);
    return Y;
}

/* .Call (kernel_shares_tiles() in R/matrix_free.R): whether the passes of
 * the kernel of the program share the tiles of the lower triangle, on
 * dense rows or (sparse TRUE) sparse rows (kernel_tiles_shared()). */
SEXP kernel_shares_tiles(SEXP kernel, SEXP sparse)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    if (!isLogical(sparse) || XLENGTH(sparse) != 1 || LOGICAL(sparse)[0] == NA_LOGICAL)
        error_argument("'sparse' must be TRUE or FALSE");
    k.sparse = LOGICAL(sparse)[0];
    return ScalarLogical(mf_shares_tiles(&k));
}

/* .Call (oriented_columns() in R/matrix_free.R): a copy of the n x k double
 * matrix V with the sign rule of every fit applied (orient_columns() in
 * eigen.c). */
SEXP oriented_columns(SEXP V)
{
    engine_entered(__func__);
    if (!isReal(V) || !isMatrix(V) || nrows(V) < 1 || ncols(V) < 1)
        error_argument("'V' must be a double matrix with at least one row and one column");
    SEXP ans = PROTECT(duplicate(V));
    orient_columns(nrows(ans), ncols(ans), REAL(ans));
    UNPROTECT(1);
    return ans;
}
