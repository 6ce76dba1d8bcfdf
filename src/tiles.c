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
#include <string.h>
#include <dlfcn.h>
#ifdef _OPENMP
# include <omp.h>
#endif

/* Rows of A (columns of op(A)) per slice: a packed slice of B
 * (TILE_KC x TILE_NC) stays in the L1 cache. */
#define TILE_KC 128
/* Columns of B packed at once: a multiple of every nr. */
#define TILE_NC 48
#define TILE_MR_MAX 24
#define TILE_NR_MAX 8

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

/* The kernel of a path: TILE_AUTO picks the widest this CPU runs. Asking
 * for one the CPU lacks gives the best it has below it. */
static tile_kernel tile_kernel_for(int path)
{
    tile_kernel kern = {4, 4, tile_plain};
    if (path == TILE_PLAIN) return kern;
#ifdef TILES_X86
    kern = (tile_kernel) {6, 4, tile_sse2};
    if (path == TILE_SSE2) return kern;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        kern = (tile_kernel) {12, 4, tile_avx2};
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
        for (int jj = 0; jj < nr; jj++) {
            int j = j0 + q * nr + jj;
            if (j >= j0 + nc) {
                for (int p = 0; p < kc; p++) P[(size_t) p * nr + jj] = 0.0;
            } else if (transb) {
                for (int p = 0; p < kc; p++)
                    P[(size_t) p * nr + jj] = sign * B[j + (size_t) (p0 + p) * ldb];
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
    for (int p = 0; p < kc; p++) {
        double *col = dst + (size_t) p * mr;
        if (transa) {
            for (int i = 0; i < rows; i++) col[i] = A[p0 + p + (size_t) (i0 + i) * lda];
        } else {
            const double *src = A + i0 + (size_t) (p0 + p) * lda;
            for (int i = 0; i < rows; i++) col[i] = src[i];
        }
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
    /* a parallel region costs about 10 us; below about 2 M multiply-adds
     * a second thread does not pay for it */
    if ((double) m * n * k < 2e6) nt = 1;
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

void tile_gemm_add(int m, int n, int k, const double *A, int lda, const double *B,
                   int ldb, double *C, int ldc)
{
    tile_product_serial(tile_kernel_auto(), m, n, k, A, lda, 0, B, ldb, 0, 1.0, C, ldc);
}

/* .Call, for the tests (fastkpca:::tile_product()): c + op(a) op(b), a new
 * matrix, through the tiles of one path.
 * a, b, c: double matrices of conforming sizes; trans_a, trans_b: logical;
 * threads: integer; path: integer, a tile_path (TILE_AUTO for this CPU's).
 * Returns the matrix with attribute "path", the name of the kernel that ran. */
SEXP tile_product(SEXP a, SEXP b, SEXP c, SEXP trans_a, SEXP trans_b, SEXP threads,
                  SEXP path)
{
    if (!isReal(a) || !isMatrix(a)) error("'a' must be a double matrix");
    if (!isReal(b) || !isMatrix(b)) error("'b' must be a double matrix");
    if (!isReal(c) || !isMatrix(c)) error("'c' must be a double matrix");
    int ta = asLogical(trans_a) == TRUE, tb = asLogical(trans_b) == TRUE;
    int m = ta ? ncols(a) : nrows(a), k = ta ? nrows(a) : ncols(a);
    int kb = tb ? ncols(b) : nrows(b), n = tb ? nrows(b) : ncols(b);
    if (kb != k) error("'b' must have %d %s", k, tb ? "columns" : "rows");
    if (nrows(c) != m || ncols(c) != n) error("'c' must be %d x %d", m, n);
    int nthreads = as_threads(threads);
    int p = as_count(path, "path", TILE_AUTO, TILE_AVX512);
    tile_kernel K = p == TILE_AUTO ? tile_kernel_auto() : tile_kernel_for(p);
    SEXP ans = PROTECT(duplicate(c));
    tile_product_with(K, m, n, k, REAL(a), nrows(a) > 0 ? nrows(a) : 1, ta, REAL(b),
                      nrows(b) > 0 ? nrows(b) : 1, tb, 1.0, REAL(ans), m > 0 ? m : 1,
                      nthreads);
    setAttrib(ans, install("path"), mkString(tile_kernel_name(K)));
    UNPROTECT(1);
    return ans;
}
