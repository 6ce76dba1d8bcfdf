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

/* The rows of a block of out (nz x k, leading dimension nz), from the
 * block's products P = K_b alpha (nb x k): P - r s' - 1 offset', with r the
 * block's kernel row means and s = alpha_sums (the exact fit's centering),
 * or P - 1 offset' when s is NULL (Nystrom: centering is all in offset).
 * The row means go to row_means[row0 + i] (length nz) when s is given.
 * The row means are summed in long double, column by column, as R's
 * rowMeans() does, so that the result is R's to the last bit. */
static void center_block(const double *Kb, int nb, int m, const double *P, int k,
                         const double *offset, const double *alpha_sums, double *out,
                         int nz, int row0, double *row_means)
{
    double *rm = NULL;
    if (alpha_sums) {
        /* R_alloc aligns for doubles (8 bytes); long double needs 16 */
        char *raw = R_alloc((size_t) nb + 1, sizeof(long double));
        long double *acc = (long double *) (((uintptr_t) raw + 15) & ~(uintptr_t) 15);
        for (int i = 0; i < nb; i++) acc[i] = 0.0L;
        for (int j = 0; j < m; j++) {
            const double *col = Kb + (size_t) j * nb;
            for (int i = 0; i < nb; i++) acc[i] += col[i];
        }
        rm = row_means + row0;
        for (int i = 0; i < nb; i++) rm[i] = (double) (acc[i] / m);
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
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    int nthreads = as_threads(threads);
    kernel_point_sets(&k, z, "z", x, "x", nthreads);
    check_double_matrix(alpha, "alpha");
    int nz = k.any_string ? (int) XLENGTH(z) : nrows(z);
    int m = k.any_string ? (int) XLENGTH(x) : nrows(x), f = ncols(alpha);
    if (m < 1) error("'x' must have at least 1 row");
    if (nrows(alpha) != m) error("'alpha' must have %d rows, not %d", m, nrows(alpha));
    if (!isReal(offset) || XLENGTH(offset) != f) error("'offset' must hold %d doubles", f);
    if (!isNull(alpha_sums) && (!isReal(alpha_sums) || XLENGTH(alpha_sums) != f))
        error("'alpha_sums' must be NULL or hold %d doubles", f);
    int block = as_count(block_rows, "block_rows", 1, nz > 1 ? nz : 1);
    check_step(step);

    kernel_points xp;
    const double *shift = kernel_points_fixed(&k, x, xweights, &xp);
    /* the blocks' weights are checked here once, for an early clear error */
    check_weights(&k, zweights, "zweights");
    int pr = projection_panel_rows(m) < block ? projection_panel_rows(m) : block;
    double *Kp = (double *) R_alloc((size_t) pr * m, sizeof(double));
    double *P = (double *) R_alloc((size_t) pr * (f > 0 ? f : 1), sizeof(double));
    const double **wb = (const double **) R_alloc((size_t) k.nweights + 1,
                                                  sizeof(double *));

    SEXP ans = PROTECT(allocMatrix(REALSXP, nz, f));
    const double *as = isNull(alpha_sums) ? NULL : REAL(alpha_sums);
    /* the row means of K_z, which kpca_cv()'s residual criterion reuses */
    SEXP row_means = PROTECT(as ? allocVector(REALSXP, nz) : R_NilValue);
    setAttrib(ans, install("row_means"), row_means);
    for (int row0 = 0; row0 < nz; row0 += block) {
        int nb = nz - row0 < block ? nz - row0 : block;
        const void *vmax = vmaxget();
        kernel_points zp;
        kernel_points_rows(&k, z, row0, nb, shift, zweights, &zp);
        for (int p0 = 0; p0 < nb; p0 += pr) {
            int np = nb - p0 < pr ? nb - p0 : pr;
            kernel_points panel = kernel_points_view(&k, &zp, p0, np, wb);
            const void *vpanel = vmaxget();
            kernel_block(&k, &panel, &xp, 0, Kp, nthreads,
                         "between 'newdata' and the training data ");
            if (f > 0) {
                /* the register tiles (tiles.c): on the reference BLAS, this
                 * product was a quarter of a Nystrom fit */
                matrix_product(np, f, m, Kp, np, 0, REAL(alpha), m, 0, 0.0, P, np, nthreads);
                center_block(Kp, np, m, P, f, REAL(offset), as, REAL(ans), nz, row0 + p0,
                             as ? REAL(row_means) : NULL);
            }
            vmaxset(vpanel);
        }
        vmaxset(vmax);
        call_step(step);
    }
    UNPROTECT(2);
    return ans;
}
