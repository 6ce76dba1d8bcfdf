/* The base kernels' values, below every evaluator: a kernel's function of
 * an inner product or a squared distance (kernel_of_product()), one value
 * from two points (kernel_value(): the generic interpreter's, and the
 * closed forms of anovadot and splinedot).
 * It calls nothing of the package above it: kernel_generic.c's
 * interpreter, kernel_fast.c's blocks, sparse_columns.c and sparse_tiles.c
 * all come here, and to a value's scratch (kernel_value_work()) and
 * rough cost (kernel_value_cost()). */
#include "fastkpca.h"
#include "simd.h"
#include <Rmath.h>
#include <float.h>
#include <math.h>

int kernel_is_distance(kernel_code code)
{
    return code == KERNEL_RBF || code == KERNEL_LAPLACE || code == KERNEL_BESSEL;
}


double kernel_dot(const double *a, const double *b, int d)
{
    double s = 0.0;
    for (int k = 0; k < d; k++) s += a[k] * b[k];
    return s;
}

/* ||a - b||^2 summed from the differences, as the definition. */
double kernel_diff_distance(const double *a, const double *b, int d)
{
    double s = 0.0;
    for (int k = 0; k < d; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
    return s;
}

/* ||a - b||^2 from the norms aa, bb and the inner product
 * (sq_distance_from_norms()); where that is not finite (the norms
 * overflowed: Inf - Inf is NaN), summed from the differences, which give
 * Inf only where the distance itself overflows. The cancellation is the
 * caller's (kernel_fast_refine()). */
double kernel_sq_distance(const double *a, const double *b, int d, double aa, double bb)
{
    double d2 = sq_distance_from_norms(aa, bb, kernel_dot(a, b, d));
    if (simd_not_finite(d2)) d2 = kernel_diff_distance(a, b, d);
    return d2;
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

/* The base kernels of an inner product or a squared distance, from it:
 * s is x'y for vanilladot, polydot and tanhdot, ||x - y||^2 for rbfdot,
 * laplacedot and besseldot. work: floor(order) + 1 doubles for besseldot,
 * unused otherwise. */
double kernel_of_product(const kernel_spec *k, double s, double *work)
{
    switch (k->code) {
    case KERNEL_VANILLA:
        return s;
    case KERNEL_POLY:
        return R_pow(k->scale * s + k->offset, k->degree);
    case KERNEL_RBF:
        return exp(-k->sigma * s);
    case KERNEL_LAPLACE:
        return exp(-k->sigma * sqrt(s));
    case KERNEL_TANH:
        /* an overflowed inner product stays not finite: reported */
        return simd_not_finite(s) ? NAN : tanh(k->scale * s + k->offset);
    case KERNEL_BESSEL: {
        double t = k->sigma * sqrt(s);
        if (t < 1e-4) return 1.0; /* the limit at t = 0, as kernlab */
        if (isinf(t)) return 0.0; /* the limit as t grows: J_nu(t) t^-nu -> 0 */
        double j = t > BESSEL_LARGE_T ? bessel_j_large(t, k->order)
                                      : bessel_j_ex(t, k->order, work);
        double v = j * R_pow(t, -k->order);
        return R_pow(v / k->bessel_lim, k->degree);
    }
    default:
        return NA_REAL; /* unreachable: the other kernels are not of a product */
    }
}

/* k(a, b) for points a and b of length d with squared norms aa and bb.
 * work: floor(order) + 1 doubles for besseldot, unused otherwise. */
double kernel_value(const kernel_spec *k, const double *a, const double *b,
                    int d, double aa, double bb, double *work)
{
    switch (k->code) {
    case KERNEL_VANILLA: case KERNEL_POLY: case KERNEL_TANH:
        return kernel_of_product(k, kernel_dot(a, b, d), work);
    case KERNEL_RBF: case KERNEL_LAPLACE: case KERNEL_BESSEL:
        /* from the differences: the square root of laplacedot and
         * besseldot would magnify the norms' rounding in small distances
         * (as sparse_columns.c and kernel_fast.c do for them) */
        (void) aa; (void) bb;
        return kernel_of_product(k, kernel_diff_distance(a, b, d), work);
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

/* The doubles of scratch kernel_of_product() and kernel_value() need for
 * the base kernel k: besseldot's floor(order) + 1, else one (unused). */
size_t kernel_value_work(const kernel_spec *k)
{
    return (size_t) floor(k->code == KERNEL_BESSEL ? k->order : 0.0) + 1;
}

/* Rough cost of one value of a base kernel on numbers (points of d
 * coordinates), in units of one multiply-add: what the evaluators' blocks
 * of columns are cut by. (A string kernel's is string_value_cost().) */
double kernel_value_cost(const kernel_spec *k, int d)
{
    switch (k->code) {
    case KERNEL_ANOVA: return 16.0 * d + 16.0;  /* an exp per coordinate */
    case KERNEL_SPLINE: return 4.0 * d + 16.0;
    case KERNEL_BESSEL: return d + 64.0 * (floor(k->order) + 2.0);
    default: return d + 16.0;
    }
}
