/* Sparse rows: data kept sparse from R's input to every kernel value.
 *
 * The layout the engine reads is compressed sparse rows (CSR): for row r
 * (0-based), its stored values are x[p[r] .. p[r + 1] - 1] in the columns
 * j[p[r] .. p[r + 1] - 1], strictly increasing. R holds it as a list of
 * class "fastkpca_sparse_rows" (R/sparse.R), made once from the user's
 * Matrix or slam object by sparse_rows() below: one O(nnz) conversion,
 * never a dense copy.
 *
 * The kernel values of two sparse rows (sparse_segment(), the value
 * function kernel.c's interpreter calls for points that are sparse):
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
 * A single kernel of a gathered product of a whole set with itself (the
 * exact fill, kernel_matrix(x), the matrix-free tiles) is computed by
 * sparse_tiles.c instead, whose preparation is worth it there; the other
 * calls (two sets, or a panel of predict(), Nystrom or kcca()) come here
 * (sparse_columns()).
 * The points are not shifted by column means (that would make them
 * dense); sparse data are counts and weights near the origin. */
#include "fastkpca.h"
#include "simd.h"
#include <float.h>
#include <limits.h>
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

static SEXP list_part(SEXP x, const char *name, const char *what)
{
    SEXP names = getAttrib(x, R_NamesSymbol);
    if (!isNull(names))
        for (R_xlen_t i = 0; i < XLENGTH(x); i++)
            if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(x, i);
    error_argument("'%s' is not a sparse row set: it lacks '%s'", what, name);
    return R_NilValue; /* not reached */
}

/* Whether x is the engine's sparse rows (R/sparse.R's class). */
int is_sparse_rows(SEXP x)
{
    return TYPEOF(x) == VECSXP && inherits(x, "fastkpca_sparse_rows");
}

/* Read and check sparse rows from R: every invariant the value functions
 * rely on (row starts increasing from 0 to nnz, columns in range and
 * strictly increasing within a row, values finite). O(nnz), once per call. */
void sparse_rows_from_R(SEXP x, const char *what, sparse_csr *s)
{
    if (!is_sparse_rows(x)) error_argument("'%s' must be sparse rows", what);
    SEXP p = list_part(x, "p", what), j = list_part(x, "j", what);
    SEXP v = list_part(x, "x", what), dim = list_part(x, "dim", what);
    if (!isInteger(dim) || XLENGTH(dim) != 2 || INTEGER(dim)[0] < 0 || INTEGER(dim)[1] < 0)
        error_argument("'%s' must have two non-negative dimensions", what);
    int n = INTEGER(dim)[0], d = INTEGER(dim)[1];
    if (!isInteger(p) || XLENGTH(p) != (R_xlen_t) n + 1)
        error_argument("'%s': the row starts must be %d integers", what, n + 1);
    if (!isInteger(j) || !isReal(v) || XLENGTH(j) != XLENGTH(v))
        error_argument("'%s': columns and values must be integer and double vectors of one "
                       "length", what);
    const int *pp = INTEGER(p), *jj = INTEGER(j);
    const double *xx = REAL(v);
    if (pp[0] != 0 || (R_xlen_t) pp[n] != XLENGTH(j))
        error_argument("'%s': the row starts must run from 0 to the number of values", what);
    for (int r = 0; r < n; r++) {
        if (pp[r + 1] < pp[r]) error_argument("'%s': the row starts must not decrease", what);
        for (int t = pp[r]; t < pp[r + 1]; t++) {
            if (jj[t] < 0 || jj[t] >= d)
                error_argument("'%s': a column index is out of range", what);
            if (t > pp[r] && jj[t] <= jj[t - 1])
                error_argument("'%s': columns must increase within each row", what);
            if (!R_FINITE(xx[t]))
                error_argument("'%s' must not contain missing or infinite values", what);
        }
    }
    s->n = n;
    s->d = d;
    s->p = pp;
    s->j = jj;
    s->x = xx;
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

/* The squared norms of rows row0 .. row0 + n - 1 of s, summed as
 * gather_dot() sums a row against itself (the same products in the same
 * order), so that a row's squared distance to itself is exactly 0. */
const double *sparse_row_norms(const sparse_csr *s, int row0, int n)
{
    double *out = (double *) R_alloc((size_t) n + 1, sizeof(double));
    for (int i = 0; i < n; i++) {
        sparse_row a = row_of(s, row0 + i);
        double sum = 0.0;
        for (int t = 0; t < a.len; t++) sum += a.x[t] * a.x[t];
        out[i] = sum;
    }
    return out;
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
void sparse_columns(const kernel_spec *spec, const kernel_points *a, const kernel_points *b,
                    int c0, int nc, int i0, int i1, int lower, double *out, size_t ldo,
                    double *work)
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

/* The column of each of the nnz values of sparse_rows(): from the column
 * starts cs (by_columns) or given (triplets, checked against d); the rows
 * ri checked against n. */
static const int *value_columns(const int *ri, const int *cs, int nnz, int n, int d,
                                int by_columns)
{
    int *col = (int *) R_alloc((size_t) nnz + 1, sizeof(int));
    for (int c = 0, t = 0; t < nnz; t++) {
        if (by_columns) {
            while (cs[c + 1] <= t) c++;
            col[t] = c;
        } else {
            col[t] = cs[t];
            if (col[t] < 0 || col[t] >= d) error_argument("a column index is out of range");
        }
        if (ri[t] < 0 || ri[t] >= n) error_argument("a row index is out of range");
    }
    return col;
}

/* The values of sparse_rows() in the order of the rows, each row's in the
 * order of their columns: a counting sort by column (stable; compressed
 * columns are in that order already), then one by row (stable). Returns
 * the values' numbers in that order; *rowstart gets each row's first. */
static const int *values_by_row(const int *ri, const int *col, int nnz, int n, int d,
                                int by_columns, const int **rowstart)
{
    int *order = (int *) R_alloc((size_t) nnz + 1, sizeof(int));
    if (by_columns) {
        for (int t = 0; t < nnz; t++) order[t] = t;
    } else {
        int *start = (int *) R_alloc((size_t) d + 1, sizeof(int));
        memset(start, 0, ((size_t) d + 1) * sizeof(int));
        for (int t = 0; t < nnz; t++) start[col[t] + 1]++;
        for (int c = 0; c < d; c++) start[c + 1] += start[c];
        for (int t = 0; t < nnz; t++) order[start[col[t]]++] = t;
    }
    int *rs = (int *) R_alloc((size_t) n + 1, sizeof(int));
    memset(rs, 0, ((size_t) n + 1) * sizeof(int));
    for (int t = 0; t < nnz; t++) rs[ri[t] + 1]++;
    for (int r = 0; r < n; r++) rs[r + 1] += rs[r];
    int *by_row = (int *) R_alloc((size_t) nnz + 1, sizeof(int));
    int *next = (int *) R_alloc((size_t) n + 1, sizeof(int));
    memcpy(next, rs, (size_t) n * sizeof(int));
    for (int u = 0; u < nnz; u++) {
        int t = order[u];
        by_row[next[ri[t]]++] = t;
    }
    *rowstart = rs;
    return by_row;
}

/* The compressed rows p, j, x (elements 0, 1, 2 of the list ans) of the
 * values in row order (values_by_row()); a column twice in a row summed;
 * values vx (NULL: all 1). */
static void compress_rows(const int *col, const double *vx, const int *rowstart,
                          const int *by_row, int n, SEXP ans)
{
    int distinct = 0;
    for (int r = 0; r < n; r++)
        for (int u = rowstart[r]; u < rowstart[r + 1]; u++)
            if (u == rowstart[r] || col[by_row[u]] != col[by_row[u - 1]]) distinct++;
    SET_VECTOR_ELT(ans, 0, allocVector(INTSXP, (R_xlen_t) n + 1));
    SET_VECTOR_ELT(ans, 1, allocVector(INTSXP, distinct));
    SET_VECTOR_ELT(ans, 2, allocVector(REALSXP, distinct));
    int *pp = INTEGER(VECTOR_ELT(ans, 0)), *jj = INTEGER(VECTOR_ELT(ans, 1)), out = 0;
    double *xx = REAL(VECTOR_ELT(ans, 2));
    pp[0] = 0;
    for (int r = 0; r < n; r++) {
        for (int u = rowstart[r]; u < rowstart[r + 1]; u++) {
            int t = by_row[u];
            double v = vx ? vx[t] : 1.0;
            if (u > rowstart[r] && col[t] == jj[out - 1]) {
                xx[out - 1] += v;
            } else {
                jj[out] = col[t];
                xx[out++] = v;
            }
        }
        pp[r + 1] = out;
    }
}

/* .Call (sparse_rows() in R/sparse.R): the CSR layout (list(p, j, x, dim),
 * 0-based) of a sparse matrix given by its columns or by triplets,
 * duplicates summed, columns sorted within rows.
 * index: the row of each value (0-based integers); second: the column
 * starts (layout 0, compressed columns: ncol + 1 integers from 0) or the
 * column of each value (layout 1, triplets: 0-based integers); values:
 * doubles, or NULL for a pattern matrix (every value 1); dim: c(nrow, ncol). */
SEXP sparse_rows(SEXP index, SEXP second, SEXP values, SEXP dim, SEXP layout)
{
    engine_entered(__func__);
    if (!isInteger(dim) || XLENGTH(dim) != 2 || INTEGER(dim)[0] == NA_INTEGER ||
        INTEGER(dim)[1] == NA_INTEGER || INTEGER(dim)[0] < 0 || INTEGER(dim)[1] < 0)
        error_argument("'dim' must be two non-negative integers");
    int n = INTEGER(dim)[0], d = INTEGER(dim)[1];
    int by_columns = as_count(layout, "layout", 0, 1) == 0;
    if (!isInteger(index) || !isInteger(second))
        error_argument("'index' and 'second' must be integer vectors");
    if (!isNull(values) && (!isReal(values) || XLENGTH(values) != XLENGTH(index)))
        error_argument("'values' must be a double vector with one value per index");
    if (XLENGTH(index) > INT_MAX - 1)
        error_memory("a sparse matrix of more than %d stored values", INT_MAX - 1);
    int nnz = (int) XLENGTH(index);
    const int *ri = INTEGER(index), *cs = INTEGER(second);
    const double *vx = isNull(values) ? NULL : REAL(values);
    if (by_columns) {
        if (XLENGTH(second) != (R_xlen_t) d + 1 || cs[0] != 0 || cs[d] != nnz)
            error_argument("'second' must hold the %d column starts, from 0 to %d", d + 1, nnz);
        for (int c = 0; c < d; c++)
            if (cs[c + 1] < cs[c]) error_argument("the column starts must not decrease");
    } else if (XLENGTH(second) != nnz) {
        error_argument("'index' and 'second' must have one length");
    }
    const int *col = value_columns(ri, cs, nnz, n, d, by_columns);
    const int *rowstart, *by_row = values_by_row(ri, col, nnz, n, d, by_columns, &rowstart);
    SEXP ans = PROTECT(allocVector(VECSXP, 4));
    compress_rows(col, vx, rowstart, by_row, n, ans);
    SET_VECTOR_ELT(ans, 3, allocVector(INTSXP, 2));
    INTEGER(VECTOR_ELT(ans, 3))[0] = n;
    INTEGER(VECTOR_ELT(ans, 3))[1] = d;
    const char *names[] = {"p", "j", "x", "dim"};
    set_list_names(ans, names);
    UNPROTECT(1);
    return ans;
}
