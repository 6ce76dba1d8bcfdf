/* Step 1: the kernel matrix.
 *
 * Points are transposed to one contiguous column each (d x n), so a kernel
 * value reads two contiguous vectors. Distance kernels use the norms and the
 * dot product, ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x'y, clamped at 0.
 * The fit fills only the lower triangle of its n x n buffer. */
#include "fastkpca.h"
#include <Rmath.h>
#include <math.h>
#ifdef _OPENMP
# include <omp.h>
#endif

/* Elements computed between two interrupt checks. */
#define KERNEL_BLOCK_ELEMENTS ((size_t) 1 << 21)

void kernel_spec_from_R(SEXP kernel, SEXP kpar, kernel_spec *spec)
{
    if (!isInteger(kernel) || XLENGTH(kernel) != 1 || INTEGER(kernel)[0] == NA_INTEGER)
        error("'kernel' must be a single kernel code");
    int code = INTEGER(kernel)[0];
    if (code < KERNEL_PRECOMPUTED || code >= KERNEL_COUNT)
        error("'kernel' code %d is not a known kernel", code);
    if (!isReal(kpar) || XLENGTH(kpar) != KPAR_COUNT)
        error("'kpar' must be a double vector of length %d", KPAR_COUNT);
    const double *p = REAL(kpar);
    spec->code = (kernel_code) code;
    spec->sigma = p[KPAR_SIGMA];
    spec->degree = p[KPAR_DEGREE];
    spec->scale = p[KPAR_SCALE];
    spec->offset = p[KPAR_OFFSET];
    spec->order = p[KPAR_ORDER];
    spec->bessel_lim = 1.0;
    /* R validates ranges; C re-checks what would crash or loop. */
    switch (spec->code) {
    case KERNEL_RBF: case KERNEL_LAPLACE: case KERNEL_ANOVA:
        if (!R_FINITE(spec->sigma) || spec->sigma <= 0) error("'sigma' must be positive");
        break;
    case KERNEL_BESSEL:
        if (!R_FINITE(spec->sigma) || spec->sigma <= 0) error("'sigma' must be positive");
        if (!R_FINITE(spec->order) || spec->order < 0 || spec->order > 1e4)
            error("'order' must be between 0 and 10000");
        spec->bessel_lim = 1.0 / (gammafn(spec->order + 1.0) * R_pow(2.0, spec->order));
        break;
    default:
        break;
    }
    switch (spec->code) {
    case KERNEL_POLY: case KERNEL_BESSEL: case KERNEL_ANOVA:
        if (!R_FINITE(spec->degree)) error("'degree' must be finite");
        break;
    default:
        break;
    }
    if ((spec->code == KERNEL_POLY || spec->code == KERNEL_TANH) &&
        (!R_FINITE(spec->scale) || !R_FINITE(spec->offset)))
        error("'scale' and 'offset' must be finite");
}

static inline double dot(const double *a, const double *b, int d)
{
    double s = 0.0;
    for (int k = 0; k < d; k++) s += a[k] * b[k];
    return s;
}

static inline double sq_distance(const double *a, const double *b, int d,
                                 double aa, double bb)
{
    double d2 = aa + bb - 2.0 * dot(a, b, d);
    return d2 > 0.0 ? d2 : 0.0;
}

/* k(a, b) for points a and b of length d with squared norms aa and bb.
 * work: floor(order) + 1 doubles for besseldot, unused otherwise. */
static double kernel_value(const kernel_spec *k, const double *a, const double *b,
                           int d, double aa, double bb, double *work)
{
    switch (k->code) {
    case KERNEL_VANILLA:
        return dot(a, b, d);
    case KERNEL_POLY:
        return R_pow(k->scale * dot(a, b, d) + k->offset, k->degree);
    case KERNEL_RBF:
        return exp(-k->sigma * sq_distance(a, b, d, aa, bb));
    case KERNEL_LAPLACE:
        return exp(-k->sigma * sqrt(sq_distance(a, b, d, aa, bb)));
    case KERNEL_TANH:
        return tanh(k->scale * dot(a, b, d) + k->offset);
    case KERNEL_BESSEL: {
        double t = k->sigma * sqrt(sq_distance(a, b, d, aa, bb));
        if (t < 1e-4) return 1.0; /* the limit at t = 0, as kernlab */
        double v = bessel_j_ex(t, k->order, work) * R_pow(t, -k->order);
        return R_pow(v / k->bessel_lim, k->degree);
    }
    case KERNEL_ANOVA: {
        double s = 0.0;
        for (int j = 0; j < d; j++) {
            double diff = a[j] - b[j];
            s += exp(-k->sigma * diff * diff);
        }
        return R_pow(s, k->degree);
    }
    case KERNEL_SPLINE: {
        double prod = 1.0;
        for (int j = 0; j < d; j++) {
            double mn = a[j] < b[j] ? a[j] : b[j], xy = a[j] * b[j];
            prod *= 1.0 + xy + xy * mn - (a[j] + b[j]) / 2.0 * mn * mn
                + mn * mn * mn / 3.0;
        }
        return prod;
    }
    default:
        return NA_REAL; /* unreachable: codes are checked in kernel_spec_from_R */
    }
}

/* bessel_j_ex may warn through R, so besseldot is computed on one thread. */
static int kernel_threads(const kernel_spec *k, int threads)
{
    return k->code == KERNEL_BESSEL ? 1 : threads;
}

static double *bessel_work(const kernel_spec *k, int threads)
{
    size_t per_thread = (size_t) floor(k->code == KERNEL_BESSEL ? k->order : 0) + 1;
    return (double *) R_alloc(per_thread * (size_t) threads, sizeof(double));
}

/* x (n x d, column-major) -> xt (d x n): each point contiguous; norms[i] = ||x_i||^2 */
static double *transpose_points(const double *x, int n, int d, double **norms)
{
    double *xt = (double *) R_alloc((size_t) n * d + 1, sizeof(double));
    double *nrm = (double *) R_alloc((size_t) n + 1, sizeof(double));
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < d; j++) {
            double v = x[i + (size_t) j * n];
            xt[j + (size_t) i * d] = v;
            s += v * v;
        }
        nrm[i] = s;
    }
    *norms = nrm;
    return xt;
}

/* Fill the lower triangle (with diagonal) of the n x n buffer K with k(x_i, x_j). */
void kernel_fill_lower(const kernel_spec *spec, const double *x, int n, int d,
                       double *K, int threads)
{
    double *norms;
    const double *xt = transpose_points(x, n, d, &norms);
    threads = kernel_threads(spec, threads);
    double *work = bessel_work(spec, threads);
    size_t work_len = (size_t) floor(spec->code == KERNEL_BESSEL ? spec->order : 0) + 1;

    int j0 = 0;
    while (j0 < n) {
        /* a block of columns holding about KERNEL_BLOCK_ELEMENTS elements */
        int j1 = j0;
        size_t elements = 0;
        while (j1 < n && elements < KERNEL_BLOCK_ELEMENTS) elements += (size_t) (n - j1++);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1)
#endif
        for (int j = j0; j < j1; j++) {
#ifdef _OPENMP
            double *w = work + work_len * (size_t) omp_get_thread_num();
#else
            double *w = work;
#endif
            double *col = K + (size_t) j * n;
            const double *xj = xt + (size_t) j * d;
            for (int i = j; i < n; i++)
                col[i] = kernel_value(spec, xt + (size_t) i * d, xj, d, norms[i],
                                      norms[j], w);
        }
        R_CheckUserInterrupt();
        j0 = j1;
    }
}

/* .Call: the cross-kernel k(z_i, x_j), an nz x m matrix.
 * z: nz x d double matrix; x: m x d double matrix; kernel: integer code (> 0);
 * kpar: double vector in kpar_slots order; threads: integer >= 1. */
SEXP kernel_cross(SEXP z, SEXP x, SEXP kernel, SEXP kpar, SEXP threads)
{
    kernel_spec spec;
    kernel_spec_from_R(kernel, kpar, &spec);
    if (spec.code == KERNEL_PRECOMPUTED)
        error("a precomputed kernel has no kernel function");
    if (!isReal(z) || !isMatrix(z)) error("'z' must be a double matrix");
    if (!isReal(x) || !isMatrix(x)) error("'x' must be a double matrix");
    int nz = nrows(z), m = nrows(x), d = ncols(x);
    if (ncols(z) != d) error("'z' must have %d columns, not %d", d, ncols(z));
    int nthreads = kernel_threads(&spec, as_threads(threads));

    double *znorms, *xnorms;
    const double *zt = transpose_points(REAL(z), nz, d, &znorms);
    const double *xt = transpose_points(REAL(x), m, d, &xnorms);
    double *work = bessel_work(&spec, nthreads);
    size_t work_len = (size_t) floor(spec.code == KERNEL_BESSEL ? spec.order : 0) + 1;

    SEXP ans = PROTECT(allocMatrix(REALSXP, nz, m));
    double *out = REAL(ans);
    int j0 = 0;
    while (j0 < m) {
        int j1 = j0;
        size_t elements = 0;
        while (j1 < m && elements < KERNEL_BLOCK_ELEMENTS) {
            elements += (size_t) nz + 1;
            j1++;
        }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if (nthreads > 1)
#endif
        for (int j = j0; j < j1; j++) {
#ifdef _OPENMP
            double *w = work + work_len * (size_t) omp_get_thread_num();
#else
            double *w = work;
#endif
            const double *xj = xt + (size_t) j * d;
            double *col = out + (size_t) j * nz;
            for (int i = 0; i < nz; i++)
                col[i] = kernel_value(&spec, zt + (size_t) i * d, xj, d, znorms[i],
                                      xnorms[j], w);
        }
        R_CheckUserInterrupt();
        j0 = j1;
    }
    UNPROTECT(1);
    return ans;
}
