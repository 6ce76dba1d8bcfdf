/* Step 4: projecting rows onto a fit's components, for predict() on an
 * exact fit and for the scores of a Nystrom fit (its second pass and its
 * predict()), in one .Call per set of rows.
 *
 * The fixed side is prepared once per call: the kernel program is parsed,
 * the fit's rows (training rows or landmarks) are shifted by their column
 * means and transposed, once; then, block by block of the new rows, the
 * kernel between the block and the fit's rows (panel by panel of the
 * block's rows: panel x m, never n x m) is multiplied by alpha and
 * centered. Block sizes come from R (block_size()
 * in R/predict.R), the one place they are chosen. */
#include "fastkpca.h"
#include <stdint.h>
#include <string.h>

/* Columns per chunk of center_block()'s row sums: 4 rows of a panel's
 * columns, within the L2 cache. */
#define ROW_SUM_CHUNK 256

/* The rows of a block of out (nz x k, leading dimension nz), from the
 * block's products P = K_b alpha (nb x k): P - r s' - 1 offset', with r the
 * block's kernel row means and s = alpha_sums (the exact fit's centering),
 * or P - 1 offset' when s is NULL (Nystrom: centering is all in offset).
 * The row means go to row_means[row0 + i] (length nz) when s is given.
 * The row means are summed in long double (acc: nb of them, scratch),
 * column by column, as R's rowMeans() does, so that the result is R's to
 * the last bit. No R API: callable inside a parallel region. */
static void center_block(const double *Kb, int nb, int m, const double *P, int k,
                         const double *offset, const double *alpha_sums, double *out,
                         int nz, int row0, double *row_means, long double *acc)
{
    double *rm = NULL;
    if (alpha_sums) {
        /* four rows at a time, their sums in registers, over chunks of
         * ROW_SUM_CHUNK columns (within the L2 cache), the sums kept in acc
         * between chunks: with the sums in acc for every value, each value
         * cost a load and a store of a long double, and with whole rows,
         * the panel's strided reads came from the L3 cache (28% of
         * predict() at n = 8000, perf); the same sums in the same order */
        rm = row_means + row0;
        int i = nb - nb % 4;
        for (int r = 0; r < nb; r++) acc[r] = 0.0L;
        for (int j0 = 0; j0 < m; j0 += ROW_SUM_CHUNK) {
            int j1 = m - j0 < ROW_SUM_CHUNK ? m : j0 + ROW_SUM_CHUNK;
            for (int r = 0; r < i; r += 4) {
                long double s0 = acc[r], s1 = acc[r + 1], s2 = acc[r + 2], s3 = acc[r + 3];
                const double *p = Kb + (size_t) j0 * nb + r;
                for (int j = j0; j < j1; j++, p += nb) {
                    s0 += p[0];
                    s1 += p[1];
                    s2 += p[2];
                    s3 += p[3];
                }
                acc[r] = s0;
                acc[r + 1] = s1;
                acc[r + 2] = s2;
                acc[r + 3] = s3;
            }
        }
        for (int r = 0; r < i; r++) rm[r] = (double) (acc[r] / m);
        for (int j = 0; j < m && i < nb; j++) {
            const double *col = Kb + (size_t) j * nb;
            for (int r = i; r < nb; r++) acc[r] += col[r];
        }
        for (int r = i; r < nb; r++) rm[r] = (double) (acc[r] / m);
    }
    for (int j = 0; j < k; j++) {
        const double *p = P + (size_t) j * nb;
        double *o = out + (size_t) j * nz + row0;
        for (int i = 0; i < nb; i++) {
            double v = p[i];
            if (rm) v -= rm[i] * alpha_sums[j];
            o[i] = v - offset[j];
        }
    }
}

/* n long doubles of scratch from R_alloc, which aligns for doubles (8
 * bytes): long double needs 16. */
static long double *long_doubles(size_t n)
{
    char *raw = R_alloc(n + 1, sizeof(long double));
    return (long double *) (((uintptr_t) raw + 15) & ~(uintptr_t) 15);
}

/* Rows per panel of a block: the kernel of a block is computed and used
 * one panel of rows at a time, about 2^20 doubles (8 MB, within the
 * last-level cache), so that the product with alpha reads it from the
 * cache rather than from memory. Each entry of the result is the same for
 * any panel (matrix_product() sums each in order). */
#define PROJECTION_PANEL_DOUBLES (1 << 20)
static int projection_panel_rows(int m)
{
    int rows = PROJECTION_PANEL_DOUBLES / (m > 0 ? m : 1);
    return rows < 8 ? 8 : rows;
}

/* Rows per panel of one thread (project_block_by_threads()): its kernel,
 * about 2^17 doubles (1 MB), stays in its core's L2 cache for the product;
 * at least 64 rows, as each panel's product reads all of alpha (m x k: for
 * an exact fit's many components, more than the panel's kernel); a
 * multiple of 8 (the fast kernels' row tiles). */
static int thread_panel_rows(int m)
{
    int rows = (1 << 17) / (m > 0 ? m : 1) / 8 * 8;
    return rows < 64 ? 64 : rows;
}

/* The rows of one block (zp, prepared) projected as kernel_project_rows()
 * does, for a kernel of kernel_fast.c, with the block's panels spread over
 * the threads: each thread computes a panel's kernel (kernel_fast_tile()),
 * its product with alpha (tile_gemm_add(), one thread) and its centering,
 * with scratch of its own. With kernel_block() and matrix_product() sharing
 * each panel, the product and the centering of a Nystrom fit's second pass
 * ran on one thread while the others waited. The same values, summed in the
 * same order. Returns 1 if a kernel value is not finite. */
static int project_block_by_threads(const kernel_eval *k, const kernel_points *zp,
                                    const kernel_points *xp, int m, const double *alpha,
                                    int f, const double *offset, const double *alpha_sums,
                                    double *out, int nz, int row0, double *row_means,
                                    int threads)
{
    int nb = zp->n, pr = thread_panel_rows(m);
    threads = threads_unless_busy(threads);  /* the cores others leave free */
    kernel_fast_plan *plan = kernel_fast_prepare(k->bases, zp, xp);
    size_t k_len = (size_t) pr * m, p_len = (size_t) pr * f;
    double *K = (double *) R_alloc((size_t) threads * k_len, sizeof(double));
    double *P = (double *) R_alloc((size_t) threads * p_len, sizeof(double));
    long double *acc = alpha_sums ? long_doubles((size_t) threads * pr) : NULL;
    tile_kernels_ready();
    int npanels = (nb + pr - 1) / pr, bad = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(|:bad)
#endif
    for (int p = 0; p < npanels; p++) {
#ifdef _OPENMP
        int t = omp_get_thread_num();
#else
        int t = 0;
#endif
        int i0 = p * pr, np = nb - i0 < pr ? nb - i0 : pr;
        double *Kt = K + (size_t) t * k_len, *Pt = P + (size_t) t * p_len;
        bad |= kernel_fast_tile(plan, i0, np, 0, m, Kt);
        memset(Pt, 0, (size_t) np * f * sizeof(double));
        tile_gemm_add(np, f, m, Kt, np, alpha, m, Pt, np);
        center_block(Kt, np, m, Pt, f, offset, alpha_sums, out, nz, row0 + i0, row_means,
                     acc ? acc + (size_t) t * pr : NULL);
    }
    return bad;
}

/* Whether kernel_project_rows() gives each thread panels of its own
 * (project_block_by_threads(), a kernel of kernel_fast.c), rather than
 * one panel at a time, shared (project_block_by_panels(), whose scratch
 * is made once). On wide data (points read in place) the panel's kernel
 * is a product the threads share by tasks or by groups of coordinates
 * (kernel_fast.c's wide_block()): panels of their own left a block of 200
 * rows on one thread. */
static int panels_by_threads(const kernel_eval *k, const kernel_points *xp)
{
    return kernel_fast_points(k) && !xp->in_place;
}

/* What kernel_project_rows() projects its blocks with: the kernel and the
 * training points, alpha (m x f), the offset and alpha's column sums
 * (NULL: no row means), the result (nz x f) and the row means; for the
 * shared panels (project_block_by_panels()), their rows and scratch. */
typedef struct {
    const kernel_eval *k;
    const kernel_points *xp;
    int m;
    const double *alpha;
    int f;
    const double *offset, *as;
    double *out;
    int nz;
    double *row_means;
    int pr;
    double *Kp, *P;
    long double *acc;
    const double **wb;
    int threads;
} projection;

/* The block zp (rows row0 .. of z) projected panel by panel of J->pr
 * rows, one panel shared by the threads: its kernel by kernel_block(),
 * then its product with alpha by matrix_product() (the register tiles on
 * the reference BLAS: this product was a quarter of a Nystrom fit) and
 * its centering (center_block()). */
static void project_block_by_panels(const projection *J, const kernel_points *zp, int row0)
{
    for (int p0 = 0; p0 < zp->n; p0 += J->pr) {
        int np = zp->n - p0 < J->pr ? zp->n - p0 : J->pr;
        kernel_points panel = kernel_points_view(J->k, zp, p0, np, J->wb);
        const void *vpanel = vmaxget();
        kernel_block(J->k, &panel, J->xp, 0, J->Kp, J->threads,
                     "between 'newdata' and the training data ");
        if (J->f > 0) {
            matrix_product(np, J->f, J->m, J->Kp, np, 0, J->alpha, J->m, 0, 0.0, J->P, np,
                           J->threads);
            center_block(J->Kp, np, J->m, J->P, J->f, J->offset, J->as, J->out, J->nz,
                         row0 + p0, J->row_means, J->acc);
        }
        vmaxset(vpanel);
    }
}

/* .Call: the projections of the rows of z onto the components of a fit,
 * nz x k: K_z alpha - r alpha_sums' - 1 offset' (see center_block()), with
 * K_z the kernel between the rows of z and the fit's rows x.
 * z: nz x d double matrix (complete rows, scaled as the fit's data); x: m x d
 * double matrix, the fit's training rows or landmarks (their column means
 * shift the distance kernels); for a string kernel, z and x are character
 * vectors (indexed together, once); kernel: a program from
 * fastkpca:::kernel_program(); zweights, xweights: the conformal weights of
 * the rows of z and x; alpha: m x k double matrix; offset: k doubles;
 * alpha_sums: NULL or k doubles; block_rows: integer, rows per block, 1 to
 * max(nz, 1); threads; step: NULL or a function called after each block.
 * With alpha_sums (k > 0), the result has an attribute "row_means": the nz
 * row means of K_z. */
SEXP kernel_project_rows(SEXP z, SEXP x, SEXP kernel, SEXP zweights, SEXP xweights,
                         SEXP alpha, SEXP offset, SEXP alpha_sums, SEXP block_rows,
                         SEXP threads, SEXP step)
{
    engine_entered(__func__);
    kernel_eval k;
    int nthreads = kernel_call_read(kernel, threads, z, "z", x, "x", &k);
    check_double_matrix(alpha, "alpha");
    int nz = k.n_moving, m = k.n_fixed, f = ncols(alpha);
    if (m < 1) error_argument("'x' must have at least 1 row");
    if (nrows(alpha) != m) error_argument("'alpha' must have %d rows, not %d", m, nrows(alpha));
    if (!isReal(offset) || XLENGTH(offset) != f) error_argument("'offset' must hold %d doubles", f);
    if (!isNull(alpha_sums) && (!isReal(alpha_sums) || XLENGTH(alpha_sums) != f))
        error_argument("'alpha_sums' must be NULL or hold %d doubles", f);
    int block = as_count(block_rows, "block_rows", 1, nz > 1 ? nz : 1);
    check_step(step);

    kernel_points xp;
    const double *shift = kernel_points_fixed(&k, x, xweights, &xp);
    /* the blocks' weights are checked here once, for an early clear error */
    check_weights(&k, zweights, "zweights");
    int by_threads = f > 0 && panels_by_threads(&k, &xp);
    int pr = projection_panel_rows(m) < block ? projection_panel_rows(m) : block;
    projection J = {&k, &xp, m, REAL(alpha), f, REAL(offset),
                    isNull(alpha_sums) ? NULL : REAL(alpha_sums), NULL, nz, NULL, pr,
                    NULL, NULL, NULL, NULL, nthreads};
    if (!by_threads) {
        J.Kp = (double *) R_alloc((size_t) pr * m, sizeof(double));
        J.P = (double *) R_alloc((size_t) pr * (f > 0 ? f : 1), sizeof(double));
        if (J.as) J.acc = long_doubles((size_t) pr);
        J.wb = (const double **) R_alloc((size_t) k.nweights + 1, sizeof(double *));
    }
    SEXP ans = PROTECT(allocMatrix(REALSXP, nz, f));
    /* the row means of K_z, which kpca_cv()'s residual criterion reuses */
    SEXP row_means = PROTECT(J.as ? allocVector(REALSXP, nz) : R_NilValue);
    setAttrib(ans, install("row_means"), row_means);
    J.out = REAL(ans);
    J.row_means = J.as ? REAL(row_means) : NULL;
    for (int row0 = 0; row0 < nz; row0 += block) {
        int nb = nz - row0 < block ? nz - row0 : block;
        const void *vmax = vmaxget();
        kernel_points zp;
        kernel_points_rows(&k, z, row0, nb, shift, zweights, &zp);
        if (by_threads) {
            if (project_block_by_threads(&k, &zp, &xp, m, J.alpha, f, J.offset, J.as, J.out,
                                         nz, row0, J.row_means, nthreads))
                kernel_nonfinite_error(&k, "between 'newdata' and the training data ");
            R_CheckUserInterrupt();
        } else {
            project_block_by_panels(&J, &zp, row0);
        }
        vmaxset(vmax);
        call_step(step);
    }
    UNPROTECT(2);
    return ans;
}
