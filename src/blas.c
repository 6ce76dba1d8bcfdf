/* Which BLAS R has loaded, and which products go to it rather than to the
 * register tiles (tiles.c): the one place of that rule. The rule depends
 * on the shapes of a product and on the loaded BLAS only, never on a
 * clock, so that a session's results do not depend on how busy the
 * machine was when it started. The products whose path it chooses go
 * through here (matrix_product(), matrix_vector_add(),
 * symmetric_vector_product()); the exact solver (eigen.c), whose blocked
 * steps are LAPACK's or its own on the tiles, asks tiles_at_every_size().
 * Above the tiles and below the solvers: it calls tiles.c and the BLAS. */
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

/* Whether every product goes to the tiles, whatever its size: with R's
 * reference BLAS, whose dgemm the tiles beat by about 14x at the
 * package's shapes and whose dsymv and dgemv sum each dot product in one
 * dependent chain. With an optimized BLAS, its own routines for all but
 * the small general products (tiles_preferred()): the matrix-vector
 * products and the exact solver's blocked steps (the panel reduction by
 * dlatrd, the rank-2k update by dsyr2k, the block reflectors by dlarft
 * and dlarfb), as before the tiles: nothing gets slower there. */
int tiles_at_every_size(void)
{
    return !blas_is_optimized();
}

/* Whether a general product of work multiply-adds goes to the tiles (1) or
 * to the BLAS (0). With R's reference BLAS, always the tiles
 * (tiles_at_every_size()). With an optimized BLAS, the tiles below
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
    return tiles_at_every_size() || work < TILE_HANDBACK_WORK;
}

/* C (m x n) += op(A) op(B) (beta = 1) or C = op(A) op(B) (beta = 0), by
 * the tiles or the BLAS, as tiles_preferred() says. Main thread only. */
void matrix_product(int m, int n, int k, const double *A, int lda, int transa,
                    const double *B, int ldb, int transb, double beta, double *C, int ldc,
                    int threads)
{
    matrix_product_floor(m, n, k, A, lda, transa, B, ldb, transb, beta, C, ldc, threads,
                         tile_thread_work());
}

/* matrix_product() whose tiles take their threads from min_work
 * multiply-adds on (tile_gemm_floor()) rather than from the thread-work
 * setting; the BLAS as matrix_product()'s rule says. */
void matrix_product_floor(int m, int n, int k, const double *A, int lda, int transa,
                          const double *B, int ldb, int transb, double beta, double *C,
                          int ldc, int threads, double min_work)
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
    tile_gemm_floor(m, n, k, A, lda, transa, B, ldb, transb, 1.0, C, ldc, threads, min_work);
}

/* y (n) += sign A x, A n x k (leading dimension lda): gemv_add() (tiles.c:
 * four columns per pass, in vectors) with the reference BLAS, else dgemv. */
void matrix_vector_add(int n, int k, const double *A, int lda, const double *x,
                       double sign, double *y)
{
    if (tiles_at_every_size()) {
        gemv_add(n, k, A, lda, x, sign, y);
        return;
    }
    const int one = 1;
    const double plus_one = 1.0;
    F77_CALL(dgemv)("N", &n, &k, &sign, A, &lda, x, &one, &plus_one, y, &one FCONE);
}

/* The doubles of scratch symmetric_vector_product() needs for order n
 * (none for the BLAS's dsymv). */
size_t symmetric_vector_work(int n)
{
    return tiles_at_every_size() ? symv_lower_work(n) : 0;
}

/* y = A x, A symmetric n x n from its lower triangle (leading dimension
 * lda): symv_lower() (tiles.c, on the threads, with work of
 * symmetric_vector_work(n) doubles) with the reference BLAS, else dsymv. */
void symmetric_vector_product(int n, const double *A, int lda, const double *x, double *y,
                              double *work, int threads)
{
    if (tiles_at_every_size()) {
        symv_lower(n, A, lda, x, y, work, threads);
        return;
    }
    const char uplo = 'L';
    const int one = 1;
    const double plus_one = 1.0, zero = 0.0;
    F77_CALL(dsymv)(&uplo, &n, &plus_one, A, &lda, x, &one, &zero, y, &one FCONE);
}
