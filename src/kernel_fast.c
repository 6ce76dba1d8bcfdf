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
    const double *a;               /* the row points, each contiguous */
    /* wide: the points read in place (rows of column-major matrices,
     * leading dimensions lda and ldb), each coordinate less its shift
     * (NULL: none); the block's columns */
    const double *ax, *bx, *ashift, *bshift;
    int lda, ldb, cols;
    const double *anorms, *bnorms; /* squared norms, for the expanded form */
    const double *b;               /* the column points, each contiguous */
    double *out;                   /* rows x columns, leading dimension rows */
} fast_job;

/* A copy's function of the squared distances or inner products, in place. */
typedef void (*fast_transform_fn)(const fast_job *J, double *v, int n);

/* The difference distance of pair i for refine_pairs(): of the row points
 * ra + i d against the column point bj (refine_values()), or of points
 * read in place (wide_refine()). */
typedef double (*pair_distance_fn)(const void *pairs, int i);

/* refine_values()'s loop, the pairs' distances from the differences by
 * diff; self: the pair of a point with itself, or -1. */
static void refine_pairs(const fast_job *J, const double *an, double bn, int n,
                         const double *s, double *v, int self, fast_transform_fn f,
                         pair_distance_fn diff, const void *pairs)
{
    int any = 0;
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
        v[i] = i == self ? 0.0 : diff(pairs, i);
        f(J, v + i, 1);
    }
}

typedef struct {
    const double *ra, *bj;
    int d;
} contiguous_pairs;

static double contiguous_distance(const void *pairs, int i)
{
    const contiguous_pairs *P = (const contiguous_pairs *) pairs;
    return kernel_diff_distance(P->ra + (size_t) i * P->d, P->bj, P->d);
}

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
    int d = J->d, self = -1;
    if (d > 0 && bj >= ra && bj < ra + (size_t) n * d && (bj - ra) % d == 0) self = (int) ((bj - ra) / d);
    contiguous_pairs P = {ra, bj, d};
    refine_pairs(J, an, bn, n, s, v, self, f, contiguous_distance, &P);
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
 * tiles of the general product (tile_points(), tiles.c), which pack slices
 * of coordinates for the caches as a matrix product does, and then per
 * column the distances from the norms (distance kernels) and the kernel's
 * function. The points are read in place, rows of the caller's matrix
 * (kernel_points.c): no call copies them (500 x 200000 is 800 MB, and a
 * fresh copy's page faults cost more than its products); the distance
 * kernels' shift by the column means (kernel_shift()) is subtracted from
 * each coordinate as its slice is packed, the difference a shifted copy
 * would hold. Each inner product is summed in groups of coordinates
 * (wide_group_span()), over each group in order, one multiply-add a coordinate
 * (fused on the paths that fuse), from zero, the groups' sums then added
 * in order. Within one group, that is the tiles' sum: the same inner
 * products, to the bit, and so the same values for vanilladot, polydot,
 * tanhdot and rbfdot (whose distances come from the norms there too).
 * The groups let the threads share a block of few rows (a few hundred
 * rows, hundreds of thousands of coordinates): each takes groups, not
 * rows. laplacedot sums differences below the
 * crossover; here its distances come from the norms, and a pair whose
 * distance is so small that the square root would magnify the norms'
 * rounding (wide_refine(), as refine_values() for rbfdot) gets its
 * differences summed instead. Every value depends only on its pair and on
 * d: the same bits for a row alone or among others, on any thread count. */

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

/* Rows and columns of a task of the wide block: the columns' slice packed
 * once serves every row of the task, and each row tile packed once serves
 * every column, so that packing costs a small share of the products. */
#define WIDE_ROWS 240
#define WIDE_COLS 240
/* Rows below which a product is formed transposed (see wide_part()): the
 * tallest tile (24 rows, AVX-512). */
#define WIDE_FEW_ROWS 24
/* Multiply-adds of a pass of wide_block() (wide_pass_groups()): about
 * 50 ms of one thread's products between interrupt checks (75 GFLOP/s
 * here), about 30 ms of two threads'. */
#define WIDE_PASS_VALUES 2e9
/* A tile's (wide_tile()) rows and columns per part: its scratch is on the
 * stack of the thread that calls it. */
#define WIDE_TILE_ROWS 48
#define WIDE_TILE_COLS 48
/* Values finished at once (a stack buffer of their distances). */
#define WIDE_FINISH_CHUNK 256

/* The coordinates of group g of a wide sum (tuning.wide_group each): every
 * inner product is the sum, in the groups' order, of its groups' sums,
 * each summed over its coordinates in order from zero. The groups depend
 * on d alone, so a value depends only on its pair: the same bits for a row
 * alone or among others and on any thread count; and the groups' sums can
 * be formed on different threads (wide_block()). */
void wide_group_span(int d, int g, int *k0, int *kc)
{
    int size = tuning.wide_group;
    *k0 = g * size;
    *kc = d - *k0 < size ? d - *k0 : size;
}

/* The groups of a wide sum over d coordinates (one, empty, for none): the
 * products' here and the norms' (kernel_points.c's row_squares()). */
int wide_group_count(int d)
{
    return d > 0 ? (d - 1) / tuning.wide_group + 1 : 1;
}

/* c (nr x nc, leading dimension ldc) += the inner products of a's points
 * r0.. and b's points c0.. over coordinates k0 .. k0 + kc - 1, the points
 * read in place (tile_points()); with lower, tiles wholly above the
 * diagonal (row r0 + i < column c0 + j) are left alone. Fewer than
 * WIDE_FEW_ROWS rows (predict() of a few rows, kcca()'s columns) would
 * fill a fraction of each tile's height: the product is formed transposed
 * into t (nc x nr), the columns' points as its rows. Each inner product is
 * the same sum in the same order either way (a multiply-add's product
 * commutes): the same bits. scratch: WIDE_SCRATCH(nc) doubles. */
static void wide_part(const fast_job *J, int r0, int nr, int c0, int nc, int k0, int kc,
                      int lower, double *c, int ldc, double *scratch)
{
    double *t = scratch + TILE_POINTS_SCRATCH(WIDE_FEW_ROWS);
    const double *a = J->ax + r0, *b = J->bx + c0;
    if (nr >= WIDE_FEW_ROWS || nc <= nr) {
        tile_points(nr, nc, kc, k0, a, J->lda, J->ashift, b, J->ldb, J->bshift, c, ldc,
                    lower ? c0 - r0 : TILE_ALL_ROWS, scratch);
        return;
    }
    memset(t, 0, (size_t) nc * nr * sizeof(double));
    tile_points(nc, nr, kc, k0, b, J->ldb, J->bshift, a, J->lda, J->ashift, t, nc,
                TILE_ALL_ROWS, scratch);
    for (int j = 0; j < nc; j++) {
        double *cj = c + (size_t) j * ldc;
        const double *tj = t + j;
        for (int i = 0; i < nr; i++, tj += nc) cj[i] += *tj;
    }
}

/* Doubles of one thread's scratch for wide_part()'s tasks of w columns
 * at most: the columns' slice packed, or the rows' slice and the
 * transposed product. */
#define WIDE_SCRATCH(w) (TILE_POINTS_SCRATCH(w) > TILE_POINTS_SCRATCH(WIDE_FEW_ROWS) + \
                         WIDE_FEW_ROWS * (w) ? TILE_POINTS_SCRATCH(w)                \
                         : TILE_POINTS_SCRATCH(WIDE_FEW_ROWS) + WIDE_FEW_ROWS * (w))

/* The squared distance of a's point i and b's point jc from their
 * differences, each coordinate less its shift, in order, a product then
 * a sum (simd.h's rule for the plain loops): the differences
 * kernel_diff_distance() sums on shifted copies. */
static double wide_diff_distance(const fast_job *J, int i, int jc)
{
    const double *a = J->ax + i, *b = J->bx + jc;
    double s = 0.0;
    for (int k = 0; k < J->d; k++) {
        double u = J->ashift ? a[(size_t) k * J->lda] - J->ashift[k] : a[(size_t) k * J->lda];
        double v = J->bshift ? b[(size_t) k * J->ldb] - J->bshift[k] : b[(size_t) k * J->ldb];
        s = SD_MUL_ADD(u - v, u - v, s);
    }
    return s;
}

typedef struct {
    const fast_job *J;
    int i0, jc;
} in_place_pairs;

static double in_place_distance(const void *pairs, int i)
{
    const in_place_pairs *P = (const in_place_pairs *) pairs;
    return wide_diff_distance(P->J, P->i0 + i, P->jc);
}

/* refine_values() for points read in place: the values v[0..n-1] of b's
 * point jc against a's points i0 .. i0 + n - 1, from their distances s
 * from the norms. A point against itself is the same row of the same
 * matrix in memory. */
static void wide_refine(const fast_job *J, int i0, int n, int jc, const double *s, double *v)
{
    int self = -1;
    if (J->lda == J->ldb && J->bx + jc >= J->ax + i0 && J->bx + jc < J->ax + i0 + n)
        self = (int) (J->bx + jc - (J->ax + i0));
    in_place_pairs P = {J, i0, jc};
    refine_pairs(J, J->anorms + i0, J->bnorms[jc], n, s, v, self, fast_transform,
                 in_place_distance, &P);
}

/* Column jc's rows i0..i1-1 of a wide block, g its inner products in
 * place: the distances (for a distance kernel, refined by wide_refine()),
 * then the kernel's function, in chunks. Returns 1 if a value is not
 * finite. */
static int wide_finish(const fast_job *J, int jc, int i0, int i1, double *g)
{
    int bad = 0;
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
        if (J->expanded) wide_refine(J, c0, c1 - c0, jc, sbuf, v);
        for (int i = 0; i < c1 - c0; i++) bad |= simd_not_finite(v[i]);
    }
    return bad;
}

/* The wide form of kernel_fast_tile(): out (nr x nc) = the kernel between
 * a's points r0.. and b's points c0.., in parts of WIDE_TILE_ROWS x
 * WIDE_TILE_COLS, each part's groups summed in order (the first into the
 * zeroed out, the others through a buffer), then its columns finished. No
 * R: its scratch is on the stack. */
static int wide_tile(const fast_job *J, int r0, int nr, int c0, int nc, double *out)
{
    double scratch[WIDE_SCRATCH(WIDE_TILE_COLS)];
    double part[WIDE_TILE_ROWS * WIDE_TILE_COLS];
    int ng = wide_group_count(J->d), bad = 0;
    memset(out, 0, (size_t) nr * nc * sizeof(double));
    for (int q0 = 0; q0 < nc; q0 += WIDE_TILE_COLS)
        for (int p0 = 0; p0 < nr; p0 += WIDE_TILE_ROWS) {
            int w = nc - q0 < WIDE_TILE_COLS ? nc - q0 : WIDE_TILE_COLS;
            int h = nr - p0 < WIDE_TILE_ROWS ? nr - p0 : WIDE_TILE_ROWS;
            double *c = out + p0 + (size_t) q0 * nr;
            for (int g = 0, k0, kc; g < ng; g++) {
                wide_group_span(J->d, g, &k0, &kc);
                if (g == 0) {
                    wide_part(J, r0 + p0, h, c0 + q0, w, k0, kc, 0, c, nr, scratch);
                    continue;
                }
                memset(part, 0, sizeof part);
                wide_part(J, r0 + p0, h, c0 + q0, w, k0, kc, 0, part, h, scratch);
                for (int j = 0; j < w; j++) {
                    double *cj = c + (size_t) j * nr;
                    const double *pj = part + (size_t) j * h;
                    for (int i = 0; i < h; i++) cj[i] += pj[i];
                }
            }
        }
    fast_job T = *J;
    T.ax = J->ax + r0;
    T.anorms = J->anorms ? J->anorms + r0 : NULL;
    for (int c = 0; c < nc; c++)
        bad |= wide_finish(&T, c0 + c, 0, nr, out + (size_t) c * nr);
    return bad;
}

/* The tasks of a wide block: rows [i0, i1) of columns j0 .. j1 - 1, in
 * even parts (wide_step()), those wholly above the diagonal (lower_only)
 * left out. */
typedef struct {
    int i0, i1, j0, j1;
} wide_task;

/* The step that cuts n into parts of at most most, as even as multiples of
 * the tallest tile (24) make them: 500 rows are 3 tasks of 168, 168 and
 * 164, not 240, 240 and a sliver of 20. */
static int wide_step(int n, int most)
{
    int parts = (n + most - 1) / most, step = parts > 0 ? (n + parts - 1) / parts : most;
    step = (step + WIDE_FEW_ROWS - 1) / WIDE_FEW_ROWS * WIDE_FEW_ROWS;
    return step < most ? step : most;
}

static int wide_tasks(const fast_job *J, int cols, wide_task *tasks)
{
    int rows = J->rows, nt = 0, hr = wide_step(rows, WIDE_ROWS), wc = wide_step(cols, WIDE_COLS);
    for (int j0 = 0; j0 < cols; j0 += wc)
        for (int i0 = 0; i0 < rows; i0 += hr) {
            int i1 = rows - i0 < hr ? rows : i0 + hr;
            int j1 = cols - j0 < wc ? cols : j0 + wc;
            if (J->lower_only && i1 <= j0) continue;
            if (tasks) tasks[nt] = (wide_task) {J->lower_only && i0 < j0 ? j0 : i0, i1, j0, j1};
            nt++;
        }
    return nt;
}

/* dst (leading dimension ldd) += src (leading dimension lds) over a
 * task's entries that the block keeps (with lower_only, none above the
 * diagonal). */
static void wide_add(const fast_job *J, const wide_task *t, const double *src, int lds,
                     double *dst, int ldd)
{
    for (int j = t->j0; j < t->j1; j++) {
        int f = J->lower_only && j > t->i0 ? j : t->i0;
        const double *s = src + (size_t) (j - t->j0) * lds - t->i0;
        double *o = dst + (size_t) j * ldd;
        for (int i = f; i < t->i1; i++) o[i] += s[i];
    }
}

/* Doubles of one thread's scratch in wide_pass(), no more than the block
 * needs: *pack of them for wide_part() (a packed slice), then a task's
 * sums. */
static size_t wide_thread_scratch(const fast_job *J, size_t *pack)
{
    int h = J->rows < WIDE_ROWS ? J->rows : WIDE_ROWS;
    int w = J->cols < WIDE_COLS ? J->cols : WIDE_COLS;
    *pack = WIDE_SCRATCH(w);
    return *pack + (size_t) h * w;
}

/* One pass of the wide block over groups g0 .. g0 + np - 1: each pair of a
 * group and a task is a unit of work, dealt in order (group by group,
 * count_take()); a unit sums its task over its group into the thread's
 * buffer, then adds it to out once the task's previous group is in
 * (added[t]: the task's groups of this pass added, wait_for_count()), so
 * each entry is its groups' sums added in the groups' order, on any
 * thread count. The threads share the inner dimension of a block of few
 * tasks (a few hundred rows: the groups of each task on both threads)
 * with no partial blocks: the sums go to out from the thread's buffer,
 * where a block's worth of slots per group, zeroed, then added, cost a
 * tenth of a wide block on 2 threads. */
static void wide_pass(const fast_job *J, const wide_task *tasks, int nt, int g0, int np,
                      int *added, double *scratch, int threads)
{
    int next = 0;
    size_t pack, per = wide_thread_scratch(J, &pack);
    for (int t = 0; t < nt; t++) added[t] = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
#endif
    {
        int id, team;
        thread_team(&id, &team);
        double *s = scratch + per * (size_t) id, *part = s + pack;
        for (int u = count_take(&next); u < np * nt; u = count_take(&next)) {
            const wide_task *t = tasks + u % nt;
            int k0, kc, g = u / nt, h = t->i1 - t->i0, w = t->j1 - t->j0;
            wide_group_span(J->d, g0 + g, &k0, &kc);
            memset(part, 0, (size_t) h * w * sizeof(double));
            wide_part(J, t->i0, h, t->j0, w, k0, kc, J->lower_only, part, h, s);
            wait_for_count(added + u % nt, g);
            wide_add(J, t, part, h, J->out, J->rows);
            count_publish(added + u % nt, g + 1);
        }
        (void) team;
    }
}

/* Groups per pass of wide_block(): about WIDE_PASS_VALUES multiply-adds a
 * pass (the interrupt check's and the progress's step), so that a block
 * of few rows still deals many units to the threads. */
static int wide_pass_groups(const fast_job *J, int ng)
{
    double per_group = (double) J->rows * J->cols * tuning.wide_group;
    double np = WIDE_PASS_VALUES / per_group;
    return np < 1.0 ? 1 : np > ng ? ng : (int) np;
}

/* The wide form of kernel_fast_block() (out and lower_only as there):
 * the groups' sums (wide_group_span()) in passes spread over the threads
 * (wide_pass()), with the interrupt check between passes, then the values
 * finished column by column; for KERNEL_SYMMETRIC, the upper triangle
 * mirrored. Scratch: per thread, a task's buffer and packed slice. */
static int wide_block(fast_job *J, int cols, int lower_only, int threads)
{
    int rows = J->rows, lower = J->lower_only, ng = wide_group_count(J->d), bad = 0;
    J->cols = cols;
    for (int j = 0; j < cols; j++) {
        int i0 = lower ? j : 0;
        if (i0 < rows) memset(J->out + (size_t) j * rows + i0, 0, (size_t) (rows - i0) * sizeof(double));
    }
    int nt = wide_tasks(J, cols, NULL);
    wide_task *tasks = (wide_task *) R_alloc((size_t) nt + 1, sizeof(wide_task));
    wide_tasks(J, cols, tasks);
    int *added = (int *) R_alloc((size_t) nt + 1, sizeof(int));
    int np = wide_pass_groups(J, ng);
    size_t pack;
    double *scratch = (double *) R_alloc(wide_thread_scratch(J, &pack) *
                                         (size_t) (threads > 1 ? threads : 1), sizeof(double));
    for (int g0 = 0; g0 < ng; g0 += np) {
        int npass = ng - g0 < np ? ng - g0 : np;
        wide_pass(J, tasks, nt, g0, npass, added, scratch, threads);
        R_CheckUserInterrupt();
        double left = 1.0 - (double) (g0 + npass) / ng;
        /* the columns whose share of the work is the share done */
        progress_fill_columns((int) (cols * (1.0 - (lower ? sqrt(left) : left))), cols, lower);
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8) if (threads > 1) \
    reduction(|:bad)
#endif
    for (int j = 0; j < cols; j++) {
        int f = lower ? j : 0;
        if (f < rows) bad |= wide_finish(J, j, f, rows, J->out + (size_t) j * rows + f);
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
    if (J->wide) {
        /* the product packs its own panels (tile_points()) */
        if (!a->in_place || !b->in_place) error_argument("wide points not read in place");
        J->ax = a->in_place;
        J->lda = a->in_place_ld;
        J->ashift = a->in_place_shift;
        J->bx = b->in_place;
        J->ldb = b->in_place_ld;
        J->bshift = b->in_place_shift;
        return;
    }
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

/* dst[i - i0] = the base kernel spec (kernel_fast_supported) between a's
 * points i0 .. i1 - 1 and b's point j, read in place (wide data): the
 * blocks' values, for the generic interpreter (kernel_generic.c's
 * base_segment(): the diagonal of kernel_self(), kcca()). No R API. */
void kernel_fast_in_place(const kernel_spec *spec, const kernel_points *a,
                          const kernel_points *b, int j, int i0, int i1, double *dst)
{
    fast_job J;
    fast_job_prepare(spec, a, b, 0, NULL, &J);
    (void) wide_tile(&J, i0, i1 - i0, j, 1, dst);
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
