/* The register-tile products of matrices, for R's reference BLAS, whose
 * dgemm runs at about 1.6 G multiply-adds per second on the project
 * machine: the general product (tile_gemm(), and the string kernels' dense
 * products) and the rank-k update of the Nystrom statistics
 * (syrk_lower_add()); the matrix-vector products and the symmetric matrix
 * product are tiles_vector.c's. Each has a copy per path of the
 * arithmetic layer (simd.h): plain loops, two doubles a vector (SSE2 or
 * NEON), AVX2 with FMA, AVX-512; the session's path (simd_active()) picks
 * the copy, the widest at or below it. Which BLAS is loaded, and when a
 * product goes to it, is blas.c's.
 *
 * C += op(A) op(B) is computed in tiles of mr rows by nr columns of C whose
 * accumulators stay in registers: 24 x 8 with AVX-512, 12 x 4 with AVX2 and
 * FMA, 6 x 4 with SSE2 or NEON (FMA), 4 x 4 in plain loops. B is read in
 * place when it is not transposed and the sign is +1 (a tile's kernel
 * reads its nr columns, each contiguous), and otherwise packed per slice
 * of TILE_KC rows into panels of nr columns (row by row), as is a last,
 * partial panel (zero-padded); A is read in place when it is not
 * transposed (the mr rows of a tile are contiguous in each column), and
 * packed otherwise and for the last, partial row group (zero-padded).
 *
 * The order of every sum is fixed: a tile loads C(i, j) into its
 * accumulator and adds A(i, p) B(p, j) for p = 0, 1, ..., k - 1, each in
 * one vector lane, so an entry of C does not depend on m or n, on which
 * rows or columns are in the call, on the slice length or on the thread
 * count: padded rows and columns only touch entries that are thrown away.
 * The paths differ only in rounding: fused multiply-adds (AVX2, AVX-512,
 * NEON) round once, so plain and SSE2 give the same bits, as do AVX2 and
 * AVX-512.
 *
 * The products run inside OpenMP regions and call no R (their scratch is
 * on the stack, about 80 KB), except syrk_lower_add(), which runs on the
 * main thread and makes its own region. Each product
 * has a form that takes the path (tiles.h: tile_gemm_path(), ...), for the
 * tests' entry point (tile_product.c). The tiles call only the vector
 * layer (simd.h) and R (R_alloc, the interrupt check): what calls them
 * (blas.c, reflector_tiles.c, tiles_vector.c, the solvers, the kernels,
 * the entry points) sits above. Also here: the thread-work setting, and
 * the copy of a kernel block's lower triangle into its upper one
 * (mirror_lower_columns()). */
#include "fastkpca.h"
#include "simd.h"
#include "tiles.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
 * millisecond on one core) bounds that loss. It is the tuning setting
 * tile_thread_work (ENGINE_TUNING, fastkpca.h), read by
 * tile_thread_work() here and in the loops of other files that follow the
 * same rule (tiles_vector.c, reflector_tiles.c, krylov.c, band_reduction.c); the tests set 0, so
 * that small problems run on their threads. */

/* ---- the general product -------------------------------------------------- */

/* c (mr x nr, leading dimension ldc) += sum over p < kc of a[., p] b[p, .]:
 * a's column p is a + p lda (mr doubles), b's row p is b + p nr. */
typedef void (*tile_fn)(int kc, const double *a, int lda, const double *b, double *c,
                        int ldc);

/* The same with b read in place: b's column j is b + j ldb (so its row p
 * is b[p], b[p + ldb], ...): the same terms in the same order. */
typedef void (*tile_cols_fn)(int kc, const double *a, int lda, const double *b, int ldb,
                             double *c, int ldc);

typedef struct {
    int mr, nr;
    tile_fn tile;
    tile_cols_fn tile_cols;
    simd_path path;  /* the path whose copy this is */
} tile_kernel;

/* The tiles, one source for every instruction set: 3 vectors of W doubles
 * (3W rows) by 4 columns (8 with AVX-512), in the vector types of simd.h.
 * They are written out in full: GCC keeps an array of accumulators in
 * memory. The fused multiply-adds are intrinsics (the FMA helpers of
 * simd.h, named per copy by VOP()), so that they do not depend on the
 * compiler's contraction flags; SSE2 has none (a product, then a sum, as
 * the plain loops). Written with the compiler's own contraction instead,
 * the AVX2 and AVX-512 tiles gave the same bits at the same speed, within
 * the noise of the shared project machine. */
#define TILE_LOAD(j) VT c0##j = *(const VTU *) (c + (size_t) (j) * ldc),              \
        c1##j = *(const VTU *) (c + (size_t) (j) * ldc + TW),                           \
        c2##j = *(const VTU *) (c + (size_t) (j) * ldc + 2 * TW)
#define TILE_STEP(j) do {                                                            \
        VT y = VOP(SPLAT)(bp[j]);                                                       \
        c0##j = VOP(FMA)(x0, y, c0##j); c1##j = VOP(FMA)(x1, y, c1##j);                 \
        c2##j = VOP(FMA)(x2, y, c2##j);                                                 \
    } while (0)
#define TILE_STORE(j) do {                                                           \
        *(VTU *) (c + (size_t) (j) * ldc) = c0##j;                                      \
        *(VTU *) (c + (size_t) (j) * ldc + TW) = c1##j;                                 \
        *(VTU *) (c + (size_t) (j) * ldc + 2 * TW) = c2##j;                             \
    } while (0)
#define TILE_BODY(NR, COLUMNS)                                                       \
    COLUMNS(TILE_LOAD, ;);                                                              \
    for (int p = 0; p < kc; p++) {                                                      \
        const double *ap = a + (size_t) p * lda, *bp = b + (size_t) p * NR;             \
        VT x0 = *(const VTU *) ap, x1 = *(const VTU *) (ap + TW),                       \
            x2 = *(const VTU *) (ap + 2 * TW);                                          \
        COLUMNS(TILE_STEP, ;);                                                          \
    }                                                                                   \
    COLUMNS(TILE_STORE, ;)
#define TILE_STEP_COLS(j) do {                                                       \
        VT y = VOP(SPLAT)(bp[(size_t) (j) * ldb]);                                      \
        c0##j = VOP(FMA)(x0, y, c0##j); c1##j = VOP(FMA)(x1, y, c1##j);                 \
        c2##j = VOP(FMA)(x2, y, c2##j);                                                 \
    } while (0)
#define TILE_BODY_COLS(COLUMNS)                                                      \
    COLUMNS(TILE_LOAD, ;);                                                              \
    for (int p = 0; p < kc; p++) {                                                      \
        const double *ap = a + (size_t) p * lda, *bp = b + p;                           \
        VT x0 = *(const VTU *) ap, x1 = *(const VTU *) (ap + TW),                       \
            x2 = *(const VTU *) (ap + 2 * TW);                                          \
        COLUMNS(TILE_STEP_COLS, ;);                                                     \
    }                                                                                   \
    COLUMNS(TILE_STORE, ;)
#define TILE_COLUMNS4(F, SEP) F(0) SEP F(1) SEP F(2) SEP F(3)
#define TILE_COLUMNS8(F, SEP) F(0) SEP F(1) SEP F(2) SEP F(3) SEP F(4) SEP F(5) SEP F(6) SEP F(7)

#ifdef SIMD_VECTOR
/* two doubles a vector: SSE2 (no fused multiply-add) or NEON (fused) */
# define VT vd2
# define VTU vd2u
# define TW 2
# define VOP(op) VD2_##op
static void tile_v2(int kc, const double *a, int lda, const double *b, double *c, int ldc)
{
    TILE_BODY(4, TILE_COLUMNS4);
}
static void tile_v2_cols(int kc, const double *a, int lda, const double *b, int ldb,
                         double *c, int ldc)
{
    TILE_BODY_COLS(TILE_COLUMNS4);
}
# undef VT
# undef VTU
# undef TW
# undef VOP
#endif

#ifdef SIMD_X86
# define VT vd4
# define VTU vd4u
# define TW 4
# define VOP(op) VD4_##op
SIMD_AVX2_ATTR
static void tile_avx2(int kc, const double *a, int lda, const double *b, double *c,
                      int ldc)
{
    TILE_BODY(4, TILE_COLUMNS4);
}
SIMD_AVX2_ATTR
static void tile_avx2_cols(int kc, const double *a, int lda, const double *b, int ldb,
                           double *c, int ldc)
{
    TILE_BODY_COLS(TILE_COLUMNS4);
}
# undef VT
# undef VTU
# undef TW
# undef VOP

# define VT vd8
# define VTU vd8u
# define TW 8
# define VOP(op) VD8_##op
SIMD_AVX512_ATTR
static void tile_avx512(int kc, const double *a, int lda, const double *b, double *c,
                        int ldc)
{
    TILE_BODY(8, TILE_COLUMNS8);
}
SIMD_AVX512_ATTR
static void tile_avx512_cols(int kc, const double *a, int lda, const double *b, int ldb,
                             double *c, int ldc)
{
    TILE_BODY_COLS(TILE_COLUMNS8);
}
# undef VT
# undef VTU
# undef TW
# undef VOP
#endif

/* Plain loops: every system and compiler (and the "plain" path); a
 * product, then a sum (SD_MUL_ADD), as SSE2's tile. */
static void tile_plain(int kc, const double *a, int lda, const double *b, double *c,
                       int ldc)
{
    for (int j = 0; j < 4; j++) {
        double *cj = c + (size_t) j * ldc;
        double c0 = cj[0], c1 = cj[1], c2 = cj[2], c3 = cj[3];
        for (int p = 0; p < kc; p++) {
            const double *ap = a + (size_t) p * lda;
            double y = b[(size_t) p * 4 + j];
            c0 = SD_MUL_ADD(ap[0], y, c0); c1 = SD_MUL_ADD(ap[1], y, c1);
            c2 = SD_MUL_ADD(ap[2], y, c2); c3 = SD_MUL_ADD(ap[3], y, c3);
        }
        cj[0] = c0; cj[1] = c1; cj[2] = c2; cj[3] = c3;
    }
}

static void tile_plain_cols(int kc, const double *a, int lda, const double *b, int ldb,
                            double *c, int ldc)
{
    for (int j = 0; j < 4; j++) {
        double *cj = c + (size_t) j * ldc;
        const double *bj = b + (size_t) j * ldb;
        double c0 = cj[0], c1 = cj[1], c2 = cj[2], c3 = cj[3];
        for (int p = 0; p < kc; p++) {
            const double *ap = a + (size_t) p * lda;
            double y = bj[p];
            c0 = SD_MUL_ADD(ap[0], y, c0); c1 = SD_MUL_ADD(ap[1], y, c1);
            c2 = SD_MUL_ADD(ap[2], y, c2); c3 = SD_MUL_ADD(ap[3], y, c3);
        }
        cj[0] = c0; cj[1] = c1; cj[2] = c2; cj[3] = c3;
    }
}

/* The tile of a path (simd_resolve()d: one this CPU runs). */
static tile_kernel tile_kernel_for(simd_path path)
{
    switch (path) {
#ifdef SIMD_X86
    case SIMD_AVX512: return (tile_kernel) {24, 8, tile_avx512, tile_avx512_cols, SIMD_AVX512};
    case SIMD_AVX2: return (tile_kernel) {12, 4, tile_avx2, tile_avx2_cols, SIMD_AVX2};
#endif
#ifdef SIMD_VECTOR
    case SIMD_SSE2: case SIMD_NEON: return (tile_kernel) {6, 4, tile_v2, tile_v2_cols, path};
#endif
    default: return (tile_kernel) {4, 4, tile_plain, tile_plain_cols, SIMD_PLAIN};
    }
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

/* c (rows x cols of a tile, leading dimension ldc) += the tile's product
 * of kc steps, b packed (ldb 0: a panel, row p at b + p nr) or read in
 * place (column j at b + j ldb, all nr of them there): a partial tile
 * through a full one, padded with zeros (its padded rows and columns
 * thrown away). */
static void tile_rows_cols(tile_kernel K, int kc, const double *a, int ld, const double *b,
                           int ldb, double *c, int ldc, int rows, int cols)
{
    int mr = K.mr, nr = K.nr;
    double ctmp[TILE_MR_MAX * TILE_NR_MAX];
    if (rows == mr && cols == nr) {
        if (ldb) K.tile_cols(kc, a, ld, b, ldb, c, ldc);
        else K.tile(kc, a, ld, b, c, ldc);
        return;
    }
    for (int jj = 0; jj < nr; jj++)
        for (int ii = 0; ii < mr; ii++)
            ctmp[ii + jj * mr] = ii < rows && jj < cols ? c[ii + (size_t) jj * ldc] : 0.0;
    if (ldb) K.tile_cols(kc, a, ld, b, ldb, ctmp, mr);
    else K.tile(kc, a, ld, b, ctmp, mr);
    for (int jj = 0; jj < cols; jj++)
        for (int ii = 0; ii < rows; ii++) c[ii + (size_t) jj * ldc] = ctmp[ii + jj * mr];
}

/* C (m x n) += sign op(A) op(B) on one thread, op(A) m x k and op(B) k x n:
 * op(A) = A' when transa, op(B) = B' when transb. B itself (not
 * transposed, sign 1) is read in place by the kernel's in-place copy, not
 * packed: the same values in the same order, so the same bits, without a
 * pass that copied all of B (a tenth of the default fit at n = 3000, in
 * the back-transformations and the certificate, whose B is the n x k
 * vectors). */
static void tile_product_serial(tile_kernel K, int m, int n, int k, const double *A,
                                int lda, int transa, const double *B, int ldb, int transb,
                                double sign, double *C, int ldc)
{
    double bbuf[TILE_KC * TILE_NC], abuf[TILE_MR_MAX * TILE_KC];
    int mr = K.mr, nr = K.nr, in_place = !transb && sign == 1.0;
    if (m <= 0 || n <= 0 || k <= 0) return;
    for (int p0 = 0; p0 < k; p0 += TILE_KC) {
        int kc = k - p0 < TILE_KC ? k - p0 : TILE_KC;
        for (int j0 = 0; j0 < n; j0 += TILE_NC) {
            int nc = n - j0 < TILE_NC ? n - j0 : TILE_NC, full = nc / nr * nr;
            /* in place, only a last, partial panel is packed (into the
             * place pack_b() would give it) */
            if (!in_place)
                pack_b(B, ldb, transb, sign, p0, kc, j0, nc, nr, bbuf);
            else if (full < nc)
                pack_b(B, ldb, 0, 1.0, p0, kc, j0 + full, nc - full, nr,
                       bbuf + (size_t) (full / nr) * kc * nr);
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
                    if (in_place && cols == nr)
                        tile_rows_cols(K, kc, a, ld, B + p0 + (size_t) j * ldb, ldb,
                                       C + i0 + (size_t) j * ldc, ldc, rows, cols);
                    else
                        tile_rows_cols(K, kc, a, ld, bbuf + (size_t) q * kc * nr, 0,
                                       C + i0 + (size_t) j * ldc, ldc, rows, cols);
                }
            }
        }
    }
}

/* C (m x n) += sign op(A) op(B) (see tile_product_serial()) with threads
 * threads, through the given kernel, on one thread below min_work
 * multiply-adds. The threads take whole tiles, each a
 * contiguous range of row groups (or of column panels when there are more
 * of those): every entry is summed in the same order for any count. */
static void tile_product_with(tile_kernel K, int m, int n, int k, const double *A,
                              int lda, int transa, const double *B, int ldb, int transb,
                              double sign, double *C, int ldc, int threads,
                              double min_work)
{
    if (m <= 0 || n <= 0 || k <= 0) return;
    int groups_m = (m + K.mr - 1) / K.mr, groups_n = (n + K.nr - 1) / K.nr;
    int by_rows = groups_m >= groups_n, groups = by_rows ? groups_m : groups_n;
    int nt = threads > 1 ? threads : 1;
    if ((double) m * n * k < min_work) nt = 1;
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

simd_path tile_gemm_path(simd_path path, int m, int n, int k, const double *A, int lda,
                         int transa, const double *B, int ldb, int transb, double sign,
                         double *C, int ldc, int threads)
{
    tile_kernel K = tile_kernel_for(path);
    tile_product_with(K, m, n, k, A, lda, transa, B, ldb, transb, sign, C, ldc, threads,
                      tile_thread_work());
    return K.path;
}

/* tile_gemm() with its own floor of work for a parallel region (the
 * matrix-free fit's steps between passes, krylov.c: a few regions a pass,
 * where the thread-work setting is for products in the thousands). */
void tile_gemm_floor(int m, int n, int k, const double *A, int lda, int transa,
                     const double *B, int ldb, int transb, double sign, double *C, int ldc,
                     int threads, double min_work)
{
    tile_product_with(tile_kernel_for(simd_active()), m, n, k, A, lda, transa, B, ldb,
                      transb, sign, C, ldc, threads, min_work);
}

void tile_gemm(int m, int n, int k, const double *A, int lda, int transa,
               const double *B, int ldb, int transb, double sign, double *C, int ldc,
               int threads)
{
    (void) tile_gemm_path(simd_active(), m, n, k, A, lda, transa, B, ldb, transb, sign, C,
                          ldc, threads);
}

void tile_kernels_ready(void)
{
    (void) simd_active();
}

void tile_gemm_add(int m, int n, int k, const double *A, int lda, const double *B,
                   int ldb, double *C, int ldc)
{
    tile_product_serial(tile_kernel_for(simd_active()), m, n, k, A, lda, 0, B, ldb, 0, 1.0,
                        C, ldc);
}

/* C (n x m) += B' A (A k x m, B k x n), one thread: the product A' B
 * computed in tiles whose C is read and written transposed (through the
 * tile's own copy, as a partial tile's), A' packed once per slice and row
 * group and B read in place. For a thin A and a wide B (the matrix-free
 * pipeline's transposed tiles, K[I, J]' V[I]: A the b columns of V[I], B
 * the kernel tile) that packs the b x S values of A where tile_gemm()'s
 * op(A) = B' packed all S x S of B, value by value (perf: half the time
 * of the product's own multiply-adds at b = 20). Each entry C(j, i) is
 * B(0, j) A(0, i) + ... in increasing p, from C(j, i), each product of
 * the same two values as tile_gemm(n, m, k, B, ldb, 1, A, lda, 0, 1, C,
 * ldc)'s: the same bits. */
static void tile_transposed_serial(tile_kernel K, int m, int n, int k, const double *A,
                                   int lda, const double *B, int ldb, double *C, int ldc)
{
    double abuf[TILE_MR_MAX * TILE_KC], bbuf[TILE_KC * TILE_NR_MAX];
    double ctmp[TILE_MR_MAX * TILE_NR_MAX];
    int mr = K.mr, nr = K.nr;
    if (m <= 0 || n <= 0 || k <= 0) return;
    for (int p0 = 0; p0 < k; p0 += TILE_KC) {
        int kc = k - p0 < TILE_KC ? k - p0 : TILE_KC;
        for (int i0 = 0; i0 < m; i0 += mr) {
            int rows = m - i0 < mr ? m - i0 : mr;
            pack_a(A, lda, 1, i0, rows, p0, kc, mr, abuf);
            for (int j = 0; j < n; j += nr) {
                int cols = n - j < nr ? n - j : nr;
                /* ctmp(ii, jj) = C(j + jj, i0 + ii): a row of C is a column of the tile */
                for (int ii = 0; ii < mr; ii++) {
                    const double *crow = C + j + (size_t) (i0 + ii) * ldc;
                    for (int jj = 0; jj < nr; jj++)
                        ctmp[ii + jj * mr] = ii < rows && jj < cols ? crow[jj] : 0.0;
                }
                if (cols == nr) {
                    K.tile_cols(kc, abuf, mr, B + p0 + (size_t) j * ldb, ldb, ctmp, mr);
                } else {
                    pack_b(B, ldb, 0, 1.0, p0, kc, j, cols, nr, bbuf);
                    K.tile(kc, abuf, mr, bbuf, ctmp, mr);
                }
                for (int ii = 0; ii < rows; ii++) {
                    double *crow = C + j + (size_t) (i0 + ii) * ldc;
                    for (int jj = 0; jj < cols; jj++) crow[jj] = ctmp[ii + jj * mr];
                }
            }
        }
    }
}

simd_path tile_gemm_transposed_add_path(simd_path path, int m, int n, int k, const double *A,
                                        int lda, const double *B, int ldb, double *C, int ldc)
{
    tile_kernel K = tile_kernel_for(path);
    tile_transposed_serial(K, m, n, k, A, lda, B, ldb, C, ldc);
    return K.path;
}

void tile_gemm_transposed_add(int m, int n, int k, const double *A, int lda, const double *B,
                              int ldb, double *C, int ldc)
{
    tile_transposed_serial(tile_kernel_for(simd_active()), m, n, k, A, lda, B, ldb, C, ldc);
}

/* ---- the inner products of points read in place ------------------------- */

/* TILE_POINTS_SCRATCH(n), fastkpca.h, sizes tile_points()'s slices */
typedef char tile_points_slice_check[TILE_POINTS_KC == TILE_KC && TILE_NR_MAX == 8 ? 1 : -1];

/* Pack coordinates p0 .. p0 + kc - 1 of points j0 .. j0 + nc - 1 (rows of
 * the column-major X, leading dimension ldx), each less its shift (s: NULL
 * for none), into panels of nr points, coordinate by coordinate, the last
 * padded with zeros: pack_b()'s layout, and the same differences as a
 * shifted copy of the points would hold. */
/* dp[j] = src[j] - sh, j < n: at a constant n (inlined), in vector
 * registers; the compiler cannot otherwise rule out that dp and src
 * overlap, and took a shifted pack one value at a time (a third of a
 * wide rbfdot block on 2 threads). */
static inline void shifted_run(double *restrict dp, const double *restrict src, int n, double sh)
{
    for (int j = 0; j < n; j++) dp[j] = src[j] - sh;
}

static void pack_points(const double *X, int ldx, const double *s, int p0, int kc, int j0,
                        int nc, int nr, double *dst)
{
    for (int q = 0; q * nr < nc; q++) {
        double *P = dst + (size_t) q * kc * nr;
        int cols = nc - q * nr < nr ? nc - q * nr : nr;
        for (int p = 0; p < kc; p++) {
            const double *src = X + j0 + q * nr + (size_t) (p0 + p) * ldx;
            double sh = s ? s[p0 + p] : 0.0, *dp = P + (size_t) p * nr;
            /* the run of this coordinate two panels on, read 2 kc runs
             * later: each run is in another column, a page on, where no
             * prefetcher follows (measured on a wide rbfdot block, 2
             * threads: the packing's time 0.59 of none; one panel on 0.70,
             * four 0.58) */
            if (cols == nr) __builtin_prefetch(src + 2 * nr);
            if (s && cols == 24) shifted_run(dp, src, 24, sh);
            else if (s && cols == 8) shifted_run(dp, src, 8, sh);
            else if (s && cols == 4) shifted_run(dp, src, 4, sh);
            else if (s) shifted_run(dp, src, cols, sh);
            /* a whole panel's run of a fixed size: moves in registers, not
             * a call of memcpy() per coordinate (12% of a wide product) */
            else if (cols == 8) memcpy(dp, src, 8 * sizeof(double));
            else if (cols == 4) memcpy(dp, src, 4 * sizeof(double));
            else memcpy(dp, src, (size_t) cols * sizeof(double));
            for (int jj = cols; jj < nr; jj++) dp[jj] = 0.0;
        }
    }
}

/* C (m x n, leading dimension ldc) += the inner products of the m points of
 * A and the n points of B over coordinates k0 .. k0 + k - 1: points as rows
 * of column-major matrices (lda, ldb), each coordinate less its shift (sa,
 * sb: NULL for none) as it is packed, so the points are never copied whole
 * (wide data: kernel_fast.c). Tiles whose rows all lie above the diagonal
 * (row i < column j + diag) are skipped; diag = TILE_ALL_ROWS computes
 * them all. Each entry is summed over the coordinates in order, one
 * multiply-add each, as tile_gemm() sums it: the same bits as tile_gemm()
 * on a shifted copy. One thread; no R: scratch holds
 * TILE_POINTS_SCRATCH(n) doubles. */
void tile_points(int m, int n, int k, int k0, const double *A, int lda, const double *sa,
                 const double *B, int ldb, const double *sb, double *C, int ldc, int diag,
                 double *scratch)
{
    tile_kernel K = tile_kernel_for(simd_active());
    double abuf[TILE_MR_MAX * TILE_KC];
    int mr = K.mr, nr = K.nr;
    for (int p0 = k0; p0 < k0 + k; p0 += TILE_KC) {
        int kc = k0 + k - p0 < TILE_KC ? k0 + k - p0 : TILE_KC;
        pack_points(B, ldb, sb, p0, kc, 0, n, nr, scratch);
        for (int i0 = 0; i0 < m; i0 += mr) {
            int rows = m - i0 < mr ? m - i0 : mr;
            const double *a = A + i0 + (size_t) p0 * lda;
            int ld = lda;
            if (sa || rows < mr) {
                pack_points(A, lda, sa, p0, kc, i0, rows, mr, abuf);
                a = abuf;
                ld = mr;
            }
            for (int j = 0; j < n; j += nr) {
                int cols = n - j < nr ? n - j : nr;
                if (diag != TILE_ALL_ROWS && i0 + rows - 1 < j + diag) break;
                tile_rows_cols(K, kc, a, ld, scratch + (size_t) (j / nr) * kc * nr, 0,
                               C + i0 + (size_t) j * ldc, ldc, rows, cols);
            }
        }
    }
}

/* ---- the rank-k update of the Nystrom statistics ------------------------- */

/* The result is updated in register tiles of 3w rows by w columns, w = 8
 * with AVX-512 and 4 otherwise; the packed slice is stored in panels of w
 * columns (row by row, w doubles each), so that a tile reads three
 * consecutive panels as its rows and one panel as its columns. A tile of
 * 3 x 4 (or 3 x 8) vector accumulators keeps both FMA units busy: the
 * 8 x 4 tile of before reached about 60% of the AVX2 peak. R's reference
 * dsyrk (as crossprod()) runs at 1.6 G multiply-adds per second on the
 * project machine (an AMD EPYC with AVX-512), this update at about 23 per
 * CPU-second with AVX-512 and 17 with AVX2 at m = 500, 13 at m = 200
 * (bench/nystrom.R, part syrk; the 8 x 4 tiles before ran at 12.5). */
typedef struct {
    int w;  /* panel width: the tile is 3w x w */
    void (*tile)(int kc, const double *a, size_t panel_len, const double *b, double *acc);
    simd_path path;
} syrk_kernel;

/* The tile kernels: acc (3w x w, column-major) = sum over kc rows of
 * a[k, 0:3w] b[k, 0:w]', with a's three panels panel_len doubles apart and
 * every panel's rows w doubles apart, in the vector types of simd.h: two
 * doubles (SSE2, NEON), 4 or 8 with fused multiply-adds (AVX2, AVX-512),
 * or plain loops, each multiply-add by simd.h's helper of its copy (the
 * gemm tiles' rule). Each entry is summed over k in order, whichever runs. */
#ifdef SIMD_X86
/* written out in full: GCC at -O2 keeps an array of accumulators in memory */
# define SYRK_FMA8(j, r0, r1, r2) do {                                         \
        vd8 y = VD8_SPLAT(bk[j]);                                               \
        r0 = VD8_FMA(x0, y, r0); r1 = VD8_FMA(x1, y, r1); r2 = VD8_FMA(x2, y, r2);  \
    } while (0)
SIMD_AVX512_ATTR
static void syrk_tile_avx512(int kc, const double *a, size_t panel_len, const double *b,
                             double *acc)
{
    vd8 z = VD8_SPLAT(0.0);
    vd8 c00 = z, c10 = z, c20 = z, c01 = z, c11 = z, c21 = z, c02 = z, c12 = z, c22 = z,
        c03 = z, c13 = z, c23 = z, c04 = z, c14 = z, c24 = z, c05 = z, c15 = z, c25 = z,
        c06 = z, c16 = z, c26 = z, c07 = z, c17 = z, c27 = z;
    const double *a0 = a, *a1 = a + panel_len, *a2 = a + 2 * panel_len;
    for (int k = 0; k < kc; k++) {
        vd8 x0 = *(const vd8u *) (a0 + 8 * k), x1 = *(const vd8u *) (a1 + 8 * k),
            x2 = *(const vd8u *) (a2 + 8 * k);
        const double *bk = b + 8 * k;
        SYRK_FMA8(0, c00, c10, c20);
        SYRK_FMA8(1, c01, c11, c21);
        SYRK_FMA8(2, c02, c12, c22);
        SYRK_FMA8(3, c03, c13, c23);
        SYRK_FMA8(4, c04, c14, c24);
        SYRK_FMA8(5, c05, c15, c25);
        SYRK_FMA8(6, c06, c16, c26);
        SYRK_FMA8(7, c07, c17, c27);
    }
    *(vd8u *) (acc + 0) = c00; *(vd8u *) (acc + 8) = c10; *(vd8u *) (acc + 16) = c20;
    *(vd8u *) (acc + 24) = c01; *(vd8u *) (acc + 32) = c11; *(vd8u *) (acc + 40) = c21;
    *(vd8u *) (acc + 48) = c02; *(vd8u *) (acc + 56) = c12; *(vd8u *) (acc + 64) = c22;
    *(vd8u *) (acc + 72) = c03; *(vd8u *) (acc + 80) = c13; *(vd8u *) (acc + 88) = c23;
    *(vd8u *) (acc + 96) = c04; *(vd8u *) (acc + 104) = c14; *(vd8u *) (acc + 112) = c24;
    *(vd8u *) (acc + 120) = c05; *(vd8u *) (acc + 128) = c15; *(vd8u *) (acc + 136) = c25;
    *(vd8u *) (acc + 144) = c06; *(vd8u *) (acc + 152) = c16; *(vd8u *) (acc + 160) = c26;
    *(vd8u *) (acc + 168) = c07; *(vd8u *) (acc + 176) = c17; *(vd8u *) (acc + 184) = c27;
}
# undef SYRK_FMA8

# define SYRK_FMA4(j, r0, r1, r2) do {                                         \
        vd4 y = VD4_SPLAT(bk[j]);                                               \
        r0 = VD4_FMA(x0, y, r0); r1 = VD4_FMA(x1, y, r1); r2 = VD4_FMA(x2, y, r2);  \
    } while (0)
SIMD_AVX2_ATTR
static void syrk_tile_avx2(int kc, const double *a, size_t panel_len, const double *b,
                           double *acc)
{
    vd4 z = VD4_SPLAT(0.0);
    vd4 c00 = z, c10 = z, c20 = z, c01 = z, c11 = z, c21 = z,
        c02 = z, c12 = z, c22 = z, c03 = z, c13 = z, c23 = z;
    const double *a0 = a, *a1 = a + panel_len, *a2 = a + 2 * panel_len;
    for (int k = 0; k < kc; k++) {
        vd4 x0 = *(const vd4u *) (a0 + 4 * k), x1 = *(const vd4u *) (a1 + 4 * k),
            x2 = *(const vd4u *) (a2 + 4 * k);
        const double *bk = b + 4 * k;
        SYRK_FMA4(0, c00, c10, c20);
        SYRK_FMA4(1, c01, c11, c21);
        SYRK_FMA4(2, c02, c12, c22);
        SYRK_FMA4(3, c03, c13, c23);
    }
    *(vd4u *) (acc + 0) = c00;  *(vd4u *) (acc + 4) = c10;  *(vd4u *) (acc + 8) = c20;
    *(vd4u *) (acc + 12) = c01; *(vd4u *) (acc + 16) = c11; *(vd4u *) (acc + 20) = c21;
    *(vd4u *) (acc + 24) = c02; *(vd4u *) (acc + 28) = c12; *(vd4u *) (acc + 32) = c22;
    *(vd4u *) (acc + 36) = c03; *(vd4u *) (acc + 40) = c13; *(vd4u *) (acc + 44) = c23;
}
# undef SYRK_FMA4
#endif

#ifdef SIMD_VECTOR
/* One 4 x 4 part of the 12 x 4 tile (rows of panel a), into acc with
 * leading dimension 12, two doubles a vector (SSE2, a product then a sum;
 * NEON, fused: VD2_FMA). 8 accumulators, within SSE2's 16
 * registers. */
static void syrk_quad_v2(int kc, const double *a, const double *b, double *acc)
{
    vd2 c00 = VD2_SPLAT(0.0), c10 = c00, c01 = c00, c11 = c00, c02 = c00, c12 = c00,
        c03 = c00, c13 = c00;
    for (int k = 0; k < kc; k++) {
        const double *ak = a + 4 * k, *bk = b + 4 * k;
        vd2 a0 = *(const vd2u *) ak, a1 = *(const vd2u *) (ak + 2);
        vd2 b0 = VD2_SPLAT(bk[0]);
        c00 = VD2_FMA(a0, b0, c00); c10 = VD2_FMA(a1, b0, c10);
        vd2 b1 = VD2_SPLAT(bk[1]);
        c01 = VD2_FMA(a0, b1, c01); c11 = VD2_FMA(a1, b1, c11);
        vd2 b2 = VD2_SPLAT(bk[2]);
        c02 = VD2_FMA(a0, b2, c02); c12 = VD2_FMA(a1, b2, c12);
        vd2 b3 = VD2_SPLAT(bk[3]);
        c03 = VD2_FMA(a0, b3, c03); c13 = VD2_FMA(a1, b3, c13);
    }
    *(vd2u *) (acc + 0) = c00;  *(vd2u *) (acc + 2) = c10;
    *(vd2u *) (acc + 12) = c01; *(vd2u *) (acc + 14) = c11;
    *(vd2u *) (acc + 24) = c02; *(vd2u *) (acc + 26) = c12;
    *(vd2u *) (acc + 36) = c03; *(vd2u *) (acc + 38) = c13;
}

static void syrk_tile_v2(int kc, const double *a, size_t panel_len, const double *b,
                         double *acc)
{
    for (int h = 0; h < 3; h++) syrk_quad_v2(kc, a + h * panel_len, b, acc + 4 * h);
}
#endif

static void syrk_quad_plain(int kc, const double *a, const double *b, double *acc)
{
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) acc[i + 12 * j] = 0.0;
    for (int k = 0; k < kc; k++)
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++)
                acc[i + 12 * j] = SD_MUL_ADD(a[4 * k + i], b[4 * k + j], acc[i + 12 * j]);
}

static void syrk_tile_plain(int kc, const double *a, size_t panel_len, const double *b,
                            double *acc)
{
    for (int h = 0; h < 3; h++) syrk_quad_plain(kc, a + h * panel_len, b, acc + 4 * h);
}

/* The tile kernel of a path (simd_resolve()d). */
static syrk_kernel syrk_kernel_for(simd_path path)
{
    switch (path) {
#ifdef SIMD_X86
    case SIMD_AVX512: return (syrk_kernel) {8, syrk_tile_avx512, path};
    case SIMD_AVX2: return (syrk_kernel) {4, syrk_tile_avx2, path};
#endif
#ifdef SIMD_VECTOR
    case SIMD_SSE2: case SIMD_NEON: return (syrk_kernel) {4, syrk_tile_v2, path};
#endif
    default: return (syrk_kernel) {4, syrk_tile_plain, SIMD_PLAIN};
    }
}

/* Pack rows k0 .. k0 + kc - 1 of B - 1 c' into P in panels of w columns,
 * each panel_len doubles, row by row; columns past m (up to npanels w) are
 * zero. B holds the block's rows one after another (Bt, m x nb: row i at
 * Bt + i m), so that a slice is read as one contiguous run: read column by
 * column from an nb x m block, its 128-value pieces of 200 columns far
 * apart cost as much as a third of the update at m = 200. With run (not
 * NULL), add each column's values to run[j], in the order of the rows.
 * The vector and the plain loops give the same values (one subtraction and
 * one addition per value). */
static void syrk_pack_slice(const double *Bt, int m, const double *c, int w, int npanels,
                            int k0, int kc, double *P, size_t panel_len, double *run,
                            int vector)
{
    int full = m / w; /* panels wholly inside the m columns */
    for (int k = 0; k < kc; k++) {
        const double *row = Bt + (size_t) (k0 + k) * m;
        double *dst = P + (size_t) k * w;
        int j = 0;
#ifdef SIMD_VECTOR
        if (vector) {
            /* two doubles at a time: R's -O2 leaves these loops scalar */
            for (int p = 0; p < full; p++) {
                double *d = dst + (size_t) p * panel_len;
                for (int jj = 0; jj < w; jj += 2, j += 2)
                    *(vd2u *) (d + jj) = *(const vd2u *) (row + j) - *(const vd2u *) (c + j);
            }
            if (run)
                for (int i = 0; i + 2 <= m; i += 2)
                    *(vd2u *) (run + i) += *(const vd2u *) (row + i) - *(const vd2u *) (c + i);
        } else
#endif
        {
            (void) vector;
            for (int p = 0; p < full; p++)
                for (int jj = 0; jj < w; jj++, j++)
                    dst[(size_t) p * panel_len + jj] = row[j] - c[j];
            if (run)
                for (int i = 0; i + 2 <= m; i += 2) {
                    run[i] += row[i] - c[i];
                    run[i + 1] += row[i + 1] - c[i + 1];
                }
        }
        for (int p = full; p < npanels; p++)
            for (int jj = 0; jj < w; jj++) {
                int jc = p * w + jj;
                dst[(size_t) p * panel_len + jj] = jc < m ? row[jc] - c[jc] : 0.0;
            }
        if (run && m % 2) run[m - 1] += row[m - 1] - c[m - 1];
    }
}

/* Add the lower-triangle entries of the tile acc (3w x w, rows from i0,
 * columns from j0) to G. A tile wholly inside the lower triangle is added
 * column by column in loops of fixed length, which the compiler
 * vectorizes: at m = 200 the scalar loop cost a third of the update. */
static void syrk_tile_add(const double *acc, int w, int i0, int j0, int m, double *G)
{
    int mr = 3 * w;
    if (j0 + w - 1 <= i0 && i0 + mr <= m && j0 + w <= m) {
        for (int jj = 0; jj < w; jj++) {
            double *gcol = G + (size_t) (j0 + jj) * m + i0;
            const double *t = acc + (size_t) jj * mr;
            if (w == 8)
                for (int ii = 0; ii < 24; ii++) gcol[ii] += t[ii];
            else
                for (int ii = 0; ii < 12; ii++) gcol[ii] += t[ii];
        }
        return;
    }
    for (int jj = 0; jj < w && j0 + jj < m; jj++) {
        int j = j0 + jj, ii = j > i0 ? j - i0 : 0;
        double *gcol = G + (size_t) j * m + i0;
        const double *t = acc + (size_t) jj * mr;
        for (; ii < mr && i0 + ii < m; ii++) gcol[ii] += t[ii];
    }
}

/* The thread that updates each row group of G: the groups, largest first
 * (group g has 3 (g + 1) tiles), each to the thread with the least work so
 * far. Fixed by the number of threads alone; which thread updates an entry
 * does not change the order of its sum. */
static int *syrk_owners(int ngroups, int nt)
{
    int *owner = (int *) R_alloc((size_t) ngroups, sizeof(int));
    double *load = (double *) R_alloc((size_t) nt, sizeof(double));
    for (int t = 0; t < nt; t++) load[t] = 0.0;
    for (int g = ngroups - 1; g >= 0; g--) {
        int best = 0;
        for (int t = 1; t < nt; t++) if (load[t] < load[best]) best = t;
        owner[g] = best;
        load[best] += g + 1;
    }
    return owner;
}

/* G (m x m, lower triangle with the diagonal) += (B - 1 c')' (B - 1 c') and
 * colsum += (B - 1 c')' 1 through the kernel of a path (see
 * syrk_lower_add()). */
static void syrk_lower_with(syrk_kernel kern, const double *Bt, int nb, int m,
                            const double *c, double *G, double *colsum, int threads)
{
    int w = kern.w, mr = 3 * w, vector = kern.path != SIMD_PLAIN;
    int ngroups = (m + mr - 1) / mr, npanels = 3 * ngroups;
    int nslices = (nb + SYRK_KC - 1) / SYRK_KC, nt = threads > 1 ? threads : 1;
    size_t panel_len = (size_t) SYRK_KC * w, slice_len = panel_len * npanels;
    double *P = (double *) R_alloc((size_t) nt * slice_len, sizeof(double));
    int *owner = syrk_owners(ngroups, nt);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
        int t, team;
        thread_team(&t, &team);  /* nt, unless OpenMP gave fewer */
        double *S = P + (size_t) t * slice_len;
        double acc[24 * 8]; /* the largest tile, 3w x w with w = 8 */
        for (int sl = 0; sl < nslices; sl++) {
            int k0 = sl * SYRK_KC, kc = nb - k0 < SYRK_KC ? nb - k0 : SYRK_KC;
            syrk_pack_slice(Bt, m, c, w, npanels, k0, kc, S, panel_len,
                            t == 0 ? colsum : NULL, vector);
            for (int g = ngroups - 1; g >= 0; g--) {
                if (owner[g] % team != t) continue;
                int i0 = g * mr;
                const double *a = S + (size_t) 3 * g * panel_len;
                /* column panels that reach the lower triangle */
                for (int j0 = 0; j0 < i0 + mr && j0 < m; j0 += w) {
                    kern.tile(kc, a, panel_len, S + (size_t) (j0 / w) * panel_len, acc);
                    syrk_tile_add(acc, w, i0, j0, m, G);
                }
            }
        }
    }
    R_CheckUserInterrupt();
}

/* G (m x m, lower triangle with the diagonal) += (B - 1 c')' (B - 1 c') and
 * colsum += (B - 1 c')' 1, for the nb x m block B given by its rows, Bt
 * (m x nb, leading dimension m). The block is taken in slices of SYRK_KC
 * rows. Each thread packs every slice itself, the shift c subtracted on
 * the way, into a buffer of its own that stays in its core's L2 cache
 * (packing costs about 2 / m of the update, and there is no barrier
 * between slices), in panels of w columns zero-padded to a whole number of
 * three-panel row groups. Then it updates its own row groups of G
 * (syrk_owners()): the same thread owns the same groups in every slice,
 * and every entry is summed in the same order whatever the number of
 * threads. The first thread alone adds the columns to colsum, in the order
 * of the rows. One parallel region per call: on a machine shared with
 * other work, a barrier per slice costs more than the slice. Main thread
 * only (R_alloc, an interrupt check at the end). */
void syrk_lower_add(const double *Bt, int nb, int m, const double *c, double *G,
                    double *colsum, int threads)
{
    syrk_lower_with(syrk_kernel_for(simd_active()), Bt, nb, m, c, G, colsum, threads);
}

simd_path syrk_lower_path(simd_path path, const double *Bt, int nb, int m, const double *c,
                          double *G, double *colsum, int threads)
{
    syrk_kernel kern = syrk_kernel_for(path);
    if (nb > 0 && m > 0) syrk_lower_with(kern, Bt, nb, m, c, G, colsum, threads);
    return kern.path;
}

/* The upper triangle of columns j0..j1-1 of the n x n matrix K from its
 * lower one: K[c, i] = K[i, c] for i > c, c in j0..j1-1, right after the
 * kernel fills those columns, while they are still in the cache. Tiles of
 * MIRROR_ROWS rows (i) by the block's columns, so that the strided reads of
 * a tile share their cache lines; the tiles spread over the threads. The
 * loop it replaces, element by element down each row on one thread, was
 * 44% of kernel_matrix() at n = 8000 (perf). No R API. */
#define MIRROR_ROWS 32
void mirror_lower_columns(double *K, int n, int j0, int j1, int threads)
{
    size_t ld = (size_t) n;
    int first = j0 + 1, ntiles = (n - first + MIRROR_ROWS - 1) / MIRROR_ROWS;
    if (ntiles <= 0) return;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8) if (threads > 1)
#endif
    for (int t = 0; t < ntiles; t++) {
        int i0 = first + t * MIRROR_ROWS, i1 = i0 + MIRROR_ROWS < n ? i0 + MIRROR_ROWS : n;
        for (int i = i0; i < i1; i++) {
            int c1 = i < j1 ? i : j1;
            double *row = K + (size_t) i * ld;
            for (int c = j0; c < c1; c++) row[c] = K[i + (size_t) c * ld];
        }
    }
}
