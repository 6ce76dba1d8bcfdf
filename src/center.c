/* Step 2: double centering of the kernel matrix, in place; and the
 * centering of a block of columns (H V), with which products with K give
 * products with Kc without a second n x n matrix.
 *
 * Kc = K - 1 c' - c 1' + g with c = colMeans(K) and g = mean(K). K is
 * symmetric and held in its lower triangle, so colMeans = rowMeans. Each sum
 * is taken in an order fixed by n alone, so any thread count gives the same
 * bits. */
#include "fastkpca.h"
#include "simd.h"
#include <float.h>
#include <math.h>

/* Rows handled together when summing along rows: 8 doubles = one cache line. */
#define ROW_BLOCK 8
/* Columns (or row blocks) handled between two interrupt checks. */
#define CENTER_BLOCK_ELEMENTS ((size_t) 1 << 22)

static int next_block_end(int j0, int n, size_t per_column)
{
    size_t cols = CENTER_BLOCK_ELEMENTS / (per_column > 0 ? per_column : 1);
    if (cols < 1) cols = 1;
    return (size_t) j0 + cols < (size_t) n ? j0 + (int) cols : n;
}

/* sums[i] = sum_j K[i, j] for the symmetric K held in its lower triangle;
 * *kmax = max |K[i, j]| */
static void symmetric_row_sums(const double *K, int n, double *sums, double *kmax,
                               int threads)
{
    (void) threads; /* the OpenMP clause's only use */
    double largest = 0.0;
    /* the part on and below the diagonal: column i, rows i..n-1 (contiguous) */
    for (int c0 = 0, c1; c0 < n; c0 = c1) {
        c1 = next_block_end(c0, n, (size_t) n / 2 + 1);
        double block_max = 0.0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (threads > 1) \
    reduction(max:block_max)
#endif
        for (int i = c0; i < c1; i++) {
            const double *col = K + (size_t) i * n;
            double s = 0.0, col_max = 0.0;
            for (int r = i; r < n; r++) {
                s += col[r];
                col_max = fabs(col[r]) > col_max ? fabs(col[r]) : col_max;
            }
            sums[i] = s;
            block_max = col_max > block_max ? col_max : block_max;
        }
        if (block_max > largest) largest = block_max;
        R_CheckUserInterrupt();
    }
    *kmax = largest;
    /* the part left of the diagonal: row i, columns 0..i-1, ROW_BLOCK rows at a time */
    int nblocks = (n + ROW_BLOCK - 1) / ROW_BLOCK;
    for (int b0 = 0, b1; b0 < nblocks; b0 = b1) {
        b1 = next_block_end(b0, nblocks, (size_t) ROW_BLOCK * (size_t) n / 2 + 1);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1)
#endif
        for (int b = b0; b < b1; b++) {
            int i0 = b * ROW_BLOCK, i1 = i0 + ROW_BLOCK < n ? i0 + ROW_BLOCK : n;
            double acc[ROW_BLOCK] = {0};
            for (int j = 0; j < i1 - 1; j++) {
                const double *col = K + (size_t) j * n;
                for (int i = (i0 > j + 1 ? i0 : j + 1); i < i1; i++)
                    acc[i - i0] += col[i];
            }
            for (int i = i0; i < i1; i++) sums[i] += acc[i - i0];
        }
        R_CheckUserInterrupt();
    }
}

static void not_finite_error(void)
{
    error_data("the centered kernel matrix is not finite: kernel values are too large "
               "(rescale the data, the kernel parameters or the kernel matrix)");
}

/* Below this, entries of Kc are so close to the subnormal range that they
 * have lost digits (products of data around 1e-160 are subnormal): the
 * eigenvectors would be noise. */
#define CENTERED_MIN (DBL_MIN / DBL_EPSILON)
/* Relative to the largest kernel value, a centered matrix whose entries are
 * all below this is rounding noise. */
#define CENTERED_NOISE (100 * DBL_EPSILON)

/* Center the lower triangle of K in place.
 * colmeans (length n) and grand_mean receive the centering terms of K, which
 * predict() needs; trace receives trace(Kc), centered_max max |Kc|. Errors if K or Kc has a value
 * that is not finite (any Inf or NaN in K makes its row sum non-finite; an
 * overflow in the subtraction is caught in the same pass), or if Kc is so
 * small that its entries have lost their digits (to underflow, or to the
 * rounding of the centering itself). */
void center_in_place(double *K, int n, double *colmeans, double *grand_mean,
                     double *trace, double *centered_max, int threads)
{
    double kmax;
    threads = threads_unless_busy(threads);  /* the cores others leave free */
    symmetric_row_sums(K, n, colmeans, &kmax, threads);
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        colmeans[i] /= n;
        total += colmeans[i];
    }
    double g = total / n;
    if (simd_not_finite(g)) not_finite_error();
    for (int i = 0; i < n; i++)
        if (simd_not_finite(colmeans[i])) not_finite_error();
    double largest = 0.0;
    for (int c0 = 0, c1; c0 < n; c0 = c1) {
        c1 = next_block_end(c0, n, (size_t) n / 2 + 1);
        int nonfinite = 0;
        double block_max = 0.0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (threads > 1) \
    reduction(|:nonfinite) reduction(max:block_max)
#endif
        for (int j = c0; j < c1; j++) {
            double *col = K + (size_t) j * n;
            double cj = colmeans[j] - g, col_max = 0.0;
            int bad = 0;
            for (int i = j; i < n; i++) {
                double v = col[i] - (colmeans[i] + cj);
                col[i] = v;
                bad |= simd_not_finite(v);
                col_max = fabs(v) > col_max ? fabs(v) : col_max;
            }
            nonfinite |= bad;
            block_max = col_max > block_max ? col_max : block_max;
        }
        /* outside the parallel region: R API calls are safe here */
        if (nonfinite) not_finite_error();
        if (block_max > largest) largest = block_max;
        R_CheckUserInterrupt();
    }
    if (largest > 0.0 && largest < CENTERED_MIN)
        error_data("the centered kernel matrix is too small to be decomposed accurately "
                   "(largest entry %.3g): rescale the data or the kernel matrix", largest);
    /* centering subtracts numbers as large as kmax: what is left below a few
     * roundings of kmax is rounding noise, and its eigenvectors would be too */
    if (largest > 0.0 && largest < CENTERED_NOISE * kmax)
        error_data("the centered kernel matrix is at rounding level (largest entry %.3g "
                   "for kernel values up to %.3g): the data are constant in feature space "
                   "to working precision; center or rescale the data, or change the kernel "
                   "parameters", largest, kmax);
    double tr = 0.0;
    for (int i = 0; i < n; i++) tr += K[i + (size_t) i * n];
    *grand_mean = g;
    *trace = tr;
    *centered_max = largest;  /* the exact solvers' scaling needs it (eigen.c) */
}

/* dst (n x b) = (src - 1 colMeans(src)') / scale, column by column (dst
 * may be src): each mean summed in long double, as R's colMeans() sums,
 * but in four interleaved sums added at the end (one chain of dependent
 * long double additions, R's, was most of the centering's time), and
 * divided by n; then each entry minus its column's mean, divided by scale
 * unless it is 1. Whole columns per thread (nt of them, the caller's
 * count): the bits of one thread. The matrix-free solver's centering
 * (krylov.c) and the exact fit's certificate (fit.c). */
void center_in_columns(int n, int b, const double *src, double *dst, double scale, int nt)
{
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#else
    (void) nt;
#endif
    for (int j = 0; j < b; j++) {
        const double *x = src + (size_t) j * n;
        double *y = dst + (size_t) j * n;
        long double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            s0 += x[i];
            s1 += x[i + 1];
            s2 += x[i + 2];
            s3 += x[i + 3];
        }
        for (; i < n; i++) s0 += x[i];
        long double sum = ((s0 + s1) + (s2 + s3)) / n;
        double mean = (double) sum;
        if (scale == 1.0)
            for (i = 0; i < n; i++) y[i] = x[i] - mean;
        else
            for (i = 0; i < n; i++) y[i] = (x[i] - mean) / scale;
    }
}
