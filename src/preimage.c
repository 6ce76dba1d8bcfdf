/* Pre-images: the kernel ridge regression from projections to inputs.
 *
 * With Z the unit-axis projections of the n training rows (n x f) and X the
 * training rows (n x d), the map is x(z) = k(z, Z) B with
 *   B = (k(Z, Z) + ridge I)^-1 X
 * (Bakir, Weston and Schoelkopf 2004; scikit-learn's fit_inverse_transform).
 * k(Z, Z) is the one n x n allocation: its lower triangle is filled by the
 * kernel code of the fit, the ridge added to its diagonal, and the system
 * solved in place by a Cholesky factorisation (dposv). A kernel that is not
 * positive semidefinite (tanhdot) may leave k(Z, Z) + ridge I indefinite:
 * then the matrix is filled again and solved by a symmetric indefinite
 * factorisation (dsysv). The buffer comes from with_square_buffer() (args.c),
 * which frees it on return, on an error and on an interrupt, as the fit's. */
#include "fastkpca.h"
#include <string.h>

typedef struct {
    const kernel_eval *kernel;
    SEXP z, weights, x;
    int n, f, d;
    double ridge;
    int threads;
} preimage_job;

/* Lower triangle of k(Z, Z) + ridge I into the buffer. */
static void fill_regularised(preimage_job *job, double *K)
{
    kernel_fill_lower(job->kernel, REAL(job->z), job->n, job->f, job->weights, K,
                      job->threads);
    for (int i = 0; i < job->n; i++) K[i + (size_t) i * job->n] += job->ridge;
}

static SEXP preimage_steps(void *data, double *K)
{
    preimage_job *job = (preimage_job *) data;
    int n = job->n, d = job->d, info = 0;
    const char uplo = 'L';
    fill_regularised(job, K);

    SEXP B = PROTECT(allocMatrix(REALSXP, n, d));
    memcpy(REAL(B), REAL(job->x), (size_t) n * d * sizeof(double));
    F77_CALL(dposv)(&uplo, &n, &d, K, &n, REAL(B), &n, &info FCONE);
    if (info < 0) error("error code %d from LAPACK routine 'dposv'", info);
    if (info > 0) {
        /* not positive definite: dposv stopped at column info with B
         * untouched, and the buffer holds part of a Cholesky factor */
        R_CheckUserInterrupt();
        fill_regularised(job, K);
        int lwork = -1;
        double work_query;
        int *ipiv = (int *) R_alloc((size_t) n, sizeof(int));
        F77_CALL(dsysv)(&uplo, &n, &d, K, &n, ipiv, REAL(B), &n, &work_query,
                        &lwork, &info FCONE);
        check_lapack_info(info, "dsysv");
        lwork = (int) work_query;
        double *work = (double *) R_alloc((size_t) (lwork > 1 ? lwork : 1), sizeof(double));
        F77_CALL(dsysv)(&uplo, &n, &d, K, &n, ipiv, REAL(B), &n, work, &lwork,
                        &info FCONE);
        if (info > 0)
            error("k(Z, Z) + ridge I is singular: increase 'ridge'");
        if (info < 0) error("error code %d from LAPACK routine 'dsysv'", info);
    }
    UNPROTECT(1);
    return B;
}

/* .Call: the coefficients B = (k(Z, Z) + ridge I)^-1 X of the pre-image map.
 * z: n x f double matrix, the unit-axis projections of the training rows;
 * kernel: a program from fastkpca:::kernel_program(); weights: the conformal
 * weights of the rows of z (a list, empty for most kernels); x: n x d double
 * matrix, the training rows; ridge: double > 0; threads: integer >= 1.
 * Returns B, an n x d double matrix. */
SEXP preimage_solve(SEXP z, SEXP kernel, SEXP weights, SEXP x, SEXP ridge,
                    SEXP threads)
{
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    if (!isReal(z) || !isMatrix(z)) error("'z' must be a double matrix");
    if (!isReal(x) || !isMatrix(x)) error("'x' must be a double matrix");
    int n = nrows(z), f = ncols(z), d = ncols(x);
    if (n < 1 || f < 1) error("'z' must have at least one row and one column");
    if (nrows(x) != n) error("'x' must have %d rows, as 'z', not %d", n, nrows(x));
    if (d < 1) error("'x' must have at least 1 column");
    if (!isNewList(weights) || XLENGTH(weights) != k.nweights)
        error("'weights' must be a list of %d conformal weight vectors", k.nweights);
    double r = as_number(ridge, "ridge");
    if (!(r > 0)) error("'ridge' must be positive");
    int nthreads = as_threads(threads);

    preimage_job job = {&k, z, weights, x, n, f, d, r, nthreads};
    return with_square_buffer(n, preimage_steps, &job);
}
