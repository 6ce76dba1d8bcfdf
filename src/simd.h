/* The arithmetic layer: the vector types every vector kernel of the package
 * is written in, and the one switch that says which of them run.
 *
 * The types are GCC's and clang's vector extensions, so that one source
 * compiles to SSE2, AVX2, AVX-512 or NEON: vd2 (two doubles: SSE2 on
 * x86-64, NEON on aarch64), vd4 (four: AVX2, or two halves elsewhere), vd8
 * (eight: AVX-512), the unaligned forms vd2u, vd4u, vd8u for loads and
 * stores in place, and the integer vectors vi2, vi4 of the same sizes. A
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

/* The other settings of the engine, set from R with the path
 * (fastkpca:::engine_settings()): the fewest multiply-adds a parallel
 * region of the tiles gets (tiles.c), and the share of the strings a node
 * of the suffix tree must be in to be a dense column (string_kernel.c). */
double engine_thread_work(void);
double engine_string_dense_share(void);

#endif
