/* Which BLAS R has loaded, and which products go to it rather than to the
 * register tiles: the one place of that rule, and the only caller of the
 * level-2 and level-3 BLAS (tests/testthat/test-arithmetic-rules.R keeps
 * it so). The rule depends on the shapes of a product and on the loaded
 * BLAS only, never on a clock, so that a session's results do not depend
 * on how busy the machine was when it started. Each step that has a copy
 * on the tiles and one in the BLAS (or in LAPACK's blocked routines built
 * on it) has one function here, which chooses and holds the BLAS's or
 * LAPACK's side: the products (matrix_product(), matrix_vector_add(),
 * matrix_transpose_vector(), symmetric_vector_product(); their tile copies
 * in tiles.c and tiles_vector.c), and the blocked steps of the exact
 * solver's one-stage reduction and back-transformation (eigen.c):
 * tridiagonal_panel(), symmetric_rank2k_update(), block_reflector_apply(),
 * back_transform_at_once() (their tile copies in reflector_tiles.c).
 * Callers never ask the rule themselves.
 * Above the tiles and below the solvers: it calls tiles.c, tiles_vector.c,
 * reflector_tiles.c, the BLAS and LAPACK; none of them calls it. */
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

/* The smallest n from which the exact solver reduces in two stages
 * (eigen.c): from with_tiles rows with R's reference BLAS, where both
 * stages' products are the tiles'; never with an optimized BLAS, whose
 * own dsytrd steps the one stage then calls. */
double two_stage_min_rows(double with_tiles)
{
    return tiles_at_every_size() ? with_tiles : 2147483647.0;
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
int tiles_preferred(double work)
{
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
    if (!tiles_preferred((double) m * n * k)) {
        double one = 1.0;
        F77_CALL(dgemm)(transa ? "T" : "N", transb ? "T" : "N", &m, &n, &k, &one, A, &lda,
                        B, &ldb, &beta, C, &ldc FCONE FCONE);
        return;
    }
    if (beta == 0.0)
        for (int j = 0; j < n; j++) memset(C + (size_t) j * ldc, 0, (size_t) m * sizeof(double));
    tile_gemm_floor(m, n, k, A, lda, transa, B, ldb, transb, 1.0, C, ldc, threads, min_work);
}

/* y (n) += sign A x, A n x k (leading dimension lda): gemv_add()
 * (tiles_vector.c: four columns per pass, in vectors) with the reference
 * BLAS, else dgemv.
 * The column update of both incomplete Cholesky factorizations (ichol.c,
 * kcca.c) and of the Lanczos basis's Gram-Schmidt steps (lanczos.c). */
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
 * lda): symv_lower() (tiles_vector.c, on the threads, with work of
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

/* y (k) = A' x, A n x k (leading dimension lda): gemv_t() (tiles_vector.c:
 * the dot products in vector lanes) with the reference BLAS, whose dgemv
 * 'T' sums each in one dependent chain, else dgemv. */
void matrix_transpose_vector(int n, int k, const double *A, int lda, const double *x,
                             double *y)
{
    if (k <= 0) return;
    if (tiles_at_every_size()) {
        gemv_t(n, k, A, lda, x, y);
        return;
    }
    const int one = 1;
    const double plus_one = 1.0, zero = 0.0;
    F77_CALL(dgemv)("T", &n, &k, &plus_one, A, &lda, x, &one, &zero, y, &one FCONE);
}

/* ---- the exact solver's blocked steps (eigen.c) ------------------------- */

/* The doubles of scratch symmetric_rank2k_update() needs (the tiles'
 * square; none for dsyr2k). */
size_t rank2k_update_work(void)
{
    return tiles_at_every_size() ? rank2k_square_size() : 0;
}

/* C (the lower triangle of an m x m matrix, leading dimension ldc) -=
 * V W' + W V', V and W m x k (leading dimension ld): on the tiles
 * (rank2k_update_tiles(), reflector_tiles.c, with work of
 * rank2k_update_work() doubles) with the reference BLAS, else dsyr2k, cut
 * into column strips of bounded work when it is large (the diagonal block
 * of a strip by dsyr2k, the rows below it by two dgemm), with an interrupt
 * check after each strip. Main thread. */
void symmetric_rank2k_update(int m, int k, const double *V, const double *W, int ld,
                             double *C, int ldc, double *work, int threads)
{
    const char lower = 'L', notrans = 'N', trans = 'T';
    const double minus_one = -1.0, one = 1.0;
    if (m <= 0) return;
    if (tiles_at_every_size()) {
        rank2k_update_tiles(m, k, V, W, ld, C, ldc, work, threads, tile_thread_work());
        return;
    }
    if ((double) m * m * k <= tuning.eigen_check_work) {
        F77_CALL(dsyr2k)(&lower, &notrans, &m, &k, &minus_one, V, &ld, W, &ld, &one, C,
                         &ldc FCONE FCONE);
        return;
    }
    int width = (int) (tuning.eigen_check_work / (2.0 * m * k));
    if (width < 32) width = 32;
    for (int j0 = 0; j0 < m; j0 += width) {
        int w = m - j0 < width ? m - j0 : width, below = m - j0 - w;
        double *Cjj = C + j0 + (size_t) j0 * ldc;
        F77_CALL(dsyr2k)(&lower, &notrans, &w, &k, &minus_one, V + j0, &ld, W + j0, &ld,
                         &one, Cjj, &ldc FCONE FCONE);
        if (below > 0) {
            F77_CALL(dgemm)(&notrans, &trans, &below, &w, &k, &minus_one, V + j0 + w, &ld,
                            W + j0, &ld, &one, Cjj + w, &ldc FCONE FCONE);
            F77_CALL(dgemm)(&notrans, &trans, &below, &w, &k, &minus_one, W + j0 + w, &ld,
                            V + j0, &ld, &one, Cjj + w, &ldc FCONE FCONE);
        }
        R_CheckUserInterrupt();
    }
}

/* The doubles of scratch tridiagonal_panel() needs for panels of at most
 * nb columns of an order up to n (none for dlatrd). */
size_t tridiagonal_panel_work(int n, int nb)
{
    return tiles_at_every_size() ? symv_lower_work(n) + (size_t) nb : 0;
}

/* One panel of dsytrd's reduction (lower): dlatrd, or its steps on the
 * tiles with the reference BLAS (tridiagonal_panel_tiles(),
 * reflector_tiles.c, with work of
 * tridiagonal_panel_work() doubles). Main thread. */
void tridiagonal_panel(int m, int nb, double *A, int lda, double *offdiag, double *tau,
                       double *W, int ldw, double *work, int threads)
{
    if (tiles_at_every_size()) {
        tridiagonal_panel_tiles(m, nb, A, lda, offdiag, tau, W, ldw, work, threads);
        return;
    }
    const char uplo = 'L';
    F77_CALL(dlatrd)(&uplo, &m, &nb, A, &lda, offdiag, tau, W, &ldw FCONE);
}

/* Z (n x k) <- Q Z in one call of dormtr (side L, lower, no transpose), Q
 * the orthogonal factor of the reduction held in A and tau, when the rule
 * sends the back-transformation to LAPACK and it is small enough to need
 * no interrupt check; returns whether it did (else the caller applies the
 * blocks by block_reflector_apply()). */
int back_transform_at_once(const double *A, int n, const double *tau, double *Z, int k)
{
    double work_done = 2.0 * (n - 1) * (double) (n - 1) * k;
    if (tiles_at_every_size() || work_done > tuning.eigen_check_work) return 0;
    const char side = 'L', uplo = 'L', trans = 'N';
    int info = 0, lwork = -1;
    double work_query;
    F77_CALL(dormtr)(&side, &uplo, &trans, &n, &k, A, &n, tau, Z, &n, &work_query,
                     &lwork, &info FCONE FCONE FCONE);
    check_lapack_info(info, "dormtr");
    lwork = (int) work_query;
    double *work = (double *) R_alloc((size_t) (lwork > 1 ? lwork : 1), sizeof(double));
    F77_CALL(dormtr)(&side, &uplo, &trans, &n, &k, A, &n, tau, Z, &n, work, &lwork,
                     &info FCONE FCONE FCONE);
    check_lapack_info(info, "dormtr");
    return 1;
}

/* The doubles of scratch block_reflector_apply() needs for blocks of at
 * most nb reflectors of at most rows rows (the tiles' explicit V and its
 * Gram matrix; none for dlarft and dlarfb). */
size_t block_reflector_work(int rows, int nb)
{
    return tiles_at_every_size() ? (size_t) rows * nb + (size_t) nb * nb : 0;
}

/* C (rows x k, leading dimension ldc) <- (I - V T V') C, V the unit lower
 * trapezoidal rows x ib reflectors (leading dimension ldv) with their tau,
 * T (ib x ib, leading dimension ldt) formed here, C in column blocks of at
 * most cols with an interrupt check after each, work cols x ib doubles:
 * apply_block_reflector() (reflector_tiles.c, on the tiles, with scratch of
 * block_reflector_work() doubles) with the reference BLAS, else dlarft
 * and dlarfb (side L, no transpose, forward, columnwise). Main thread. */
void block_reflector_apply(double *V, int ldv, int rows, int ib, const double *tau,
                           double *T, int ldt, double *C, int ldc, int k, int cols,
                           double *scratch, double *work, int threads)
{
    if (tiles_at_every_size()) {
        apply_block_reflector(V, ldv, rows, ib, tau, T, ldt, C, ldc, k, cols, scratch,
                              scratch + (size_t) rows * ib, work, threads);
        return;
    }
    const char side = 'L', notrans = 'N', forward = 'F', columnwise = 'C';
    /* (dlarft may set the unit diagonal of V in place and restore it) */
    F77_CALL(dlarft)(&forward, &columnwise, &rows, &ib, V, &ldv, tau, T, &ldt FCONE FCONE);
    for (int j0 = 0; j0 < k; j0 += cols) {
        int w = k - j0 < cols ? k - j0 : cols;
        F77_CALL(dlarfb)(&side, &notrans, &forward, &columnwise, &rows, &w, &ib, V, &ldv,
                         T, &ldt, C + (size_t) j0 * ldc, &ldc, work, &w
                         FCONE FCONE FCONE FCONE);
        R_CheckUserInterrupt();
    }
}
