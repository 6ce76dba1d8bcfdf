/* Step 1: the kernel matrix, for a named kernel or an expression of them:
 * the entry points kernel_matrix (the symmetric matrix of one set),
 * kernel_cross (new rows against the training rows) and kernel_self (the
 * diagonal alone). Each reads its kernel and points once (kernel_call_read(),
 * kernel_points.c) and follows the plan of kernel_plan.c. Kernel values
 * that are not finite are an error. */
#include "fastkpca.h"

/* .Call (kernel_cross() in R/kernel_matrix.R): the cross-kernel k(z_i, x_j),
 * an nz x m matrix.
 * z: nz x d double matrix; x: m x d double matrix, the training data (its
 * column means shift the distance kernels); for a string kernel, z and x
 * are character vectors; kernel: a program from fastkpca:::kernel_program();
 * zweights, xweights: the conformal weights of the rows of z and x (lists);
 * threads: integer >= 1. */
SEXP kernel_cross(SEXP z, SEXP x, SEXP kernel, SEXP zweights, SEXP xweights,
                  SEXP threads)
{
    engine_entered(__func__);
    kernel_eval k;
    int nthreads = kernel_call_read(kernel, threads, z, "z", x, "x", &k);
    kernel_points zp, xp;
    const double *shift = kernel_points_fixed(&k, x, xweights, &xp);
    kernel_points_rows(&k, z, 0, k.n_moving, shift, zweights, &zp);

    SEXP ans = PROTECT(allocMatrix(REALSXP, zp.n, xp.n));
    advise_huge_pages(REAL(ans), (size_t) zp.n * xp.n * sizeof(double));
    kernel_block(&k, &zp, &xp, 0, REAL(ans), nthreads,
                 "between 'newdata' and the training data ");
    UNPROTECT(1);
    return ans;
}

/* .Call (kernel_matrix() in R/kernel_matrix.R, and the landmarks' kernel of
 * a Nystrom fit): the symmetric kernel matrix k(x_i, x_j), n x n: the lower
 * triangle is computed, the upper one copied from it block by block.
 * x: n x d double matrix (a character vector for a string kernel); kernel:
 * a program; weights: the conformal weights of the rows of x; threads:
 * integer >= 1. */
SEXP kernel_matrix(SEXP x, SEXP kernel, SEXP weights, SEXP threads)
{
    engine_entered(__func__);
    kernel_eval k;
    int nthreads = kernel_call_read(kernel, threads, R_NilValue, NULL, x, "x", &k);
    kernel_points p;
    kernel_points_fixed(&k, x, weights, &p);
    int n = p.n;
    SEXP ans = PROTECT(allocMatrix(REALSXP, n, n));
    double *K = REAL(ans);
    advise_huge_pages(K, (size_t) n * n * sizeof(double));
    kernel_block(&k, &p, &p, KERNEL_SYMMETRIC, K, nthreads, "");
    UNPROTECT(1);
    return ans;
}

/* .Call (kernel_self() in R/kernel_matrix.R): the diagonal k(x_i, x_i) of
 * the kernel matrix of the rows of x (strings for a string kernel),
 * without the matrix. x: n x d double matrix; kernel: a program; weights:
 * the conformal weights of the rows of x. Returns a double vector of n. */
SEXP kernel_self(SEXP x, SEXP kernel, SEXP weights)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_call_read(kernel, NULL, R_NilValue, NULL, x, "x", &k);
    kernel_points p;
    kernel_points_fixed(&k, x, weights, &p);
    SEXP ans = PROTECT(allocVector(REALSXP, p.n));
    kernel_diagonal(&k, &p, REAL(ans));
    UNPROTECT(1);
    return ans;
}
