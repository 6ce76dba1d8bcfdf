/* The points of a kernel call, read once per call (kernel_point_sets()):
 * dense rows (double matrices), sparse rows (src/sparse.c's CSR, read and
 * checked here once, then shared by every block of the call) or strings
 * (indexed together, the moving set's first). Dense points are transposed
 * to one contiguous column each (d x n), with their squared norms (for a
 * single kernel on wide data, only the norms: the points are read in
 * place, points_in_place()); those
 * of the distance kernels are first shifted by the training column means
 * (kernel_shift(); the medians where a few far rows pull the means away
 * from the others, robust_shift()), so that ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x'y keeps
 * its digits on data far from the origin. */
#include "fastkpca.h"
#include "simd.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Values from which the points are prepared on the threads (wide data:
 * 500 x 200000 is 10^8 values, a second on one thread). */
#define PREP_THREAD_VALUES 4e6

/* Rows and columns per block of transpose_points(): a block's source
 * columns (TRANSPOSE_BLOCK runs of TRANSPOSE_BLOCK doubles) and its
 * destination points stay in the L1 cache. */
#define TRANSPOSE_BLOCK 32

static void points_weights(const kernel_eval *k, SEXP weights, int row0, int n,
                           kernel_points *p);
static void string_points(const kernel_eval *k, int first, int n, SEXP weights, int row0,
                          kernel_points *p);
static void sparse_points(const kernel_eval *k, SEXP x, int row0, int n, SEXP weights,
                          kernel_points *p);

/* The threads that prepare n points of d coordinates: those of the call
 * (kernel_point_sets()) from PREP_THREAD_VALUES values on. */
static int prep_threads(const kernel_eval *k, int n, int d)
{
    return (double) n * d >= PREP_THREAD_VALUES && k->prep_threads > 1 ? k->prep_threads : 1;
}

/* The median of v[0..n-1] (reordered; n >= 1): the upper one of an even n. */
static double median_of(double *v, int n)
{
    rPsort(v, n, n / 2);
    return v[n / 2];
}

/* The mean of the n values of col (kernel_shift()'s shift of a
 * coordinate); 0 where it is not finite (huge data: no shift). Summed in
 * eight running sums (value i to sum i mod 8, the sums then added in
 * pairs, the last n mod 8 values after them): one sum in order waits for
 * each add in turn (the shift's pass at 500 x 200000 on 2 threads: 4944
 * perf samples in 8 calls, 4114 with eight sums). Any shift keeps the
 * distances; this one depends on the data alone. */
static double column_mean(const double *col, int n)
{
    double a[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) a[l] += col[i + l];
    double s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    for (; i < n; i++) s += col[i];
    double m = s / n;
    return simd_not_finite(m) ? 0.0 : m;
}

/* The parts row_squares()'s threads cut each group's rows into (the
 * groups: kernel_fast.c's wide_group_count()): with fewer groups than
 * twice the threads (narrow data, many rows), each thread a part's run of
 * each column; else whole groups. */
static int squares_parts(int d, int threads)
{
    return threads > 1 && wide_group_count(d) < 2 * threads ? threads : 1;
}

/* out[i] = the squared norm of row row0 + i of x (leading dimension ldx),
 * each coordinate less shift (if not NULL), i < n, read in place. The
 * coordinates go in the wide products' groups (kernel_fast.c's
 * wide_group_count() and wide_group_span()): each group's sum of squares
 * from zero over its coordinates in order, a product then a sum, then
 * the groups' sums added in order. A norm depends on its row and d
 * alone: the same bits for a row alone or among others and on any
 * thread count. The threads take groups, so each reads whole runs of
 * columns (the rows' part of each of its columns, all of it for all the
 * rows: one contiguous slab), not
 * half of every column (measured at 500 x 200000 on 2 threads: the
 * halves of each column took 1.5 times the one thread's CPU); sums:
 * n doubles per group, a 1024th of the data at most. With means (not
 * NULL; whole groups, squares_parts() 1, all the rows), each column's
 * mean is made first (column_mean()), kept in means and taken as its
 * shift: kernel_shift()'s two passes over the data in one. */
static void row_squares(const double *x, int ldx, int row0, int n, int d, const double *shift,
                        double *means, double *out, int threads)
{
    int ng = wide_group_count(d), parts = squares_parts(d, threads);
    double *sums = (double *) R_alloc((size_t) n * ng, sizeof(double));
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
#endif
    for (int u = 0; u < ng * parts; u++) {
        int g = u / parts, p = u % parts;
        int i0 = (int) ((long long) n * p / parts), i1 = (int) ((long long) n * (p + 1) / parts);
        int k0, kc;
        wide_group_span(d, g, &k0, &kc);
        double *s = sums + (size_t) g * n;
        memset(s + i0, 0, (size_t) (i1 - i0) * sizeof(double));
        for (int j = k0; j < k0 + kc; j++) {
            const double *src = x + row0 + (size_t) j * ldx;
            if (means) means[j] = column_mean(src, n);
            const double *sh = means ? means : shift;
            double m = sh ? sh[j] : 0.0;
            for (int i = i0; i < i1; i++) {
                double v = sh ? src[i] - m : src[i];
                s[i] += v * v;
            }
        }
    }
    memcpy(out, sums, (size_t) n * sizeof(double));
    for (int g = 1; g < ng; g++) {
        const double *s = sums + (size_t) g * n;
        for (int i = 0; i < n; i++) out[i] += s[i];
    }
}

/* kernel_shift()'s means, replaced in place by the column medians where
 * they are far from most rows: a shifted coordinate keeps its digits
 * relative to the shifted value, so a shift far from two rows loses the
 * digits of their difference (one row of 1e160 among ordinary ones: every
 * ordinary row became the same point). With r_i the squared distance of
 * row i to the means: ordinary data have a median of r near its mean
 * (a median at least SHIFT_TYPICAL of the mean: nothing more is done,
 * O(n d)); else, over the rows not at the medians' point, the median of r
 * and of the squared distances to the medians are compared, and the
 * medians taken if the first is SHIFT_FAR times the second. */
#define SHIFT_TYPICAL 0.2
#define SHIFT_FAR 1e4
static int robust_shift(const double *x, int ldx, int n, int d, double *shift, double *r,
                        int squared, int threads)
{
    if (n < 3) return 0;
    double *q = (double *) R_alloc((size_t) n, sizeof(double));
    double *col = (double *) R_alloc((size_t) n, sizeof(double));
    if (!squared) row_squares(x, ldx, 0, n, d, shift, NULL, r, threads);
    double total = 0.0;
    for (int i = 0; i < n; i++) total += r[i];
    memcpy(q, r, (size_t) n * sizeof(double));
    double rmed = median_of(q, n);
    /* the means kept: r holds the shifted points' squared norms */
    if (!simd_not_finite(rmed) && rmed >= SHIFT_TYPICAL * (total / n)) return 1; /* Inf: go on */
    double *med = (double *) R_alloc((size_t) d + 1, sizeof(double));
    memset(q, 0, (size_t) n * sizeof(double));
    for (int j = 0; j < d; j++) {
        const double *c = x + (size_t) j * ldx;
        memcpy(col, c, (size_t) n * sizeof(double));
        med[j] = median_of(col, n);
        for (int i = 0; i < n; i++) q[i] += (c[i] - med[j]) * (c[i] - med[j]);
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (q[i] > 0.0) {
            r[m] = r[i];
            q[m++] = q[i];
        }
    if (m == 0) return 0;
    double rm = median_of(r, m), qm = median_of(q, m);
    if (rm > SHIFT_FAR * qm) memcpy(shift, med, (size_t) d * sizeof(double));
    return 0;
}


/* Distance kernels depend on x - y only. Their points are shifted by the
 * column means of the training data before the norms are taken: the
 * identity ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x'y then does not lose all its
 * digits on data far from the origin (such as coordinates around 1e6).
 * Returns the column means of rows 0..n-1 of x (leading dimension ldx), or
 * NULL when no part of the kernel needs them; robust_shift() replaces
 * them by the column medians where a few far rows pull the means away
 * from the others. *norms: where the means are kept, the squared norms of
 * the shifted rows, which robust_shift() summed (else NULL). */
const double *kernel_shift(const kernel_eval *k, const double *x, int ldx, int n, int d,
                           const double **norms)
{
    *norms = NULL;
    if (!k->any_distance || n < 1) return NULL;
    double *shift = (double *) R_alloc((size_t) d + 1, sizeof(double));
    double *r = (double *) R_alloc((size_t) n, sizeof(double));
    int threads = prep_threads(k, n, d);
    /* whole groups on the threads: the means and the squares in one pass */
    int fused = n >= 3 && squares_parts(d, threads) == 1;
    if (fused) row_squares(x, ldx, 0, n, d, NULL, shift, r, threads);
    else {
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#endif
        for (int j = 0; j < d; j++) shift[j] = column_mean(x + (size_t) j * ldx, n);
    }
    if (robust_shift(x, ldx, n, d, shift, r, fused, threads)) *norms = r;
    return shift;
}

/* Rows row0..row0+n-1 of x (leading dimension ldx) -> d x n, each point
 * contiguous, minus shift (if not NULL); *norms gets ||point||^2. In
 * square blocks, the column blocks spread over the threads: point by
 * point, each value's column was on another page of a wide x (ldx doubles
 * apart), a TLB miss for each of the n d values (500 x 200000: 2.6 s,
 * more than the block's products). The norms are summed afterwards, each
 * over its point in order: the same bits. */
static const double *transpose_points(const double *x, int ldx, int row0, int n, int d,
                                      const double *shift, const double **norms,
                                      int threads)
{
    double *xt = (double *) R_alloc((size_t) n * d + 1, sizeof(double));
    double *nrm = (double *) R_alloc((size_t) n + 1, sizeof(double));
    /* a wide block reads its rows' points far apart: fewer TLB misses, and
     * fewer page faults (measured: 0.2 s of system time instead of 0.3 at
     * 500 x 100000) */
    advise_huge_pages(xt, (size_t) n * d * sizeof(double));
    int nblocks = (d + TRANSPOSE_BLOCK - 1) / TRANSPOSE_BLOCK;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#endif
    for (int b = 0; b < nblocks; b++) {
        int j0 = b * TRANSPOSE_BLOCK, j1 = d - j0 < TRANSPOSE_BLOCK ? d : j0 + TRANSPOSE_BLOCK;
        for (int i0 = 0; i0 < n; i0 += TRANSPOSE_BLOCK) {
            int i1 = n - i0 < TRANSPOSE_BLOCK ? n : i0 + TRANSPOSE_BLOCK;
            for (int i = i0; i < i1; i++) {
                const double *src = x + row0 + i;
                double *dst = xt + (size_t) i * d;
                for (int j = j0; j < j1; j++)
                    dst[j] = shift ? src[(size_t) j * ldx] - shift[j] : src[(size_t) j * ldx];
            }
        }
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#endif
    for (int i = 0; i < n; i++) {
        const double *v = xt + (size_t) i * d;
        double s = 0.0;
        for (int j = 0; j < d; j++) s += v[j] * v[j];
        nrm[i] = s;
    }
    *norms = nrm;
    return xt;
}

/* Whether the points of kernel k at d coordinates are read in place: a
 * single kernel on dense rows whose blocks are products
 * (kernel_wide_form(), wide data; the plan's kernel_fast_points(), which
 * sits above this file, at those d) packs its panels of coordinates
 * itself, shifted as it packs them (tile_points()), so that no call
 * copies all the points. */
static int points_in_place(const kernel_eval *k, int d)
{
    return k->nops == 1 && !k->sparse && kernel_wide_form(k->bases, d);
}

/* Conformal weights for kernel k: a list of one vector per conformal part
 * (their lengths are checked where the points are prepared). */
void check_weights(const kernel_eval *k, SEXP weights, const char *what)
{
    if (TYPEOF(weights) != VECSXP || XLENGTH(weights) != k->nweights)
        error_argument("'%s' must be a list of %d conformal weight vectors", what, k->nweights);
}

/* The conformal weights of points row0..row0+n-1 of a set, from the R list
 * weights (one double vector per conformal part, indexed like the set). */
static void points_weights(const kernel_eval *k, SEXP weights, int row0, int n,
                           kernel_points *p)
{
    check_weights(k, weights, "weights");
    p->weights = (const double **) R_alloc((size_t) k->nweights + 1, sizeof(double *));
    for (int w = 0; w < k->nweights; w++) {
        SEXP v = VECTOR_ELT(weights, w);
        if (!isReal(v) || XLENGTH(v) < (R_xlen_t) row0 + n)
            error_argument("'weights' must hold one double per point");
        p->weights[w] = REAL(v) + row0;
    }
}

/* kernel_points_prepare(), given the points' squared norms (norms: NULL
 * to compute them) where they are read in place. */
static void points_prepare(const kernel_eval *k, const double *x, int ldx, int row0, int n,
                           int d, const double *shift, const double *norms, SEXP weights,
                           kernel_points *p)
{
    if (k->any_string) error_argument("'kernel' is a string kernel: its points must be strings");
    p->n = n;
    p->d = d;
    p->first = 0;
    p->inner = p->inner_norms = p->shifted = p->shifted_norms = NULL;
    p->sparse = NULL;
    p->sparse_norms = NULL;
    p->in_place = p->in_place_shift = NULL;
    p->in_place_ld = 0;
    int threads = prep_threads(k, n, d);
    if (points_in_place(k, d)) {
        const double *s = k->any_distance ? shift : NULL;
        const double *nrm = norms;
        if (!nrm) {
            double *sq = (double *) R_alloc((size_t) n + 1, sizeof(double));
            row_squares(x, ldx, row0, n, d, s, NULL, sq, threads);
            nrm = sq;
        }
        p->in_place = x + row0;
        p->in_place_ld = ldx;
        p->in_place_shift = s;
        if (k->any_distance) p->shifted_norms = nrm;
        else p->inner_norms = nrm;
        points_weights(k, weights, row0, n, p);
        return;
    }
    if (k->any_inner) p->inner = transpose_points(x, ldx, row0, n, d, NULL, &p->inner_norms, threads);
    if (k->any_distance)
        p->shifted = transpose_points(x, ldx, row0, n, d, shift, &p->shifted_norms,
                                      threads);
    points_weights(k, weights, row0, n, p);
}

/* Prepare rows row0..row0+n-1 of x (leading dimension ldx) for kernel k:
 * transposed as the base kernels need them, or read in place (wide data,
 * points_in_place()), shifted by shift (from kernel_shift() on the
 * training data), and the conformal weights of these rows, from the R list
 * weights (one double vector per conformal part, indexed like x). */
void kernel_points_prepare(const kernel_eval *k, const double *x, int ldx, int row0,
                           int n, int d, const double *shift, SEXP weights,
                           kernel_points *p)
{
    points_prepare(k, x, ldx, row0, n, d, shift, NULL, weights, p);
}

/* No NA, NaN or Inf among the m x d values x of the fixed set: R's
 * check_finite() (the same errors, naming the set's argument), from the
 * squared norms its preparation summed over every value (p: inner or
 * shifted, one of them for any kernel on numbers): a missing or infinite
 * value leaves its row's norm NaN or Inf, so norms all finite settle it
 * in O(m). Otherwise (such a value, or finite ones whose squares
 * overflow) the values are scanned. kernel_matrix() leaves its x to this
 * check (R/kernel_matrix.R): on wide data R's pass over the values was a
 * tenth of the call (500 x 200000, rbfdot, 2 threads). */
static void check_point_values(const kernel_eval *k, const double *x, int m, int d,
                               const kernel_points *p)
{
    const double *norms = p->shifted_norms ? p->shifted_norms : p->inner_norms;
    if (norms) {
        int i = 0;
        while (i < m && !simd_not_finite(norms[i])) i++;
        if (i == m) return;
    }
    int missing, infinite;
    scan_values(x, (R_xlen_t) m * d, prep_threads(k, m, d), &missing, &infinite);
    if (missing) error_argument("'%s' must not contain missing values (NA or NaN)", k->fixed_what);
    if (infinite) error_argument("'%s' must not contain infinite values", k->fixed_what);
}

/* The fixed side of an evaluation, prepared once per call: all rows of the
 * double matrix rows (the training rows, the landmarks), shifted by their
 * own column means and transposed, with their conformal weights. Returns
 * the shift, which the other side's points take too (distances do not
 * change). */
const double *kernel_points_fixed(const kernel_eval *k, SEXP rows, SEXP weights,
                                  kernel_points *p)
{
    if (k->any_string) {
        /* the strings were indexed with the moving set's before them */
        if (!k->strings_indexed || !isString(rows))
            error_argument("'kernel' is a string kernel: its points must be strings");
        string_points(k, k->fixed_first, (int) XLENGTH(rows), weights, 0, p);
        return NULL;
    }
    if (k->sparse) {
        sparse_points(k, rows, 0, -1, weights, p);
        return NULL;
    }
    int m = nrows(rows), d = ncols(rows);
    const double *norms;
    const double *shift = kernel_shift(k, REAL(rows), m, m, d, &norms);
    /* the shift's check summed the shifted rows' squares: their norms */
    points_prepare(k, REAL(rows), m, 0, m, d, shift, norms, weights, p);
    check_point_values(k, REAL(rows), m, d, p);
    return shift;
}

/* The strings first..first+n-1 of the call's strings as points. */
static void string_points(const kernel_eval *k, int first, int n, SEXP weights, int row0,
                          kernel_points *p)
{
    memset(p, 0, sizeof(kernel_points));
    p->n = n;
    p->first = first;
    points_weights(k, weights, row0, n, p);
}

/* Rows row0..row0+n-1 (n < 0: all rows) of the sparse rows x as points,
 * with their squared norms; they are not shifted (see src/sparse.c). */
static void sparse_points(const kernel_eval *k, SEXP x, int row0, int n, SEXP weights,
                          kernel_points *p)
{
    /* the set was read once, by kernel_point_sets() */
    const sparse_csr *s = x == k->fixed_set ? k->fixed_rows
        : x == k->moving_set ? k->moving_rows : NULL;
    if (s == NULL) error_argument("sparse rows that the call did not read");
    if (n < 0) n = s->n;
    if (row0 < 0 || n > s->n - row0) error_argument("rows beyond the sparse rows' %d", s->n);
    memset(p, 0, sizeof(kernel_points));
    p->n = n;
    p->d = s->d;
    p->first = row0;
    p->sparse = s;
    p->sparse_norms = sparse_row_norms(s, row0, n);
    points_weights(k, weights, row0, n, p);
}

static void check_strings(SEXP x, const char *what)
{
    if (!isString(x)) error_argument("'%s' must be a character vector for a string kernel", what);
    for (R_xlen_t i = 0; i < XLENGTH(x); i++)
        if (STRING_ELT(x, i) == NA_STRING)
            error_argument("'%s' must not contain missing strings", what);
}

/* The sparse rows of a set of the call, read and checked once (x as
 * sparse_rows_from_R() reads it, what naming it in errors). */
static const sparse_csr *read_sparse_set(SEXP x, const char *what)
{
    sparse_csr *s = (sparse_csr *) R_alloc(1, sizeof(sparse_csr));
    sparse_rows_from_R(x, what, s);
    return s;
}

static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return x < y ? -1 : x > y;
}

/* The set s with its columns renumbered 0.. in the order of used, the
 * sorted distinct columns of the call (nused of them); values, rows and
 * the order of each row's columns unchanged, so every sum has the same
 * terms in the same order. */
static const sparse_csr *renumbered_set(const sparse_csr *s, const int *used, int nused)
{
    sparse_csr *c = (sparse_csr *) R_alloc(1, sizeof(sparse_csr));
    *c = *s;
    int nnz = s->p[s->n];
    int *j = (int *) R_alloc((size_t) nnz + 1, sizeof(int));
    for (int t = 0; t < nnz; t++)
        j[t] = (int) ((const int *) bsearch(s->j + t, used, (size_t) nused, sizeof(int),
                                            compare_ints) - used);
    c->j = j;
    c->d = nused;
    return c;
}

/* Sparse sets with more columns than stored values (hashed features: 2^28
 * columns) keep only the columns they use, renumbered in order
 * (renumbered_set()): the evaluators' scratch per column (the 8-column
 * products scatter 8 doubles per column, per thread) is then O(nnz), not
 * O(ncol), and nothing of the call holds a vector of length ncol. */
static void compact_sparse_columns(kernel_eval *k)
{
    const sparse_csr *f = k->fixed_rows, *m = k->moving_rows;
    size_t nnz = (size_t) f->p[f->n] + (m ? (size_t) m->p[m->n] : 0);
    if ((double) f->d <= (double) nnz) return;
    int *used = (int *) R_alloc(nnz + 1, sizeof(int));
    memcpy(used, f->j, (size_t) f->p[f->n] * sizeof(int));
    if (m) memcpy(used + f->p[f->n], m->j, (size_t) m->p[m->n] * sizeof(int));
    qsort(used, nnz, sizeof(int), compare_ints);
    int nused = 0;
    for (size_t t = 0; t < nnz; t++)
        if (t == 0 || used[t] != used[t - 1]) used[nused++] = used[t];
    if (nused == 0) nused = 1, used[0] = 0;   /* no value at all: one column */
    k->fixed_rows = renumbered_set(f, used, nused);
    if (m) k->moving_rows = renumbered_set(m, used, nused);
    k->sparse_d = nused;
}

/* kernel_point_sets() for sparse rows: both sets sparse, of one number of
 * columns, each read once and kept in k for the call's blocks. */
static int sparse_point_sets(kernel_eval *k, SEXP moving, const char *mwhat, SEXP fixed,
                             const char *fwhat)
{
    const sparse_csr *fs = read_sparse_set(fixed, fwhat);
    if (fs->d < 1) error_argument("'%s' must have at least 1 column", fwhat);
    k->sparse = 1;
    k->sparse_d = fs->d;
    k->fixed_set = fixed;
    k->fixed_rows = fs;
    k->n_fixed = fs->n;
    if (isNull(moving)) {
        compact_sparse_columns(k);
        return fs->d;
    }
    if (!is_sparse_rows(moving))
        error_argument("'%s' must be sparse rows, as '%s' are", mwhat, fwhat);
    const sparse_csr *ms = read_sparse_set(moving, mwhat);
    if (ms->d != fs->d)
        error_argument("'%s' must have %d columns, not %d", mwhat, fs->d, ms->d);
    k->moving_set = moving;
    k->moving_rows = ms;
    k->n_moving = ms->n;
    compact_sparse_columns(k);
    return fs->d;
}

/* kernel_point_sets() for dense rows: double matrices of one number of
 * columns. */
static int dense_point_sets(kernel_eval *k, SEXP moving, const char *mwhat, SEXP fixed,
                            const char *fwhat)
{
    if (is_sparse_rows(moving))
        error_argument("'%s' must be sparse rows, as '%s' are", fwhat, mwhat);
    check_double_matrix(fixed, fwhat);
    if (ncols(fixed) < 1) error_argument("'%s' must have at least 1 column", fwhat);
    int d = ncols(fixed);
    k->n_fixed = nrows(fixed);
    if (isNull(moving)) return d;
    check_double_matrix(moving, mwhat);
    if (ncols(moving) != d)
        error_argument("'%s' must have %d columns, not %d", mwhat, d, ncols(moving));
    k->n_moving = nrows(moving);
    return d;
}

/* kernel_point_sets() for string kernels: character vectors without NA,
 * indexed here together, the moving strings first. */
static int string_point_sets(kernel_eval *k, SEXP moving, const char *mwhat, SEXP fixed,
                             const char *fwhat, int threads)
{
    check_strings(fixed, fwhat);
    int nm = 0, nf = (int) XLENGTH(fixed);
    SEXP all = fixed;
    if (!isNull(moving)) {
        check_strings(moving, mwhat);
        nm = (int) XLENGTH(moving);
        all = allocVector(STRSXP, (R_xlen_t) nm + nf);
        for (int i = 0; i < nm; i++) SET_STRING_ELT(all, i, STRING_ELT(moving, i));
        for (int j = 0; j < nf; j++) SET_STRING_ELT(all, nm + j, STRING_ELT(fixed, j));
    }
    PROTECT(all);
    string_kernels_prepare(k, all, threads);
    UNPROTECT(1);
    k->strings_indexed = 1;
    k->fixed_first = nm;
    k->n_fixed = nf;
    k->n_moving = nm;
    return 0;
}

/* The two sets of points of a call, read and checked once: the moving one
 * (new rows, data rows; R_NilValue when the call has one set) and the
 * fixed one (training rows, landmarks, or the one set), of one kind, read
 * from the data: dense rows, sparse rows or strings (a string kernel).
 * k gets each set's number of points (n_moving 0 without a moving set)
 * and, for sparse rows, their CSR. Returns the number of columns (0 for
 * strings). */
int kernel_point_sets(kernel_eval *k, SEXP moving, const char *mwhat, SEXP fixed,
                      const char *fwhat, int threads)
{
    k->sparse = 0;
    k->n_fixed = k->n_moving = k->d = 0;
    k->fixed_set = k->moving_set = R_NilValue;
    k->fixed_rows = k->moving_rows = NULL;
    k->fixed_what = fwhat;
    k->prep_threads = threads > 1 ? threads : 1;
    if (k->any_string) k->d = string_point_sets(k, moving, mwhat, fixed, fwhat, threads);
    else if (is_sparse_rows(fixed)) k->d = sparse_point_sets(k, moving, mwhat, fixed, fwhat);
    else k->d = dense_point_sets(k, moving, mwhat, fixed, fwhat);
    return k->d;
}

/* The prologue of every entry point that evaluates a kernel: its program
 * read (kernel_eval_from_R()), its threads (a C NULL for an entry point
 * without them: one), and its point sets read and checked once
 * (kernel_point_sets()). Returns the number of threads. */
int kernel_call_read(SEXP kernel, SEXP threads, SEXP moving, const char *mwhat,
                     SEXP fixed, const char *fwhat, kernel_eval *k)
{
    kernel_eval_from_R(kernel, k);
    int nthreads = threads == NULL ? 1 : as_threads(threads);
    kernel_point_sets(k, moving, mwhat, fixed, fwhat, nthreads);
    return nthreads;
}

/* Rows row0..row0+n-1 of the moving set z (kernel_point_sets()) as points:
 * for kernels on numbers, transposed and shifted by shift (see
 * kernel_points_prepare()); for string kernels, the strings row0.. of the
 * call's strings. */
void kernel_points_rows(const kernel_eval *k, SEXP z, int row0, int n,
                        const double *shift, SEXP weights, kernel_points *p)
{
    if (k->any_string) {
        if (!k->strings_indexed)
            error_argument("'kernel' is a string kernel: its points must be strings");
        string_points(k, row0, n, weights, row0, p);
        return;
    }
    if (k->sparse) {
        sparse_points(k, z, row0, n, weights, p);
        return;
    }
    kernel_points_prepare(k, REAL(z), nrows(z), row0, n, ncols(z), shift, weights, p);
}

/* A view of points i0..i0+len-1 of prepared points p (no copy); wbuf holds
 * the view's nweights weight pointers. */
kernel_points kernel_points_view(const kernel_eval *k, const kernel_points *p, int i0,
                                 int len, const double **wbuf)
{
    kernel_points v = *p;
    size_t off = (size_t) i0 * p->d;
    v.n = len;
    v.first = p->first + i0;
    if (p->inner) { v.inner = p->inner + off; v.inner_norms = p->inner_norms + i0; }
    if (p->shifted) { v.shifted = p->shifted + off; v.shifted_norms = p->shifted_norms + i0; }
    if (p->in_place) {
        v.in_place = p->in_place + i0;
        if (p->inner_norms) v.inner_norms = p->inner_norms + i0;
        if (p->shifted_norms) v.shifted_norms = p->shifted_norms + i0;
    }
    if (p->sparse) v.sparse_norms = p->sparse_norms + i0;
    for (int w = 0; w < k->nweights; w++) wbuf[w] = p->weights[w] + i0;
    v.weights = wbuf;
    return v;
}
