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
 * sums differences (see kernel_expanded_form()). */
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

typedef struct {
    kernel_code code;
    double sigma, scale, offset;
    int degree;
    int rows, d, lower_only, diff, expanded, row_block;
    const double *apack;           /* rows, 8 by 8, coordinate by coordinate */
    const double *anorms, *bnorms; /* squared norms, for the expanded form */
    const double *b;               /* the column points, each contiguous */
    double *out;                   /* rows x columns, leading dimension rows */
} fast_job;

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
static void transform_plain(const fast_job *J, double *v, int n)
{
    for (int i = 0; i < n; i++) {
        double x = v[i];
        switch (J->code) {
        case KERNEL_RBF: x = exp(-J->sigma * x); break;
        case KERNEL_LAPLACE: x = exp(-J->sigma * sqrt(x)); break;
        case KERNEL_POLY: x = R_pow_di(J->scale * x + J->offset, J->degree); break;
        case KERNEL_TANH: x = tanh(J->scale * x + J->offset); break;
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
                double t = J->diff ? a[8 * k] - bj[k] : a[8 * k] * bj[k];
                s += J->diff ? t * t : t;
            }
            if (J->expanded) {
                s = J->anorms[i] + J->bnorms[jc] - 2.0 * s;
                if (!(s > 0.0)) s = 0.0;
            }
            col[i] = s;
        }
        if (i0 < rows) transform_plain(J, col + i0, rows - i0);
        for (int i = i0; i < rows; i++) bad |= !(fabs(col[i]) <= DBL_MAX);
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
    J->expanded = kernel_expanded_form(spec, d);
    J->diff = dist && !J->expanded;
    /* rows per block: their packed tiles (8 d doubles each) in about 64 KB */
    int rb = (int) (8192 / (d > 0 ? d : 1));
    J->row_block = rb < 8 ? 8 : rb > 512 ? 512 : (rb / 8) * 8;
    const double *ap = dist ? a->shifted : a->inner;
    J->anorms = dist ? a->shifted_norms : a->inner_norms;
    J->b = dist ? b->shifted : b->inner;
    J->bnorms = dist ? b->shifted_norms : b->inner_norms;
    J->out = out;
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
    J.rows = nr;
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
