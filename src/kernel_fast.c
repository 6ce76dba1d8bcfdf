/* Fast blocks of the kernels that are a function of an inner product or a
 * squared distance (vanilladot, polydot, rbfdot, laplacedot, tanhdot).
 *
 * A block of kernel values is computed in tiles of 8 rows by 4 columns (8
 * by 8 on AVX-512) whose accumulators stay in registers, the rows packed
 * coordinate by coordinate beforehand (as a matrix product packs its
 * operands), then the kernel's function is applied to each column segment
 * in a vector loop: a vector exp (kernel_simd.h) for rbfdot and laplacedot,
 * whose sqrt is the vector one. The vector code is written once, in the
 * vector types of simd.h, and compiled per path: AVX-512, AVX2 with FMA
 * (the two give the same bits), two doubles a vector (SSE2 on x86-64, NEON
 * on aarch64); the "plain" path, and compilers without vector extensions,
 * run plain loops and exp(). The session's path (simd_active()) chooses.
 *
 * Squared distances: below KERNEL_EXPANDED_MIN_D coordinates they are summed
 * from the differences, exactly as the definition (duplicated rows give
 * exactly 0, so a kernel value of exactly 1); from it on, for rbfdot, from
 * the norms and the inner product, ||x||^2 + ||y||^2 - 2 x'y, clamped at 0,
 * which needs one operation per coordinate instead of two. The expanded form
 * loses digits when two points are close relative to their norms: its
 * absolute error in a squared distance is about eps (||x||^2 + ||y||^2).
 * Measured on the project machine (AMD EPYC, Zen 4; rows of N(3, 1) data
 * with 50 duplicated and 50 nearly duplicated rows, 1e-9 apart; rbfdot
 * with sigma = 1/d; CPU time of kernel_matrix(), a build with each form):
 *   d            16      32      64     100     200     784
 *   difference  7.03    8.33   10.16   11.98   24.22   80.47  ns per value
 *   expanded    7.42    8.33    9.90   11.85   23.05   75.26
 *   max error of K relative to direct differences in R:
 *   difference 1.9e-15 1.8e-15 1.9e-15 1.8e-15 1.5e-15 1.5e-15
 *   expanded   1.9e-15 3.2e-15 3.4e-15 4.0e-15 5.4e-15 9.3e-15
 * (the machine was shared: single timings move by 10%). This CPU runs the
 * subtractions on adders beside its multiply-add units, so the difference
 * form costs little more; the expanded one gains 3 to 7% from d = 64 on,
 * where its error is still below 1e-14, and so the switch-over is at 64. On
 * CPUs that share one set of units the gain is larger. laplacedot always
 * sums differences (see kernel_expanded_form()).
 *
 * Wide data (many columns): the tiles above stream whole rows through
 * registers, each packed row tile read again for every column tile, with
 * no blocking over the columns: at 500 x 200000 they ran at 14 to 17% of
 * the machine's product rate. From tuning.wide_min_d columns on, blocks and tiles
 * take their inner products from the matrix product's tiles instead, in
 * panels of columns blocked for the caches (see "wide data" below). */
#include "fastkpca.h"
#include "simd.h"
#include <Rmath.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Distance kernels sum differences below this many coordinates and use the
 * norms and the inner product from it on (see above). */
#define KERNEL_EXPANDED_MIN_D 64
/* The polynomial exp's range: below, exp() gives subnormal numbers or 0;
 * above, 2^k would overflow. */
#define KF_EXP_LO -708.0
#define KF_EXP_HI 709.0
/* Values of a column finished at once where the expanded form keeps their
 * distances for refine_values() (a stack buffer): at least the tiles'
 * largest row block. */
#define FAST_SEGMENT 512

typedef struct {
    kernel_code code;
    double sigma, scale, offset;
    int degree;
    int rows, d, lower_only, diff, expanded, row_block;
    int wide;                      /* the Gram block as a product (kernel_wide_form) */
    const double *apack;           /* rows, 8 by 8, coordinate by coordinate */
    const double *a;               /* the row points, each contiguous (wide) */
    const double *anorms, *bnorms; /* squared norms, for the expanded form */
    const double *b;               /* the column points, each contiguous */
    double *out;                   /* rows x columns, leading dimension rows */
} fast_job;

/* A copy's function of the squared distances or inner products, in place. */
typedef void (*fast_transform_fn)(const fast_job *J, double *v, int n);

/* The values v[0..n-1] of the column point bj (squared norm bn) against the
 * row points ra + i d (squared norms an[i]), from the squared distances
 * s[0..n-1] from the norms (the expanded form) by the kernel's function f:
 * those that sq_distance_lost() flags (overflowed norms, or a cancellation
 * that may move the value by more than SQ_DISTANCE_TOL) are summed again
 * from the differences, and a point against itself (the same point in
 * memory) gets the distance 0 exactly, so a value of exactly 1. The test
 * runs first over the whole segment, in a loop the compiler vectorizes;
 * ordinary data rarely have a value to redo. */
static void refine_values(const fast_job *J, const double *ra, const double *an,
                          const double *bj, double bn, int n, const double *s, double *v,
                          fast_transform_fn f)
{
    int d = J->d, any = 0, self = -1;
    if (d > 0 && bj >= ra && bj < ra + (size_t) n * d && (bj - ra) % d == 0) self = (int) ((bj - ra) / d);
    if (J->code == KERNEL_RBF) {
        for (int i = 0; i < n; i++) any |= sq_distance_lost(s[i], an[i], bn, J->sigma * v[i]);
    } else {
        any = 1;
    }
    if (!any && self < 0) return;
    for (int i = 0; i < n; i++) {
        double slope = J->sigma * v[i];
        if (J->code == KERNEL_LAPLACE) slope /= 2.0 * sqrt(s[i]);
        if (i != self && !sq_distance_lost(s[i], an[i], bn, slope)) continue;
        v[i] = i == self ? 0.0 : kernel_diff_distance(ra + (size_t) i * d, bj, d);
        f(J, v + i, 1);
    }
}

#ifdef SIMD_VECTOR
# define KF_COPY_V2 1
/* Two doubles a vector: SSE2 (every x86-64 CPU) or NEON (every aarch64
 * CPU, whose multiply-adds the compiler fuses) */
# define W 2
# define VD vd2
# define VI vi2
# define VOP(op) VD2_##op
# define KF(name) name##_v2
# define KF_ATTR
# include "kernel_simd.h"
# undef W
# undef VD
# undef VI
# undef VOP
# undef KF
# undef KF_ATTR
#endif

#ifdef SIMD_X86
/* AVX2 with FMA, for the AVX2 and AVX-512 paths */
# define W 4
# define VD vd4
# define VI vi4
# define VOP(op) VD4_##op
# define KF(name) name##_avx2
# define KF_ATTR SIMD_AVX2_ATTR
# include "kernel_simd.h"
# undef W
# undef VD
# undef VI
# undef VOP
# undef KF
# undef KF_ATTR
/* AVX-512: 8 doubles a vector, tiles of 8 rows by 8 columns; each value
 * the same operations in the same order as the AVX2 copy's, so the same
 * bits */
# define W 8
# define VD vd8
# define VI vi8
# define VOP(op) VD8_##op
# define KF(name) name##_avx512
# define KF_ATTR SIMD_AVX512_ATTR
# include "kernel_simd.h"
# undef W
# undef VD
# undef VI
# undef VOP
# undef KF
# undef KF_ATTR
#endif

/* Plain loops and exp(): every system and compiler, and the "plain" path. */
static void transform_plain(const fast_job *J, double *v, int n);
static void transform_plain(const fast_job *J, double *v, int n)
{
    for (int i = 0; i < n; i++) {
        double x = v[i];
        switch (J->code) {
        case KERNEL_RBF: x = exp(-J->sigma * x); break;
        case KERNEL_LAPLACE: x = exp(-J->sigma * sqrt(x)); break;
        case KERNEL_POLY: x = R_pow_di(J->scale * x + J->offset, J->degree); break;
        case KERNEL_TANH: x = simd_not_finite(x) ? NAN : tanh(J->scale * x + J->offset); break;
        default: break;
        }
        v[i] = x;
    }
}

static int columns_plain(const fast_job *J, int c0, int c1)
{
    int rows = J->rows, d = J->d, bad = 0;
    for (int jc = c0; jc < c1; jc++) {
        const double *bj = J->b + (size_t) jc * d;
        double *col = J->out + (size_t) jc * rows;
        int i0 = J->lower_only ? jc : 0;
        for (int i = i0; i < rows; i++) {
            const double *a = J->apack + (size_t) (i / 8) * 8 * d + i % 8;
            double s = 0.0;
            for (int k = 0; k < d; k++) {
                /* (a - b)^2 or a b, a product then a sum (simd.h's rule
                 * for the plain loops) */
                double t = J->diff ? a[8 * k] - bj[k] : a[8 * k];
                s = SD_MUL_ADD(t, J->diff ? t : bj[k], s);
            }
            if (J->expanded) s = sq_distance_from_norms(J->anorms[i], J->bnorms[jc], s);
            col[i] = s;
        }
        for (int r0 = i0; r0 < rows && J->expanded; r0 += FAST_SEGMENT) {
            int len = rows - r0 < FAST_SEGMENT ? rows - r0 : FAST_SEGMENT;
            double sbuf[FAST_SEGMENT];
            memcpy(sbuf, col + r0, (size_t) len * sizeof(double));
            transform_plain(J, col + r0, len);
            refine_values(J, J->a + (size_t) r0 * d, J->anorms + r0, bj, J->bnorms[jc], len,
                          sbuf, col + r0, transform_plain);
        }
        if (i0 < rows && !J->expanded) transform_plain(J, col + i0, rows - i0);
        for (int i = i0; i < rows; i++) bad |= simd_not_finite(col[i]);
    }
    return bad;
}

/* The copy of the session's path (simd.h): AVX-512, AVX2, two doubles a
 * vector for SSE2 and NEON, else plain. */
static int fast_columns(const fast_job *J, int c0, int c1)
{
    simd_path path = simd_active();
#ifdef SIMD_X86
    if (path == SIMD_AVX512) return columns_avx512(J, c0, c1);
    if (path == SIMD_AVX2) return columns_avx2(J, c0, c1);
#endif
#ifdef KF_COPY_V2
    if (path != SIMD_PLAIN) return columns_v2(J, c0, c1);
#endif
    (void) path;
    return columns_plain(J, c0, c1);
}

static void fast_transform(const fast_job *J, double *v, int n)
{
    simd_path path = simd_active();
#ifdef SIMD_X86
    if (path == SIMD_AVX512) {
        transform_avx512(J, v, n);
        return;
    }
    if (path == SIMD_AVX2) {
        transform_avx2(J, v, n);
        return;
    }
#endif
#ifdef KF_COPY_V2
    if (path != SIMD_PLAIN) {
        transform_v2(J, v, n);
        return;
    }
#endif
    (void) path;
    transform_plain(J, v, n);
}

/* Whether kernel_fast_block() computes the base kernel spec. */
int kernel_fast_supported(const kernel_spec *spec)
{
    switch (spec->code) {
    case KERNEL_VANILLA: case KERNEL_RBF: case KERNEL_LAPLACE: case KERNEL_TANH:
        return 1;
    case KERNEL_POLY:
        return spec->degree >= 1 && spec->degree <= 1e6 && spec->degree == floor(spec->degree);
    default:
        return 0;
    }
}

/* Whether the distance kernel spec uses the expanded form at d
 * coordinates: rbfdot from KERNEL_EXPANDED_MIN_D on; laplacedot never, as
 * its square root turns an absolute error e in a small squared distance
 * into one of sqrt(e) (measured: 4e-9 relative on K for rows 1e-9 apart). */
int kernel_expanded_form(const kernel_spec *spec, int d)
{
    return spec->code == KERNEL_RBF && d >= KERNEL_EXPANDED_MIN_D;
}

/* ---- wide data: the Gram block as a matrix product ----------------------
 *
 * From tuning.wide_min_d coordinates on (kernel_wide_form()), a block is computed
 * in two steps: the inner products of its rows and columns by the register
 * tiles of the general product (tile_gemm(), tiles.c), which pack panels
 * of coordinates for the caches as a matrix product does, and then per
 * column the distances from the norms (distance kernels) and the kernel's
 * function. tile_gemm() sums each inner product over the coordinates in
 * order, one multiply-add a coordinate (fused on the paths that fuse), as
 * the tiles above do: the same inner products, to the bit, and so the same
 * values for vanilladot, polydot, tanhdot and rbfdot (whose distances
 * come from the norms there too). laplacedot sums differences below the
 * crossover; here its distances come from the norms, and a pair whose
 * distance is so small that the square root would magnify the norms'
 * rounding (refine_values(), as for rbfdot) gets its differences summed
 * instead. Every
 * value depends only on its pair and on d: the same bits for a row alone
 * or among others, on any thread count. The data's column means are
 * subtracted from the points of the distance kernels beforehand, as for
 * the tiles above (kernel_points). */

/* The default crossover. Measured on the project machine (AMD EPYC,
 * Zen 4, 2 threads, shared: load 3 to 5 on its 2 cores), kernel_matrix()
 * of N(0, 1) rows, the tiles' time over the product's, median of 7 to 9:
 *   d                  64    96   128   192   256   384   512
 *   n = 500  rbfdot  0.98  0.86  0.93  1.00  1.67  2.37  3.00
 *            laplace 1.31  0.89  1.06  0.96  1.64  1.87  2.44
 *            vanilla 1.03  0.46  0.93  0.97  2.30  1.94  2.91
 *   n = 1000 rbfdot        1.38  1.70  2.29  2.62  3.19  (3.85 laplace)
 * (an earlier run at n = 500, d = 256: 1.15 to 1.26; at n = 200 both take
 * the call's fixed cost, about 20 ms, up to d = 1024). From 256 on the
 * product wins at every size measured; below, the tiles hold their own.
 * The product's cost that does not shrink with the rows: a call of one to
 * eight rows (predict() of a few rows) is 6 to 14% slower than the tiles at
 * any d from 512 (packing the other side's points); see NEWS.md. It is
 * the tuning setting wide_min_d (ENGINE_TUNING, fastkpca.h). */

/* Whether the blocks of spec at d coordinates are products (see above). */
int kernel_wide_form(const kernel_spec *spec, int d)
{
    return kernel_fast_supported(spec) && d >= tuning.wide_min_d;
}

/* Columns of a task of the wide block; rows of a task, a multiple of it
 * (so that a diagonal square never straddles two row ranges) and of every
 * tile height (24, 12, 6, 4). */
#define WIDE_COLS 48
#define WIDE_ROWS 240
/* Doubles of the rows' panel of coordinates that the threads share from
 * the last-level cache in one pass over the block: 8 MB. */
#define WIDE_PANEL_DOUBLES (1 << 20)
/* Values finished at once (a stack buffer of their distances). */
#define WIDE_FINISH_CHUNK 256

/* Column jc's rows i0..i1-1 of a wide block, g its inner products in
 * place: the distances (for a distance kernel, refined by
 * refine_values()), then the kernel's function, in chunks. ra: a's point
 * of row i is ra + i d. Returns 1 if a value is not finite. */
static int wide_finish(const fast_job *J, const double *ra, int jc, int i0, int i1,
                       double *g)
{
    int d = J->d, bad = 0;
    double sbuf[WIDE_FINISH_CHUNK];
    for (int c0 = i0; c0 < i1; c0 += WIDE_FINISH_CHUNK) {
        int c1 = i1 - c0 < WIDE_FINISH_CHUNK ? i1 : c0 + WIDE_FINISH_CHUNK;
        double *v = g + (c0 - i0);
        if (J->expanded) {
            double bn = J->bnorms[jc];
            for (int i = c0; i < c1; i++)
                v[i - c0] = sbuf[i - c0] = sq_distance_from_norms(J->anorms[i], bn, v[i - c0]);
        }
        fast_transform(J, v, c1 - c0);
        if (J->expanded)
            refine_values(J, ra + (size_t) c0 * d, J->anorms + c0, J->b + (size_t) jc * d,
                          J->bnorms[jc], c1 - c0, sbuf, v, fast_transform);
        for (int i = 0; i < c1 - c0; i++) bad |= simd_not_finite(v[i]);
    }
    return bad;
}

/* Rows below which a product is formed transposed (see wide_product()):
 * the tallest tile (24 rows, AVX-512). */
#define WIDE_FEW_ROWS 24

/* out (nr x nc, leading dimension ldo) += the inner products of a's rows
 * r0.. and b's points c0.. over the coordinates k0 .. k0 + kc - 1: one
 * thread. Fewer than WIDE_FEW_ROWS rows (predict() of a few rows, kcca()'s
 * columns) would fill a fraction of each tile's height: the product is
 * formed transposed, WIDE_COLS columns at a time through a buffer on the
 * stack, the columns of b as its rows. Each inner product is the same sum
 * in the same order either way (a multiply-add's product commutes): the
 * same bits. */
static void wide_product(const fast_job *J, int r0, int nr, int c0, int nc, int k0, int kc,
                         double *out, int ldo)
{
    int d = J->d;
    const double *a = J->a + (size_t) r0 * d + k0, *b = J->b + (size_t) c0 * d + k0;
    if (nr >= WIDE_FEW_ROWS || nc <= nr) {
        tile_gemm(nr, nc, kc, a, d, 1, b, d, 0, 1.0, out, ldo, 1);
        return;
    }
    double buf[WIDE_COLS * WIDE_FEW_ROWS]; /* columns x rows, leading dimension w */
    for (int j0 = 0; j0 < nc; j0 += WIDE_COLS) {
        int w = nc - j0 < WIDE_COLS ? nc - j0 : WIDE_COLS;
        for (int i = 0; i < nr; i++)
            for (int j = 0; j < w; j++) buf[j + (size_t) i * w] = out[i + (size_t) (j0 + j) * ldo];
        tile_gemm(w, nr, kc, b + (size_t) j0 * d, d, 1, a, d, 0, 1.0, buf, w, 1);
        for (int i = 0; i < nr; i++)
            for (int j = 0; j < w; j++) out[i + (size_t) (j0 + j) * ldo] = buf[j + (size_t) i * w];
    }
}

/* The wide form of kernel_fast_tile(): the tile's inner products over all
 * the coordinates, then its columns finished. */
static int wide_tile(const fast_job *J, int r0, int nr, int c0, int nc, double *out)
{
    memset(out, 0, (size_t) nr * nc * sizeof(double));
    wide_product(J, r0, nr, c0, nc, 0, J->d, out, nr);
    fast_job T = *J;
    T.anorms = J->anorms ? J->anorms + r0 : NULL;
    int bad = 0;
    for (int c = 0; c < nc; c++)
        bad |= wide_finish(&T, J->a + (size_t) r0 * J->d, c0 + c, 0, nr,
                           out + (size_t) c * nr);
    return bad;
}

/* One task of a wide block over the coordinates k0 .. k0 + kc - 1: rows
 * [i0, i1) of column group q (columns j0 .. j1 - 1). With lower_only, rows
 * start at j0 and the diagonal square (rows j0 .. j1 - 1) goes to sq (its
 * own WIDE_COLS x WIDE_COLS scratch), so that nothing above the diagonal
 * is written. In the last pass (last), the task then finishes its values
 * (wide_finish()), the square's lower triangle copied in first: no
 * parallel region of its own (on a busy machine each waits for its
 * threads). Returns 1 if a value is not finite. */
static int wide_task(const fast_job *J, int i0, int i1, int j0, int j1, int k0, int kc,
                     double *sq, int last)
{
    int rows = J->rows, bad = 0, r = i0;
    if (J->lower_only && r < j1) {
        wide_product(J, j0, j1 - j0, j0, j1 - j0, k0, kc, sq, WIDE_COLS);
        r = j1;
    }
    if (r < i1)
        wide_product(J, r, i1 - r, j0, j1 - j0, k0, kc, J->out + (size_t) j0 * rows + r, rows);
    if (!last) return 0;
    for (int j = j0; j < j1; j++) {
        double *col = J->out + (size_t) j * rows;
        int f = J->lower_only && j > i0 ? j : i0;
        if (J->lower_only && i0 < j1)
            for (int i = f; i < j1; i++) col[i] = sq[(i - j0) + (size_t) (j - j0) * WIDE_COLS];
        bad |= wide_finish(J, J->a, j, f, i1, col + f);
    }
    return bad;
}

/* Coordinates per pass of wide_block(): the pass's panels of the rows and
 * the columns in about WIDE_PANEL_DOUBLES, a whole number of the
 * product's slices (TILE_KC = 128 coordinates). */
static int wide_panel(const fast_job *J, int cols)
{
    double points = (double) J->rows + (J->lower_only ? 0 : cols);
    int kp = (int) (WIDE_PANEL_DOUBLES / (points > 1 ? points : 1)) / 128 * 128;
    return kp < 128 ? 128 : kp;
}

/* The tasks' inner products over coordinates k0 .. k0 + kc - 1, spread over
 * the threads, finished in the last pass; tasks wholly above the diagonal
 * (lower_only) are empty. Returns 1 if a value is not finite. */
static int wide_pass(const fast_job *J, int cols, int k0, int kc, double *sq, int threads)
{
    int rows = J->rows, ngr = (rows + WIDE_ROWS - 1) / WIDE_ROWS, bad = 0;
    int ntasks = ngr * ((cols + WIDE_COLS - 1) / WIDE_COLS), last = k0 + kc >= J->d;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1) \
    reduction(|:bad)
#endif
    for (int t = 0; t < ntasks; t++) {
        int q = t / ngr, i0 = (t % ngr) * WIDE_ROWS, j0 = q * WIDE_COLS;
        int i1 = rows - i0 < WIDE_ROWS ? rows : i0 + WIDE_ROWS;
        int j1 = cols - j0 < WIDE_COLS ? cols : j0 + WIDE_COLS;
        if (J->lower_only && i1 <= j0) continue;
        if (J->lower_only && i0 < j0) i0 = j0;
        bad |= wide_task(J, i0, i1, j0, j1, k0, kc,
                         sq ? sq + (size_t) q * WIDE_COLS * WIDE_COLS : NULL, last);
    }
    return bad;
}

/* The wide form of kernel_fast_block() (out and lower_only as there):
 * passes over panels of coordinates (wide_panel()), each spread over the
 * threads in tasks of WIDE_ROWS rows by WIDE_COLS columns, with the
 * interrupt check between passes, the last finishing the values; then for
 * KERNEL_SYMMETRIC the upper triangle mirrored. Scratch: lower_only's diagonal squares. */
static int wide_block(const fast_job *J, int cols, int lower_only, int threads)
{
    int rows = J->rows, d = J->d, lower = J->lower_only;
    double *sq = NULL;
    if (lower)
        sq = (double *) R_alloc((size_t) ((cols + WIDE_COLS - 1) / WIDE_COLS) * WIDE_COLS *
                                WIDE_COLS + 1, sizeof(double));
    if (sq)
        memset(sq, 0, (size_t) ((cols + WIDE_COLS - 1) / WIDE_COLS) * WIDE_COLS * WIDE_COLS *
               sizeof(double));
    for (int j = 0; j < cols; j++) {
        int i0 = lower ? j : 0;
        if (i0 < rows) memset(J->out + (size_t) j * rows + i0, 0, (size_t) (rows - i0) * sizeof(double));
    }
    int kp = wide_panel(J, cols), bad = 0;
    for (int k0 = 0; k0 < d; k0 += kp) {
        int kc = d - k0 < kp ? d - k0 : kp;
        bad |= wide_pass(J, cols, k0, kc, sq, threads);
        R_CheckUserInterrupt();
        double left = 1.0 - (double) (k0 + kc) / d;
        /* the columns whose share of the work is the share done */
        progress_fill_columns((int) (cols * (1.0 - (lower ? sqrt(left) : left))), cols, lower);
    }
    if (lower_only == KERNEL_SYMMETRIC && !bad) mirror_lower_columns(J->out, rows, 0, cols, threads);
    return bad;
}

/* Columns per task of the parallel loop: they share each packed row tile. */
#define FAST_CHUNK 16

/* The job of a block of the base kernel spec (kernel_fast_supported)
 * between the points of a (rows) and b (columns), into out: a's points
 * packed in tiles of 8 (R_alloc, so on the main thread). */
static void fast_job_prepare(const kernel_spec *spec, const kernel_points *a,
                             const kernel_points *b, int lower_only, double *out,
                             fast_job *J)
{
    int rows = a->n, d = a->d;
    int dist = spec->code == KERNEL_RBF || spec->code == KERNEL_LAPLACE;
    J->code = spec->code;
    J->sigma = spec->sigma;
    J->scale = spec->scale;
    J->offset = spec->offset;
    J->degree = spec->code == KERNEL_POLY ? (int) spec->degree : 1;
    J->rows = rows;
    J->d = d;
    J->lower_only = lower_only != 0;
    J->wide = kernel_wide_form(spec, d);
    /* the wide product gives inner products: distances from the norms */
    J->expanded = kernel_expanded_form(spec, d) || (dist && J->wide);
    J->diff = dist && !J->expanded;
    /* rows per block: their packed tiles (8 d doubles each) in about 64 KB */
    int rb = (int) (8192 / (d > 0 ? d : 1));
    J->row_block = rb < 8 ? 8 : rb > 512 ? 512 : (rb / 8) * 8;
    const double *ap = dist ? a->shifted : a->inner;
    J->anorms = dist ? a->shifted_norms : a->inner_norms;
    J->b = dist ? b->shifted : b->inner;
    J->bnorms = dist ? b->shifted_norms : b->inner_norms;
    J->out = out;
    J->a = ap;
    J->apack = NULL;
    if (J->wide) return; /* the product packs its own panels */
    int tiles = (rows + 7) / 8;
    double *pack = (double *) R_alloc((size_t) tiles * 8 * d + 1, sizeof(double));
    for (int t = 0; t < tiles; t++) {
        double *pt = pack + (size_t) t * 8 * d;
        for (int r = 0; r < 8; r++) {
            int i = t * 8 + r;
            const double *src = ap + (size_t) i * d;
            for (int k = 0; k < d; k++) pt[(size_t) k * 8 + r] = i < rows ? src[k] : 0.0;
        }
    }
    J->apack = pack;
}

/* The base kernel spec (kernel_fast_supported) between the points of a
 * (rows) and b (columns): out as kernel_block() describes it. Columns in
 * blocks of about block_work multiply-adds, threads sharing a block, with
 * an interrupt check between blocks. Returns 1 if a value is not finite
 * (the caller reports it). */
int kernel_fast_block(const kernel_spec *spec, const kernel_points *a,
                      const kernel_points *b, int lower_only, double *out, int threads,
                      double block_work)
{
    int rows = a->n, cols = b->n, d = a->d;
    fast_job J;
    fast_job_prepare(spec, a, b, lower_only, out, &J);
    if (J.wide) return wide_block(&J, b->n, lower_only, threads);
    double per_column = (double) rows * (d + 16.0);
    int j0 = 0, bad = 0;
    while (j0 < cols && !bad) {
        int ncol = (int) (block_work / (lower_only ? per_column / 2 + 1 : per_column + 1));
        if (ncol < FAST_CHUNK * threads) ncol = FAST_CHUNK * threads;
        int j1 = cols - j0 < ncol ? cols : j0 + ncol;
        int nchunks = (j1 - j0 + FAST_CHUNK - 1) / FAST_CHUNK;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1) \
    reduction(|:bad)
#endif
        for (int c = 0; c < nchunks; c++) {
            int c0 = j0 + c * FAST_CHUNK;
            int c1 = c0 + FAST_CHUNK < j1 ? c0 + FAST_CHUNK : j1;
            bad |= fast_columns(&J, c0, c1);
        }
        if (lower_only == KERNEL_SYMMETRIC && !bad)
            mirror_lower_columns(out, rows, j0, j1, threads);
        R_CheckUserInterrupt();
        progress_fill_columns(j1, cols, lower_only);
        j0 = j1;
    }
    return bad;
}

/* A block of the base kernel spec between the points of a and b whose
 * tiles kernel_fast_tile() computes on any thread: prepared here, on the
 * main thread (its scratch is R_alloc'ed). */
struct kernel_fast_plan {
    fast_job J;
};

kernel_fast_plan *kernel_fast_prepare(const kernel_spec *spec, const kernel_points *a,
                                      const kernel_points *b)
{
    kernel_fast_plan *P = (kernel_fast_plan *) R_alloc(1, sizeof(kernel_fast_plan));
    fast_job_prepare(spec, a, b, 0, NULL, &P->J);
    (void) simd_active(); /* the CPU check, once, here rather than on the threads */
    return P;
}

/* out (nr x nc, leading dimension nr) = the kernel between a's points
 * r0 .. r0 + nr - 1 (r0 a multiple of 8) and b's points c0 .. c0 + nc - 1,
 * each value computed as in kernel_fast_block(). No R API: callable inside
 * a parallel region. Returns 1 if a value is not finite. */
int kernel_fast_tile(const kernel_fast_plan *P, int r0, int nr, int c0, int nc,
                     double *out)
{
    fast_job J = P->J;
    if (J.wide) return wide_tile(&J, r0, nr, c0, nc, out);
    J.rows = nr;
    J.a = P->J.a + (size_t) r0 * J.d;
    J.apack = P->J.apack + (size_t) (r0 / 8) * 8 * J.d;
    J.anorms = P->J.anorms ? P->J.anorms + r0 : NULL;
    J.b = P->J.b + (size_t) c0 * J.d;
    J.bnorms = P->J.bnorms ? P->J.bnorms + c0 : NULL;
    J.out = out;
    return fast_columns(&J, 0, nc);
}

/* The kernel's function (kernel_fast_supported) of the squared distances
 * or inner products v[0..n-1], in place: the same vector code as the
 * blocks, for the base kernels of a kernel expression. */
void kernel_fast_transform(const kernel_spec *spec, double *v, int n)
{
    fast_job J;
    memset(&J, 0, sizeof J);
    J.code = spec->code;
    J.sigma = spec->sigma;
    J.scale = spec->scale;
    J.offset = spec->offset;
    J.degree = spec->code == KERNEL_POLY ? (int) spec->degree : 1;
    fast_transform(&J, v, n);
}

/* rbfdot's values v[0..n-1] of the column point bj (squared norm bn)
 * against the row points ra + i d (squared norms an[i]), from finite
 * distances from the norms (kernel_sq_distance()): refine_values() for the
 * generic interpreter (kernel.c's base_segment()), so that a base kernel
 * of an expression gets the values of the blocks. */
void kernel_fast_refine(const kernel_spec *spec, const double *ra, const double *an,
                        const double *bj, double bn, int d, int n, double *v)
{
    fast_job J;
    memset(&J, 0, sizeof J);
    J.code = spec->code;
    J.sigma = spec->sigma;
    J.d = d;
    double s[FAST_SEGMENT];
    for (int i0 = 0; i0 < n; i0 += FAST_SEGMENT) {
        int len = n - i0 < FAST_SEGMENT ? n - i0 : FAST_SEGMENT;
        /* finite distances: only the cancellation's test needs them (laplacedot) */
        for (int i = 0; i < len; i++) s[i] = 0.0;
        refine_values(&J, ra + (size_t) i0 * d, an + i0, bj, bn, len, s, v + i0, fast_transform);
    }
}
