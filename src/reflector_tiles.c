/* LAPACK's blocked steps of the exact solver, on the register tiles: the
 * copies blas.c chooses with R's reference BLAS (tiles_at_every_size()),
 * and the steps the two-stage reduction (band_reduction.c) always takes.
 *   - tridiagonal_panel_tiles(): dlatrd (lower), one panel of dsytrd's
 *     reduction, its matrix-vector products by gemv_add(), gemv_t() and
 *     symv_lower() (tiles_vector.c);
 *   - explicit_reflectors(), triangular_factor() and
 *     apply_block_reflector(): dlarft and dlarfb (side L, no transpose,
 *     forward, columnwise), the reflectors' inner products and their
 *     application by panel_gemm();
 *   - rank2k_update_tiles(): dsyr2k (lower, C -= V W' + W V'), the
 *     rank-2k update of both reductions;
 *   - panel_gemm(): tile_gemm() on the threads from 1/BAND_THREAD_SHARE
 *     of the thread-work setting, the product of the exact solver's
 *     panels (here and in band_reduction.c).
 * The small triangular products of the block reflectors (T x and T Y, T
 * upper triangular, at most 64 x 64) are loops here, in the reference
 * dtrmv's and dtrmm's order (the same bits as R's reference BLAS): no
 * level-2 or level-3 BLAS is called but by blas.c
 * (tests/testthat/test-arithmetic-rules.R).
 * Below blas.c (which chooses between these and LAPACK's) and
 * band_reduction.c, above the tiles: it calls tiles.c, tiles_vector.c,
 * LAPACK's dlarfg and the level-1 BLAS, and never blas.c. Each entry is
 * summed in one order whatever the thread count. */
#include "fastkpca.h"
#include <string.h>

/* dlatrd (lower) on the tiles: the first nb columns of the m x m A
 * (leading dimension lda) reduced, W (m x nb, leading dimension ldw) such
 * that the trailing A22 - V W' - W V' is what the reduction leaves;
 * offdiag and tau get the panel's entries. LAPACK's dlatrd's steps, in its
 * order, its matrix-vector products by gemv_add(), gemv_t() and
 * symv_lower() (the reference dgemv was 15% of a fit at n = 1000 after
 * the rest moved to the tiles). work: nb + symv_lower_work(m). */
void tridiagonal_panel_tiles(int m, int nb, double *A, int lda, double *offdiag,
                             double *tau, double *W, int ldw, double *work, int threads)
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

/* x (k) <- T x, T upper triangular k x k (leading dimension ldt), non-unit:
 * the reference dtrmv's loop (upper, no transpose), column by column. */
static void upper_triangular_vector(int k, const double *T, int ldt, double *x)
{
    for (int j = 0; j < k; j++) {
        if (x[j] == 0.0) continue;
        double temp = x[j];
        const double *tj = T + (size_t) j * ldt;
        for (int i = 0; i < j; i++) x[i] += temp * tj[i];
        x[j] *= tj[j];
    }
}

/* B (k x n, leading dimension ldb) <- T B, T upper triangular k x k
 * (leading dimension ldt), non-unit: the reference dtrmm's loop (left,
 * upper, no transpose, alpha 1), column by column of B. */
static void upper_triangular_product(int k, int n, const double *T, int ldt, double *B,
                                     int ldb)
{
    for (int j = 0; j < n; j++) upper_triangular_vector(k, T, ldt, B + (size_t) j * ldb);
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
 * Y = T Y (upper_triangular_product()), C += (-Vb) Y. */
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
 * stage through blas.c, band_reduction.c's stage 1). */
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
