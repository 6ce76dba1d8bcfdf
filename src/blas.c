/* Which BLAS R has loaded, and which products go to it rather than to the
 * register tiles (tiles.c). The rule depends on the shapes of a product
 * and on the loaded BLAS only, never on a clock, so that a session's
 * results do not depend on how busy the machine was when it started. */
#include "fastkpca.h"
#if defined(__unix__) || defined(__APPLE__)
# define BLAS_DLSYM 1
# include <dlfcn.h>
#endif
#include <string.h>

/* Is the BLAS an optimized one? Asked of the loaded libraries by the
 * symbols only an optimized BLAS exports: OpenBLAS (openblas_get_config),
 * Intel MKL (MKL_Get_Version), BLIS (bli_info_get_version_str), whether R
 * links to it or it is preloaded (LD_PRELOAD). R's reference BLAS, and
 * systems without dlsym(), answer no. */
int blas_is_optimized(void)
{
    static int known = 0, optimized = 0;
    if (!known) {
#ifdef BLAS_DLSYM
        optimized = dlsym(RTLD_DEFAULT, "openblas_get_config") != NULL ||
            dlsym(RTLD_DEFAULT, "MKL_Get_Version") != NULL ||
            dlsym(RTLD_DEFAULT, "bli_info_get_version_str") != NULL;
#endif
        known = 1;
    }
    return optimized;
}

/* Whether a general product of work multiply-adds goes to the tiles (1) or
 * to the BLAS (0). With R's reference BLAS, always the tiles (about 14x its
 * dgemm at the package's shapes). With an optimized BLAS, the tiles below
 * TILE_HANDBACK_WORK, where a BLAS call's set-up costs more than the
 * product, and the BLAS from it on: results then follow the BLAS, as they
 * did before the tiles. (A timing probe once chose between the two at
 * that size, so that two sessions on one machine could differ in the last
 * bits.) The thread count is not part of the rule: a product's path, and
 * so its bits, do not depend on it. */
#define TILE_HANDBACK_WORK 1048576.0
int tiles_preferred(double work, int threads)
{
    (void) threads;
    return !blas_is_optimized() || work < TILE_HANDBACK_WORK;
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
