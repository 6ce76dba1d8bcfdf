/* Centered Nystrom kernel PCA: pass 1 over row blocks (the sufficient
 * statistics), the blocked symmetric rank-k update it needs, the landmark
 * coefficients, and k-means++ landmarks. Pass 2 (the scores) is the
 * projection of rows in project.c, which predict() uses too.
 *
 * Pass 1 computes, block by block (and within a block, panel by panel of
 * rows: panel_rows()), the kernel between the rows and the m landmarks
 * (panel x m, never n x m) and sums
 *   sum_i (k_i - c) and sum_i (k_i - c)(k_i - c)' (m x m),
 * with k_i the kernel between row i and the landmarks and c a shift close
 * to their mean (so that the centered covariance does not come from the
 * difference of two large numbers). These are sums over rows, so chunks of
 * rows can be summed apart and added (R/nystrom.R).
 *
 * The rank-k update (the n m^2 part of a fit) is cache-blocked and
 * multithreaded here rather than left to the BLAS: R's reference dsyrk (as
 * crossprod()) runs at 1.6 G multiply-adds per second on the project
 * machine (an AMD EPYC with AVX-512), this one at about 23 per CPU-second
 * with AVX-512 and 17 with AVX2 at m = 500, 13 at m = 200 (bench/nystrom.R,
 * part syrk; the 8 x 4 tiles before ran at 12.5). Every entry of the
 * result is summed in the same order whatever the number of threads. */
#include "fastkpca.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* Rows of a block per slice of the rank-k update: a packed slice of the
 * block (KC x m doubles, 512 KB for m = 500) stays in the L2 cache while a
 * thread updates its tiles of the result from it. */
#define SYRK_KC 128

/* The result is updated in register tiles of 3w rows by w columns, w = 8
 * with AVX-512 and 4 otherwise; the packed slice is stored in panels of w
 * columns (row by row, w doubles each), so that a tile reads three
 * consecutive panels as its rows and one panel as its columns. A tile of
 * 3 x 4 (or 3 x 8) vector accumulators keeps both FMA units busy: the
 * 8 x 4 tile of before reached about 60% of the AVX2 peak. */
typedef struct {
    int w;  /* panel width: the tile is 3w x w */
    void (*tile)(int kc, const double *a, size_t panel_len, const double *b, double *acc);
} syrk_kernel;

/* The tile kernels: acc (3w x w, column-major) = sum over kc rows of
 * a[k, 0:3w] b[k, 0:w]', with a's three panels panel_len doubles apart and
 * every panel's rows w doubles apart. With GCC or clang they are written
 * with vector extensions: SSE2 (2 doubles, every x86-64 CPU) by default,
 * and on x86-64 CPUs with AVX2 and FMA, or AVX-512 (checked at run time),
 * 4 or 8 doubles with fused multiply-adds. Elsewhere, plain loops. Each
 * entry is summed over k in order, whichever kernel runs. */
#if defined(__GNUC__) && (__GNUC__ >= 5 || defined(__clang__))
# define SYRK_VECTOR 1
typedef double v2d __attribute__((vector_size(16)));
typedef double v2du __attribute__((vector_size(16), aligned(8), may_alias));
# if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 6)
#  define SYRK_AVX2 1
typedef double v4d __attribute__((vector_size(32)));
typedef double v4du __attribute__((vector_size(32), aligned(8), may_alias));
# endif
# if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 7)
#  define SYRK_AVX512 1
typedef double v8d __attribute__((vector_size(64)));
typedef double v8du __attribute__((vector_size(64), aligned(8), may_alias));
# endif
#endif

#ifdef SYRK_AVX512
/* written out in full: GCC at -O2 keeps an array of accumulators in memory */
# define SYRK_FMA8(j, r0, r1, r2) do {                                         \
        v8d y = {bk[j], bk[j], bk[j], bk[j], bk[j], bk[j], bk[j], bk[j]};       \
        r0 += x0 * y; r1 += x1 * y; r2 += x2 * y;                               \
    } while (0)
__attribute__((target("avx512f")))
static void syrk_tile_avx512(int kc, const double *a, size_t panel_len, const double *b,
                             double *acc)
{
    v8d z = {0, 0, 0, 0, 0, 0, 0, 0};
    v8d c00 = z, c10 = z, c20 = z, c01 = z, c11 = z, c21 = z, c02 = z, c12 = z, c22 = z,
        c03 = z, c13 = z, c23 = z, c04 = z, c14 = z, c24 = z, c05 = z, c15 = z, c25 = z,
        c06 = z, c16 = z, c26 = z, c07 = z, c17 = z, c27 = z;
    const double *a0 = a, *a1 = a + panel_len, *a2 = a + 2 * panel_len;
    for (int k = 0; k < kc; k++) {
        v8d x0 = *(const v8du *) (a0 + 8 * k), x1 = *(const v8du *) (a1 + 8 * k),
            x2 = *(const v8du *) (a2 + 8 * k);
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
    *(v8du *) (acc + 0) = c00; *(v8du *) (acc + 8) = c10; *(v8du *) (acc + 16) = c20;
    *(v8du *) (acc + 24) = c01; *(v8du *) (acc + 32) = c11; *(v8du *) (acc + 40) = c21;
    *(v8du *) (acc + 48) = c02; *(v8du *) (acc + 56) = c12; *(v8du *) (acc + 64) = c22;
    *(v8du *) (acc + 72) = c03; *(v8du *) (acc + 80) = c13; *(v8du *) (acc + 88) = c23;
    *(v8du *) (acc + 96) = c04; *(v8du *) (acc + 104) = c14; *(v8du *) (acc + 112) = c24;
    *(v8du *) (acc + 120) = c05; *(v8du *) (acc + 128) = c15; *(v8du *) (acc + 136) = c25;
    *(v8du *) (acc + 144) = c06; *(v8du *) (acc + 152) = c16; *(v8du *) (acc + 160) = c26;
    *(v8du *) (acc + 168) = c07; *(v8du *) (acc + 176) = c17; *(v8du *) (acc + 184) = c27;
}
# undef SYRK_FMA8
#endif

#ifdef SYRK_AVX2
__attribute__((target("avx2,fma")))
static void syrk_tile_avx2(int kc, const double *a, size_t panel_len, const double *b,
                           double *acc)
{
    v4d z = {0, 0, 0, 0};
    v4d c00 = z, c10 = z, c20 = z, c01 = z, c11 = z, c21 = z,
        c02 = z, c12 = z, c22 = z, c03 = z, c13 = z, c23 = z;
    const double *a0 = a, *a1 = a + panel_len, *a2 = a + 2 * panel_len;
    for (int k = 0; k < kc; k++) {
        v4d x0 = *(const v4du *) (a0 + 4 * k), x1 = *(const v4du *) (a1 + 4 * k),
            x2 = *(const v4du *) (a2 + 4 * k);
        const double *bk = b + 4 * k;
        v4d y = {bk[0], bk[0], bk[0], bk[0]};
        c00 += x0 * y; c10 += x1 * y; c20 += x2 * y;
        y = (v4d) {bk[1], bk[1], bk[1], bk[1]};
        c01 += x0 * y; c11 += x1 * y; c21 += x2 * y;
        y = (v4d) {bk[2], bk[2], bk[2], bk[2]};
        c02 += x0 * y; c12 += x1 * y; c22 += x2 * y;
        y = (v4d) {bk[3], bk[3], bk[3], bk[3]};
        c03 += x0 * y; c13 += x1 * y; c23 += x2 * y;
    }
    *(v4du *) (acc + 0) = c00;  *(v4du *) (acc + 4) = c10;  *(v4du *) (acc + 8) = c20;
    *(v4du *) (acc + 12) = c01; *(v4du *) (acc + 16) = c11; *(v4du *) (acc + 20) = c21;
    *(v4du *) (acc + 24) = c02; *(v4du *) (acc + 28) = c12; *(v4du *) (acc + 32) = c22;
    *(v4du *) (acc + 36) = c03; *(v4du *) (acc + 40) = c13; *(v4du *) (acc + 44) = c23;
}
#endif

/* One 4 x 4 part of the 12 x 4 tile (rows of panel a), into acc with
 * leading dimension 12. */
static void syrk_quad_plain(int kc, const double *a, const double *b, double *acc)
{
#ifdef SYRK_VECTOR
    /* 8 accumulators, within SSE2's 16 registers */
    v2d c00 = {0, 0}, c10 = c00, c01 = c00, c11 = c00, c02 = c00, c12 = c00,
        c03 = c00, c13 = c00;
    for (int k = 0; k < kc; k++) {
        const double *ak = a + 4 * k, *bk = b + 4 * k;
        v2d a0 = *(const v2du *) ak, a1 = *(const v2du *) (ak + 2);
        v2d b0 = {bk[0], bk[0]};
        c00 += a0 * b0; c10 += a1 * b0;
        v2d b1 = {bk[1], bk[1]};
        c01 += a0 * b1; c11 += a1 * b1;
        v2d b2 = {bk[2], bk[2]};
        c02 += a0 * b2; c12 += a1 * b2;
        v2d b3 = {bk[3], bk[3]};
        c03 += a0 * b3; c13 += a1 * b3;
    }
    *(v2du *) (acc + 0) = c00;  *(v2du *) (acc + 2) = c10;
    *(v2du *) (acc + 12) = c01; *(v2du *) (acc + 14) = c11;
    *(v2du *) (acc + 24) = c02; *(v2du *) (acc + 26) = c12;
    *(v2du *) (acc + 36) = c03; *(v2du *) (acc + 38) = c13;
#else
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) acc[i + 12 * j] = 0.0;
    for (int k = 0; k < kc; k++)
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++) acc[i + 12 * j] += a[4 * k + i] * b[4 * k + j];
#endif
}

static void syrk_tile_plain(int kc, const double *a, size_t panel_len, const double *b,
                            double *acc)
{
    for (int h = 0; h < 3; h++) syrk_quad_plain(kc, a + h * panel_len, b, acc + 4 * h);
}

/* The tile kernel for this CPU. */
static syrk_kernel syrk_kernel_choose(void)
{
    syrk_kernel kern = {4, syrk_tile_plain};
#ifdef SYRK_AVX2
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        kern.tile = syrk_tile_avx2;
#endif
#ifdef SYRK_AVX512
    if (__builtin_cpu_supports("avx512f")) {
        kern.w = 8;
        kern.tile = syrk_tile_avx512;
    }
#endif
    return kern;
}

/* Pack rows k0 .. k0 + kc - 1 of B - 1 c' into P in panels of w columns,
 * each panel_len doubles, row by row; columns past m (up to npanels w) are
 * zero. B holds the block's rows one after another (Bt, m x nb: row i at
 * Bt + i m), so that a slice is read as one contiguous run: read column by
 * column from an nb x m block, its 128-value pieces of 200 columns far
 * apart cost as much as a third of the update at m = 200. With run (not
 * NULL), add each column's values to run[j], in the order of the rows. */
static void syrk_pack_slice(const double *Bt, int m, const double *c, int w, int npanels,
                            int k0, int kc, double *P, size_t panel_len, double *run)
{
    int full = m / w; /* panels wholly inside the m columns */
    for (int k = 0; k < kc; k++) {
        const double *row = Bt + (size_t) (k0 + k) * m;
        double *dst = P + (size_t) k * w;
        int j = 0;
#ifdef SYRK_VECTOR
        /* two doubles at a time: R's -O2 leaves these loops scalar */
        for (int p = 0; p < full; p++) {
            double *d = dst + (size_t) p * panel_len;
            for (int jj = 0; jj < w; jj += 2, j += 2)
                *(v2du *) (d + jj) = *(const v2du *) (row + j) - *(const v2du *) (c + j);
        }
        if (run)
            for (int i = 0; i + 2 <= m; i += 2)
                *(v2du *) (run + i) += *(const v2du *) (row + i) - *(const v2du *) (c + i);
#else
        for (int p = 0; p < full; p++)
            for (int jj = 0; jj < w; jj++, j++)
                dst[(size_t) p * panel_len + jj] = row[j] - c[j];
        if (run)
            for (int i = 0; i + 2 <= m; i += 2) {
                run[i] += row[i] - c[i];
                run[i + 1] += row[i + 1] - c[i + 1];
            }
#endif
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
 * colsum += (B - 1 c')' 1, for the nb x m block B given by its rows, Bt
 * (m x nb, leading dimension m). The block is taken in slices of SYRK_KC
 * rows. Each thread packs every slice itself, the shift c subtracted on the way, into a buffer of its own that stays in
 * its core's L2 cache (packing costs about 2 / m of the update, and there
 * is no barrier between slices), in panels of w columns zero-padded to a
 * whole number of three-panel row groups. Then it updates its own row
 * groups of G (syrk_owners()): the same thread owns the same groups in
 * every slice, and every entry is summed in the same order whatever the
 * number of threads. The first thread alone adds the columns to colsum,
 * in the order of the rows. One parallel region per call: on a machine
 * shared with other work, a barrier per slice costs more than the slice. */
static void syrk_lower_add(const double *Bt, int nb, int m, const double *c, double *G,
                           double *colsum, int threads)
{
    syrk_kernel kern = syrk_kernel_choose();
    int w = kern.w, mr = 3 * w;
    int ngroups = (m + mr - 1) / mr, npanels = 3 * ngroups;
    int nslices = (nb + SYRK_KC - 1) / SYRK_KC, nt = threads > 1 ? threads : 1;
    size_t panel_len = (size_t) SYRK_KC * w, slice_len = panel_len * npanels;
    double *P = (double *) R_alloc((size_t) nt * slice_len, sizeof(double));
    int *owner = syrk_owners(ngroups, nt);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
        int t = 0, team = 1;
#ifdef _OPENMP
        t = omp_get_thread_num();
        team = omp_get_num_threads(); /* nt, unless OpenMP gave fewer */
#endif
        double *S = P + (size_t) t * slice_len;
        double acc[24 * 8]; /* the largest tile, 3w x w with w = 8 */
        for (int sl = 0; sl < nslices; sl++) {
            int k0 = sl * SYRK_KC, kc = nb - k0 < SYRK_KC ? nb - k0 : SYRK_KC;
            syrk_pack_slice(Bt, m, c, w, npanels, k0, kc, S, panel_len,
                            t == 0 ? colsum : NULL);
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

/* Rows per panel of a block: a block's kernel is computed and folded into
 * the sums one panel of rows at a time, so that the rank-k update reads it
 * from the cache; a whole block's kernel (2^22 doubles) went to memory and
 * back. On one thread, 2^16 doubles (512 KB, the core's L2 cache); with
 * more, 2^20 (8 MB, the last-level cache), as each panel costs two parallel
 * regions, whose start and end cost more than the smaller panel saves (at
 * n = 10^6, m = 200: 8% faster on one thread with the small panels, 4%
 * slower on two). A multiple of SYRK_KC rows, so that the update's slices,
 * and hence every sum, are those of the whole block, for any panel. */
static int panel_rows(int m, int threads)
{
    int doubles = threads > 1 ? 1 << 20 : 1 << 16;
    int rows = doubles / (m > 0 ? m : 1) / SYRK_KC * SYRK_KC;
    return rows < SYRK_KC ? SYRK_KC : rows;
}

/* The statistics of one block of rows (bp, prepared) with the landmarks
 * (lp) added to the totals S (m) and G (m x m, lower triangle): the block's
 * own sums bs and bg start from zero, so that the totals are sums of whole
 * blocks. The block's kernel goes through Kt panel by panel, each panel's
 * as m x panel_rows(), the landmarks as its rows (syrk_pack_slice() reads
 * it a row of the block at a time). */
static void add_block_statistics(const kernel_eval *k, const kernel_points *bp,
                                 const kernel_points *lp, int m, const double *shift,
                                 double *Kt, double *bs, double *bg, double *S, double *G,
                                 int threads)
{
    int nb = bp->n, pr = panel_rows(m, threads);
    const double **wb = (const double **) R_alloc((size_t) k->nweights + 1,
                                                  sizeof(double *));
    memset(bs, 0, (size_t) m * sizeof(double));
    memset(bg, 0, (size_t) m * m * sizeof(double));
    for (int p0 = 0; p0 < nb; p0 += pr) {
        int np = nb - p0 < pr ? nb - p0 : pr;
        kernel_points panel = kernel_points_view(k, bp, p0, np, wb);
        const void *vmax = vmaxget();
        kernel_block(k, lp, &panel, 0, Kt, threads, "");
        vmaxset(vmax);
        syrk_lower_add(Kt, np, m, shift, bg, bs, threads);
    }
    for (int j = 0; j < m; j++) {
        S[j] += bs[j];
        for (int i = j; i < m; i++) G[i + (size_t) j * m] += bg[i + (size_t) j * m];
    }
}

/* .Call, pass 1: the sufficient statistics of the rows of x for the
 * landmarks, over blocks of rows, in one call: the kernel program is parsed
 * and the landmarks prepared (shifted by their column means, as predict()
 * shifts them, and transposed) once; each block's kernel with the
 * landmarks (block x m) is then folded into the sums. Each block's sums
 * start from zero and are added to the totals, so the result does not
 * depend on anything but the block size.
 * x: n x d double matrix (the data); landmarks: m x d double matrix (for
 * a string kernel, two character vectors, indexed together once); kernel: a program from fastkpca:::kernel_program(); xweights, lweights:
 * the conformal weights of the rows of x and of the landmarks; shift: m
 * doubles, c; block_rows: integer, rows per block, 1 to n; threads; step:
 * NULL or a function called after each block (a progress bar).
 * Returns list(sums = sum_i (k_i - c), cross = sum_i (k_i - c)(k_i - c)',
 * m x m, symmetric). */
SEXP nystrom_statistics(SEXP x, SEXP landmarks, SEXP kernel, SEXP xweights,
                        SEXP lweights, SEXP shift, SEXP block_rows, SEXP threads,
                        SEXP step)
{
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    int nthreads = as_threads(threads);
    kernel_point_sets(&k, x, "x", landmarks, "landmarks", nthreads);
    int n = k.any_string ? (int) XLENGTH(x) : nrows(x);
    int m = k.any_string ? (int) XLENGTH(landmarks) : nrows(landmarks);
    if (m < 1) error_argument("'landmarks' must have at least one row");
    if (!isReal(shift) || XLENGTH(shift) != m) error_argument("'shift' must hold %d doubles", m);
    int block = as_count(block_rows, "block_rows", 1, n);
    check_step(step);

    kernel_points lp;
    const double *lshift = kernel_points_fixed(&k, landmarks, lweights, &lp);
    check_weights(&k, xweights, "xweights");

    SEXP sums = PROTECT(allocVector(REALSXP, m));
    SEXP cross = PROTECT(allocMatrix(REALSXP, m, m));
    double *S = REAL(sums), *G = REAL(cross);
    memset(S, 0, (size_t) m * sizeof(double));
    memset(G, 0, (size_t) m * m * sizeof(double));
    int pr = panel_rows(m, nthreads) < block ? panel_rows(m, nthreads) : block;
    double *Kt = (double *) R_alloc((size_t) pr * m, sizeof(double));
    double *bs = (double *) R_alloc((size_t) m, sizeof(double));
    double *bg = (double *) R_alloc((size_t) m * m, sizeof(double));
    for (int row0 = 0; row0 < n; row0 += block) {
        int nb = n - row0 < block ? n - row0 : block;
        const void *vmax = vmaxget();
        kernel_points bp;
        kernel_points_rows(&k, x, row0, nb, lshift, xweights, &bp);
        add_block_statistics(&k, &bp, &lp, m, REAL(shift), Kt, bs, bg, S, G, nthreads);
        vmaxset(vmax);
        call_step(step);
    }
    for (int j = 0; j < m; j++)
        for (int i = j + 1; i < m; i++) G[j + (size_t) i * m] = G[i + (size_t) j * m];

    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(ans, 0, sums);
    SET_VECTOR_ELT(ans, 1, cross);
    const char *names[] = {"sums", "cross"};
    set_list_names(ans, names);
    UNPROTECT(3);
    return ans;
}

/* .Call: the coefficients of a Nystrom fit on its landmarks,
 * alpha = sqrt(n) T W, with each column's sign fixed by orient_columns()
 * (eigen.c), the one rule for the signs of every fit.
 * basis: m x r double matrix T = U diag(s^-1/2); vectors: r x k double
 * matrix W; n: the number of rows, a double >= 1. Returns m x k. */
SEXP nystrom_alpha(SEXP basis, SEXP vectors, SEXP n)
{
    check_double_matrix(basis, "basis");
    check_double_matrix(vectors, "vectors");
    int m = nrows(basis), r = ncols(basis), k = ncols(vectors);
    if (m < 1 || r < 1) error_argument("'basis' must have at least 1 row and 1 column");
    if (nrows(vectors) != r)
        error_argument("'vectors' must have %d rows, not %d", r, nrows(vectors));
    double rows = as_number(n, "n");
    if (rows < 1) error_argument("'n' must be at least 1");
    SEXP ans = PROTECT(allocMatrix(REALSXP, m, k));
    double *A = REAL(ans);
    if (k > 0) {
        double one = 1.0, zero = 0.0, root = sqrt(rows);
        F77_CALL(dgemm)("N", "N", &m, &k, &r, &one, REAL(basis), &m, REAL(vectors), &r,
                        &zero, A, &m FCONE FCONE);
        /* sqrt(n) * (T %*% W), in that order, as R computed it */
        for (size_t t = 0; t < (size_t) m * k; t++) A[t] = root * A[t];
        orient_columns(m, k, A);
    }
    UNPROTECT(1);
    return ans;
}

/* One k-means++ draw: d2 (the squared feature-space distance of each row
 * to its nearest landmark) updated with the new landmark c, whose kernel
 * column is kc; then the next landmark drawn with probability proportional
 * to d2: the first row whose running sum passes u, so that a row with
 * d2 = 0 is never chosen, whatever the rounding. Returns -1 when every row
 * is at distance 0 (or the distances overflow). */
static int kmeanspp_next(double *d2, const double *diag, const double *kc, int n, int c)
{
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        double dist = diag[i] + diag[c] - 2.0 * kc[i];
        if (!(dist > 0.0)) dist = 0.0;
        if (dist < d2[i]) d2[i] = dist;
        if (i == c) d2[i] = 0.0; /* a landmark is never drawn again */
        total += d2[i];
    }
    if (!(total > 0.0) || !R_FINITE(total)) return -1;
    double u = unif_rand() * total, run = 0.0;
    int next = -1;
    for (int i = 0; i < n; i++) {
        if (d2[i] <= 0.0) continue;
        next = i;
        run += d2[i];
        if (run > u) break;
    }
    return next;
}

/* .Call: m landmark rows by kernel k-means++ seeding (D^2 sampling in
 * feature space; Arthur and Vassilvitskii 2007, Oglic and Gaertner 2017):
 * the first uniformly, each next one with probability proportional to its
 * squared feature-space distance k(x,x) + k(c,c) - 2 k(x,c) to the nearest
 * landmark so far. Uses R's random number generator.
 * x: n x d double matrix; m: integer, 1..n; kernel: a program; weights: the
 * conformal weights of the rows of x. One thread: each draw needs the one
 * before.
 * Returns the m row numbers (from 1), or fewer if the rest of the data are
 * at distance 0 from the landmarks already (duplicated rows). */
SEXP nystrom_kmeanspp(SEXP x, SEXP m_, SEXP kernel, SEXP weights)
{
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    check_double_matrix(x, "x");
    int n = nrows(x), d = ncols(x);
    int m = as_count(m_, "m", 1, n > 0 ? n : 1);
    if (n < 1 || d < 1) error_argument("'x' must have at least 1 row and 1 column");

    kernel_points p;
    kernel_points_fixed(&k, x, weights, &p);
    const double **wb = (const double **) R_alloc((size_t) k.nweights + 1, sizeof(double *));

    double *diag = (double *) R_alloc((size_t) n, sizeof(double));
    kernel_diagonal(&k, &p, diag);

    double *d2 = (double *) R_alloc((size_t) n, sizeof(double));
    double *kc = (double *) R_alloc((size_t) n, sizeof(double));
    for (int i = 0; i < n; i++) d2[i] = R_PosInf;
    SEXP chosen = PROTECT(allocVector(INTSXP, m));
    int *idx = INTEGER(chosen), got = 0;

    GetRNGstate();
    int c = (int) R_unif_index((double) n);
    while (1) {
        idx[got++] = c + 1;
        if (got == m) break;
        /* kc[i] = k(x_i, x_c): one column of n rows, a tight loop on one
         * thread (as n columns of one row, the per-column overhead costs
         * more than the kernel values; and a parallel region per landmark
         * waits, on a busy machine, for a second thread to be scheduled) */
        kernel_points v = kernel_points_view(&k, &p, c, 1, wb);
        const void *vmax = vmaxget();
        kernel_block(&k, &p, &v, 0, kc, 1, "");
        vmaxset(vmax);
        int next = kmeanspp_next(d2, diag, kc, n, c);
        if (next < 0) break;
        c = next;
    }
    PutRNGstate();
    SEXP ans = PROTECT(allocVector(INTSXP, got));
    memcpy(INTEGER(ans), idx, (size_t) got * sizeof(int));
    UNPROTECT(2);
    return ans;
}
