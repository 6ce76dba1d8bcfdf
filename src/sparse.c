/* Sparse rows: data kept sparse from R's input to every kernel value.
 *
 * The layout the engine reads is compressed sparse rows (CSR): for row r
 * (0-based), its stored values are x[p[r] .. p[r + 1] - 1] in the columns
 * j[p[r] .. p[r + 1] - 1], strictly increasing. R holds it as a list of
 * class "fastkpca_sparse_rows" (R/sparse.R), made once from the user's
 * Matrix or slam object by sparse_rows() below: one O(nnz) conversion,
 * never a dense copy. Each call reads and checks a set once
 * (sparse_rows_from_R(), for kernel_points.c) and takes its rows' squared
 * norms (sparse_row_norms()).
 *
 * The kernel values of sparse rows are sparse_columns.c's (one column at a
 * time for the interpreter, 8 at a time for a single kernel) and
 * sparse_tiles.c's (the tiles of a gathered product). The points are not
 * shifted by column means (that would make them dense); sparse data are
 * counts and weights near the origin. */
#include "fastkpca.h"
#include <limits.h>
#include <string.h>

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

/* The squared norms of rows row0 .. row0 + n - 1 of s, summed as
 * sparse_columns.c's gather_dot() sums a row against itself (the same
 * products in the same order), so that a row's squared distance to itself
 * is exactly 0. */
const double *sparse_row_norms(const sparse_csr *s, int row0, int n)
{
    double *out = (double *) R_alloc((size_t) n + 1, sizeof(double));
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int t = s->p[row0 + i]; t < s->p[row0 + i + 1]; t++) sum += s->x[t] * s->x[t];
        out[i] = sum;
    }
    return out;
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
