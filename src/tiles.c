/* Matrix products in register tiles, for R's reference BLAS, whose dgemm
 * runs at about 1.6 G multiply-adds per second on the project machine.
 *
 * C += op(A) op(B) is computed in tiles of mr rows by nr columns of C whose
 * accumulators stay in registers: 24 x 8 with AVX-512, 12 x 4 with AVX2 and
 * FMA (both checked at run time, as nystrom.c and kernel_fast.c do), 6 x 4
 * with SSE2 (every x86-64 CPU), 4 x 4 in plain loops elsewhere. B is packed
 * per slice of TILE_KC rows into panels of nr columns (row by row); A is
 * read in place when it is not transposed (the mr rows of a tile are
 * contiguous in each column), and packed otherwise and for the last,
 * partial row group (zero-padded).
 *
 * The order of every sum is fixed: a tile loads C(i, j) into its
 * accumulator and adds A(i, p) B(p, j) for p = 0, 1, ..., k - 1, each in
 * one vector lane, so an entry of C does not depend on m or n, on which
 * rows or columns are in the call, on the slice length or on the thread
 * count: padded rows and columns only touch entries that are thrown away.
 * Row results do depend on the instruction set (fused multiply-adds round
 * once), which is fixed per machine.
 *
 * Nothing here calls R except the .Call entry point for the tests at the
 * end: the products run inside OpenMP regions (their scratch is on the
 * stack, about 80 KB). */
#include "fastkpca.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
# define TILES_DLSYM 1
# include <dlfcn.h>
# include <time.h>
#endif

/* Rows of A (columns of op(A)) per slice: a packed slice of B
 * (TILE_KC x TILE_NC) stays in the L1 cache. */
#define TILE_KC 128
/* Columns of B packed at once: a multiple of every nr. */
#define TILE_NC 48
#define TILE_MR_MAX 24
#define TILE_NR_MAX 8

/* The fewest multiply-adds a parallel region of these products gets. A
 * region costs about 10 us on an idle machine; on a busy one (more
 * threads than cores) each waits for its threads to be scheduled, a time
 * slice of milliseconds: with regions of 2 M multiply-adds, the exact
 * solver's reduction at n = 3000 (thousands of regions) ran 3 to 4 times
 * slower on 2 threads than on 1 at a load of 5 on 2 cores. 3e7 (about a
 * millisecond on one core) bounds that loss. The environment variable
 * FASTKPCA_TILE_THREAD_WORK replaces it (the tests set 0, so that small
 * problems run on their threads). */
#define TILE_THREAD_WORK 3e7
static double thread_work_min(void)
{
    const char *s = getenv("FASTKPCA_TILE_THREAD_WORK");
    return s && *s ? atof(s) : TILE_THREAD_WORK;
}

/* c (mr x nr, leading dimension ldc) += sum over p < kc of a[., p] b[p, .]:
 * a's column p is a + p lda (mr doubles), b's row p is b + p nr. */
typedef void (*tile_fn)(int kc, const double *a, int lda, const double *b, double *c,
                        int ldc);

typedef struct {
    int mr, nr;
    tile_fn tile;
} tile_kernel;

#if defined(__GNUC__) && defined(__x86_64__) && (__GNUC__ >= 7 || defined(__clang__))
# define TILES_X86 1
# include <immintrin.h>

/* The tiles are written out in full: GCC keeps an array of accumulators in
 * memory. The fused multiply-adds are intrinsics, so that they do not
 * depend on the compiler's contraction flags. */
# define T8_LOAD(j) __m512d c0##j = _mm512_loadu_pd(c + (size_t) (j) * ldc),          \
        c1##j = _mm512_loadu_pd(c + (size_t) (j) * ldc + 8),                            \
        c2##j = _mm512_loadu_pd(c + (size_t) (j) * ldc + 16)
# define T8_FMA(j) do {                                                              \
        __m512d y = _mm512_set1_pd(bp[j]);                                              \
        c0##j = _mm512_fmadd_pd(x0, y, c0##j); c1##j = _mm512_fmadd_pd(x1, y, c1##j);   \
        c2##j = _mm512_fmadd_pd(x2, y, c2##j);                                          \
    } while (0)
# define T8_STORE(j) do {                                                            \
        _mm512_storeu_pd(c + (size_t) (j) * ldc, c0##j);                                \
        _mm512_storeu_pd(c + (size_t) (j) * ldc + 8, c1##j);                            \
        _mm512_storeu_pd(c + (size_t) (j) * ldc + 16, c2##j);                           \
    } while (0)
__attribute__((target("avx512f")))
static void tile_avx512(int kc, const double *a, int lda, const double *b, double *c,
                        int ldc)
{
    T8_LOAD(0); T8_LOAD(1); T8_LOAD(2); T8_LOAD(3);
    T8_LOAD(4); T8_LOAD(5); T8_LOAD(6); T8_LOAD(7);
    for (int p = 0; p < kc; p++) {
        const double *ap = a + (size_t) p * lda, *bp = b + (size_t) p * 8;
        __m512d x0 = _mm512_loadu_pd(ap), x1 = _mm512_loadu_pd(ap + 8),
            x2 = _mm512_loadu_pd(ap + 16);
        T8_FMA(0); T8_FMA(1); T8_FMA(2); T8_FMA(3);
        T8_FMA(4); T8_FMA(5); T8_FMA(6); T8_FMA(7);
    }
    T8_STORE(0); T8_STORE(1); T8_STORE(2); T8_STORE(3);
    T8_STORE(4); T8_STORE(5); T8_STORE(6); T8_STORE(7);
}

# define T4_LOAD(j) __m256d c0##j = _mm256_loadu_pd(c + (size_t) (j) * ldc),          \
        c1##j = _mm256_loadu_pd(c + (size_t) (j) * ldc + 4),                            \
        c2##j = _mm256_loadu_pd(c + (size_t) (j) * ldc + 8)
# define T4_FMA(j) do {                                                              \
        __m256d y = _mm256_broadcast_sd(bp + (j));                                      \
        c0##j = _mm256_fmadd_pd(x0, y, c0##j); c1##j = _mm256_fmadd_pd(x1, y, c1##j);   \
        c2##j = _mm256_fmadd_pd(x2, y, c2##j);                                          \
    } while (0)
# define T4_STORE(j) do {                                                            \
        _mm256_storeu_pd(c + (size_t) (j) * ldc, c0##j);                                \
        _mm256_storeu_pd(c + (size_t) (j) * ldc + 4, c1##j);                            \
        _mm256_storeu_pd(c + (size_t) (j) * ldc + 8, c2##j);                            \
    } while (0)
__attribute__((target("avx2,fma")))
static void tile_avx2(int kc, const double *a, int lda, const double *b, double *c,
                      int ldc)
{
    T4_LOAD(0); T4_LOAD(1); T4_LOAD(2); T4_LOAD(3);
    for (int p = 0; p < kc; p++) {
        const double *ap = a + (size_t) p * lda, *bp = b + (size_t) p * 4;
        __m256d x0 = _mm256_loadu_pd(ap), x1 = _mm256_loadu_pd(ap + 4),
            x2 = _mm256_loadu_pd(ap + 8);
        T4_FMA(0); T4_FMA(1); T4_FMA(2); T4_FMA(3);
    }
    T4_STORE(0); T4_STORE(1); T4_STORE(2); T4_STORE(3);
}

/* SSE2 has no fused multiply-add: a product then a sum, as plain loops */
# define T2_LOAD(j) __m128d c0##j = _mm_loadu_pd(c + (size_t) (j) * ldc),              \
        c1##j = _mm_loadu_pd(c + (size_t) (j) * ldc + 2),                               \
        c2##j = _mm_loadu_pd(c + (size_t) (j) * ldc + 4)
# define T2_FMA(j) do {                                                              \
        __m128d y = _mm_set1_pd(bp[j]);                                                 \
        c0##j = _mm_add_pd(c0##j, _mm_mul_pd(x0, y));                                   \
        c1##j = _mm_add_pd(c1##j, _mm_mul_pd(x1, y));                                   \
        c2##j = _mm_add_pd(c2##j, _mm_mul_pd(x2, y));                                   \
    } while (0)
# define T2_STORE(j) do {                                                            \
        _mm_storeu_pd(c + (size_t) (j) * ldc, c0##j);                                   \
        _mm_storeu_pd(c + (size_t) (j) * ldc + 2, c1##j);                               \
        _mm_storeu_pd(c + (size_t) (j) * ldc + 4, c2##j);                               \
    } while (0)
static void tile_sse2(int kc, const double *a, int lda, const double *b, double *c,
                      int ldc)
{
    T2_LOAD(0); T2_LOAD(1); T2_LOAD(2); T2_LOAD(3);
    for (int p = 0; p < kc; p++) {
        const double *ap = a + (size_t) p * lda, *bp = b + (size_t) p * 4;
        __m128d x0 = _mm_loadu_pd(ap), x1 = _mm_loadu_pd(ap + 2), x2 = _mm_loadu_pd(ap + 4);
        T2_FMA(0); T2_FMA(1); T2_FMA(2); T2_FMA(3);
    }
    T2_STORE(0); T2_STORE(1); T2_STORE(2); T2_STORE(3);
}
#endif

/* Plain loops: every system and compiler. */
static void tile_plain(int kc, const double *a, int lda, const double *b, double *c,
                       int ldc)
{
    for (int j = 0; j < 4; j++) {
        double *cj = c + (size_t) j * ldc;
        double c0 = cj[0], c1 = cj[1], c2 = cj[2], c3 = cj[3];
        for (int p = 0; p < kc; p++) {
            const double *ap = a + (size_t) p * lda;
            double y = b[(size_t) p * 4 + j];
            c0 += ap[0] * y; c1 += ap[1] * y; c2 += ap[2] * y; c3 += ap[3] * y;
        }
        cj[0] = c0; cj[1] = c1; cj[2] = c2; cj[3] = c3;
    }
}

/* Whether the CPU has AVX2 and FMA (asked once). */
static int cpu_has_avx2_fma(void)
{
#ifdef TILES_X86
    static int avx2 = -1;
    if (avx2 < 0) avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return avx2;
#else
    return 0;
#endif
}

/* The kernel of a path: TILE_AUTO picks the widest this CPU runs. Asking
 * for one the CPU lacks gives the best it has below it. */
static tile_kernel tile_kernel_for(int path)
{
    tile_kernel kern = {4, 4, tile_plain};
    if (path == TILE_PLAIN) return kern;
#ifdef TILES_X86
    kern = (tile_kernel) {6, 4, tile_sse2};
    if (path == TILE_SSE2) return kern;
    if (cpu_has_avx2_fma()) kern = (tile_kernel) {12, 4, tile_avx2};
    if (path == TILE_AVX2) return kern;
    if (__builtin_cpu_supports("avx512f")) kern = (tile_kernel) {24, 8, tile_avx512};
#endif
    return kern;
}

static tile_kernel tile_kernel_auto(void)
{
    static int known = 0;
    static tile_kernel kern;
    if (!known) {
        kern = tile_kernel_for(TILE_AUTO);
        known = 1;
    }
    return kern;
}

/* The name of the path a kernel is, for the tests and benchmarks. */
static const char *tile_kernel_name(tile_kernel k)
{
    return k.mr == 24 ? "avx512" : k.mr == 12 ? "avx2" : k.mr == 6 ? "sse2" : "plain";
}

/* Pack rows p0 .. p0 + kc - 1 and columns j0 .. j0 + nc - 1 of op(B)
 * (times sign, +1 or -1: exact) into panels of nr columns, row by row,
 * zero-padding the last panel to nr columns. */
static void pack_b(const double *B, int ldb, int transb, double sign, int p0, int kc,
                   int j0, int nc, int nr, double *dst)
{
    int panels = (nc + nr - 1) / nr;
    for (int q = 0; q < panels; q++) {
        double *P = dst + (size_t) q * kc * nr;
        int cols = nc - q * nr < nr ? nc - q * nr : nr;
        if (transb) {
            /* row p of op(B) is contiguous in B' */
            for (int p = 0; p < kc; p++) {
                const double *row = B + j0 + q * nr + (size_t) (p0 + p) * ldb;
                double *dp = P + (size_t) p * nr;
                for (int jj = 0; jj < cols; jj++) dp[jj] = sign * row[jj];
                for (int jj = cols; jj < nr; jj++) dp[jj] = 0.0;
            }
            continue;
        }
        for (int jj = 0; jj < nr; jj++) {
            int j = j0 + q * nr + jj;
            if (j >= j0 + nc) {
                for (int p = 0; p < kc; p++) P[(size_t) p * nr + jj] = 0.0;
            } else {
                const double *col = B + p0 + (size_t) j * ldb;
                for (int p = 0; p < kc; p++) P[(size_t) p * nr + jj] = sign * col[p];
            }
        }
    }
}

/* Pack rows i0 .. i0 + rows - 1 (rows <= mr) and columns p0 .. p0 + kc - 1
 * of op(A) column by column (leading dimension mr), zero-padding to mr rows. */
static void pack_a(const double *A, int lda, int transa, int i0, int rows, int p0, int kc,
                   int mr, double *dst)
{
    if (transa) {
        /* row i of op(A) is contiguous in A' */
        for (int i = 0; i < mr; i++) {
            const double *src = A + p0 + (size_t) (i0 + i) * lda;
            if (i < rows)
                for (int p = 0; p < kc; p++) dst[(size_t) p * mr + i] = src[p];
            else
                for (int p = 0; p < kc; p++) dst[(size_t) p * mr + i] = 0.0;
        }
        return;
    }
    for (int p = 0; p < kc; p++) {
        double *col = dst + (size_t) p * mr;
        const double *src = A + i0 + (size_t) (p0 + p) * lda;
        for (int i = 0; i < rows; i++) col[i] = src[i];
        for (int i = rows; i < mr; i++) col[i] = 0.0;
    }
}

/* C (m x n) += sign op(A) op(B) on one thread, op(A) m x k and op(B) k x n:
 * op(A) = A' when transa, op(B) = B' when transb. */
static void tile_product_serial(tile_kernel K, int m, int n, int k, const double *A,
                                int lda, int transa, const double *B, int ldb, int transb,
                                double sign, double *C, int ldc)
{
    double bbuf[TILE_KC * TILE_NC], abuf[TILE_MR_MAX * TILE_KC];
    double ctmp[TILE_MR_MAX * TILE_NR_MAX];
    int mr = K.mr, nr = K.nr;
    if (m <= 0 || n <= 0 || k <= 0) return;
    for (int p0 = 0; p0 < k; p0 += TILE_KC) {
        int kc = k - p0 < TILE_KC ? k - p0 : TILE_KC;
        for (int j0 = 0; j0 < n; j0 += TILE_NC) {
            int nc = n - j0 < TILE_NC ? n - j0 : TILE_NC;
            pack_b(B, ldb, transb, sign, p0, kc, j0, nc, nr, bbuf);
            for (int i0 = 0; i0 < m; i0 += mr) {
                int rows = m - i0 < mr ? m - i0 : mr;
                const double *a;
                int ld;
                if (!transa && rows == mr) {
                    a = A + i0 + (size_t) p0 * lda;
                    ld = lda;
                } else {
                    pack_a(A, lda, transa, i0, rows, p0, kc, mr, abuf);
                    a = abuf;
                    ld = mr;
                }
                for (int q = 0; q * nr < nc; q++) {
                    int j = j0 + q * nr, cols = nc - q * nr < nr ? nc - q * nr : nr;
                    const double *b = bbuf + (size_t) q * kc * nr;
                    double *c = C + i0 + (size_t) j * ldc;
                    if (rows == mr && cols == nr) {
                        K.tile(kc, a, ld, b, c, ldc);
                        continue;
                    }
                    /* a partial tile: through a full one, padded with zeros */
                    for (int jj = 0; jj < nr; jj++)
                        for (int ii = 0; ii < mr; ii++)
                            ctmp[ii + jj * mr] =
                                ii < rows && jj < cols ? c[ii + (size_t) jj * ldc] : 0.0;
                    K.tile(kc, a, ld, b, ctmp, mr);
                    for (int jj = 0; jj < cols; jj++)
                        for (int ii = 0; ii < rows; ii++)
                            c[ii + (size_t) jj * ldc] = ctmp[ii + jj * mr];
                }
            }
        }
    }
}

/* C (m x n) += sign op(A) op(B) (see tile_product_serial()) with threads
 * threads, through the given kernel. The threads take whole tiles, each a
 * contiguous range of row groups (or of column panels when there are more
 * of those): every entry is summed in the same order for any count. */
static void tile_product_with(tile_kernel K, int m, int n, int k, const double *A,
                              int lda, int transa, const double *B, int ldb, int transb,
                              double sign, double *C, int ldc, int threads)
{
    if (m <= 0 || n <= 0 || k <= 0) return;
    int groups_m = (m + K.mr - 1) / K.mr, groups_n = (n + K.nr - 1) / K.nr;
    int by_rows = groups_m >= groups_n, groups = by_rows ? groups_m : groups_n;
    int nt = threads > 1 ? threads : 1;
    if ((double) m * n * k < thread_work_min()) nt = 1;
    if (nt > groups) nt = groups;
    if (nt <= 1) {
        tile_product_serial(K, m, n, k, A, lda, transa, B, ldb, transb, sign, C, ldc);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1)
#endif
    for (int t = 0; t < nt; t++) {
        int g0 = (int) ((long long) groups * t / nt),
            g1 = (int) ((long long) groups * (t + 1) / nt);
        if (by_rows) {
            int i0 = g0 * K.mr, i1 = g1 * K.mr < m ? g1 * K.mr : m;
            const double *At = transa ? A + (size_t) i0 * lda : A + i0;
            tile_product_serial(K, i1 - i0, n, k, At, lda, transa, B, ldb, transb, sign,
                                C + i0, ldc);
        } else {
            int j0 = g0 * K.nr, j1 = g1 * K.nr < n ? g1 * K.nr : n;
            const double *Bt = transb ? B + j0 : B + (size_t) j0 * ldb;
            tile_product_serial(K, m, j1 - j0, k, A, lda, transa, Bt, ldb, transb, sign,
                                C + (size_t) j0 * ldc, ldc);
        }
    }
}

void tile_gemm(int m, int n, int k, const double *A, int lda, int transa,
               const double *B, int ldb, int transb, double sign, double *C, int ldc,
               int threads)
{
    tile_product_with(tile_kernel_auto(), m, n, k, A, lda, transa, B, ldb, transb, sign,
                      C, ldc, threads);
}

void tile_kernels_ready(void)
{
    (void) tile_kernel_auto();
}

void tile_gemm_add(int m, int n, int k, const double *A, int lda, const double *B,
                   int ldb, double *C, int ldc)
{
    tile_product_serial(tile_kernel_auto(), m, n, k, A, lda, 0, B, ldb, 0, 1.0, C, ldc);
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
 * order: every entry is summed in one order, fixed by i and n. */
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

#if defined(__GNUC__) && (__GNUC__ >= 5 || defined(__clang__))
typedef double symv_v4 __attribute__((vector_size(32)));
typedef double symv_v4u __attribute__((vector_size(32), aligned(8), may_alias));
# define SYMV_VECTOR 1
#endif

/* Columns j .. j + 3 of the lower triangle: t (rows from j; t[0] is row j)
 * += their part A(i, c) x(c), dots[c - j] = sum over i > c of A(i, c) x(i). */
static inline __attribute__((always_inline)) void
symv_quad_body(int n, const double *A, int lda, const double *x, int j, double *t,
               double *dots)
{
    const double *a0 = A + (size_t) j * lda, *a1 = a0 + lda, *a2 = a1 + lda,
        *a3 = a2 + lda;
    double x0 = x[j], x1 = x[j + 1], x2 = x[j + 2], x3 = x[j + 3];
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
    /* the 4 x 4 diagonal block, lower triangle */
    t[0] += a0[j] * x0;
    t[1] += a0[j + 1] * x0 + a1[j + 1] * x1;
    t[2] += a0[j + 2] * x0 + a1[j + 2] * x1 + a2[j + 2] * x2;
    t[3] += a0[j + 3] * x0 + a1[j + 3] * x1 + a2[j + 3] * x2 + a3[j + 3] * x3;
    d0 += a0[j + 1] * x[j + 1] + a0[j + 2] * x[j + 2] + a0[j + 3] * x[j + 3];
    d1 += a1[j + 2] * x[j + 2] + a1[j + 3] * x[j + 3];
    d2 += a2[j + 3] * x[j + 3];
    int i = j + 4;
#ifdef SYMV_VECTOR
    symv_v4 v0 = {0, 0, 0, 0}, v1 = v0, v2 = v0, v3 = v0;
    symv_v4 y0 = {x0, x0, x0, x0}, y1 = {x1, x1, x1, x1}, y2 = {x2, x2, x2, x2},
        y3 = {x3, x3, x3, x3};
    for (; i + 4 <= n; i += 4) {
        symv_v4 b0 = *(const symv_v4u *) (a0 + i), b1 = *(const symv_v4u *) (a1 + i),
            b2 = *(const symv_v4u *) (a2 + i), b3 = *(const symv_v4u *) (a3 + i),
            xi = *(const symv_v4u *) (x + i), ti = *(const symv_v4u *) (t + i - j);
        ti += b0 * y0 + b1 * y1 + b2 * y2 + b3 * y3;
        *(symv_v4u *) (t + i - j) = ti;
        v0 += b0 * xi; v1 += b1 * xi; v2 += b2 * xi; v3 += b3 * xi;
    }
    d0 += (v0[0] + v0[1]) + (v0[2] + v0[3]);
    d1 += (v1[0] + v1[1]) + (v1[2] + v1[3]);
    d2 += (v2[0] + v2[1]) + (v2[2] + v2[3]);
    d3 += (v3[0] + v3[1]) + (v3[2] + v3[3]);
#endif
    for (; i < n; i++) {
        double b0 = a0[i], b1 = a1[i], b2 = a2[i], b3 = a3[i], xi = x[i];
        t[i - j] += b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3;
        d0 += b0 * xi; d1 += b1 * xi; d2 += b2 * xi; d3 += b3 * xi;
    }
    dots[0] = d0; dots[1] = d1; dots[2] = d2; dots[3] = d3;
}

static void symv_quad_default(int n, const double *A, int lda, const double *x, int j,
                              double *t, double *dots)
{
    symv_quad_body(n, A, lda, x, j, t, dots);
}

#ifdef TILES_X86
__attribute__((target("avx2,fma")))
static void symv_quad_avx2(int n, const double *A, int lda, const double *x, int j,
                           double *t, double *dots)
{
    symv_quad_body(n, A, lda, x, j, t, dots);
}
#endif

/* One column j alone (the last columns of an order not divisible by 4). */
static void symv_single(int n, const double *A, int lda, const double *x, int j,
                        double *t, double *dots)
{
    const double *a = A + (size_t) j * lda;
    double xj = x[j], d = 0.0;
    t[0] += a[j] * xj;
    for (int i = j + 1; i < n; i++) {
        t[i - j] += a[i] * xj;
        d += a[i] * x[i];
    }
    dots[0] = d;
}

typedef void (*symv_quad_fn)(int, const double *, int, const double *, int, double *,
                             double *);

/* The column kernel of a path: AVX2 with FMA where asked for and present,
 * else the default (vectors of 4 doubles as two SSE2 halves, or plain). */
static symv_quad_fn symv_quad_for(int path)
{
#ifdef TILES_X86
    if ((path == TILE_AUTO || path >= TILE_AVX2) && cpu_has_avx2_fma())
        return symv_quad_avx2;
#endif
    return symv_quad_default;
}

static void symv_lower_with(symv_quad_fn quad, int n, const double *A, int lda,
                            const double *x, double *y, double *work, int threads)
{
    if (n <= 0) return;
    int nblocks = (n + SYMV_BLOCK - 1) / SYMV_BLOCK;
    double *dots = work; /* n, then the partial vectors */
    int nt = threads > 1 ? threads : 1;
    if ((double) n * n / 2.0 < thread_work_min()) nt = 1;
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
            for (; j + 4 <= j1; j += 4) quad(n, A, lda, x, j, t + (j - j0), dots + j);
            for (; j < j1; j++) symv_single(n, A, lda, x, j, t + (j - j0), dots + j);
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
    static symv_quad_fn quad = NULL;
    if (!quad) quad = symv_quad_for(TILE_AUTO);
    symv_lower_with(quad, n, A, lda, x, y, work, threads);
}

/* ---- the matrix-vector product ------------------------------------------ */

/* y (n) += sign A x, A n x k (leading dimension lda): the reference dgemv
 * 'N' one column at a time, here four columns per pass over y, in vectors.
 * Each y(i) is summed over the columns in order, whatever n. */
static inline __attribute__((always_inline)) void
gemv_body(int n, int k, const double *A, int lda, const double *x, double sign, double *y)
{
    int l = 0;
    for (; l + 4 <= k; l += 4) {
        const double *a0 = A + (size_t) l * lda, *a1 = a0 + lda, *a2 = a1 + lda,
            *a3 = a2 + lda;
        double x0 = sign * x[l], x1 = sign * x[l + 1], x2 = sign * x[l + 2],
            x3 = sign * x[l + 3];
        int i = 0;
#ifdef SYMV_VECTOR
        symv_v4 y0 = {x0, x0, x0, x0}, y1 = {x1, x1, x1, x1}, y2 = {x2, x2, x2, x2},
            y3 = {x3, x3, x3, x3};
        for (; i + 4 <= n; i += 4) {
            symv_v4 t = *(const symv_v4u *) (y + i);
            t += *(const symv_v4u *) (a0 + i) * y0;
            t += *(const symv_v4u *) (a1 + i) * y1;
            t += *(const symv_v4u *) (a2 + i) * y2;
            t += *(const symv_v4u *) (a3 + i) * y3;
            *(symv_v4u *) (y + i) = t;
        }
#endif
        for (; i < n; i++) {
            double t = y[i];
            t += a0[i] * x0;
            t += a1[i] * x1;
            t += a2[i] * x2;
            t += a3[i] * x3;
            y[i] = t;
        }
    }
    for (; l < k; l++) {
        const double *a = A + (size_t) l * lda;
        double xl = sign * x[l];
        for (int i = 0; i < n; i++) y[i] += a[i] * xl;
    }
}

static void gemv_default(int n, int k, const double *A, int lda, const double *x,
                         double sign, double *y)
{
    gemv_body(n, k, A, lda, x, sign, y);
}

#ifdef TILES_X86
__attribute__((target("avx2,fma")))
static void gemv_avx2(int n, int k, const double *A, int lda, const double *x,
                      double sign, double *y)
{
    gemv_body(n, k, A, lda, x, sign, y);
}
#endif

/* y (k) = A' x, A n x k: four columns' dot products per pass over x, each
 * in vector lanes (the reference dgemv 'T' is one dependent chain of
 * additions per column); the order of each sum is fixed by n. */
static inline __attribute__((always_inline)) void
gemv_t_body(int n, int k, const double *A, int lda, const double *x, double *y)
{
    int l = 0;
    for (; l + 4 <= k; l += 4) {
        const double *a0 = A + (size_t) l * lda, *a1 = a0 + lda, *a2 = a1 + lda,
            *a3 = a2 + lda;
        double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
        int i = 0;
#ifdef SYMV_VECTOR
        symv_v4 v0 = {0, 0, 0, 0}, v1 = v0, v2 = v0, v3 = v0;
        for (; i + 4 <= n; i += 4) {
            symv_v4 xi = *(const symv_v4u *) (x + i);
            v0 += *(const symv_v4u *) (a0 + i) * xi;
            v1 += *(const symv_v4u *) (a1 + i) * xi;
            v2 += *(const symv_v4u *) (a2 + i) * xi;
            v3 += *(const symv_v4u *) (a3 + i) * xi;
        }
        d0 = (v0[0] + v0[1]) + (v0[2] + v0[3]);
        d1 = (v1[0] + v1[1]) + (v1[2] + v1[3]);
        d2 = (v2[0] + v2[1]) + (v2[2] + v2[3]);
        d3 = (v3[0] + v3[1]) + (v3[2] + v3[3]);
#endif
        for (; i < n; i++) {
            d0 += a0[i] * x[i]; d1 += a1[i] * x[i]; d2 += a2[i] * x[i]; d3 += a3[i] * x[i];
        }
        y[l] = d0; y[l + 1] = d1; y[l + 2] = d2; y[l + 3] = d3;
    }
    for (; l < k; l++) {
        const double *a = A + (size_t) l * lda;
        double d = 0.0;
        for (int i = 0; i < n; i++) d += a[i] * x[i];
        y[l] = d;
    }
}

static void gemv_t_default(int n, int k, const double *A, int lda, const double *x,
                           double *y)
{
    gemv_t_body(n, k, A, lda, x, y);
}

#ifdef TILES_X86
__attribute__((target("avx2,fma")))
static void gemv_t_avx2(int n, int k, const double *A, int lda, const double *x,
                        double *y)
{
    gemv_t_body(n, k, A, lda, x, y);
}
#endif

void gemv_t(int n, int k, const double *A, int lda, const double *x, double *y)
{
#ifdef TILES_X86
    if (cpu_has_avx2_fma()) {
        gemv_t_avx2(n, k, A, lda, x, y);
        return;
    }
#endif
    gemv_t_default(n, k, A, lda, x, y);
}

void gemv_add(int n, int k, const double *A, int lda, const double *x, double sign,
              double *y)
{
#ifdef TILES_X86
    if (cpu_has_avx2_fma()) {
        gemv_avx2(n, k, A, lda, x, sign, y);
        return;
    }
#endif
    gemv_default(n, k, A, lda, x, sign, y);
}

/* Is the BLAS an optimized one? Asked of the loaded libraries by the
 * symbols only an optimized BLAS exports: OpenBLAS (openblas_get_config),
 * Intel MKL (MKL_Get_Version), BLIS (bli_info_get_version_str), whether R
 * links to it or it is preloaded (LD_PRELOAD). R's reference BLAS, and
 * systems without dlsym(), answer no. */
int blas_is_optimized(void)
{
    static int known = 0, optimized = 0;
    if (!known) {
#ifdef TILES_DLSYM
        optimized = dlsym(RTLD_DEFAULT, "openblas_get_config") != NULL ||
            dlsym(RTLD_DEFAULT, "MKL_Get_Version") != NULL ||
            dlsym(RTLD_DEFAULT, "bli_info_get_version_str") != NULL;
#endif
        known = 1;
    }
    return optimized;
}

#ifdef TILES_DLSYM
static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* With an optimized BLAS: the BLAS's dgemm against the tiles on one
 * product of the sizes the package multiplies (384 x 48, inner 384, 7 M
 * multiply-adds, a millisecond), best of three each. Returns 1 when the
 * BLAS is at least as fast. Called once per process, on the main thread
 * (R_alloc). */
static int blas_faster_measured(int threads)
{
    const int m = 384, n = 48, k = 384;
    double *A = (double *) R_alloc((size_t) m * k + (size_t) k * n + (size_t) m * n,
                                   sizeof(double));
    double *B = A + (size_t) m * k, *C = B + (size_t) k * n;
    for (size_t i = 0; i < (size_t) m * k + (size_t) k * n; i++)
        A[i] = (double) (i % 17) / 17.0 - 0.5;
    double best_blas = R_PosInf, best_tiles = R_PosInf, one = 1.0, zero = 0.0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = seconds_now();
        F77_CALL(dgemm)("N", "N", &m, &n, &k, &one, A, &m, B, &k, &zero, C, &m
                        FCONE FCONE);
        double t1 = seconds_now();
        memset(C, 0, (size_t) m * n * sizeof(double));
        tile_gemm(m, n, k, A, m, 0, B, k, 0, 1.0, C, m, threads);
        double t2 = seconds_now();
        if (t1 - t0 < best_blas) best_blas = t1 - t0;
        if (t2 - t1 < best_tiles) best_tiles = t2 - t1;
    }
    return best_blas <= best_tiles;
}
#endif

/* Whether a general product of work multiply-adds goes to the tiles (1) or
 * to the BLAS (0). With R's reference BLAS, always the tiles (about 14x its
 * dgemm at the package's shapes). With an optimized BLAS, the tiles below
 * TILE_HANDBACK_WORK, where a BLAS call's set-up costs more than the
 * product, and from it on whichever of the two was faster on a probe
 * product measured once per process (blas_faster_measured()): results
 * then follow the BLAS, as they did before the tiles. */
#define TILE_HANDBACK_WORK 1048576.0
int tiles_preferred(double work, int threads)
{
    static int measured = -1;
    if (!blas_is_optimized() || work < TILE_HANDBACK_WORK) return 1;
#ifdef TILES_DLSYM
    if (measured < 0) measured = blas_faster_measured(threads);
#else
    measured = 1;
#endif
    return !measured;
}

/* C (m x n) += op(A) op(B) (beta = 1) or C = op(A) op(B) (beta = 0), by
 * the tiles or the BLAS, as tiles_preferred() says. Main thread only. */
void matrix_product(int m, int n, int k, const double *A, int lda, int transa,
                    const double *B, int ldb, int transb, double beta, double *C, int ldc,
                    int threads)
{
    if (m <= 0 || n <= 0) return;
    if (!tiles_preferred((double) m * n * k, threads)) {
        double one = 1.0;
        F77_CALL(dgemm)(transa ? "T" : "N", transb ? "T" : "N", &m, &n, &k, &one, A, &lda,
                        B, &ldb, &beta, C, &ldc FCONE FCONE);
        return;
    }
    if (beta == 0.0)
        for (int j = 0; j < n; j++) memset(C + (size_t) j * ldc, 0, (size_t) m * sizeof(double));
    tile_gemm(m, n, k, A, lda, transa, B, ldb, transb, 1.0, C, ldc, threads);
}

/* .Call, for the tests (fastkpca:::tile_product()), through the kernels of
 * one path (path: integer, a tile_path; TILE_AUTO for this CPU's):
 * op 0: c + op(a) op(b), op(x) = x' where trans_x is TRUE;
 * op 1: c + A b, A symmetric from the lower triangle of the square a
 *       (symv_lower(), column by column of b).
 * a, b, c: double matrices of conforming sizes; threads: integer.
 * Returns a new matrix with attributes "path", the kernel that ran,
 * "blas", "optimized" or "reference" as blas_is_optimized() sees it, and
 * "large_products", "tiles" or "blas": where matrix_product() sends a
 * product of at least TILE_HANDBACK_WORK multiply-adds. */
SEXP tile_product(SEXP a, SEXP b, SEXP c, SEXP trans_a, SEXP trans_b, SEXP threads,
                  SEXP path, SEXP op)
{
    if (!isReal(a) || !isMatrix(a)) error_argument("'a' must be a double matrix");
    if (!isReal(b) || !isMatrix(b)) error_argument("'b' must be a double matrix");
    if (!isReal(c) || !isMatrix(c)) error_argument("'c' must be a double matrix");
    int symmetric = as_count(op, "op", 0, 1);
    int ta = asLogical(trans_a) == TRUE, tb = asLogical(trans_b) == TRUE;
    if (symmetric) {
        ta = tb = 0;
        if (nrows(a) != ncols(a)) error_argument("'a' must be square");
    }
    int m = ta ? ncols(a) : nrows(a), k = ta ? nrows(a) : ncols(a);
    int kb = tb ? ncols(b) : nrows(b), n = tb ? nrows(b) : ncols(b);
    if (kb != k) error_argument("'b' must have %d %s", k, tb ? "columns" : "rows");
    if (nrows(c) != m || ncols(c) != n) error_argument("'c' must be %d x %d", m, n);
    int nthreads = as_threads(threads);
    int p = as_count(path, "path", TILE_AUTO, TILE_AVX512);
    tile_kernel K = p == TILE_AUTO ? tile_kernel_auto() : tile_kernel_for(p);
    SEXP ans = PROTECT(duplicate(c));
    const char *name = tile_kernel_name(K);
    if (symmetric) {
        symv_quad_fn quad = symv_quad_for(p);
        double *work = (double *) R_alloc(symv_lower_work(m) + 1, sizeof(double));
        double *y = (double *) R_alloc((size_t) (m > 0 ? m : 1), sizeof(double));
        for (int j = 0; j < n; j++) {
            double *out = REAL(ans) + (size_t) j * m;
            symv_lower_with(quad, m, REAL(a), m, REAL(b) + (size_t) j * m, y, work,
                            nthreads);
            for (int i = 0; i < m; i++) out[i] += y[i];
        }
#ifdef TILES_X86
        name = quad == symv_quad_avx2 ? "avx2" : "default";
#else
        name = "default";
#endif
    } else {
        tile_product_with(K, m, n, k, REAL(a), nrows(a) > 0 ? nrows(a) : 1, ta, REAL(b),
                          nrows(b) > 0 ? nrows(b) : 1, tb, 1.0, REAL(ans), m > 0 ? m : 1,
                          nthreads);
    }
    setAttrib(ans, install("path"), mkString(name));
    setAttrib(ans, install("blas"), mkString(blas_is_optimized() ? "optimized" : "reference"));
    setAttrib(ans, install("large_products"),
              mkString(tiles_preferred(1e9, nthreads) ? "tiles" : "blas"));
    UNPROTECT(1);
    return ans;
}
