/* Step 1: the kernel matrix, for a named kernel or an expression of them.
 *
 * A kernel comes from R as a postfix program (R/kernel_spec.R): base kernels and
 * the operations that keep a kernel positive semidefinite (sums, products,
 * positive scaling, whole powers, exp, conformal weights g(x) g(y)). It is
 * evaluated one column segment at a time: each base kernel fills a segment
 * of a small stack, each operation combines segments in place, and the
 * bottom of the stack is the output column itself. A single base kernel is
 * one op and writes the output directly, as before kernels had an algebra.
 *
 * Points are transposed to one contiguous column each (d x n), so a kernel
 * value reads two contiguous vectors. Distance kernels use the norms and the
 * dot product, ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x'y, clamped at 0, of the
 * points shifted by the training column means. Kernel values that are not
 * finite are an error. The fit fills only the lower triangle of its n x n
 * buffer.
 *
 * String kernels (KERNEL_STRING) run through the same reader, validator and
 * interpreter: their points are the strings of the call, indexed once
 * (kernel_point_sets()), and only their value function differs
 * (string_segment(), src/string_kernel.c). */
#include "fastkpca.h"
#include "simd.h"
#include <Rmath.h>
#include <float.h>
#include <math.h>
#include <string.h>

/* Work (in rough units of one multiply-add) done between two interrupt
 * checks: a few tens of milliseconds on one core, whatever the kernel and d. */
#define KERNEL_BLOCK_WORK 3.0e7
/* Columns per thread in a block, at least, so that threads share a block. */
#define KERNEL_BLOCK_MIN_COLUMNS 8

static void points_weights(const kernel_eval *k, SEXP weights, int row0, int n,
                           kernel_points *p);
static void string_points(const kernel_eval *k, int first, int n, SEXP weights, int row0,
                          kernel_points *p);
static void sparse_points(const kernel_eval *k, SEXP x, int row0, int n, SEXP weights,
                          kernel_points *p);


/* A base kernel from its code and its parameters in kpar_slots order.
 * R validates ranges; C re-checks what would crash or loop. */
static void base_spec(int code, const double *p, kernel_spec *spec)
{
    memset(spec, 0, sizeof(kernel_spec));
    if (code <= KERNEL_PRECOMPUTED || code >= KERNEL_COUNT)
        error_argument("'kernel' code %d is not a known kernel", code);
    for (int k = 0; k < KPAR_COUNT; k++)
        if (!R_FINITE(p[k])) error_argument("'kpar' values must be finite");
    spec->code = (kernel_code) code;
    spec->sigma = p[KPAR_SIGMA];
    spec->degree = p[KPAR_DEGREE];
    spec->scale = p[KPAR_SCALE];
    spec->offset = p[KPAR_OFFSET];
    spec->order = p[KPAR_ORDER];
    spec->bessel_lim = 1.0;
    switch (spec->code) {
    case KERNEL_RBF: case KERNEL_LAPLACE: case KERNEL_ANOVA:
        if (spec->sigma <= 0) error_argument("'sigma' must be positive");
        break;
    case KERNEL_BESSEL:
        if (spec->sigma <= 0) error_argument("'sigma' must be positive");
        if (spec->order < 0 || spec->order > BESSEL_MAX_ORDER)
            error_argument("'order' must be between 0 and %g", BESSEL_MAX_ORDER);
        spec->bessel_lim = 1.0 / (gammafn(spec->order + 1.0) * R_pow(2.0, spec->order));
        break;
    case KERNEL_STRING:
        if (!(p[KPAR_TYPE] >= 1 && p[KPAR_TYPE] < STRING_TYPE_COUNT &&
              p[KPAR_TYPE] == floor(p[KPAR_TYPE])))
            error_argument("'kernel' program: unknown string kernel type %g", p[KPAR_TYPE]);
        if (!(p[KPAR_LENGTH] >= 1 && p[KPAR_LENGTH] <= 1e6))
            error_argument("'length' must be at least 1");
        if (!(p[KPAR_LAMBDA] > 0)) error_argument("'lambda' must be positive");
        spec->string_type = (int) p[KPAR_TYPE];
        spec->length = (int) p[KPAR_LENGTH];
        spec->lambda = p[KPAR_LAMBDA];
        spec->normalized = p[KPAR_NORMALIZED] != 0.0;
        break;
    default:
        break;
    }
}

static SEXP program_part(SEXP program, const char *name)
{
    SEXP names = getAttrib(program, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(program); i++)
        if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(program, i);
    error_argument("'kernel' program lacks '%s'", name);
    return R_NilValue; /* not reached */
}

/* Check that the program's stack never underflows and ends with one value;
 * returns the stack depth it needs. */
static int program_depth(const kernel_eval *k)
{
    int top = 0, depth = 0;
    for (int o = 0; o < k->nops; o++) {
        double arg = k->args[o];
        switch (k->ops[o]) {
        case OP_BASE:
            if (!(arg >= 0 && arg < k->nbase && arg == floor(arg)))
                error_argument("'kernel' program: base kernel %g does not exist", arg);
            top++;
            break;
        case OP_ADD: case OP_MUL:
            if (top < 2) error_argument("'kernel' program: an operation lacks its operands");
            top--;
            break;
        case OP_SCALE:
            if (!(R_FINITE(arg) && arg > 0))
                error_argument("'kernel' program: a scale must be positive");
            if (top < 1) error_argument("'kernel' program: an operation lacks its operand");
            break;
        case OP_POWER:
            if (!(arg >= 1 && arg <= KERNEL_MAX_POWER && arg == floor(arg)))
                error_argument("'kernel' program: a power must be a whole number of at least 1");
            if (top < 1) error_argument("'kernel' program: an operation lacks its operand");
            break;
        case OP_EXP:
            if (top < 1) error_argument("'kernel' program: an operation lacks its operand");
            break;
        case OP_CONFORMAL:
            if (!(arg >= 0 && arg < k->nweights && arg == floor(arg)))
                error_argument("'kernel' program: conformal weights %g do not exist", arg);
            if (top < 1) error_argument("'kernel' program: an operation lacks its operand");
            break;
        default:
            error_argument("'kernel' program: unknown operation %d", k->ops[o]);
        }
        if (top > depth) depth = top;
    }
    if (top != 1) error_argument("'kernel' program must leave exactly one kernel value");
    return depth;
}

/* Read and check the program list(ops, args, codes, kpar, nweights) that
 * fastkpca:::kernel_program() makes; everything points into R's vectors,
 * which the caller holds, or comes from R_alloc. */
void kernel_eval_from_R(SEXP program, kernel_eval *k)
{
    k->prep_threads = 1;
    if (!isNewList(program) || isNull(getAttrib(program, R_NamesSymbol)))
        error_argument("'kernel' must be a kernel program");
    SEXP ops = program_part(program, "ops"), args = program_part(program, "args");
    SEXP codes = program_part(program, "codes"), kpar = program_part(program, "kpar");
    SEXP nweights = program_part(program, "nweights");
    if (!isInteger(ops) || !isReal(args) || XLENGTH(ops) != XLENGTH(args) ||
        XLENGTH(ops) < 1 || XLENGTH(ops) > 100000)
        error_argument("'kernel' program: 'ops' and 'args' must be integer and double vectors "
                       "of one length");
    if (!isInteger(codes) || XLENGTH(codes) < 1 || XLENGTH(codes) > XLENGTH(ops))
        error_argument("'kernel' program: 'codes' must be an integer vector");
    if (!isReal(kpar) || XLENGTH(kpar) != (R_xlen_t) KPAR_COUNT * XLENGTH(codes))
        error_argument("'kernel' program: 'kpar' must hold %d doubles per base kernel", KPAR_COUNT);
    k->nops = (int) XLENGTH(ops);
    k->ops = INTEGER(ops);
    k->args = REAL(args);
    k->nbase = (int) XLENGTH(codes);
    k->nweights = as_count(nweights, "nweights", 0, k->nops);
    k->bases = (kernel_spec *) R_alloc((size_t) k->nbase, sizeof(kernel_spec));
    k->any_distance = k->any_inner = k->any_bessel = k->any_string = 0;
    k->bessel_order = 0.0;
    k->strings_indexed = k->fixed_first = 0;
    k->sparse = k->sparse_d = 0;
    for (int b = 0; b < k->nbase; b++) {
        kernel_spec *spec = k->bases + b;
        base_spec(INTEGER(codes)[b], REAL(kpar) + (size_t) b * KPAR_COUNT, spec);
        if (spec->code == KERNEL_STRING) k->any_string = 1;
        else if (kernel_is_distance(spec->code)) k->any_distance = 1;
        else k->any_inner = 1;
        if (spec->code == KERNEL_BESSEL) {
            k->any_bessel = 1;
            if (spec->order > k->bessel_order) k->bessel_order = spec->order;
        }
    }
    if (k->any_string && (k->any_distance || k->any_inner))
        error_argument("'kernel' program mixes string kernels with kernels on numbers");
    k->depth = program_depth(k);
}

/* Values from which the points are prepared on the threads (wide data:
 * 500 x 200000 is 10^8 values, a second on one thread). */
#define PREP_THREAD_VALUES 4e6

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
static void robust_shift(const double *x, int ldx, int n, int d, double *shift)
{
    if (n < 3) return;
    double *r = (double *) R_alloc((size_t) n, sizeof(double));
    double *q = (double *) R_alloc((size_t) n, sizeof(double));
    double *col = (double *) R_alloc((size_t) n, sizeof(double));
    memset(r, 0, (size_t) n * sizeof(double));
    for (int j = 0; j < d; j++) {
        const double *c = x + (size_t) j * ldx;
        for (int i = 0; i < n; i++) r[i] += (c[i] - shift[j]) * (c[i] - shift[j]);
    }
    double total = 0.0;
    for (int i = 0; i < n; i++) total += r[i];
    memcpy(q, r, (size_t) n * sizeof(double));
    double rmed = median_of(q, n);
    if (rmed <= DBL_MAX && rmed >= SHIFT_TYPICAL * (total / n)) return; /* Inf: go on */
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
    if (m == 0) return;
    double rm = median_of(r, m), qm = median_of(q, m);
    if (!(rm > SHIFT_FAR * qm)) return;
    memcpy(shift, med, (size_t) d * sizeof(double));
}

/* Distance kernels depend on x - y only. Their points are shifted by the
 * column means of the training data before the norms are taken: the
 * identity ||x - y||^2 = ||x||^2 + ||y||^2 - 2 x'y then does not lose all its
 * digits on data far from the origin (such as coordinates around 1e6).
 * Returns the column means of rows 0..n-1 of x (leading dimension ldx), or
 * NULL when no part of the kernel needs them; robust_shift() replaces
 * them by the column medians where a few far rows pull the means away
 * from the others. */
const double *kernel_shift(const kernel_eval *k, const double *x, int ldx, int n, int d)
{
    if (!k->any_distance || n < 1) return NULL;
    double *shift = (double *) R_alloc((size_t) d + 1, sizeof(double));
    int threads = prep_threads(k, n, d);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#else
    (void) threads;
#endif
    for (int j = 0; j < d; j++) {
        const double *col = x + (size_t) j * ldx;
        double s = 0.0;
        for (int i = 0; i < n; i++) s += col[i];
        shift[j] = s / n;
        if (!R_FINITE(shift[j])) shift[j] = 0.0; /* huge data: no shift */
    }
    robust_shift(x, ldx, n, d, shift);
    return shift;
}

/* Rows and columns per block of transpose_points(): a block's source
 * columns (TRANSPOSE_BLOCK runs of TRANSPOSE_BLOCK doubles) and its
 * destination points stay in the L1 cache. */
#define TRANSPOSE_BLOCK 32

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

/* Conformal weights for kernel k: a list of one vector per conformal part
 * (their lengths are checked where the points are prepared). */
void check_weights(const kernel_eval *k, SEXP weights, const char *what)
{
    if (TYPEOF(weights) != VECSXP || XLENGTH(weights) != k->nweights)
        error_argument("'%s' must be a list of %d conformal weight vectors", what, k->nweights);
}

/* Prepare rows row0..row0+n-1 of x (leading dimension ldx) for kernel k:
 * transposed as the base kernels need them (shift: from kernel_shift() on
 * the training data), and the conformal weights of these rows, from the R
 * list weights (one double vector per conformal part, indexed like x). */
void kernel_points_prepare(const kernel_eval *k, const double *x, int ldx, int row0,
                           int n, int d, const double *shift, SEXP weights,
                           kernel_points *p)
{
    if (k->any_string) error_argument("'kernel' is a string kernel: its points must be strings");
    p->n = n;
    p->d = d;
    p->first = 0;
    p->inner = p->inner_norms = p->shifted = p->shifted_norms = NULL;
    p->sparse = NULL;
    p->sparse_norms = NULL;
    int threads = prep_threads(k, n, d);
    if (k->any_inner) p->inner = transpose_points(x, ldx, row0, n, d, NULL, &p->inner_norms, threads);
    if (k->any_distance)
        p->shifted = transpose_points(x, ldx, row0, n, d, shift, &p->shifted_norms,
                                      threads);
    points_weights(k, weights, row0, n, p);
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
    const double *shift = kernel_shift(k, REAL(rows), m, m, d);
    kernel_points_prepare(k, REAL(rows), m, 0, m, d, shift, weights, p);
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
    sparse_csr *s = (sparse_csr *) R_alloc(1, sizeof(sparse_csr));
    sparse_rows_from_R(x, "x", s);
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

/* The two sets of points of a call, checked: the moving one (new rows, data
 * rows; R_NilValue when the call has one set) and the fixed one (training
 * rows, landmarks, or the one set). For kernels on numbers, double
 * matrices with one number of columns, which is returned; for string
 * kernels, character vectors without NA, indexed here together (the moving
 * strings first), and 0 is returned. */
int kernel_point_sets(kernel_eval *k, SEXP moving, const char *mwhat, SEXP fixed,
                      const char *fwhat, int threads)
{
    k->sparse = 0;
    k->prep_threads = threads > 1 ? threads : 1;
    if (!k->any_string && is_sparse_rows(fixed)) {
        sparse_csr fs, ms;
        sparse_rows_from_R(fixed, fwhat, &fs);
        if (fs.d < 1) error_argument("'%s' must have at least 1 column", fwhat);
        k->sparse = 1;
        k->sparse_d = fs.d;
        if (isNull(moving)) return fs.d;
        if (!is_sparse_rows(moving))
            error_argument("'%s' must be sparse rows, as '%s' are", mwhat, fwhat);
        sparse_rows_from_R(moving, mwhat, &ms);
        if (ms.d != fs.d)
            error_argument("'%s' must have %d columns, not %d", mwhat, fs.d, ms.d);
        return fs.d;
    }
    if (!k->any_string) {
        if (is_sparse_rows(moving))
            error_argument("'%s' must be sparse rows, as '%s' are", fwhat, mwhat);
        check_double_matrix(fixed, fwhat);
        if (ncols(fixed) < 1) error_argument("'%s' must have at least 1 column", fwhat);
        int d = ncols(fixed);
        if (isNull(moving)) return d;
        check_double_matrix(moving, mwhat);
        if (ncols(moving) != d)
            error_argument("'%s' must have %d columns, not %d", mwhat, d, ncols(moving));
        return d;
    }
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
    return 0;
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

/* Rough cost of one value of a base kernel, in units of one multiply-add. */
static double value_cost(const kernel_spec *k, int d)
{
    switch (k->code) {
    case KERNEL_STRING: return string_value_cost(k);
    case KERNEL_ANOVA: return 16.0 * d + 16.0;  /* an exp per coordinate */
    case KERNEL_SPLINE: return 4.0 * d + 16.0;
    case KERNEL_BESSEL: return d + 64.0 * (floor(k->order) + 2.0);
    default: return d + 16.0;
    }
}

static double program_cost(const kernel_eval *k, int d)
{
    double cost = 0.0;
    for (int b = 0; b < k->nbase; b++) cost += value_cost(k->bases + b, d);
    return cost + 4.0 * (k->nops - k->nbase);
}

/* The error for kernel values that are Inf or NaN (what: "" for the fit,
 * or "between 'newdata' and the training data " for predict). */
void kernel_nonfinite_error(const kernel_eval *k, const char *what)
{
    const char *hint = "the data give values too large (rescale the data)";
    if (k->any_string) {
        hint = "the kernel expression gives values too large (use smaller scales, "
            "powers or 'lambda')";
    } else if (k->nops > 1) {
        hint = "the kernel expression gives values too large (rescale the data, or "
            "use smaller scales, powers or parameters)";
    } else if (k->bases[0].code == KERNEL_POLY) {
        hint = "'kpar' gives values too large (try a smaller degree or scale)";
    } else if (k->bases[0].code == KERNEL_ANOVA) {
        hint = "'kpar' gives values too large (try a smaller degree)";
    }
    /* the argument whose values they are: 'x' for the fit (what "") */
    error_data("kernel values %sare not finite: %s%s", what, hint,
               *what ? "" : " (in 'x')");
}

/* dst[i - i0] = base kernel (a_i, b_j) for i in [i0, i1). work: floor(order)
 * + 1 doubles for besseldot. */
static void base_segment(const kernel_spec *spec, const kernel_points *a,
                         const kernel_points *b, int j, int i0, int i1, double *dst,
                         double *work)
{
    if (spec->code == KERNEL_STRING) {
        string_segment(spec, a->first, i0, i1, b->first + j, dst, work);
        return;
    }
    if (a->sparse) {
        sparse_segment(spec, a, b, j, i0, i1, dst, work);
        return;
    }
    int d = a->d, dist = kernel_is_distance(spec->code);
    const double *ap = dist ? a->shifted : a->inner;
    const double *an = dist ? a->shifted_norms : a->inner_norms;
    const double *bj = (dist ? b->shifted : b->inner) + (size_t) j * d;
    double bn = (dist ? b->shifted_norms : b->inner_norms)[j];
    if (kernel_fast_supported(spec)) {
        /* the distance or inner product as the fast blocks form it, then
         * their vector code for the kernel's function */
        int diff = dist && !kernel_expanded_form(spec, d);
        for (int i = i0; i < i1; i++) {
            const double *ai = ap + (size_t) i * d;
            double s = 0.0;
            if (diff) {
                for (int k = 0; k < d; k++) s += (ai[k] - bj[k]) * (ai[k] - bj[k]);
            } else if (dist) {
                s = kernel_sq_distance(ai, bj, d, an[i], bn);
            } else {
                s = kernel_dot(ai, bj, d);
            }
            dst[i - i0] = s;
        }
        kernel_fast_transform(spec, dst, i1 - i0);
        /* the expanded form's lost digits and a point against itself */
        if (dist && !diff)
            kernel_fast_refine(spec, ap + (size_t) i0 * d, an + i0, bj, bn, d, i1 - i0, dst);
        return;
    }
    for (int i = i0; i < i1; i++)
        dst[i - i0] = kernel_value(spec, ap + (size_t) i * d, bj, d, an[i], bn, work);
}

/* col[i] = k(a_i, b_j) for i in [i0, a->n): the program run on segments.
 * Stack level 0 is the output itself; levels 1.. are in stack, each of
 * a->n doubles. */
static void program_segment(const kernel_eval *k, const kernel_points *a,
                            const kernel_points *b, int j, int i0, double *col,
                            double *stack, double *work)
{
    int i1 = a->n, len = i1 - i0;
    if (k->nops == 1) {
        base_segment(k->bases, a, b, j, i0, i1, col + i0, work);
        return;
    }
    int top = 0; /* number of values on the stack */
#define LEVEL(t) ((t) == 0 ? col + i0 : stack + (size_t) ((t) - 1) * a->n)
    for (int o = 0; o < k->nops; o++) {
        double arg = k->args[o];
        double *s = top > 0 ? LEVEL(top - 1) : NULL;
        switch (k->ops[o]) {
        case OP_BASE:
            base_segment(k->bases + (int) arg, a, b, j, i0, i1, LEVEL(top), work);
            top++;
            break;
        case OP_ADD: {
            double *u = LEVEL(top - 2);
            for (int i = 0; i < len; i++) u[i] += s[i];
            top--;
            break;
        }
        case OP_MUL: {
            double *u = LEVEL(top - 2);
            for (int i = 0; i < len; i++) u[i] *= s[i];
            top--;
            break;
        }
        case OP_SCALE:
            for (int i = 0; i < len; i++) s[i] *= arg;
            break;
        case OP_POWER:
            for (int i = 0; i < len; i++) s[i] = R_pow_di(s[i], (int) arg);
            break;
        case OP_EXP:
            for (int i = 0; i < len; i++) s[i] = exp(s[i]);
            break;
        case OP_CONFORMAL: {
            const double *wa = a->weights[(int) arg] + i0;
            double wb = b->weights[(int) arg][j];
            for (int i = 0; i < len; i++) s[i] *= wa[i] * wb;
            break;
        }
        default:
            break; /* unreachable: ops are checked in kernel_eval_from_R */
        }
    }
#undef LEVEL
}

/* Scratch per thread of the base kernels' value functions: besseldot's
 * floor(order) + 1 doubles, the string kernels' string_work_length(). */
static size_t work_length(const kernel_eval *k)
{
    size_t len = (size_t) floor(k->bessel_order) + 1;
    if (k->any_string) {
        size_t s = string_work_length(k);
        if (s > len) len = s;
    }
    /* sparse rows: SPARSE_COLUMNS rows scattered side by side, before the
     * rest (sparse_columns()) */
    if (k->sparse) len += SPARSE_COLUMNS * (size_t) k->sparse_d;
    return len;
}

/* The value functions' scratch for threads threads, zero (sparse rows
 * scatter into it and leave it zero). */
static double *kernel_work(const kernel_eval *k, int threads)
{
    size_t len = work_length(k) * (size_t) threads;
    double *work = (double *) R_alloc(len, sizeof(double));
    memset(work, 0, len * sizeof(double));
    return work;
}

/* kernel_block() for a single gathered-product kernel on sparse rows:
 * panels of SPARSE_PANEL columns, each in tiles of SPARSE_PANEL_ROWS rows
 * from its diagonal (lower_only: the panel's square on the diagonal is
 * computed whole) or from row 0, by sparse_tiles.c, the panels spread over
 * the threads; blocks of panels of about KERNEL_BLOCK_WORK values, with
 * the interrupt check between them. */
#define SPARSE_PANEL 64
#define SPARSE_PANEL_ROWS 256
static void sparse_tiles_block(const kernel_eval *k, const kernel_points *a,
                               const kernel_points *b, int lower_only, double *out,
                               int threads, const char *what)
{
    int rows = a->n, cols = b->n;
    sparse_tiles *plan = sparse_tiles_prepare(k->bases, a, b, threads);
    tile_kernels_ready();
    int j0 = 0;
    while (j0 < cols) {
        int j1 = column_block_end(j0, cols, rows, lower_only, 0, 1.0, 1.0, KERNEL_BLOCK_WORK,
                                  SPARSE_PANEL * threads);
        int nonfinite = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1) \
    reduction(|:nonfinite)
#endif
        for (int c = j0; c < j1; c += SPARSE_PANEL) {
            int nc = j1 - c < SPARSE_PANEL ? j1 - c : SPARSE_PANEL;
            for (int i = lower_only && c < rows ? c : 0; i < rows; i += SPARSE_PANEL_ROWS) {
                int nr = rows - i < SPARSE_PANEL_ROWS ? rows - i : SPARSE_PANEL_ROWS;
                nonfinite |= sparse_tile(plan, i, nr, c, nc, out + (size_t) c * rows + i,
                                         (size_t) rows);
            }
        }
        if (nonfinite) kernel_nonfinite_error(k, what);
        if (lower_only == KERNEL_SYMMETRIC) mirror_lower_columns(out, rows, j0, j1, threads);
        R_CheckUserInterrupt();
        progress_fill_columns(j1, cols, lower_only);
        j0 = j1;
    }
}

/* The upper triangle of columns j0..j1-1 of the n x n matrix K from its
 * lower one: K[c, i] = K[i, c] for i > c, c in j0..j1-1, right after the
 * kernel fills those columns, while they are still in the cache. Tiles of
 * MIRROR_ROWS rows (i) by the block's columns, so that the strided reads of
 * a tile share their cache lines; the tiles spread over the threads. The
 * loop it replaces, element by element down each row on one thread, was
 * 44% of kernel_matrix() at n = 8000 (perf). No R API. */
#define MIRROR_ROWS 32
void mirror_lower_columns(double *K, int n, int j0, int j1, int threads)
{
    size_t ld = (size_t) n;
    int first = j0 + 1, ntiles = (n - first + MIRROR_ROWS - 1) / MIRROR_ROWS;
    if (ntiles <= 0) return;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8) if (threads > 1)
#endif
    for (int t = 0; t < ntiles; t++) {
        int i0 = first + t * MIRROR_ROWS, i1 = i0 + MIRROR_ROWS < n ? i0 + MIRROR_ROWS : n;
        for (int i = i0; i < i1; i++) {
            int c1 = i < j1 ? i : j1;
            double *row = K + (size_t) i * ld;
            for (int c = j0; c < c1; c++) row[c] = K[i + (size_t) c * ld];
        }
    }
}

/* The kernel between the points of a (rows) and b (columns) into out
 * (leading dimension a->n): column j gets k(a_i, b_j) for i from j
 * (lower_only: the lower triangle with the diagonal; KERNEL_SYMMETRIC: the
 * same, then copied into the upper triangle, a and b the same points) or 0
 * to a->n - 1.
 * Columns are done in blocks of about KERNEL_BLOCK_WORK, in parallel within
 * a block, with an interrupt check between blocks. Errors if a value is not
 * finite: an overflowing kernel would reach LAPACK as Inf and come back as
 * NaN. what: see kernel_nonfinite_error(). */
void kernel_block(const kernel_eval *k, const kernel_points *a, const kernel_points *b,
                  int lower_only, double *out, int threads, const char *what)
{
    int rows = a->n, cols = b->n;
    if (a->d != b->d) error_argument("kernel points of %d and %d coordinates", a->d, b->d);
    if (kernel_fast_points(k)) {
        if (kernel_fast_block(k->bases, a, b, lower_only, out, threads, KERNEL_BLOCK_WORK))
            kernel_nonfinite_error(k, what);
        return;
    }
    /* the tiles prepare the set whole (their head chosen from all its rows,
     * every row split): worth it for the kernel of one whole set with
     * itself (the exact fill, kernel_matrix(x)), not for the panels of
     * predict() and Nystrom or kcca()'s pivots, which call again and again
     * on parts of the rows; those keep one rule for every row, so a row of
     * newdata gets the same bits alone or among others */
    if (k->sparse && k->nops == 1 && sparse_tiles_supported(k->bases) &&
        a->sparse == b->sparse && a->first == 0 && b->first == 0 &&
        a->n == a->sparse->n && b->n == b->sparse->n) {
        sparse_tiles_block(k, a, b, lower_only, out, threads, what);
        return;
    }
    /* bessel_j_ex may warn through R, so besseldot is computed on one thread */
    if (k->any_bessel) threads = 1;
    size_t work_len = work_length(k);
    double *work = kernel_work(k, threads);
    size_t stack_len = (size_t) (k->depth > 1 ? k->depth - 1 : 0) * (size_t) rows;
    double *stack = (double *) R_alloc(stack_len * (size_t) threads + 1, sizeof(double));
    double cost = program_cost(k, a->d);
    int step = k->sparse && k->nops == 1 ? SPARSE_COLUMNS : 1;

    int j0 = 0;
    while (j0 < cols) {
        int j1 = column_block_end(j0, cols, rows, lower_only, 0, cost, cost,
                                  KERNEL_BLOCK_WORK, KERNEL_BLOCK_MIN_COLUMNS * threads);
        int nonfinite = 0;
        /* string kernels: the dense part of the block's tile, one product */
        if (k->any_string) string_tiles(k, a, b, lower_only ? j0 : 0, j0, j1, threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1) \
    reduction(|:nonfinite)
#endif
        for (int j = j0; j < j1; j += step) {
#ifdef _OPENMP
            int t = omp_get_thread_num();
#else
            int t = 0;
#endif
            int nj = j1 - j < step ? j1 - j : step, bad = 0;
            if (step > 1) {
                /* a single kernel on sparse rows: SPARSE_COLUMNS columns at a time */
                sparse_columns(k->bases, a, b, j, nj, 0, rows, lower_only, out + (size_t) j * rows,
                               (size_t) rows, work + work_len * (size_t) t);
            }
            for (int c = j; c < j + nj; c++) {
                double *col = out + (size_t) c * rows;
                int i0 = lower_only ? c : 0;
                if (i0 >= rows) continue;
                if (step == 1)
                    program_segment(k, a, b, c, i0, col, stack + stack_len * (size_t) t,
                                    work + work_len * (size_t) t);
                for (int i = i0; i < rows; i++) bad |= !(fabs(col[i]) <= DBL_MAX); /* Inf or NaN */
            }
            nonfinite |= bad;
        }
        /* outside the parallel region: R API calls are safe here */
        if (nonfinite) kernel_nonfinite_error(k, what);
        if (lower_only == KERNEL_SYMMETRIC) mirror_lower_columns(out, rows, j0, j1, threads);
        R_CheckUserInterrupt();
        progress_fill_columns(j1, cols, lower_only);
        j0 = j1;
    }
    if (k->any_string) string_tiles_release(k);
}

/* Whether the fast blocks of kernel_fast.c compute the kernel k on the
 * call's points: a single base kernel of theirs, on dense rows. */
int kernel_fast_points(const kernel_eval *k)
{
    return k->nops == 1 && !k->sparse && kernel_fast_supported(k->bases);
}

/* Whether the tiles of kernel_tile() compute the kernel k on the call's
 * points without R: a single base kernel of kernel_fast.c's on dense rows,
 * or any single base kernel but besseldot (whose Bessel function may warn
 * through R) on sparse rows. The matrix-free passes use the symmetry of
 * the kernel matrix through these tiles. */
int kernel_tiles_shared(const kernel_eval *k)
{
    if (k->sparse) return k->nops == 1 && k->bases[0].code != KERNEL_BESSEL;
    return kernel_fast_points(k);
}

/* A source of tiles of the kernel between the points of a and b, on any
 * thread: kernel_fast.c's plan for dense rows; for sparse rows,
 * sparse_tiles.c's plan (a kernel of a gathered product: the frequent
 * columns as a dense head, the rest indexed per tile) or the value
 * function of src/sparse.c (the others) with scratch for each of threads
 * threads. */
struct kernel_tiles {
    kernel_fast_plan *fast;
    sparse_tiles *sparse;
    const kernel_spec *spec;
    kernel_points a, b;
    double *work;
    size_t work_len;
    int threads;
};

kernel_tiles *kernel_tiles_prepare(const kernel_eval *k, const kernel_points *a,
                                   const kernel_points *b, int threads)
{
    if (!kernel_tiles_shared(k)) error_argument("the kernel has no tiles on these points");
    kernel_tiles *P = (kernel_tiles *) R_alloc(1, sizeof(kernel_tiles));
    memset(P, 0, sizeof(kernel_tiles));
    P->spec = k->bases;
    if (!k->sparse) {
        P->fast = kernel_fast_prepare(k->bases, a, b);
        return P;
    }
    if (sparse_tiles_supported(k->bases)) {
        P->sparse = sparse_tiles_prepare(k->bases, a, b, threads);
        tile_kernels_ready();
        return P;
    }
    P->a = *a;
    P->b = *b;
    P->threads = threads;
    P->work_len = work_length(k);
    P->work = kernel_work(k, threads);
    (void) simd_active(); /* the CPU check, once, here rather than on the threads */
    return P;
}

/* out (nr x nc, leading dimension nr) = the kernel between a's points r0 ..
 * r0 + nr - 1 (r0 a multiple of 8) and b's points c0 .. c0 + nc - 1. No R
 * API: callable inside a parallel region of at most the prepared number
 * of threads. Returns 1 if a value is not finite. */
int kernel_tile(const kernel_tiles *P, int r0, int nr, int c0, int nc, double *out)
{
    if (P->fast) return kernel_fast_tile(P->fast, r0, nr, c0, nc, out);
    if (P->sparse) return sparse_tile(P->sparse, r0, nr, c0, nc, out, (size_t) nr);
#ifdef _OPENMP
    int t = omp_get_thread_num();
#else
    int t = 0;
#endif
    double *work = P->work + P->work_len * (size_t) (t < P->threads ? t : 0);
    int bad = 0;
    sparse_columns(P->spec, &P->a, &P->b, c0, nc, r0, r0 + nr, 0, out, (size_t) nr, work);
    for (size_t i = 0; i < (size_t) nr * nc; i++) bad |= !(fabs(out[i]) <= DBL_MAX);
    return bad;
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
    if (p->sparse) v.sparse_norms = p->sparse_norms + i0;
    for (int w = 0; w < k->nweights; w++) wbuf[w] = p->weights[w] + i0;
    v.weights = wbuf;
    return v;
}

/* out[i] = k(p_i, p_i) for the n points of p: one kernel value per point
 * (not a tile per block of points), on one thread, with an interrupt check
 * every few thousand points. Errors if a value is not finite. */
void kernel_diagonal(const kernel_eval *k, const kernel_points *p, double *out)
{
    double *work = kernel_work(k, 1);
    double *stack = (double *) R_alloc((size_t) (k->depth > 1 ? k->depth - 1 : 0) + 1,
                                       sizeof(double));
    const double **wbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    for (int i = 0; i < p->n; i++) {
        kernel_points v = kernel_points_view(k, p, i, 1, wbuf);
        program_segment(k, &v, &v, 0, 0, out + i, stack, work);
        if (!(fabs(out[i]) <= DBL_MAX)) kernel_nonfinite_error(k, "");
        if (i % 4096 == 4095) R_CheckUserInterrupt();
    }
}

/* Fill the lower triangle (with diagonal) of the n x n buffer K with
 * k(x_i, x_j); x is n x d, column-major; weights: the conformal weights of
 * the rows of x. */
void kernel_fill_lower(const kernel_eval *k, const double *x, int n, int d,
                       SEXP weights, double *K, int threads)
{
    kernel_points p;
    kernel_points_prepare(k, x, n, 0, n, d, kernel_shift(k, x, n, n, d), weights, &p);
    kernel_block(k, &p, &p, 1, K, threads, "");
}

/* .Call (kernel_cross() in R/kernel_matrix.R): the cross-kernel k(z_i, x_j),
 * an nz x m matrix.
 * z: nz x d double matrix; x: m x d double matrix, the training data (its
 * column means shift the distance kernels); for a string kernel, z and x
 * are character vectors; kernel: a program from fastkpca:::kernel_program();
 * zweights, xweights: the conformal weights of the rows of z and x (lists);
 * threads: integer >= 1. */
SEXP kernel_cross(SEXP z, SEXP x, SEXP kernel, SEXP zweights, SEXP xweights,
                  SEXP threads)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    int nthreads = as_threads(threads);
    kernel_point_sets(&k, z, "z", x, "x", nthreads);

    kernel_points zp, xp;
    const double *shift = kernel_points_fixed(&k, x, xweights, &xp);
    kernel_points_rows(&k, z, 0, k.any_string ? (int) XLENGTH(z) : data_rows(z), shift, zweights,
                       &zp);

    SEXP ans = PROTECT(allocMatrix(REALSXP, zp.n, xp.n));
    advise_huge_pages(REAL(ans), (size_t) zp.n * xp.n * sizeof(double));
    kernel_block(&k, &zp, &xp, 0, REAL(ans), nthreads,
                 "between 'newdata' and the training data ");
    UNPROTECT(1);
    return ans;
}

/* .Call (kernel_matrix() in R/kernel_matrix.R, and the landmarks' kernel of
 * a Nystrom fit): the symmetric kernel matrix k(x_i, x_j), n x n: the lower
 * triangle is computed, the upper one copied from it block by block.
 * x: n x d double matrix (a character vector for a string kernel); kernel:
 * a program; weights: the conformal weights of the rows of x; threads:
 * integer >= 1. */
SEXP kernel_matrix(SEXP x, SEXP kernel, SEXP weights, SEXP threads)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    int nthreads = as_threads(threads);
    kernel_point_sets(&k, R_NilValue, NULL, x, "x", nthreads);
    kernel_points p;
    kernel_points_fixed(&k, x, weights, &p);
    int n = p.n;
    SEXP ans = PROTECT(allocMatrix(REALSXP, n, n));
    double *K = REAL(ans);
    advise_huge_pages(K, (size_t) n * n * sizeof(double));
    kernel_block(&k, &p, &p, KERNEL_SYMMETRIC, K, nthreads, "");
    UNPROTECT(1);
    return ans;
}

/* .Call (kernel_self() in R/kernel_matrix.R): the diagonal k(x_i, x_i) of
 * the kernel matrix of the rows of x (strings for a string kernel),
 * without the matrix. x: n x d double matrix; kernel: a program; weights:
 * the conformal weights of the rows of x. Returns a double vector of n. */
SEXP kernel_self(SEXP x, SEXP kernel, SEXP weights)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    kernel_point_sets(&k, R_NilValue, NULL, x, "x", 1);
    kernel_points p;
    kernel_points_fixed(&k, x, weights, &p);
    SEXP ans = PROTECT(allocVector(REALSXP, p.n));
    kernel_diagonal(&k, &p, REAL(ans));
    UNPROTECT(1);
    return ans;
}
