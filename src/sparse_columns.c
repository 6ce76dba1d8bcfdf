/* The kernel values of sparse rows, and the evaluator of a single kernel
 * on sparse rows that does not take sparse_tiles.c's tiles: its block loop
 * (sparse_columns_block(), kernel_block()'s for EVAL_SPARSE_COLUMNS) and
 * its tiles (sparse_columns_prepare(), sparse_columns_tile(), the
 * matrix-free passes' kernel_tile()). The rows are sparse.c's (CSR, read
 * once per call, with their squared norms).
 *
 * The kernel values of two sparse rows (sparse_segment(), one column: the
 * value function kernel_generic.c's interpreter calls for sparse points,
 * and this evaluator's for the kernels that are not of a gathered
 * product):
 *   - inner products (vanilladot, polydot, tanhdot) and rbfdot's squared
 *     distance ||a||^2 + ||b||^2 - 2 a'b: the column's row b scattered into
 *     a dense vector of d doubles (zero elsewhere), each row a gathered
 *     against it, so a value costs the stored values of a;
 *   - laplacedot and besseldot: the squared distance summed over the union
 *     of the two rows' columns (a merge of their sorted columns), as the
 *     dense path sums differences for them: their square root would turn
 *     the expanded form's rounding in small distances into large errors;
 *   - anovadot and splinedot: a sum or a product over the coordinates, each
 *     zero in both rows contributing exp(0) = 1 (anovadot) or the factor 1
 *     (splinedot) in closed form, the rest over the union of the columns.
 * The kernels of a gathered product take 8 columns at a time
 * (sparse_columns()), with the same bits. A single kernel of a gathered
 * product of a whole set with itself (the exact fill, kernel_matrix(x),
 * the matrix-free tiles) is computed by sparse_tiles.c instead, whose
 * preparation is worth it there; the other calls (two sets, or a panel of
 * predict(), Nystrom or kcca()) come here (kernel_plan()). */
#include "fastkpca.h"
#include "simd.h"
#include <float.h>
#include <Rmath.h>
#include <math.h>
#include <string.h>

/* The stored values of row r. */
typedef struct {
    int len;
    const int *j;
    const double *x;
} sparse_row;

static inline sparse_row row_of(const sparse_csr *s, int r)
{
    sparse_row out;
    out.len = s->p[r + 1] - s->p[r];
    out.j = s->j + s->p[r];
    out.x = s->x + s->p[r];
    return out;
}

/* sum_t a.x[t] * w[a.j[t]]: row a gathered against the dense vector w (row
 * b scattered). One sum in increasing column order: its nonzero terms are
 * the products of the columns the rows share, in the order of those
 * columns, whichever row is gathered (the other terms are exact zeros),
 * so k(a, b) and k(b, a) have the same bits, as the matrix-free passes
 * need when a tile serves both of its blocks. */
static inline double gather_dot(sparse_row a, const double *w)
{
    double s = 0.0;
    for (int t = 0; t < a.len; t++) s += a.x[t] * w[a.j[t]];
    return s;
}

/* The union of the columns of rows a and b, in increasing order: at each
 * step the two values of one column (0 where a row has none). */
typedef struct {
    sparse_row a, b;
    int s, t;
} row_merge;

static inline int merge_next(row_merge *m, double *av, double *bv)
{
    if (m->s < m->a.len && (m->t >= m->b.len || m->a.j[m->s] < m->b.j[m->t])) {
        *av = m->a.x[m->s++];
        *bv = 0.0;
    } else if (m->t < m->b.len && (m->s >= m->a.len || m->b.j[m->t] < m->a.j[m->s])) {
        *av = 0.0;
        *bv = m->b.x[m->t++];
    } else if (m->s < m->a.len) {
        *av = m->a.x[m->s++];
        *bv = m->b.x[m->t++];
    } else {
        return 0;
    }
    return 1;
}

static inline row_merge merge_start(sparse_row a, sparse_row b)
{
    row_merge m;
    m.a = a;
    m.b = b;
    m.s = m.t = 0;
    return m;
}

/* ||a - b||^2 summed over the union of the columns. */
static double merged_sq_distance(sparse_row a, sparse_row b)
{
    row_merge m = merge_start(a, b);
    double av, bv, sum = 0.0;
    while (merge_next(&m, &av, &bv)) sum += (av - bv) * (av - bv);
    return sum;
}

/* anovadot: (sum over all d coordinates of exp(-sigma (a_k - b_k)^2))^degree,
 * the coordinates zero in both rows adding 1 each. */
static double merged_anova(const kernel_spec *spec, sparse_row a, sparse_row b, int d)
{
    row_merge m = merge_start(a, b);
    double av, bv, sum = 0.0;
    int both_zero = d;
    while (merge_next(&m, &av, &bv)) {
        double diff = av - bv;
        sum += exp(-spec->sigma * diff * diff);
        both_zero--;
    }
    return R_pow(sum + (double) both_zero, spec->degree);
}

/* splinedot: the product over the coordinates of kernlab's factor, which is
 * 1 where both values are 0. */
static double merged_spline(sparse_row a, sparse_row b)
{
    row_merge m = merge_start(a, b);
    double av, bv, prod = 1.0;
    while (merge_next(&m, &av, &bv)) {
        double mn = av < bv ? av : bv, xy = av * bv;
        prod *= 1.0 + xy + xy * mn - (av + bv) / 2.0 * mn * mn + mn * mn * mn / 3.0;
    }
    return prod;
}

/* ||a - b||^2 from the squared norms and the gathered product a'b
 * (sq_distance_from_norms()), summed again over the union of the columns
 * where simd.h's rule says it may be wrong (sq_distance_lost(): norms that
 * overflowed, or a cancellation that may move rbfdot's value beyond
 * SQ_DISTANCE_TOL; its value exp(-sigma s) is formed only for the pairs
 * whose norms are large enough for that, rare on sparse data). */
double sparse_rbf_distance(double sigma, double an, double bn, double ab,
                           const sparse_csr *A, int ra, const sparse_csr *B, int rb)
{
    double s = sq_distance_from_norms(an, bn, ab);
    if (simd_not_finite(s) ||
        (sigma * (SQ_DISTANCE_ROUNDING * (an + bn)) > SQ_DISTANCE_TOL &&
         sq_distance_lost(s, an, bn, sigma * exp(-sigma * s))))
        s = merged_sq_distance(row_of(A, ra), row_of(B, rb));
    return s;
}

/* sparse_rbf_distance() with its common case inlined: norms too small for
 * the rule to flag the pair (the check before any exp) and a finite
 * distance; the call measured 12% of a sparse cross kernel otherwise. */
static inline double rbf_distance(double sigma, double an, double bn, double ab,
                                  const sparse_csr *A, int ra, const sparse_csr *B, int rb)
{
    double s = sq_distance_from_norms(an, bn, ab);
    if (!simd_not_finite(s) && !(sigma * (SQ_DISTANCE_ROUNDING * (an + bn)) > SQ_DISTANCE_TOL))
        return s;
    return sparse_rbf_distance(sigma, an, bn, ab, A, ra, B, rb);
}

/* The kernel's function of the len products or squared distances in v, in
 * place, as the dense points' values get it; work: the value function's
 * scratch. */
static void product_kernel(const kernel_spec *spec, double *v, int len, double *work)
{
    if (kernel_fast_supported(spec)) {
        kernel_fast_transform(spec, v, len);
        return;
    }
    for (int i = 0; i < len; i++) v[i] = kernel_of_product(spec, v[i], work);
}

/* dst[i - i0] = base kernel (a_i, b_j) for i in [i0, i1), a and b sparse
 * points of one width. work: the first SPARSE_COLUMNS x d doubles zero
 * (and left zero), then the value function's own scratch. */
void sparse_segment(const kernel_spec *spec, const kernel_points *a, const kernel_points *b,
                    int j, int i0, int i1, double *dst, double *work)
{
    const sparse_csr *A = a->sparse;
    int d = A->d, len = i1 - i0;
    sparse_row bj = row_of(b->sparse, b->first + j);
    switch (spec->code) {
    case KERNEL_ANOVA:
        for (int i = i0; i < i1; i++)
            dst[i - i0] = merged_anova(spec, row_of(A, a->first + i), bj, d);
        return;
    case KERNEL_SPLINE:
        for (int i = i0; i < i1; i++) dst[i - i0] = merged_spline(row_of(A, a->first + i), bj);
        return;
    case KERNEL_LAPLACE: case KERNEL_BESSEL:
        for (int i = i0; i < i1; i++)
            dst[i - i0] = merged_sq_distance(row_of(A, a->first + i), bj);
        break;
    default: {
        /* b_j scattered, each a_i gathered against it */
        double *w = work;
        for (int t = 0; t < bj.len; t++) w[bj.j[t]] = bj.x[t];
        int dist = spec->code == KERNEL_RBF;
        double bn = b->sparse_norms[j];
        for (int i = i0; i < i1; i++) {
            sparse_row ai = row_of(A, a->first + i);
            double s = gather_dot(ai, w);
            dst[i - i0] = dist ? rbf_distance(spec->sigma, a->sparse_norms[i], bn, s, A,
                                              a->first + i, b->sparse, b->first + j)
                               : s;
        }
        for (int t = 0; t < bj.len; t++) w[bj.j[t]] = 0.0;
        break;
    }
    }
    product_kernel(spec, dst, len, work + SPARSE_COLUMNS * (size_t) d);
}

/* Whether the kernel spec of sparse rows is one of a gathered product
 * (an inner product, or rbfdot's squared distance from one). */
static int gathered_kernel(const kernel_spec *spec)
{
    switch (spec->code) {
    case KERNEL_VANILLA: case KERNEL_POLY: case KERNEL_TANH: case KERNEL_RBF:
        return 1;
    default:
        return 0;
    }
}

/* sparse_columns()'s rows i0..i1-1 (from q on, lower: the lower
 * triangle) against the nq <= SPARSE_COLUMNS rows q.. of b scattered side
 * by side in W: each row of a gathered once for 8 inner products (rbfdot:
 * squared distances by sparse_rbf_distance()), into out's columns 0..nq-1
 * (leading dimension ldo; out's row 0 is row i0). */
static void gathered_rows(const kernel_spec *spec, const kernel_points *a,
                          const kernel_points *b, int q, int nq, int i0, int i1, int lower,
                          const double *W, double *out, size_t ldo)
{
    const sparse_csr *A = a->sparse, *B = b->sparse;
    int dist = spec->code == KERNEL_RBF;
    int from = lower && q > i0 ? q : i0;
    for (int i = from; i < i1; i++) {
        sparse_row ai = row_of(A, a->first + i);
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0,
            s7 = 0.0;
        for (int t = 0; t < ai.len; t++) {
            const double *w = W + SPARSE_COLUMNS * (size_t) ai.j[t];
            double v = ai.x[t];
            s0 += v * w[0];
            s1 += v * w[1];
            s2 += v * w[2];
            s3 += v * w[3];
            s4 += v * w[4];
            s5 += v * w[5];
            s6 += v * w[6];
            s7 += v * w[7];
        }
        double sums[SPARSE_COLUMNS] = {s0, s1, s2, s3, s4, s5, s6, s7};
        for (int c = 0; c < nq; c++) {
            if (lower && i < q + c) continue;
            double v = sums[c];
            if (dist)
                v = rbf_distance(spec->sigma, a->sparse_norms[i], b->sparse_norms[q + c], v, A,
                                 a->first + i, B, b->first + q + c);
            out[(size_t) c * ldo + (i - i0)] = v;
        }
    }
}

/* The base kernel spec between a's points i0 .. i1 - 1 and b's points c0 ..
 * c0 + nc - 1: column c - c0 of out (leading dimension ldo) gets rows i -
 * i0, from i = c on (lower: the lower triangle with the diagonal of a
 * square, i0 <= c0) or from i0. The kernels of a gathered product take
 * SPARSE_COLUMNS (8) columns at a time: their rows of b scattered side by
 * side (8 doubles, one cache line, per column of the data; zero
 * elsewhere), each row of a gathered once for the 8 values, which then
 * cost one read of its stored values and one line per stored value
 * instead of 8 (a pass over 2 x 10^4 rows of 50 values among 10^5
 * Zipf-distributed columns, one thread of a busy machine: 41 ns of CPU a
 * value one column at a time, 26 four at a time, 20 eight); each of the 8
 * sums is gather_dot()'s, term for term, so the values are those of
 * sparse_segment(). work: the first
 * SPARSE_COLUMNS x d doubles zero (and left zero), then the value
 * function's own scratch. */
static void sparse_columns(const kernel_spec *spec, const kernel_points *a,
                           const kernel_points *b, int c0, int nc, int i0, int i1, int lower,
                           double *out, size_t ldo, double *work)
{
    const sparse_csr *A = a->sparse, *B = b->sparse;
    int d = A->d;
    if (!gathered_kernel(spec)) {
        for (int c = c0; c < c0 + nc; c++) {
            int from = lower && c > i0 ? c : i0;
            if (from < i1)
                sparse_segment(spec, a, b, c, from, i1, out + (size_t) (c - c0) * ldo + (from - i0),
                               work);
        }
        return;
    }
    double *W = work;
    for (int q = c0; q < c0 + nc; q += SPARSE_COLUMNS) {
        int nq = c0 + nc - q < SPARSE_COLUMNS ? c0 + nc - q : SPARSE_COLUMNS;
        sparse_row rows[SPARSE_COLUMNS];
        for (int c = 0; c < nq; c++) {
            rows[c] = row_of(B, b->first + q + c);
            for (int t = 0; t < rows[c].len; t++)
                W[SPARSE_COLUMNS * (size_t) rows[c].j[t] + c] = rows[c].x[t];
        }
        gathered_rows(spec, a, b, q, nq, i0, i1, lower, W, out + (size_t) (q - c0) * ldo, ldo);
        for (int c = 0; c < nq; c++)
            for (int t = 0; t < rows[c].len; t++)
                W[SPARSE_COLUMNS * (size_t) rows[c].j[t] + c] = 0.0;
        for (int c = 0; c < nq; c++) {
            int start = lower && q + c > i0 ? q + c : i0;
            if (start < i1) {
                double *col = out + (size_t) (q + c - c0) * ldo + (start - i0);
                product_kernel(spec, col, i1 - start, work + SPARSE_COLUMNS * (size_t) d);
            }
        }
    }
}

/* The doubles of scratch per thread of sparse_columns() on the rows of a:
 * SPARSE_COLUMNS x d zero, then the value function's own. */
static size_t columns_work_length(const kernel_spec *spec, const kernel_points *a)
{
    return SPARSE_COLUMNS * (size_t) a->sparse->d + kernel_value_work(spec);
}

static double *columns_work(const kernel_spec *spec, const kernel_points *a, int threads)
{
    size_t len = columns_work_length(spec, a) * (size_t) threads;
    double *work = (double *) R_alloc(len, sizeof(double));
    memset(work, 0, len * sizeof(double));
    return work;
}

/* Columns j .. j + SPARSE_COLUMNS - 1 (at most up to j1 - 1) of out (rows
 * a->n) for sparse_columns_block(), with thread t's scratch. Returns 1 if
 * a value is not finite. No R API: called on the threads. */
static int columns_group(const kernel_spec *spec, const kernel_points *a,
                         const kernel_points *b, int j, int j1, int lower_only, double *out,
                         double *work)
{
    int rows = a->n, nj = j1 - j < SPARSE_COLUMNS ? j1 - j : SPARSE_COLUMNS, bad = 0;
    sparse_columns(spec, a, b, j, nj, 0, rows, lower_only, out + (size_t) j * rows,
                   (size_t) rows, work);
    for (int c = j; c < j + nj; c++)
        for (int i = lower_only ? c : 0; i < rows; i++)
            bad |= simd_not_finite(out[i + (size_t) c * rows]);
    return bad;
}

/* The base kernel spec between the sparse points of a (rows) and b
 * (columns), out as kernel_block() (kernel_plan.c) describes it, by
 * sparse_columns(): SPARSE_COLUMNS columns at a time on the threads, in
 * blocks of columns of about block_work multiply-adds (at least
 * min_columns per thread), an interrupt check between blocks. Returns 1
 * if a value is not finite (the caller reports it). */
int sparse_columns_block(const kernel_spec *spec, const kernel_points *a,
                         const kernel_points *b, int lower_only, double *out, int threads,
                         double block_work, int min_columns)
{
    int rows = a->n, cols = b->n;
    /* bessel_j_ex may warn through R, so besseldot is computed on one thread */
    if (spec->code == KERNEL_BESSEL) threads = 1;
    size_t work_len = columns_work_length(spec, a);
    double *work = columns_work(spec, a, threads);
    double cost = kernel_value_cost(spec, a->d);
    for (int j0 = 0, j1; j0 < cols; j0 = j1) {
        int nonfinite = 0;
        j1 = column_block_end(j0, cols, rows, lower_only, 0, cost, cost, block_work,
                              min_columns * threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1) \
    reduction(|:nonfinite)
#endif
        for (int j = j0; j < j1; j += SPARSE_COLUMNS) {
#ifdef _OPENMP
            int t = omp_get_thread_num();
#else
            int t = 0;
#endif
            nonfinite |= columns_group(spec, a, b, j, j1, lower_only, out,
                                       work + work_len * (size_t) t);
        }
        if (nonfinite) return 1;
        if (lower_only == KERNEL_SYMMETRIC) mirror_lower_columns(out, rows, j0, j1, threads);
        R_CheckUserInterrupt();
        progress_fill_columns(j1, cols, lower_only);
    }
    return 0;
}

/* Tiles of the base kernel spec between the sparse points of a and b on
 * any thread: the points, and scratch for each of threads threads,
 * prepared on the main thread. */
struct sparse_columns_plan {
    const kernel_spec *spec;
    kernel_points a, b;
    double *work;
    size_t work_len;
    int threads;
};

sparse_columns_plan *sparse_columns_prepare(const kernel_spec *spec, const kernel_points *a,
                                            const kernel_points *b, int threads)
{
    sparse_columns_plan *P = (sparse_columns_plan *) R_alloc(1, sizeof(sparse_columns_plan));
    P->spec = spec;
    P->a = *a;
    P->b = *b;
    P->threads = threads;
    P->work_len = columns_work_length(spec, a);
    P->work = columns_work(spec, a, threads);
    (void) simd_active(); /* the CPU check, once, here rather than on the threads */
    return P;
}

/* out (nr x nc, leading dimension nr) = the kernel between a's points r0
 * .. r0 + nr - 1 and b's points c0 .. c0 + nc - 1. No R API: callable
 * inside a parallel region of at most the prepared number of threads.
 * Returns 1 if a value is not finite. */
int sparse_columns_tile(const sparse_columns_plan *P, int r0, int nr, int c0, int nc,
                        double *out)
{
#ifdef _OPENMP
    int t = omp_get_thread_num();
#else
    int t = 0;
#endif
    double *work = P->work + P->work_len * (size_t) (t < P->threads ? t : 0);
    int bad = 0;
    sparse_columns(P->spec, &P->a, &P->b, c0, nc, r0, r0 + nr, 0, out, (size_t) nr, work);
    for (size_t i = 0; i < (size_t) nr * nc; i++) bad |= simd_not_finite(out[i]);
    return bad;
}
