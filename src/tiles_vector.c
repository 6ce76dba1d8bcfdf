/* The matrix-vector products of the register tiles, for R's reference
 * BLAS, whose dsymv and dgemv sum each dot product in one dependent chain
 * of additions: the symmetric matrix-vector product of the solvers
 * (symv_lower()), the general ones (gemv_add(), gemv_t()) and the
 * randomized solver's symmetric matrix product (symm_lower()). Their
 * bodies are written once in tiles_vector.h and compiled here once per
 * copy: plain loops, two doubles a vector (SSE2 or NEON), AVX2 with FMA
 * (for the AVX2 and AVX-512 paths: there is no wider copy); the session's
 * path (simd_active()) picks the copy. Every entry is summed in one order,
 * fixed by its position and the sizes, on every thread count; the copies
 * differ only in rounding (fused multiply-adds in the AVX2 and NEON ones).
 * Each product has a form that takes the path (tiles.h: symv_lower_path(),
 * ...), for the tests' entry point (tile_product.c). Which BLAS is loaded,
 * and when a product goes to it, is blas.c's.
 * Beside tiles.c (the general and rank-k products), below blas.c and
 * reflector_tiles.c: it calls only the vector layer (simd.h, simd.c), the
 * thread-work setting (tile_thread_work(), tiles.c) and R's interrupt
 * check. */
#include "fastkpca.h"
#include "simd.h"
#include "tiles.h"
#include <string.h>

/* The path whose copy the vector products (symv, gemv, symm) run for a
 * path: they have none wider than AVX2. */
simd_path vector_products_path(simd_path path)
{
    return path == SIMD_AVX512 ? SIMD_AVX2 : path;
}

/* ---- the symmetric matrix-vector product ------------------------------ */

/* y = A x, A symmetric n x n of which the lower triangle is stored: the
 * product of the iterative solver and of the panel reduction (eigen.c).
 * The reference dsymv's dot products are one dependent chain of additions
 * (about one multiply-add per 4 cycles); here each column of the lower
 * triangle is read once, four columns at a time, in vectors, for both of
 * its uses: A(i, j) x(j) (i >= j) goes to a partial vector of the column
 * block of j, A(i, j) x(i) (i > j) to the dot product of column j. The
 * column blocks are SYMV_BLOCK columns wide whatever the thread count, and
 * y(i) = dot(i) + the partial vectors of the blocks up to i, in block
 * order: every entry is summed in one order, fixed by i and n, on every
 * path (the plain loops keep the vectors' four lanes of dot products). */
#define SYMV_BLOCK 128

/* The doubles of scratch symv_lower() needs for order n. */
size_t symv_lower_work(int n)
{
    size_t len = 0;
    for (int j0 = 0; j0 < n; j0 += SYMV_BLOCK) len += (size_t) (n - j0);
    return len + (size_t) n;
}

/* Where block b's partial vector (rows b SYMV_BLOCK .. n - 1) starts in
 * the scratch, after the n dot products. */
static size_t symv_block_offset(int n, int b)
{
    return (size_t) n + (size_t) b * n - (size_t) SYMV_BLOCK * ((size_t) b * (b - 1) / 2);
}

/* ---- the copies of the matrix-vector products (tiles_vector.h) ----------- */

/* Columns per panel and rows per chunk of the symmetric product (symm): a
 * chunk of a panel of A (512 x 32 doubles, 128 KB) stays in the L2 cache
 * while every column of X goes over it. */
#define SYM_PANEL 32
#define SYM_CHUNK 512

/* plain loops: a product, then a sum */
#define TV(name) name##_plain
#define TV_ATTR
#define TV_VECTOR 0
#define TV_FMA1(x, y, acc) SD_MUL_ADD(x, y, acc)
#include "tiles_vector.h"
#undef TV
#undef TV_ATTR
#undef TV_VECTOR
#undef TV_FMA1

#ifdef SIMD_VECTOR
/* four lanes as two vectors of two doubles: SSE2 (a product, then a sum)
 * or NEON (fused) */
# define TV(name) name##_v2
# define TV_ATTR
# define TV_VECTOR 1
# define TV_FMA(x, y, acc) VD4H_FMA(x, y, acc)
# define TV_FMA2(x, y, acc) VD2_FMA(x, y, acc)
# define TV_FMA1(x, y, acc) VD2_FMA1(x, y, acc)
# include "tiles_vector.h"
# undef TV
# undef TV_ATTR
# undef TV_VECTOR
# undef TV_FMA
# undef TV_FMA2
# undef TV_FMA1
#endif

#ifdef SIMD_X86
/* AVX2 with FMA, for the AVX2 and AVX-512 paths: fused */
# define TV(name) name##_avx2
# define TV_ATTR SIMD_AVX2_ATTR
# define TV_VECTOR 1
# define TV_FMA(x, y, acc) VD4_FMA(x, y, acc)
# define TV_FMA1(x, y, acc) VD4_FMA1(x, y, acc)
# include "tiles_vector.h"
# undef TV
# undef TV_ATTR
# undef TV_VECTOR
# undef TV_FMA
# undef TV_FMA1
#endif

typedef void (*symv_quad_fn)(int, const double *, int, const double *, int, double *,
                             double *);

/* The column kernel of a path (simd_resolve()d): AVX2 with FMA for AVX2
 * and AVX-512, the vectors in halves for SSE2 and NEON, else plain. */
typedef struct {
    symv_quad_fn quad, single;
} symv_columns;

static symv_columns symv_columns_for(simd_path path)
{
#ifdef SIMD_X86
    if (path == SIMD_AVX2 || path == SIMD_AVX512)
        return (symv_columns) {symv_quad_avx2, symv_single_avx2};
#endif
#ifdef SIMD_VECTOR
    if (path != SIMD_PLAIN) return (symv_columns) {symv_quad_v2, symv_single_v2};
#endif
    (void) path;
    return (symv_columns) {symv_quad_plain, symv_single_plain};
}

/* An entry of symv_lower() against the thread-work threshold, in
 * multiply-adds of the products whose work it was set for: each entry is
 * read from memory and used twice, where a product's multiply-add runs
 * from registers. Counted as one, a symv ran on one thread below n = 7746,
 * and the exact solver's tridiagonal reduction, mostly symv, did not
 * scale (n = 3000: 2.32 s on 2 threads, 2.23 on 1; threaded, 1.35). */
#define SYMV_ENTRY_WORK 16.0

static void symv_lower_with(symv_columns columns, int n, const double *A, int lda,
                            const double *x, double *y, double *work, int threads)
{
    if (n <= 0) return;
    int nblocks = (n + SYMV_BLOCK - 1) / SYMV_BLOCK;
    double *dots = work; /* n, then the partial vectors */
    int nt = threads > 1 ? threads : 1;
    if ((double) n * n / 2.0 * SYMV_ENTRY_WORK < tile_thread_work()) nt = 1;
    (void) nt; /* without OpenMP */
    int nchunks = (n + 1023) / 1024;
    /* one parallel region: on a busy machine each region waits for a
     * second thread to be scheduled */
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int b = 0; b < nblocks; b++) {
            int j0 = b * SYMV_BLOCK, j1 = j0 + SYMV_BLOCK < n ? j0 + SYMV_BLOCK : n;
            /* block b's partial vector, rows j0 .. n - 1 */
            double *t = work + symv_block_offset(n, b);
            memset(t, 0, (size_t) (n - j0) * sizeof(double));
            int j = j0;
            for (; j + 4 <= j1; j += 4) columns.quad(n, A, lda, x, j, t + (j - j0), dots + j);
            for (; j < j1; j++) columns.single(n, A, lda, x, j, t + (j - j0), dots + j);
        }
        /* y = dots + the partial vectors in block order, in chunks of rows */
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int c = 0; c < nchunks; c++) {
            int i0 = c * 1024, i1 = i0 + 1024 < n ? i0 + 1024 : n;
            for (int i = i0; i < i1; i++) y[i] = dots[i];
            for (int b = 0; b < nblocks && b * SYMV_BLOCK < i1; b++) {
                int j0 = b * SYMV_BLOCK, from = i0 > j0 ? i0 : j0;
                const double *t = work + symv_block_offset(n, b) - j0;
                for (int i = from; i < i1; i++) y[i] += t[i];
            }
        }
    }
}

void symv_lower(int n, const double *A, int lda, const double *x, double *y,
                double *work, int threads)
{
    symv_lower_path(simd_active(), n, A, lda, x, y, work, threads);
}

void symv_lower_path(simd_path path, int n, const double *A, int lda, const double *x,
                     double *y, double *work, int threads)
{
    symv_lower_with(symv_columns_for(path), n, A, lda, x, y, work, threads);
}

/* ---- the matrix-vector products ------------------------------------------ */

void gemv_t_path(simd_path path, int n, int k, const double *A, int lda, const double *x,
                 double *y)
{
#ifdef SIMD_X86
    if (path == SIMD_AVX2 || path == SIMD_AVX512) {
        gemv_t_avx2(n, k, A, lda, x, y);
        return;
    }
#endif
#ifdef SIMD_VECTOR
    if (path != SIMD_PLAIN) {
        gemv_t_v2(n, k, A, lda, x, y);
        return;
    }
#endif
    gemv_t_plain(n, k, A, lda, x, y);
}

void gemv_add_path(simd_path path, int n, int k, const double *A, int lda, const double *x,
                   double sign, double *y)
{
#ifdef SIMD_X86
    if (path == SIMD_AVX2 || path == SIMD_AVX512) {
        gemv_avx2(n, k, A, lda, x, sign, y);
        return;
    }
#endif
#ifdef SIMD_VECTOR
    if (path != SIMD_PLAIN) {
        gemv_v2(n, k, A, lda, x, sign, y);
        return;
    }
#endif
    gemv_plain(n, k, A, lda, x, sign, y);
}

void gemv_t(int n, int k, const double *A, int lda, const double *x, double *y)
{
    gemv_t_path(simd_active(), n, k, A, lda, x, y);
}

void gemv_add(int n, int k, const double *A, int lda, const double *x, double sign,
              double *y)
{
    gemv_add_path(simd_active(), n, k, A, lda, x, sign, y);
}

/* ---- the symmetric matrix product of the randomized solver -------------- */

/* Y (n x l) = A X, A symmetric in its lower triangle: R's reference dsymm
 * runs at about 1 G multiply-adds per second on the project machine; the
 * copies of tiles_vector.h (symm), which the compiler vectorizes, several
 * times that (bench/randomized.R). */
typedef void (*symm_fn)(const double *, int, const double *, double *, int, int);

static symm_fn symm_for(simd_path path)
{
#ifdef SIMD_X86
    if (path == SIMD_AVX2 || path == SIMD_AVX512) return symm_avx2;
#endif
#ifdef SIMD_VECTOR
    if (path != SIMD_PLAIN) return symm_v2;
#endif
    (void) path;
    return symm_plain;
}

static void symm_lower_with(symm_fn product, const double *A, int n, const double *X,
                            int l, double *Y, int threads)
{
    if (threads > l) threads = l;
    if (threads < 1) threads = 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#endif
    for (int t = 0; t < threads; t++) {
        int c0 = (int) ((long long) l * t / threads);
        int c1 = (int) ((long long) l * (t + 1) / threads);
        product(A, n, X, Y, c0, c1);
    }
}

/* Y (n x l) = A X, A symmetric in its lower triangle; the columns in one
 * slice per thread, so that each entry is summed in the same order
 * whatever the number of threads. Main thread (an interrupt check). */
void symm_lower(const double *A, int n, const double *X, int l, double *Y, int threads)
{
    symm_lower_path(simd_active(), A, n, X, l, Y, threads);
    R_CheckUserInterrupt();
}

void symm_lower_path(simd_path path, const double *A, int n, const double *X, int l,
                     double *Y, int threads)
{
    symm_lower_with(symm_for(path), A, n, X, l, Y, threads);
}
