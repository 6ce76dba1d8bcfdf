/* Pre-images: the kernel ridge regression from projections to inputs, and
 * the fixed-point iteration of Mika et al. (1999) for the Gaussian kernel.
 *
 * With Z the unit-axis projections of the n training rows (n x f) and X the
 * training rows (n x d), the map is x(z) = k(z, Z) B with
 *   B = (k(Z, Z) + ridge I)^-1 X
 * (Bakir, Weston and Schoelkopf 2004; scikit-learn's fit_inverse_transform).
 * k(Z, Z) is the one n x n allocation: its lower triangle is filled by the
 * kernel code of the fit, the ridge added to its diagonal, copied to the
 * upper triangle, and the system solved in place by a Cholesky
 * factorisation (dposv). A kernel that is not
 * positive semidefinite (tanhdot) may leave k(Z, Z) + ridge I indefinite:
 * then the matrix is filled again and solved by a symmetric indefinite
 * factorisation (dsysv). The buffer comes from with_square_buffer() (args.c),
 * which frees it on return, on an error and on an interrupt, as the fit's.
 *
 * The fixed-point iteration works on blocks of rows: a block's weights g and
 * kernel values k(z, x_i) take O(block x n) memory, never n x n. */
#include "fastkpca.h"
#include <math.h>
#include <string.h>

typedef struct {
    const kernel_eval *kernel;
    SEXP z, weights, x;
    int n, f, d;
    double ridge;
    int threads;
} preimage_job;

/* Lower triangle of k(Z, Z) + ridge I into the buffer (Z's points read by
 * kernel_call_read(), prepared here, the shift of Z's own columns). */
static void fill_regularised(preimage_job *job, double *K)
{
    const void *vmax = vmaxget();
    kernel_points p;
    kernel_points_fixed(job->kernel, job->z, job->weights, &p);
    kernel_block(job->kernel, &p, &p, 1, K, job->threads, "");
    vmaxset(vmax);
    for (int i = 0; i < job->n; i++) K[i + (size_t) i * job->n] += job->ridge;
}

/* B by the symmetric indefinite factorisation, after dposv found the matrix
 * not positive definite (the buffer then holds part of a Cholesky factor,
 * and B is untouched). */
static void solve_indefinite(preimage_job *job, double *K, double *B)
{
    int n = job->n, d = job->d, info = 0, lwork = -1;
    const char uplo = 'L';
    double work_query;
    R_CheckUserInterrupt();
    fill_regularised(job, K);
    int *ipiv = (int *) R_alloc((size_t) n, sizeof(int));
    F77_CALL(dsysv)(&uplo, &n, &d, K, &n, ipiv, B, &n, &work_query, &lwork, &info
                    FCONE);
    check_lapack_info(info, "dsysv");
    lwork = (int) work_query;
    double *work = (double *) R_alloc((size_t) (lwork > 1 ? lwork : 1), sizeof(double));
    F77_CALL(dsysv)(&uplo, &n, &d, K, &n, ipiv, B, &n, work, &lwork, &info FCONE);
    if (info > 0) error_numerical("k(Z, Z) + ridge I is singular: increase 'ridge'");
    check_lapack_info(info, "dsysv");
}

/* The lower triangle of K copied to the upper one, in square tiles so that
 * both sides stay in cache. */
static void mirror_lower(double *K, int n)
{
    const int tile = 64;
    for (int j0 = 0; j0 < n; j0 += tile)
        for (int i0 = j0; i0 < n; i0 += tile) {
            int j1 = j0 + tile < n ? j0 + tile : n, i1 = i0 + tile < n ? i0 + tile : n;
            for (int j = j0; j < j1; j++)
                for (int i = (i0 > j ? i0 : j + 1); i < i1; i++)
                    K[j + (size_t) i * n] = K[i + (size_t) j * n];
        }
}

static SEXP coefficient_steps(void *data, double *K)
{
    preimage_job *job = (preimage_job *) data;
    int n = job->n, d = job->d, info = 0;
    /* the upper triangle: with the reference BLAS, LAPACK's upper Cholesky
     * runs on dot products of columns and took half the time of the lower
     * one at n = 5000 (bench/preimage.R) */
    const char uplo = 'U';
    fill_regularised(job, K);
    mirror_lower(K, n);
    SEXP B = PROTECT(allocMatrix(REALSXP, n, d));
    memcpy(REAL(B), REAL(job->x), (size_t) n * d * sizeof(double));
    F77_CALL(dposv)(&uplo, &n, &d, K, &n, REAL(B), &n, &info FCONE);
    if (info < 0) check_lapack_info(info, "dposv");
    if (info > 0) solve_indefinite(job, K, REAL(B));
    UNPROTECT(1);
    return B;
}

/* .Call: the coefficients B = (k(Z, Z) + ridge I)^-1 X of the pre-image map.
 * z: n x f double matrix, the unit-axis projections of the training rows;
 * kernel: a program from fastkpca:::kernel_program(); weights: the conformal
 * weights of the rows of z (a list, empty for most kernels); x: n x d double
 * matrix, the training rows; ridge: double > 0; threads: integer >= 1.
 * Returns B, an n x d double matrix. */
SEXP preimage_coefficients(SEXP z, SEXP kernel, SEXP weights, SEXP x, SEXP ridge,
                           SEXP threads)
{
    engine_entered(__func__);
    kernel_eval k;
    int nthreads = kernel_call_read(kernel, threads, R_NilValue, NULL, z, "z", &k);
    check_double_matrix(z, "z");  /* the scores: never strings or sparse rows */
    check_double_matrix(x, "x");
    int n = k.n_fixed, f = k.d, d = ncols(x);
    if (n < 1) error_argument("'z' must have at least one row");
    if (nrows(x) != n) error_argument("'x' must have %d rows, as 'z', not %d", n, nrows(x));
    if (d < 1) error_argument("'x' must have at least 1 column");
    check_weights(&k, weights, "weights");
    double r = as_number(ridge, "ridge");
    if (!(r > 0)) error_argument("'ridge' must be positive");

    preimage_job job = {&k, z, weights, x, n, f, d, r, nthreads};
    return with_square_buffer(n, coefficient_steps, &job);
}

/* ---- the fixed-point iteration ------------------------------------------ */

typedef struct {
    const kernel_eval *kernel;
    kernel_points xp;        /* the training rows, prepared once */
    const double *shift, *x, *A;
    SEXP noweights;
    int n, d, k, maxit, threads;
    double tol;
    int broke, unconverged;
    SEXP step;               /* NULL or an R function called per iteration */
} fixed_point_job;

/* The weights g of rows r0..r0+nb-1: g = t A' + (1 - rowSums(t A')) / n,
 * with t the rows' unit-axis projections (nz x k, leading dimension nz). */
static void fixed_point_weights(const fixed_point_job *job, const double *t, int nz,
                                int r0, int nb, double *g)
{
    int n = job->n, k = job->k;
    matrix_product(nb, n, k, t + r0, nz, 0, job->A, n, 1, 0.0, g, nb, job->threads);
    for (int i = 0; i < nb; i++) {
        double s = 0.0;
        for (int a = 0; a < n; a++) s += g[i + (size_t) a * nb];
        double add = (1.0 - s) / n;
        for (int a = 0; a < n; a++) g[i + (size_t) a * nb] += add;
    }
}

/* One step for the na active rows of the block (their iterates packed in
 * za, na x d; their weights in rows act[] of g, nb x n): za gets the new
 * iterates of the rows that did not break down; done[r] is set for rows
 * that converged or broke down. kw: na x n scratch. */
static void fixed_point_step(fixed_point_job *job, const double *g, int nb,
                             const int *act, int na, double *za, double *kw,
                             double *num, int *done)
{
    const void *vmax = vmaxget();
    const int n = job->n, d = job->d;
    kernel_points zp;
    kernel_points_prepare(job->kernel, za, na, 0, na, d, job->shift, job->noweights, &zp);
    kernel_block(job->kernel, &zp, &job->xp, 0, kw, job->threads,
                 "between the iterates and the training data ");
    for (int i = 0; i < na; i++)
        for (int a = 0; a < n; a++) kw[i + (size_t) a * na] *= g[act[i] + (size_t) a * nb];
    matrix_product(na, d, n, kw, na, 0, job->x, n, 0, 0.0, num, na, job->threads);
    for (int i = 0; i < na; i++) {
        double den = 0.0, scale = 0.0, step = 0.0, size = 0.0;
        for (int a = 0; a < n; a++) {
            double w = kw[i + (size_t) a * na];
            den += w;
            scale += fabs(w);
        }
        int ok = R_FINITE(den) && fabs(den) > 1e-10 * scale && scale > 0;
        for (int c = 0; c < d; c++) {
            double v = num[i + (size_t) c * na] / den, old = za[i + (size_t) c * na];
            step += (v - old) * (v - old);
            size += v * v;
            if (ok) num[i + (size_t) c * na] = v;
        }
        if (!ok) job->broke++;
        done[i] = !ok || sqrt(step) <= job->tol * (1.0 + sqrt(size));
        if (ok) for (int c = 0; c < d; c++) za[i + (size_t) c * na] = num[i + (size_t) c * na];
    }
    vmaxset(vmax);
}

/* Iterate rows r0..r0+nb-1 of z (nz x d) in place until each converges,
 * breaks down or maxit steps were taken. g: nb x n; kw: nb x n scratch. */
static void fixed_point_block(fixed_point_job *job, double *z, int nz, int r0, int nb,
                              const double *g, double *kw)
{
    const int d = job->d;
    int *act = (int *) R_alloc((size_t) nb, sizeof(int));
    int *done = (int *) R_alloc((size_t) nb, sizeof(int));
    double *za = (double *) R_alloc((size_t) nb * d, sizeof(double));
    double *num = (double *) R_alloc((size_t) nb * d, sizeof(double));
    int na = nb;
    for (int i = 0; i < nb; i++) act[i] = i;
    for (int it = 0; it < job->maxit && na > 0; it++) {
        for (int i = 0; i < na; i++)
            for (int c = 0; c < d; c++)
                za[i + (size_t) c * na] = z[r0 + act[i] + (size_t) c * nz];
        fixed_point_step(job, g, nb, act, na, za, kw, num, done);
        int left = 0;
        for (int i = 0; i < na; i++) {
            for (int c = 0; c < d; c++)
                z[r0 + act[i] + (size_t) c * nz] = za[i + (size_t) c * na];
            if (!done[i]) act[left++] = act[i];
        }
        na = left;
        R_CheckUserInterrupt();
        call_step(job->step);
    }
    job->unconverged += na;
}

/* .Call: Mika et al.'s fixed-point pre-images,
 *   z <- sum_i g_i k(z, x_i) x_i / sum_i g_i k(z, x_i),
 * start: nz x d starting points (the ridge pre-images); t: nz x k unit-axis
 * projections (scores / sqrt(n)); A: n x k unit-scale components
 * (alpha / sqrt(n)); x: n x d training rows; kernel: a program without
 * conformal parts; maxit: integer >= 1; tol: double in (0, 1); threads;
 * step: NULL or an R function called after each iteration of a block.
 * Returns list(z, broke, unconverged): the pre-images, the rows that broke
 * down (kept their last iterate) and those still moving after maxit steps. */
SEXP preimage_fixed_point(SEXP start, SEXP t, SEXP A, SEXP x, SEXP kernel, SEXP maxit,
                          SEXP tol, SEXP threads, SEXP step)
{
    engine_entered(__func__);
    kernel_eval k;
    int nthreads = kernel_call_read(kernel, threads, start, "start", x, "x", &k);
    if (k.nweights != 0) error_argument("'kernel' must have no conformal part");
    check_double_matrix(start, "start");  /* pre-images: never strings or sparse rows */
    check_double_matrix(x, "x");
    check_double_matrix(t, "t");
    check_double_matrix(A, "A");
    int nz = k.n_moving, d = k.d, n = k.n_fixed, kk = ncols(A);
    if (n < 1) error_argument("'x' must have at least one row");
    if (nrows(A) != n || kk < 1) error_argument("'A' must have %d rows, as 'x'", n);
    if (nrows(t) != nz || ncols(t) != kk) error_argument("'t' must be a %d x %d matrix", nz, kk);
    double eps = as_number(tol, "tol");
    if (!(eps > 0 && eps < 1)) error_argument("'tol' must be between 0 and 1");
    check_step(step);
    fixed_point_job job = {&k, {0}, NULL, REAL(x), REAL(A), R_NilValue, n, d, kk,
                           as_count(maxit, "maxit", 1, INT_MAX), nthreads,
                           eps, 0, 0, step};
    SEXP noweights = PROTECT(allocVector(VECSXP, 0));
    job.noweights = noweights;
    job.shift = kernel_points_fixed(&k, x, noweights, &job.xp);
    SEXP z = PROTECT(duplicate(start));
    /* blocks of about 2^20 kernel values (8 MB per buffer) */
    int block = n >= (1 << 20) ? 1 : (1 << 20) / n;
    if (block > nz) block = nz;
    double *g = (double *) R_alloc((size_t) (block > 0 ? block : 1) * n, sizeof(double));
    double *kw = (double *) R_alloc((size_t) (block > 0 ? block : 1) * n, sizeof(double));
    for (int r0 = 0; r0 < nz; r0 += block) {
        const void *vmax = vmaxget();
        int nb = nz - r0 < block ? nz - r0 : block;
        fixed_point_weights(&job, REAL(t), nz, r0, nb, g);
        fixed_point_block(&job, REAL(z), nz, r0, nb, g, kw);
        vmaxset(vmax);
    }
    SEXP ans = PROTECT(allocVector(VECSXP, 3));
    SET_VECTOR_ELT(ans, 0, z);
    SET_VECTOR_ELT(ans, 1, ScalarInteger(job.broke));
    SET_VECTOR_ELT(ans, 2, ScalarInteger(job.unconverged));
    const char *names[] = {"z", "broke", "unconverged"};
    set_list_names(ans, names);
    UNPROTECT(3);
    return ans;
}
