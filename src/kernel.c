/* Step 1: the kernel matrix.
 *
 * Points are transposed to one contiguous column each (d x n), so a kernel
 * value reads two contiguous vectors. Distance kernels use the norms and the
 * dot product, ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x'y, clamped at 0, of the
 * points shifted by the training column means. Kernel values that are not
 * finite are an error. The fit fills only the lower triangle of its n x n
 * buffer. */
#include "fastkpca.h"
#include <Rmath.h>
#include <float.h>
#include <math.h>
#ifdef _OPENMP
# include <omp.h>
#endif

/* Work (in rough units of one multiply-add) done between two interrupt
 * checks: a few tens of milliseconds on one core, whatever the kernel and d. */
#define KERNEL_BLOCK_WORK 3.0e7
/* Columns per thread in a block, at least, so that threads share a block. */
#define KERNEL_BLOCK_MIN_COLUMNS 8

/* Largest 'order' of besseldot: beyond about 52, J_order(t) underflows for
 * small t and R's bessel_j_ex warns once per kernel value. Matches R/kernels.R. */
#define BESSEL_MAX_ORDER 50.0

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
    for (int k = 0; k < KPAR_COUNT; k++)
        if (!R_FINITE(p[k])) error("'kpar' values must be finite");
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
        if (!R_FINITE(spec->order) || spec->order < 0 || spec->order > BESSEL_MAX_ORDER)
            error("'order' must be between 0 and %g", BESSEL_MAX_ORDER);
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
    if (!(d2 <= DBL_MAX)) {
        /* the norms overflowed (Inf - Inf is NaN): sum the differences instead,
         * which gives Inf only when the distance itself overflows */
        d2 = 0.0;
        for (int k = 0; k < d; k++) d2 += (a[k] - b[k]) * (a[k] - b[k]);
    }
    return d2 > 0.0 ? d2 : 0.0;
}

/* R's bessel_j_ex gives 0 with a warning ("value out of range") for
 * t > 1e5, once per kernel value. Beyond that, J_nu(t) comes from Hankel's
 * asymptotic expansion (Abramowitz and Stegun 9.2.5-9.2.10): with
 * mu = 4 nu^2 and w = t - (nu / 2 + 1 / 4) pi,
 *   J_nu(t) = sqrt(2 / (pi t)) (P cos w - Q sin w),
 *   P = sum_k (-1)^k a_2k / t^2k, Q = sum_k (-1)^k a_2k+1 / t^(2k+1),
 *   a_k = a_(k-1) (mu - (2k - 1)^2) / (8 k), a_0 = 1.
 * For nu <= 50 and t > 1e5 the terms fall by a factor of at least 80 each,
 * so ten terms leave a relative error far below rounding. */
#define BESSEL_LARGE_T 1e5

static double bessel_j_large(double t, double nu)
{
    double mu = 4.0 * nu * nu, a = 1.0, tk = 1.0, P = 0.0, Q = 0.0;
    for (int k = 0; k < 10; k++) {
        if (k > 0) a *= (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k);
        double term = a / tk;
        int sign = (k / 2) % 2 ? -1 : 1;     /* k = 0, 1: +; 2, 3: -; ... */
        if (k % 2 == 0) P += sign * term; else Q += sign * term;
        tk *= t;
    }
    double w = t - (nu / 2.0 + 0.25) * M_PI;
    return sqrt(2.0 / (M_PI * t)) * (P * cos(w) - Q * sin(w));
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
        double j = t > BESSEL_LARGE_T ? bessel_j_large(t, k->order)
                                      : bessel_j_ex(t, k->order, work);
        double v = j * R_pow(t, -k->order);
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

/* Distance kernels depend on x - y only. Their points are shifted by the
 * column means of the training data before the norms are taken: the
 * identity ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x'y then does not lose all its
 * digits on data far from the origin (such as coordinates around 1e6). */
static int is_distance_kernel(const kernel_spec *k)
{
    return k->code == KERNEL_RBF || k->code == KERNEL_LAPLACE ||
        k->code == KERNEL_BESSEL;
}

/* Column means of x (n x d), or NULL when the kernel needs no shift. */
static double *point_shift(const kernel_spec *k, const double *x, int n, int d)
{
    if (!is_distance_kernel(k) || n < 1) return NULL;
    double *shift = (double *) R_alloc((size_t) d + 1, sizeof(double));
    for (int j = 0; j < d; j++) {
        const double *col = x + (size_t) j * n;
        double s = 0.0;
        for (int i = 0; i < n; i++) s += col[i];
        shift[j] = s / n;
        if (!R_FINITE(shift[j])) shift[j] = 0.0; /* huge data: no shift */
    }
    return shift;
}

/* x (n x d, column-major) -> xt (d x n): each point contiguous, minus shift
 * (if not NULL); norms[i] = ||xt_i||^2 */
static double *transpose_points(const double *x, int n, int d, const double *shift,
                                double **norms)
{
    double *xt = (double *) R_alloc((size_t) n * d + 1, sizeof(double));
    double *nrm = (double *) R_alloc((size_t) n + 1, sizeof(double));
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < d; j++) {
            double v = x[i + (size_t) j * n];
            if (shift) v -= shift[j];
            xt[j + (size_t) i * d] = v;
            s += v * v;
        }
        nrm[i] = s;
    }
    *norms = nrm;
    return xt;
}

/* Rough cost of one kernel value, in the units of KERNEL_BLOCK_WORK. */
static double value_cost(const kernel_spec *k, int d)
{
    switch (k->code) {
    case KERNEL_ANOVA: return 16.0 * d + 16.0;  /* an exp per coordinate */
    case KERNEL_SPLINE: return 4.0 * d + 16.0;
    case KERNEL_BESSEL: return d + 64.0 * (floor(k->order) + 2.0);
    default: return d + 16.0;
    }
}

/* The error for kernel values that are Inf or NaN (what: "" for the fit,
 * or "between 'newdata' and the training data " for predict). */
static void nonfinite_error(const kernel_spec *k, const char *what)
{
    const char *hint;
    switch (k->code) {
    case KERNEL_POLY:
        hint = "'kpar' gives values too large (try a smaller degree or scale)";
        break;
    case KERNEL_ANOVA:
        hint = "'kpar' gives values too large (try a smaller degree)";
        break;
    default:
        hint = "the data give values too large (rescale the data)";
        break;
    }
    error("kernel values %sare not finite: %s", what, hint);
}

/* The kernel between the points at (rows of them) and bt (cols of them),
 * both transposed (one contiguous point each) with their squared norms,
 * into out (leading dimension rows): column j gets k(a_i, b_j) for i from
 * j (lower_only: the lower triangle with the diagonal) or 0 to rows - 1.
 * Columns are done in blocks of about KERNEL_BLOCK_WORK, in parallel within
 * a block, with an interrupt check between blocks. Errors if a value is not
 * finite: an overflowing kernel would reach LAPACK as Inf and come back as
 * NaN. what: see nonfinite_error(). */
static void fill_kernel_columns(const kernel_spec *spec, const double *at,
                                const double *anorms, int rows, const double *bt,
                                const double *bnorms, int cols, int d, int lower_only,
                                double *out, int threads, const char *what)
{
    threads = kernel_threads(spec, threads);
    double *work = bessel_work(spec, threads);
    size_t work_len = (size_t) floor(spec->code == KERNEL_BESSEL ? spec->order : 0) + 1;
    double cost = value_cost(spec, d);

    int j0 = 0;
    while (j0 < cols) {
        int j1 = j0;
        double block_work = 0.0;
        while (j1 < cols && (block_work < KERNEL_BLOCK_WORK ||
                             j1 - j0 < KERNEL_BLOCK_MIN_COLUMNS * threads)) {
            block_work += cost * ((double) (lower_only ? rows - j1 : rows) + 1.0);
            j1++;
        }
        int nonfinite = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1) \
    reduction(|:nonfinite)
#endif
        for (int j = j0; j < j1; j++) {
#ifdef _OPENMP
            double *w = work + work_len * (size_t) omp_get_thread_num();
#else
            double *w = work;
#endif
            double *col = out + (size_t) j * rows;
            const double *bj = bt + (size_t) j * d;
            int bad = 0;
            for (int i = lower_only ? j : 0; i < rows; i++) {
                double v = kernel_value(spec, at + (size_t) i * d, bj, d, anorms[i],
                                        bnorms[j], w);
                col[i] = v;
                bad |= !(fabs(v) <= DBL_MAX); /* Inf or NaN */
            }
            nonfinite |= bad;
        }
        /* outside the parallel region: R API calls are safe here */
        if (nonfinite) nonfinite_error(spec, what);
        R_CheckUserInterrupt();
        j0 = j1;
    }
}

/* Fill the lower triangle (with diagonal) of the n x n buffer K with
 * k(x_i, x_j); x is n x d, column-major. */
void kernel_fill_lower(const kernel_spec *spec, const double *x, int n, int d,
                       double *K, int threads)
{
    double *norms;
    const double *xt = transpose_points(x, n, d, point_shift(spec, x, n, d), &norms);
    fill_kernel_columns(spec, xt, norms, n, xt, norms, n, d, 1, K, threads, "");
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
    int nthreads = as_threads(threads);

    /* z is shifted by the training means too: distances do not change */
    double *shift = point_shift(&spec, REAL(x), m, d);
    double *znorms, *xnorms;
    const double *zt = transpose_points(REAL(z), nz, d, shift, &znorms);
    const double *xt = transpose_points(REAL(x), m, d, shift, &xnorms);

    SEXP ans = PROTECT(allocMatrix(REALSXP, nz, m));
    fill_kernel_columns(&spec, zt, znorms, nz, xt, xnorms, m, d, 0, REAL(ans), nthreads,
                        "between 'newdata' and the training data ");
    UNPROTECT(1);
    return ans;
}
