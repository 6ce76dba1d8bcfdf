/* Step 3, iterative: the top eigenpairs by thick-restart Lanczos.
 *
 * The basis V (n x (ncv + 1)) is kept fully orthogonal (classical
 * Gram-Schmidt, applied twice), so the projected matrix H = V'AV is taken
 * from the orthogonalisation coefficients and is exact to rounding. After
 * ncv steps the Ritz pairs of H are formed; when the k wanted ones have
 * residuals below tol * |largest Ritz value|, the Ritz vectors are returned.
 * Otherwise the basis restarts from the leading Ritz vectors plus the
 * residual direction (a thick restart), which keeps the Krylov relation
 * A V = V H + r e' intact.
 *
 * Products with A read the lower triangle of the one n x n buffer, through
 * symmetric_vector_product() (blas.c): with R's reference BLAS the tiles'
 * symv_lower() (vectorized, on the threads, every entry summed in one
 * order whatever their number; at n = 20000 the reference dsymv was half
 * of the solver's time), with an optimized BLAS its dsymv, as before; the
 * basis's Gram-Schmidt steps and the Ritz vectors by blas.c's other
 * products, under the same rule. The small projected problems go through
 * LAPACK dsyevr. */
#include "fastkpca.h"
#include <float.h>
#include <math.h>
#include <string.h>

static const int ONE = 1;

/* A deterministic pseudo-random vector in [-0.5, 0.5): the same input
 * always gives the same start vector and so the same output. */
static void fill_start_vector(double *v, int n, unsigned long long seed)
{
    unsigned long long s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (int i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = (double) (s >> 11) / 9007199254740992.0 - 0.5;
    }
}

static double norm2(const double *v, int n)
{
    return F77_CALL(dnrm2)(&n, v, &ONE);
}

/* w -= V[:, 0..j] (V' w), twice; h (length j + 1) receives the total
 * coefficients. The products by blas.c (the tiles with R's reference BLAS,
 * else dgemv). */
static void orthogonalise(const double *V, int n, int j, double *w, double *h,
                          double *h2)
{
    int cols = j + 1;
    matrix_transpose_vector(n, cols, V, n, w, h);
    matrix_vector_add(n, cols, V, n, h, -1.0, w);
    matrix_transpose_vector(n, cols, V, n, w, h2);
    matrix_vector_add(n, cols, V, n, h2, -1.0, w);
    for (int i = 0; i < cols; i++) h[i] += h2[i];
}

/* All eigenpairs of the m x m symmetric H (leading dimension ld; copied, so
 * H is kept), decreasing: Y is m x m. */
static void small_eigen(const double *H, int m, int ld, double *theta, double *Y)
{
    double *Hc = (double *) R_alloc((size_t) m * m, sizeof(double));
    for (int j = 0; j < m; j++)
        memcpy(Hc + (size_t) j * m, H + (size_t) j * ld, (size_t) m * sizeof(double));
    top_eigen_exact(Hc, m, m, theta, Y);
}

/* out (n x cols) = V[:, 0..m-1] Y[:, 0..cols-1] (blas.c's product) */
static void ritz_vectors(const double *V, int n, int m, const double *Y, int cols,
                         double *out, int threads)
{
    matrix_product(n, cols, m, V, n, 0, Y, m, 0, 0.0, out, n, threads);
}

/* After an invariant subspace: next (column j + 1 of V) from a fresh
 * random direction orthogonal to V[:, 0..j]; left as it is if none of
 * three tries gives one (j + 1 < n). */
static void fresh_direction(const double *V, int n, int j, double *next, double *h,
                            double *h2, unsigned long long *seed)
{
    for (int tries = 0; tries < 3; tries++) {
        fill_start_vector(next, n, (*seed)++);
        orthogonalise(V, n, j, next, h2, h);
        double t = norm2(next, n);
        if (t > 1e-8) {
            for (int i = 0; i < n; i++) next[i] /= t;
            return;
        }
    }
}

/* The state of one Lanczos run: the basis V (n x (ncv + 1)), the projected
 * matrix H (ncv x ncv), scratch, and the running norms. */
typedef struct {
    const double *A;
    int n, ncv, threads;
    double *symv_work; /* symmetric_vector_product()'s scratch */
    double *V, *H, *h, *h2, *w;
    double anorm, beta;
    unsigned long long seed;
} lanczos_state;

/* Extend the basis from column start to m columns (fewer if the whole
 * space is spanned first); returns the basis size reached. */
static int extend_basis(lanczos_state *s, int start, int m)
{
    int n = s->n;
    for (int j = start; j < m; j++) {
        double *vj = s->V + (size_t) j * n;
        symmetric_vector_product(n, s->A, n, vj, s->w, s->symv_work, s->threads);
        double wnorm = norm2(s->w, n);
        if (wnorm > s->anorm) s->anorm = wnorm;
        orthogonalise(s->V, n, j, s->w, s->h, s->h2);
        for (int i = 0; i <= j; i++)
            s->H[i + (size_t) j * s->ncv] = s->H[j + (size_t) i * s->ncv] = s->h[i];
        s->beta = norm2(s->w, n);
        double *next = s->V + (size_t) (j + 1) * n;
        if (s->beta > 1e-12 * s->anorm) {
            for (int i = 0; i < n; i++) next[i] = s->w[i] / s->beta;
        } else {
            /* an invariant subspace: continue from a fresh direction */
            s->beta = 0.0;
            if (j + 1 < n) fresh_direction(s->V, n, j, next, s->h, s->h2, &s->seed);
        }
        R_CheckUserInterrupt();
        if (j + 1 == n) return j + 1; /* the whole space is spanned */
    }
    return m;
}

/* The largest residual of the k leading Ritz pairs relative to the largest
 * |Ritz value|: the residual of pair i is beta |Y[m-1, i]|. */
static double largest_residual(const double *theta, const double *Y, int m, int k,
                               double beta)
{
    double scale = fabs(theta[0]) > fabs(theta[m - 1]) ? fabs(theta[0]) : fabs(theta[m - 1]);
    if (scale == 0.0) scale = 1.0;
    double worst = 0.0;
    for (int i = 0; i < k; i++) {
        double r = beta * fabs(Y[(m - 1) + (size_t) i * m]) / scale;
        if (r > worst) worst = r;
    }
    return worst;
}

/* The k largest eigenpairs of the symmetric A (lower triangle, n x n, read
 * only), decreasing. ncv: basis size (k < ncv <= n, or ncv = n); tol:
 * residual tolerance relative to the largest |Ritz value|; maxit: restarts;
 * threads: for the products with A.
 * Writes values (k), vectors (n x k), the restarts used and the largest
 * relative residual; returns 1 when converged, 0 otherwise. */
int top_eigen_lanczos(const double *A, int n, int k, int ncv, double tol, int maxit,
                      double *values, double *vectors, int *restarts,
                      double *residual, int threads)
{
    if (ncv > n) ncv = n;
    if (ncv <= k && ncv < n) ncv = k + 1 < n ? k + 1 : n;
    int m = ncv;
    lanczos_state s = {A, n, ncv, threads,
                       (double *) R_alloc(symmetric_vector_work(n) + 1, sizeof(double)),
                       (double *) R_alloc((size_t) n * (m + 1), sizeof(double)),
                       (double *) R_alloc((size_t) ncv * ncv, sizeof(double)),
                       (double *) R_alloc((size_t) m + 1, sizeof(double)),
                       (double *) R_alloc((size_t) m + 1, sizeof(double)),
                       (double *) R_alloc((size_t) n, sizeof(double)), 0.0, 0.0, 2};
    double *theta = (double *) R_alloc((size_t) m, sizeof(double));
    double *Y = (double *) R_alloc((size_t) m * m, sizeof(double));
    int keep_max = m - 1 > k ? m - 1 : k;
    double *X = (double *) R_alloc((size_t) n * keep_max, sizeof(double));
    memset(s.H, 0, (size_t) ncv * ncv * sizeof(double));

    fill_start_vector(s.V, n, 1);
    double nrm = norm2(s.V, n);
    for (int i = 0; i < n; i++) s.V[i] /= nrm;

    int start = 0, converged = 0, cycle = 0;
    double worst = R_PosInf;
    for (cycle = 0; cycle <= maxit; cycle++) {
        m = extend_basis(&s, start, m);
        /* Rayleigh-Ritz */
        const void *vmax = vmaxget(); /* release the scratch of each cycle */
        small_eigen(s.H, m, ncv, theta, Y);
        vmaxset(vmax);
        worst = largest_residual(theta, Y, m, k, s.beta);
        if (worst <= tol || m == n) { converged = 1; break; }
        if (cycle == maxit) break;

        /* thick restart: the leading Ritz vectors, then the residual direction */
        int keep = k + (m - k) / 2;
        if (keep > m - 1) keep = m - 1;
        ritz_vectors(s.V, n, m, Y, keep, X, s.threads);
        memcpy(s.V + (size_t) keep * n, s.V + (size_t) m * n, (size_t) n * sizeof(double));
        memcpy(s.V, X, (size_t) n * keep * sizeof(double));
        memset(s.H, 0, (size_t) ncv * ncv * sizeof(double));
        for (int i = 0; i < keep; i++) s.H[i + (size_t) i * ncv] = theta[i];
        start = keep;
    }

    int found = k < m ? k : m;
    ritz_vectors(s.V, n, m, Y, found, vectors, s.threads);
    for (int i = 0; i < found; i++) values[i] = theta[i];
    *restarts = cycle;
    *residual = worst;
    return converged;
}
