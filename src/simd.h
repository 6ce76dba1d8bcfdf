/* The arithmetic layer: the vector types every vector kernel of the package
 * is written in, and the one switch that says which of them run.
 *
 * The types are GCC's and clang's vector extensions, so that one source
 * compiles to SSE2, AVX2, AVX-512 or NEON: vd2 (two doubles: SSE2 on
 * x86-64, NEON on aarch64), vd4 (four: AVX2, or two halves elsewhere), vd8
 * (eight: AVX-512), the unaligned forms vd2u, vd4u, vd8u for loads and
 * stores in place, and the integer vectors vi2, vi4, vi8 of the same sizes. A
 * kernel written in them is compiled once per instruction set, a copy with
 * SIMD_AVX2_ATTR or SIMD_AVX512_ATTR (a target attribute) for the x86-64
 * CPUs that have them. Intrinsics stand in only for what the extensions
 * lack (square roots, minima, fused multiply-adds that must not depend on
 * the compiler's contraction flags).
 *
 * The switch (simd_path, set from R: options(fastkpca.simd), see
 * R/simd.R) names the widest instruction set the kernels may use; each
 * kernel takes its widest copy at or below it that the CPU runs. Every
 * kernel sums each entry in an order fixed by its copy alone (not by the
 * sizes of a call or the thread count); copies of one width with and
 * without fused multiply-adds give the same order, rounded differently.
 * Nothing here calls R: the kernels read the switch inside OpenMP regions. */
#ifndef FASTKPCA_SIMD_H
#define FASTKPCA_SIMD_H

/* The paths, in the order of fastkpca:::simd_path_names (R/simd.R), where
 * the code of a name is its position less one. SIMD_AUTO asks for the
 * widest this CPU runs. The rank of a path (simd_rank()) orders them:
 * a request for a path the CPU lacks gives the widest it runs of no
 * greater rank (NEON ranks with SSE2: two doubles a vector). */
typedef enum {
    SIMD_AUTO = 0, SIMD_PLAIN, SIMD_SSE2, SIMD_AVX2, SIMD_AVX512, SIMD_NEON,
    SIMD_PATH_COUNT
} simd_path;

#if defined(__GNUC__) && (__GNUC__ >= 7 || defined(__clang__))
# define SIMD_VECTOR 1
typedef double vd2 __attribute__((vector_size(16)));
typedef double vd2u __attribute__((vector_size(16), aligned(8), may_alias));
typedef long long vi2 __attribute__((vector_size(16)));
typedef double vd4 __attribute__((vector_size(32)));
typedef double vd4u __attribute__((vector_size(32), aligned(8), may_alias));
typedef long long vi4 __attribute__((vector_size(32)));
typedef double vd8 __attribute__((vector_size(64)));
typedef double vd8u __attribute__((vector_size(64), aligned(8), may_alias));
typedef long long vi8 __attribute__((vector_size(64)));
# if defined(__x86_64__)
#  define SIMD_X86 1
#  include <immintrin.h>
#  define SIMD_AVX2_ATTR __attribute__((target("avx2,fma")))
#  define SIMD_AVX512_ATTR __attribute__((target("avx512f")))
# elif defined(__aarch64__)
#  define SIMD_ARM64 1
#  include <arm_neon.h>
# endif
#endif

/* The vector helpers, each written once, here: a value in every lane
 * (SPLAT), acc + x y (FMA), the square root, minimum and maximum lane by
 * lane, and a vector's four lanes summed as (0 + 1) + (2 + 3) (VD4_SUM,
 * which takes a double[4] too, so that plain loops sum in the same order).
 * Macros rather than functions: a function passing a vd4 or vd8 by value
 * changes the ABI where AVX is not enabled (gcc and clang refuse it, or
 * warn), and the intrinsics inline into the copy of the instruction set
 * that uses them (SIMD_AVX2_ATTR, SIMD_AVX512_ATTR). FMA is fused where
 * the instruction set has it (NEON, AVX2 with FMA, AVX-512) and is an
 * intrinsic there, so that it does not depend on the compiler's
 * contraction flags; SSE2 has none: a product, then a sum, as the plain
 * loops. A kernel compiled per path names its copy's helpers through one
 * macro, VOP(SPLAT) for VD2_SPLAT or VD4_SPLAT.
 *
 * Every multiply-add of a vector kernel, in its vectors and in its scalar
 * tails, goes through these helpers, never `acc += x * y` (tests/testthat/
 * test-arithmetic-rules.R keeps it so): the copy's rule then rounds it,
 * not the compiler's flags. For one double: SD_MUL_ADD, a product then a
 * sum (the plain loops, and SSE2's copies, whose lanes have no fused
 * instruction), and SD_FMA, fused (C99's fma(), one instruction where the
 * copy's target has it: AVX2 with FMA, AVX-512, aarch64). VD2_FMA1,
 * VD4_FMA1, VD8_FMA1 name the one a copy's scalar tails take, rounded as
 * its lanes; VD4H_FMA is VD2_FMA on a vd4 as two halves (the two-double
 * copies that keep four lanes, so that their sums are in the AVX2 copy's
 * order). */
#define VD4_SUM(v) (((v)[0] + (v)[1]) + ((v)[2] + (v)[3]))
#include <math.h>
#if defined(__GNUC__) && defined(__aarch64__)
/* the product held in a register before the sum: gcc's default
 * -ffp-contract=fast (and clang's "on") would fuse them on aarch64, whose
 * baseline has the fused instruction */
# define SD_PRODUCT_HELD(p) __asm__("" : "+w"(p))
#else
/* the x86-64 baseline (SSE2) has no fused instruction to contract into */
# define SD_PRODUCT_HELD(p) ((void) 0)
#endif
static inline double sd_mul_add(double x, double y, double acc)
{
    double p = x * y;
    SD_PRODUCT_HELD(p);
    return acc + p;
}
#define SD_MUL_ADD(x, y, acc) sd_mul_add((x), (y), (acc))
#define SD_FMA(x, y, acc) fma((x), (y), (acc))
#ifdef SIMD_VECTOR
# define VD2_SPLAT(x) ((vd2) {(x), (x)})
# define VD4_SPLAT(x) ((vd4) {(x), (x), (x), (x)})
# define VD8_SPLAT(x) ((vd8) {(x), (x), (x), (x), (x), (x), (x), (x)})
# if defined(SIMD_X86)
#  define VD2_FMA(x, y, acc) ((acc) + (x) * (y))
#  define VD2_FMA1(x, y, acc) SD_MUL_ADD(x, y, acc)
#  define VD4H_FMA(x, y, acc) ((acc) + (x) * (y))
#  define VD4_FMA1(x, y, acc) SD_FMA(x, y, acc)
#  define VD8_FMA1(x, y, acc) SD_FMA(x, y, acc)
#  define VD2_SQRT(v) ((vd2) _mm_sqrt_pd((__m128d) (v)))
#  define VD2_MIN(a, b) ((vd2) _mm_min_pd((__m128d) (a), (__m128d) (b)))
#  define VD2_MAX(a, b) ((vd2) _mm_max_pd((__m128d) (a), (__m128d) (b)))
#  define VD4_FMA(x, y, acc) ((vd4) _mm256_fmadd_pd((__m256d) (x), (__m256d) (y),       \
                                                    (__m256d) (acc)))
#  define VD4_SQRT(v) ((vd4) _mm256_sqrt_pd((__m256d) (v)))
#  define VD4_MIN(a, b) ((vd4) _mm256_min_pd((__m256d) (a), (__m256d) (b)))
#  define VD4_MAX(a, b) ((vd4) _mm256_max_pd((__m256d) (a), (__m256d) (b)))
#  define VD8_FMA(x, y, acc) ((vd8) _mm512_fmadd_pd((__m512d) (x), (__m512d) (y),       \
                                                    (__m512d) (acc)))
#  define VD8_SQRT(v) ((vd8) _mm512_sqrt_pd((__m512d) (v)))
#  define VD8_MIN(a, b) ((vd8) _mm512_min_pd((__m512d) (a), (__m512d) (b)))
#  define VD8_MAX(a, b) ((vd8) _mm512_max_pd((__m512d) (a), (__m512d) (b)))
# elif defined(SIMD_ARM64)
#  define VD2_FMA(x, y, acc) ((vd2) vfmaq_f64((float64x2_t) (acc), (float64x2_t) (x),  \
                                              (float64x2_t) (y)))
#  define VD2_FMA1(x, y, acc) SD_FMA(x, y, acc)
#  define VD4H_HALF(v, h) ((float64x2_t) {(v)[2 * (h)], (v)[2 * (h) + 1]})
#  define VD4H_FMA(x, y, acc) __extension__ ({                                          \
        float64x2_t lo_ = vfmaq_f64(VD4H_HALF(acc, 0), VD4H_HALF(x, 0), VD4H_HALF(y, 0)), \
            hi_ = vfmaq_f64(VD4H_HALF(acc, 1), VD4H_HALF(x, 1), VD4H_HALF(y, 1));        \
        (vd4) {lo_[0], lo_[1], hi_[0], hi_[1]}; })
#  define VD2_SQRT(v) ((vd2) vsqrtq_f64((float64x2_t) (v)))
#  define VD2_MIN(a, b) ((vd2) vminq_f64((float64x2_t) (a), (float64x2_t) (b)))
#  define VD2_MAX(a, b) ((vd2) vmaxq_f64((float64x2_t) (a), (float64x2_t) (b)))
# else
/* other systems: the lanes one by one */
static inline vd2 vd2_sqrt_lanes(vd2 v) { return (vd2) {sqrt(v[0]), sqrt(v[1])}; }
static inline vd2 vd2_min_lanes(vd2 a, vd2 b)
{
    return (vd2) {a[0] < b[0] ? a[0] : b[0], a[1] < b[1] ? a[1] : b[1]};
}
static inline vd2 vd2_max_lanes(vd2 a, vd2 b)
{
    return (vd2) {a[0] > b[0] ? a[0] : b[0], a[1] > b[1] ? a[1] : b[1]};
}
#  define VD2_FMA(x, y, acc) ((acc) + (x) * (y))
#  define VD2_FMA1(x, y, acc) SD_MUL_ADD(x, y, acc)
#  define VD4H_FMA(x, y, acc) ((acc) + (x) * (y))
#  define VD2_SQRT(v) vd2_sqrt_lanes(v)
#  define VD2_MIN(a, b) vd2_min_lanes(a, b)
#  define VD2_MAX(a, b) vd2_max_lanes(a, b)
# endif
#endif

/* The path the kernels run in this session: the one asked for
 * (simd_request()), capped by this CPU (never SIMD_AUTO). */
simd_path simd_active(void);
/* The widest path this CPU runs (found once, on the first call). */
simd_path simd_best(void);
/* The path a request gives on this CPU (SIMD_AUTO: simd_best()). */
simd_path simd_resolve(int request);
void simd_request(int request);
int simd_rank(int path);
const char *simd_name(int path);


/* ---- Squared distances from norms, and the not-finite test ----------------
 * Written once, here, for every evaluator (kernel_values.c, kernel_fast.c,
 * sparse_columns.c, sparse_tiles.c).
 *
 * simd_not_finite(x): whether x is Inf or NaN, from its exponent's bits: an
 * integer test a compiler vectorizes in a loop, where a comparison of
 * doubles stays scalar.
 *
 * sq_distance_from_norms(an, bn, ab): ||a - b||^2 = an + bn - 2 ab from the
 * squared norms and the inner product, clamped at 0 below; Inf and NaN
 * (norms that overflowed) stay as they are, for sq_distance_lost().
 *
 * sq_distance_lost(s, an, bn, slope): the one rule for when such a
 * distance must be summed again from the differences: where it is not
 * finite (the norms or the product overflowed: the differences give Inf
 * only where the distance itself does), or where the cancellation in
 * an + bn - 2 ab, whose rounding is about SQ_DISTANCE_ROUNDING (an + bn),
 * may move the kernel's value by more than SQ_DISTANCE_TOL: slope is the
 * kernel's |dk/ds| at s (rbfdot: k sigma; laplacedot: k sigma / (2 sqrt s)).
 * On ordinary data only near-duplicate pairs qualify (a pair's distance
 * far below the norms of its points, from the shift), and exact
 * duplicates then give exactly 0. */
#include <stdint.h>
#include <string.h>
#include <float.h>
#define SQ_DISTANCE_ROUNDING (4.0 * DBL_EPSILON)
#define SQ_DISTANCE_TOL 1e-12

static inline int simd_not_finite(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (int) ((u >> 52 & 0x7ff) == 0x7ff);
}

static inline double sq_distance_from_norms(double an, double bn, double ab)
{
    double s = an + bn - 2.0 * ab;
    return s < 0.0 ? 0.0 : s;
}

static inline int sq_distance_lost(double s, double an, double bn, double slope)
{
    return simd_not_finite(s) | (slope * (SQ_DISTANCE_ROUNDING * (an + bn)) > SQ_DISTANCE_TOL);
}

#endif
