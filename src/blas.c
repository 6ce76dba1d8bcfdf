/* Which BLAS R has loaded, and which products go to it rather than to the
 * register tiles (tiles.c): the one place of that rule, and the only
 * caller of the level-2 and level-3 BLAS (tests/testthat/
 * test-arithmetic-rules.R keeps it so). The rule depends on the shapes of
 * a product and on the loaded BLAS only, never on a clock, so that a
 * session's results do not depend on how busy the machine was when it
 * started. Each step that has a copy on the tiles and one in the BLAS (or
 * in LAPACK's blocked routines built on it) has one function here, which
 * holds both and chooses: the products (matrix_product(),
 * matrix_vector_add(), matrix_transpose_vector(),
 * symmetric_vector_product()), and the blocked steps of the exact
 * solver's one-stage reduction and back-transformation (eigen.c):
 * tridiagonal_panel(), symmetric_rank2k_update(), block_reflector_apply(),
 * back_transform_at_once(). The triangular products of the two-stage
 * reduction (band_reduction.c) have no tile copy: they are the BLAS's,
 * through here. Callers never ask the rule themselves.
 * Above the tiles and below the solvers: it calls tiles.c, the BLAS and
 * LAPACK, and holds the tile versions of LAPACK's block-reflector steps and
 * of the rank-2k update that both reductions use. */
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

/* y (n) += sign A x, A n x k (leading dimension lda): gemv_add() (tiles.c:
 * four columns per pass, in vectors) with the reference BLAS, else dgemv.
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

/* y (k) = A' x, A n x k (leading dimension lda): gemv_t() (tiles.c: the
 * dot products in vector lanes) with the reference BLAS, whose dgemv 'T'
 * sums each in one dependent chain, else dgemv. */
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
 * (rank2k_update_tiles(), below, with work of
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

/* dlatrd (lower) on the tiles: the first nb columns of the m x m A
 * (leading dimension lda) reduced, W (m x nb, leading dimension ldw) such
 * that the trailing A22 - V W' - W V' is what the reduction leaves;
 * offdiag and tau get the panel's entries. LAPACK's dlatrd's steps, in its
 * order, its matrix-vector products by gemv_add(), gemv_t() and
 * symv_lower() (tiles.c; the reference dgemv was 15% of a fit at n = 1000
 * after the rest moved to the tiles). work: nb + symv_lower_work(m). */
static void tridiagonal_panel_tiles(int m, int nb, double *A, int lda, double *offdiag,
                                    double *tau, double *W, int ldw, double *work,
                                    int threads)
{
    const int one = 1;
    double *row = work; /* a row of A or W, contiguous: gemv_add() needs it */
    work += nb;
    for (int i = 0; i < nb; i++) {
        double *Aii = A + i + (size_t) i * lda;
        int rows = m - i;
        if (i > 0) {
            for (int l = 0; l < i; l++) row[l] = W[i + (size_t) l * ldw];
            gemv_add(rows, i, A + i, lda, row, -1.0, Aii);
            for (int l = 0; l < i; l++) row[l] = A[i + (size_t) l * lda];
            gemv_add(rows, i, W + i, ldw, row, -1.0, Aii);
        }
        if (i >= m - 1) continue;
        int len = m - i - 1;
        double *v = Aii + 1, *wi = W + (i + 1) + (size_t) i * ldw, *top = W + (size_t) i * ldw;
        F77_CALL(dlarfg)(&len, v, Aii + (len > 1 ? 2 : 1), &one, tau + i);
        offdiag[i] = *v;
        *v = 1.0;
        symv_lower(len, A + (i + 1) + (size_t) (i + 1) * lda, lda, v, wi, work, threads);
        if (i > 0) {
            gemv_t(len, i, W + i + 1, ldw, v, top);
            gemv_add(len, i, A + i + 1, lda, top, -1.0, wi);
            gemv_t(len, i, A + i + 1, lda, v, top);
            gemv_add(len, i, W + i + 1, ldw, top, -1.0, wi);
        }
        F77_CALL(dscal)(&len, tau + i, wi, &one);
        double alpha = -0.5 * tau[i] * F77_CALL(ddot)(&len, wi, &one, v, &one);
        F77_CALL(daxpy)(&len, &alpha, v, &one, wi, &one);
    }
}

/* The doubles of scratch tridiagonal_panel() needs for panels of at most
 * nb columns of an order up to n (none for dlatrd). */
size_t tridiagonal_panel_work(int n, int nb)
{
    return tiles_at_every_size() ? symv_lower_work(n) + (size_t) nb : 0;
}

/* One panel of dsytrd's reduction (lower): dlatrd, or its steps on the
 * tiles with the reference BLAS (tridiagonal_panel_tiles(), with work of
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
 * apply_block_reflector() (below, on the tiles, with scratch of
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

/* ---- the triangular products of the two-stage reduction ------------------ */

/* x (k) <- T x, T upper triangular k x k (leading dimension ldt), non-unit:
 * dtrmv (no tile copy: k is a band width, the products around it are the
 * tiles'). */
void upper_triangular_vector(int k, const double *T, int ldt, double *x)
{
    const char upper = 'U', notrans = 'N', nonunit = 'N';
    const int inc = 1;
    if (k <= 0) return;
    F77_CALL(dtrmv)(&upper, &notrans, &nonunit, &k, T, &ldt, x, &inc FCONE FCONE FCONE);
}

/* B (k x n, leading dimension ldb) <- T B, T upper triangular k x k
 * (leading dimension ldt), non-unit: dtrmm (no tile copy, as above). */
void upper_triangular_product(int k, int n, const double *T, int ldt, double *B, int ldb)
{
    const char left = 'L', upper = 'U', notrans = 'N', nonunit = 'N';
    const double one = 1.0;
    if (k <= 0 || n <= 0) return;
    F77_CALL(dtrmm)(&left, &upper, &notrans, &nonunit, &k, &n, &one, T, &ldt, B, &ldb
                    FCONE FCONE FCONE FCONE);
}

/* ---- the tiles' implementations of the exact solver's blocked steps ---- */

/* C += sign op(A) op(B) on the tiles, on the threads from 1/BAND_THREAD_SHARE
 * of the thread-work setting: the products of the exact solver's panels
 * (the block reflectors here, the two stages of band_reduction.c). */
void panel_gemm(int m, int n, int k, const double *A, int lda, int transa,
                      const double *B, int ldb, int transb, double sign, double *C, int ldc,
                      int threads)
{
    tile_gemm_floor(m, n, k, A, lda, transa, B, ldb, transb, sign, C, ldc, threads,
                    tile_thread_work() / BAND_THREAD_SHARE);
}


/* Vb (rows x k, leading dimension rows) <- the unit lower trapezoidal V
 * (leading dimension ldv), with its implicit ones and zeros written. */
void explicit_reflectors(const double *V, int ldv, int rows, int k, double *Vb)
{
    for (int j = 0; j < k; j++) {
        double *col = Vb + (size_t) j * rows;
        const double *src = V + (size_t) j * ldv;
        for (int i = 0; i < rows; i++) col[i] = i < j ? 0.0 : i == j ? 1.0 : src[i];
    }
}

/* T (k x k, upper, leading dimension ldt) of the block reflector
 * H(1) ... H(k) = I - V T V' (dlarft, forward, columnwise), from the
 * explicit Vb (rows x k) whose inner products gram (k x k) = Vb' Vb come
 * from the tiles: T(0:i, i) = T(0:i, 0:i) (-tau(i) Vb(:, 0:i)' Vb(:, i)),
 * T(i, i) = tau(i). */
void triangular_factor(const double *Vb, int rows, int k, const double *tau, double *T,
                       int ldt, double *gram, int threads)
{
    memset(gram, 0, (size_t) k * k * sizeof(double));
    panel_gemm(k, k, rows, Vb, rows, 1, Vb, rows, 0, 1.0, gram, k, threads);
    for (int i = 0; i < k; i++) {
        double *ti = T + (size_t) i * ldt;
        for (int r = 0; r < i; r++) ti[r] = tau[i] == 0.0 ? 0.0 : -tau[i] * gram[r + (size_t) i * k];
        if (i > 0 && tau[i] != 0.0) upper_triangular_vector(i, T, ldt, ti);
        ti[i] = tau[i];
    }
}

/* C (rows x k, leading dimension ldc) <- (I - V T V') C, dlarft's and
 * dlarfb's steps (side L, no transpose, forward, columnwise) on the tiles.
 * V (rows x ib, leading dimension ldv) is unit lower trapezoidal, so its
 * explicit copy Vb (rows x ib, zeros above the unit diagonal) is taken
 * first. T (ib x ib, upper) as dlarft forms it, column by column,
 * T(0:i, i) = T(0:i, 0:i) (-tau(i) Vb(:, 0:i)' Vb(:, i)), T(i, i) = tau(i),
 * with the inner products G = Vb'Vb (in gram, ib x ib) from the tiles
 * (dlarft's dot products were as slow as the rest of the step). Then for
 * column blocks of C of at most cols: Y = Vb' C (ib x w, in work),
 * Y = T Y (dtrmm, through blas.c), C += (-Vb) Y. */
void apply_block_reflector(const double *V, int ldv, int rows, int ib, const double *tau,
                           double *T, int ldt, double *C, int ldc, int k, int cols,
                           double *Vb, double *gram, double *work, int threads)
{
    explicit_reflectors(V, ldv, rows, ib, Vb);
    triangular_factor(Vb, rows, ib, tau, T, ldt, gram, threads);
    for (int j0 = 0; j0 < k; j0 += cols) {
        int w = k - j0 < cols ? k - j0 : cols;
        double *Cj = C + (size_t) j0 * ldc;
        memset(work, 0, (size_t) ib * w * sizeof(double));
        panel_gemm(ib, w, rows, Vb, rows, 1, Cj, ldc, 0, 1.0, work, ib, threads);
        upper_triangular_product(ib, w, T, ldt, work, ib);
        panel_gemm(rows, w, ib, Vb, rows, 0, work, ib, 0, -1.0, Cj, ldc, threads);
        R_CheckUserInterrupt();
    }
}

/* C (lower triangle, m x m, leading dimension ldc) -= V W' + W V', V and
 * W m x k (leading dimension ld), on the tiles, strip by strip of
 * BAND_STRIP columns: below a strip's diagonal block, C += (-V) W' then
 * C += (-W) V' in place; the diagonal block through the square (the tiles
 * fill whole tiles, and the upper triangle is not C's to write); an
 * interrupt check after each strip. Each entry is summed in one order
 * whatever the thread count; a product goes on the threads from min_work
 * multiply-adds. The rank-2k update of both reductions (eigen.c's one
 * stage, band_reduction.c's stage 1). */
size_t rank2k_square_size(void)
{
    return (size_t) BAND_STRIP * BAND_STRIP;
}

void rank2k_update_tiles(int m, int k, const double *V, const double *W, int ld,
                         double *C, int ldc, double *square, int threads, double min_work)
{
    for (int c0 = 0; c0 < m; c0 += BAND_STRIP) {
        int w = m - c0 < BAND_STRIP ? m - c0 : BAND_STRIP, below = m - c0 - w;
        double *D = C + c0 + (size_t) c0 * ldc;
        memset(square, 0, (size_t) w * w * sizeof(double));
        tile_gemm_floor(w, w, k, V + c0, ld, 0, W + c0, ld, 1, 1.0, square, w, threads,
                        min_work);
        tile_gemm_floor(w, w, k, W + c0, ld, 0, V + c0, ld, 1, 1.0, square, w, threads,
                        min_work);
        for (int j = 0; j < w; j++)
            for (int i = j; i < w; i++) D[i + (size_t) j * ldc] -= square[i + (size_t) j * w];
        if (below > 0) {
            tile_gemm_floor(below, w, k, V + c0 + w, ld, 0, W + c0, ld, 1, -1.0, D + w, ldc,
                            threads, min_work);
            tile_gemm_floor(below, w, k, W + c0 + w, ld, 0, V + c0, ld, 1, -1.0, D + w, ldc,
                            threads, min_work);
        }
        R_CheckUserInterrupt();
    }
}

