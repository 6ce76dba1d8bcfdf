/* Step 3, randomized: the top eigenpairs by a randomized range finder with
 * power iterations (Halko, Martinsson and Tropp 2011, algorithms 4.4 and
 * 5.3 for a symmetric matrix).
 *
 * With l = k + oversample columns: Y = A Omega for a Gaussian n x l Omega
 * (R's random number generator, so set.seed() makes the fit
 * reproducible); then `power` times Q = orth(Y), Y = A Q; then Q = orth(Y)
 * and the k leading eigenvectors U of Q' A^2 Q (from Y = A Q), returned
 * as Q U with their Rayleigh quotients as eigenvalues. Each power step
 * multiplies the gap between the wanted and the unwanted eigenvalues: the
 * error of eigenvalue j falls about like (lambda_(l+1) / lambda_j)^(2 power
 * + 1) (squared for the Rayleigh quotient), so a spectrum that decays fast
 * (smooth kernels) converges in a few steps and a slowly decaying one
 * (laplacedot on noisy data, a small sigma) needs more steps or more
 * oversampling. Orthonormalisation by Householder QR (dgeqrf, dorgqr).
 *
 * Products with A (lower triangle of the n x n buffer) are symm_lower()
 * (tiles_vector.c), the l columns split between the threads. */
#include "fastkpca.h"
#include <Rmath.h>
#include <string.h>

/* Y (n x l, l <= n) <- an orthonormal basis of its columns (Householder QR). */
static void orthonormalise(double *Y, int n, int l)
{
    int info = 0, lwork = -1;
    double query, *tau = (double *) R_alloc((size_t) l, sizeof(double));
    F77_CALL(dgeqrf)(&n, &l, Y, &n, tau, &query, &lwork, &info);
    check_lapack_info(info, "dgeqrf");
    int lwork_qr = (int) query;
    lwork = -1;
    F77_CALL(dorgqr)(&n, &l, &l, Y, &n, tau, &query, &lwork, &info);
    check_lapack_info(info, "dorgqr");
    lwork = (int) query > lwork_qr ? (int) query : lwork_qr;
    double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
    F77_CALL(dgeqrf)(&n, &l, Y, &n, tau, work, &lwork, &info);
    check_lapack_info(info, "dgeqrf");
    F77_CALL(dorgqr)(&n, &l, &l, Y, &n, tau, work, &lwork, &info);
    check_lapack_info(info, "dorgqr");
}

/* The k largest eigenpairs of the symmetric A (lower triangle, n x n, read
 * only), decreasing, into values (k) and vectors (n x k); oversample extra
 * columns (l = k + oversample, at most n), power iterations. */
void top_eigen_randomized(const double *A, int n, int k, int oversample, int power,
                          int threads, double *values, double *vectors)
{
    int l = k + oversample < n ? k + oversample : n;
    double *Q = (double *) R_alloc((size_t) n * l, sizeof(double));
    double *Y = (double *) R_alloc((size_t) n * l, sizeof(double));
    GetRNGstate();
    for (size_t i = 0; i < (size_t) n * l; i++) Q[i] = norm_rand();
    PutRNGstate();
    symm_lower(A, n, Q, l, Y, threads);
    for (int q = 0; q < power; q++) {
        orthonormalise(Y, n, l);
        double *t = Q; Q = Y; Y = t;
        symm_lower(A, n, Q, l, Y, threads);
    }
    orthonormalise(Y, n, l);
    double *t = Q; Q = Y; Y = t;
    symm_lower(A, n, Q, l, Y, threads);   /* Y = A Q */

    /* As scikit-learn's randomized SVD, the leading singular vectors of
     * Q'A, that is the leading eigenvectors U of C = Y'Y = Q' A^2 Q, which
     * comes from the product already made: as good as one more power
     * iteration for n l^2 work. Their eigenvalues are the Rayleigh quotients
     * u' (Q'AQ) u, which keep the sign of a negative eigenvalue. */
    double *C = (double *) R_alloc((size_t) l * l, sizeof(double));
    double *B = (double *) R_alloc((size_t) l * l, sizeof(double));
    matrix_product(l, l, n, Y, n, 1, Y, n, 0, 0.0, C, l, threads);
    matrix_product(l, l, n, Q, n, 1, Y, n, 0, 0.0, B, l, threads);
    double *U = (double *) R_alloc((size_t) l * k, sizeof(double));
    double *BU = (double *) R_alloc((size_t) l * k, sizeof(double));
    top_eigen_exact(C, l, k, values, U);
    matrix_product(l, k, l, B, l, 0, U, l, 0, 0.0, BU, l, threads);
    int *order = (int *) R_alloc((size_t) k, sizeof(int));
    for (int j = 0; j < k; j++) {
        double q = 0.0;
        for (int i = 0; i < l; i++) q += U[i + (size_t) j * l] * BU[i + (size_t) j * l];
        values[j] = q;
        order[j] = j;
    }
    /* decreasing order of the Rayleigh quotients (insertion sort: k is small) */
    for (int a = 1; a < k; a++)
        for (int b = a; b > 0 && values[order[b]] > values[order[b - 1]]; b--) {
            int t2 = order[b]; order[b] = order[b - 1]; order[b - 1] = t2;
        }
    double *Us = (double *) R_alloc((size_t) l * k, sizeof(double));
    double *vs = (double *) R_alloc((size_t) k, sizeof(double));
    for (int j = 0; j < k; j++) {
        memcpy(Us + (size_t) j * l, U + (size_t) order[j] * l, (size_t) l * sizeof(double));
        vs[j] = values[order[j]];
    }
    memcpy(values, vs, (size_t) k * sizeof(double));
    matrix_product(n, k, l, Q, n, 0, Us, l, 0, 0.0, vectors, n, threads);
}
