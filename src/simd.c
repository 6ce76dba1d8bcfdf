/* The one CPU dispatch (simd.h): which instruction sets this CPU runs and
 * the path the session asked for, set from R (engine_settings(), in
 * engine_settings.c, before every call into the engine) and read by the
 * kernels, on any thread. The bottom of the engine: it calls nothing of
 * the package and no R, and reads no environment variable (R reads them,
 * R/simd.R). */
#include "simd.h"

static int requested = SIMD_AUTO;

int simd_rank(int path)
{
    switch (path) {
    case SIMD_PLAIN: return 0;
    case SIMD_SSE2: case SIMD_NEON: return 1;
    case SIMD_AVX2: return 2;
    case SIMD_AVX512: case SIMD_AUTO: return 3;
    default: return 0;
    }
}

const char *simd_name(int path)
{
    static const char *names[] = {"auto", "plain", "sse2", "avx2", "avx512", "neon"};
    return path >= 0 && path < SIMD_PATH_COUNT ? names[path] : "plain";
}

simd_path simd_best(void)
{
    static int best = -1;
    if (best < 0) {
        int b = SIMD_PLAIN;
#if defined(SIMD_X86)
        b = SIMD_SSE2;
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) b = SIMD_AVX2;
        if (b == SIMD_AVX2 && __builtin_cpu_supports("avx512f")) b = SIMD_AVX512;
#elif defined(SIMD_ARM64)
        b = SIMD_NEON;  /* every aarch64 CPU has NEON with doubles */
#endif
        best = b;
    }
    return (simd_path) best;
}

simd_path simd_resolve(int request)
{
    simd_path best = simd_best();
    if (request == SIMD_AUTO || simd_rank(request) >= simd_rank(best)) return best;
    if (simd_rank(request) == 0) return SIMD_PLAIN;
#if defined(SIMD_X86)
    return simd_rank(request) == 1 ? SIMD_SSE2 : SIMD_AVX2;
#else
    return best;
#endif
}

void simd_request(int request)
{
    requested = request >= 0 && request < SIMD_PATH_COUNT ? request : SIMD_AUTO;
}

simd_path simd_active(void)
{
    return simd_resolve(requested);
}
