/* The fit: kernel, centering and eigenpairs on one n x n buffer.
 *
 * The buffer is the only n x n allocation. with_square_buffer() (memory.c)
 * frees it when the fit returns, errors or is interrupted; other scratch
 * comes from R_alloc. */
#include "fastkpca.h"
#include <string.h>
#include <math.h>

/* Tolerance on |P - P'| relative to max |P| for a precomputed kernel matrix. */
#define SYMMETRY_RTOL 1.5e-6

/* Copy the symmetric part (P + P') / 2 of the user's n x n matrix into the
 * lower triangle of K, checking that P is finite and symmetric; the user's
 * matrix is left as it is. */
static void copy_symmetric_lower(const double *P, int n, double *K)
{
    double largest = 0.0, asymmetry = 0.0;
    for (int j = 0; j < n; j++) {
        const double *pcol = P + (size_t) j * n;
        double *kcol = K + (size_t) j * n;
        for (int i = j; i < n; i++) {
            double a = pcol[i], b = P[j + (size_t) i * n];
            if (!R_FINITE(a) || !R_FINITE(b))
                error_argument("'x' must not contain missing or infinite values");
            double diff = fabs(a - b), size = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
            if (diff > asymmetry) asymmetry = diff;
            if (size > largest) largest = size;
            kcol[i] = 0.5 * (a + b);
        }
        if (j % 256 == 255) R_CheckUserInterrupt();
    }
    if (asymmetry > SYMMETRY_RTOL * largest)
        error_argument("'x' must be a symmetric kernel matrix when 'kernel' is \"precomputed\"");
}

/* What the steps of a fit need, and the buffer they share. */
typedef struct {
    const kernel_eval *kernel; /* NULL for a precomputed kernel matrix */
    kernel_points points;      /* the rows of x (or strings) as the kernel takes them */
    SEXP x;
    int n, d, features;
    double threshold;
    int solver, threads;
    double tol;
    int maxit, ncv, exact_method;
    double variance;  /* > 0: the fewest components reaching this proportion */
    int oversample, power;  /* the randomized solver's settings */
    SEXP step;              /* progress: NULL or an R function (R/progress.R) */
} fit_job;

/* The work of each step of a fit, in multiply-adds, for the shares of its
 * progress (args.c): estimates, good enough for a progress bar. A threshold
 * fit's count of vectors is not known before the solver: n / 10 stands in. */
static void fit_work(const fit_job *job, double *work)
{
    double n = job->n, k = job->features > 0 ? job->features : fmax(1.0, n / 10);
    work[PROGRESS_FILL] = n * n / 2 * (job->kernel == NULL ? 1 : job->d + 8.0);
    work[PROGRESS_CENTER] = 2 * n * n;
    work[PROGRESS_REDUCE] = work[PROGRESS_BACK] = 0.0;
    if (job->solver == SOLVER_ITERATIVE) {
        work[PROGRESS_SOLVE] = 10 * n * n * job->ncv;  /* some ten restarts */
    } else if (job->solver == SOLVER_RANDOMIZED) {
        work[PROGRESS_SOLVE] = 2 * n * n * (k + job->oversample) * (2.0 * job->power + 2);
    } else {
        work[PROGRESS_REDUCE] = 4.0 / 3.0 * n * n * n;
        work[PROGRESS_SOLVE] = 30 * n * k;
        work[PROGRESS_BACK] = 2 * n * n * k;
    }
}

/* The eigenvectors of a fit: the R matrix returned, which the solvers
 * write into (vector_store in fastkpca.h), so that they are held once. */
typedef struct {
    SEXP vectors;
    PROTECT_INDEX index;
} fit_vectors;

static double *take_vectors(void *ctx, int n, int k)
{
    fit_vectors *fv = (fit_vectors *) ctx;
    REPROTECT(fv->vectors = allocMatrix(REALSXP, n, k), fv->index);
    /* huge pages before the solver's first write (scaled_columns()) */
    advise_huge_pages(REAL(fv->vectors), (size_t) n * k * sizeof(double));
    return REAL(fv->vectors);
}

/* The found leading columns of the vectors, as an R matrix: the store's
 * own, or (where a pair at the threshold was dropped after the solver
 * wrote its columns) a copy of the found ones, which is n x found. */
static SEXP found_vectors(fit_vectors *fv, int n, int found)
{
    if (fv->vectors != R_NilValue && ncols(fv->vectors) == found) return fv->vectors;
    SEXP out = allocMatrix(REALSXP, n, found);
    if (found > 0)
        memcpy(REAL(out), REAL(fv->vectors), (size_t) n * found * sizeof(double));
    return out;
}

/* The eigenpairs of the centered buffer K (trace its trace) by the fit's
 * solver: their count; *values (R_alloc'ed) and *vectors (in fv's R
 * matrix, n x the count or more); the iterative solver's convergence, its
 * restarts and largest relative residual. */
static int fit_eigenpairs(fit_job *job, double *K, double trace, double largest,
                          fit_vectors *fv, double **values, double **vectors,
                          int *converged, int *restarts, double *residual)
{
    int n = job->n, f = job->features;
    vector_store store = {take_vectors, fv};
    if (job->variance > 0)
        return variance_eigen(K, n, largest, job->variance, trace, job->exact_method,
                              values, vectors, store, job->threads);
    if (job->solver == SOLVER_EXACT)
        return exact_eigen(K, n, largest, f, job->threshold * n, job->exact_method, values,
                           vectors, store, job->threads);
    *values = (double *) R_alloc((size_t) f, sizeof(double));
    *vectors = take_vectors(fv, n, f);
    if (job->solver == SOLVER_ITERATIVE)
        *converged = top_eigen_lanczos(K, n, f, job->ncv, job->tol, job->maxit, *values,
                                       *vectors, restarts, residual, job->threads);
    else
        top_eigen_randomized(K, n, f, job->oversample, job->power, job->threads, *values,
                             *vectors);
    /* the exact solvers fix the signs themselves (eigen.c) */
    orient_columns(n, f, *vectors);
    return f;
}

/* norms[j] = ||P[, j] - value_j V[, j]|| for c columns (n rows), value_j
 * = values[j] / n, the squares summed in order. */
static void residual_norms(int n, int c, const double *P, const double *V,
                           const double *values, double *norms)
{
    for (int j = 0; j < c; j++) {
        const double *p = P + (size_t) j * n, *v = V + (size_t) j * n;
        double value = values[j] / n, sum = 0.0;
        for (int i = 0; i < n; i++) {
            double r = p[i] - value * v[i];
            sum += r * r;
        }
        norms[j] = sqrt(sum);
    }
}

/* certificate_norms() on wide data (points read in place): K again into
 * the buffer by the wide blocks (the fill's time), then one product with
 * its lower triangle, with scratch of n x 2 found; kernel_times_vectors()'
 * tiles took six times the fill at 500 x 200000. */
static void wide_certificate(const fit_job *job, double *K, const double *vectors,
                             const double *values, int found, double *norms)
{
    int n = job->n, nt = found < job->threads ? found : job->threads;
    double *HV = (double *) R_alloc(2 * (size_t) n * found, sizeof(double));
    double *P = HV + (size_t) n * found;
    center_in_columns(n, found, vectors, HV, 1.0, nt);
    kernel_block(job->kernel, &job->points, &job->points, 1, K, job->threads, "");
    symm_lower(K, n, HV, found, P, job->threads);
    center_in_columns(n, found, P, P, (double) n, nt);
    residual_norms(n, found, P, vectors, values, norms);
}

/* The certificate's residual norms ||(Kc/n) v - value v|| of the found
 * pairs (values: of Kc), from P = (Kc/n) V. The iterative and randomized
 * solvers only read the buffer, which still holds Kc: one product. The
 * exact ones' reduction overwrote it, and its space, of no further use,
 * holds H V, P and the product's tiles, c vectors at a time (all of them
 * unless they fill about half of it): K (H V) from the points the fill read and packed
 * (kernel_times_vectors(), matrix_free.c; the user's matrix for a
 * precomputed kernel), then P = H K H V / n. No n x n matrix, no memory
 * beyond the buffer (but where it is too small for the tiles). Measured,
 * not bounded. */
static void certificate_norms(const fit_job *job, double *K, const double *vectors,
                              const double *values, int found, double *norms)
{
    int n = job->n, nt = found < job->threads ? found : job->threads;
    if (found == 0) return;
    if (job->variance == 0 &&
        (job->solver == SOLVER_ITERATIVE || job->solver == SOLVER_RANDOMIZED)) {
        double *P = (double *) R_alloc((size_t) n * found, sizeof(double));
        symm_lower(K, n, vectors, found, P, job->threads);
        for (size_t i = 0; i < (size_t) n * found; i++) P[i] /= n;
        residual_norms(n, found, P, vectors, values, norms);
        return;
    }
    if (job->kernel && job->points.in_place) {
        wide_certificate(job, K, vectors, values, found, norms);
        return;
    }
    /* [H V | P | the product's tiles] in the buffer, c columns at a time */
    size_t nn = (size_t) n * n, tiles = job->kernel ? kernel_times_scratch(job->threads) : 0;
    int c = nn > tiles ? (int) ((nn - tiles) / (2 * (size_t) n)) : 0;
    if (c > found) c = found;
    double *HV = K, *P, *T;
    if (c < 1) {  /* a buffer too small: scratch */
        c = found;
        HV = (double *) R_alloc(2 * (size_t) n * c + tiles, sizeof(double));
    }
    P = HV + (size_t) n * c;
    T = P + (size_t) n * c;
    for (int j0 = 0; j0 < found; j0 += c) {
        int w = found - j0 < c ? found - j0 : c;
        const double *V = vectors + (size_t) j0 * n;
        center_in_columns(n, w, V, HV, 1.0, nt);
        if (job->kernel == NULL)  /* the user's matrix */
            matrix_product(n, w, n, REAL(job->x), n, 0, HV, n, 0, 0.0, P, n, job->threads);
        else
            kernel_times_vectors(job->kernel, &job->points, HV, n, w, P, job->threads, T);
        center_in_columns(n, w, P, P, (double) n, nt);
        residual_norms(n, w, P, V, values + j0, norms + j0);
    }
}

/* The steps on the buffer: kernel, centering, eigenpairs; the result list. */
static SEXP fit_steps(void *data, double *K)
{
    fit_job *job = (fit_job *) data;
    int n = job->n;
    double work[PROGRESS_STEPS];
    fit_work(job, work);
    progress_begin(job->step, work);
    stage_clock_start();
    if (job->kernel == NULL)
        copy_symmetric_lower(REAL(job->x), n, K);
    else
        kernel_block(job->kernel, &job->points, &job->points, 1, K, job->threads, "");

    progress_at(PROGRESS_FILL, 1.0);
    stage_clock_mark(STAGE_FILL);

    SEXP colmeans = PROTECT(allocVector(REALSXP, n));
    double grand_mean, trace, largest;
    center_in_place(K, n, REAL(colmeans), &grand_mean, &trace, &largest, job->threads);
    progress_at(PROGRESS_CENTER, 1.0);
    stage_clock_mark(STAGE_CENTER);

    /* eigenpairs of Kc; the eigenvalues of Kc/n are these divided by n */
    int found, restarts = 0, converged = 1;
    double residual = 0.0;
    double *values, *vectors;
    fit_vectors fv;
    PROTECT_WITH_INDEX(fv.vectors = R_NilValue, &fv.index);
    found = fit_eigenpairs(job, K, trace, largest, &fv, &values, &vectors, &converged,
                           &restarts, &residual);
    /* the exact solvers report their steps themselves (eigen.c) */
    progress_at(PROGRESS_BACK, 1.0);
    progress_end();
    stage_clock_mark(STAGE_OTHER);

    SEXP norms = PROTECT(allocVector(REALSXP, found));
    certificate_norms(job, K, vectors, values, found, REAL(norms));
    stage_clock_mark(STAGE_CERTIFICATE);

    SEXP ans = PROTECT(allocVector(VECSXP, 9));
    SEXP r_values = PROTECT(allocVector(REALSXP, found));
    SEXP r_vectors = PROTECT(found_vectors(&fv, n, found));
    for (int k = 0; k < found; k++) REAL(r_values)[k] = values[k] / n;
    SET_VECTOR_ELT(ans, 0, r_values);
    SET_VECTOR_ELT(ans, 1, r_vectors);
    SET_VECTOR_ELT(ans, 2, colmeans);
    SET_VECTOR_ELT(ans, 3, ScalarReal(grand_mean));
    SET_VECTOR_ELT(ans, 4, ScalarReal(trace / n));
    SET_VECTOR_ELT(ans, 5, ScalarLogical(converged));
    SET_VECTOR_ELT(ans, 6, ScalarInteger(restarts));
    SET_VECTOR_ELT(ans, 7, ScalarReal(residual));
    SET_VECTOR_ELT(ans, 8, norms);
    const char *labels[] = {"values", "vectors", "colmeans", "grand_mean", "variance_total",
                            "converged", "restarts", "residual", "residual_norms"};
    set_list_names(ans, labels);
    setAttrib(ans, install("stage_seconds"), stage_clock_seconds());
    UNPROTECT(6);
    return ans;
}

/* The solver and its settings from the R arguments solver (a code) and
 * control (CONTROL_COUNT doubles, fastkpca.h), checked against the job's n
 * and features. */
static void solver_settings(fit_job *job, SEXP solver, SEXP control)
{
    int n = job->n, f = job->features;
    job->solver = as_count(solver, "solver", SOLVER_EXACT, SOLVER_RANDOMIZED);
    if (!isReal(control) || XLENGTH(control) != CONTROL_COUNT)
        error_argument("'control' must be a double vector of length %d", CONTROL_COUNT);
    const double *c = REAL(control);
    double tol = c[CONTROL_TOL], maxit = c[CONTROL_MAXIT], ncv = c[CONTROL_NCV];
    double oversample = c[CONTROL_OVERSAMPLE], power = c[CONTROL_POWER];
    if (c[CONTROL_EXACT_METHOD] != EXACT_BISECTION && c[CONTROL_EXACT_METHOD] != EXACT_MRRR
        && c[CONTROL_EXACT_METHOD] != EXACT_DSTEMR)
        error_argument("'control' has an unknown exact method");
    if (job->solver == SOLVER_ITERATIVE) {
        if (f == 0) error_argument("the iterative solver needs 'features' > 0");
        if (!R_FINITE(tol) || tol <= 0 || tol >= 1) error_argument("'tol' must be between 0 and 1");
        if (!R_FINITE(maxit) || maxit < 1 || maxit > SOLVER_MAX_ITERATIONS)
            error_argument("'maxit' must be between 1 and %g", SOLVER_MAX_ITERATIONS);
        if (!R_FINITE(ncv) || ncv < 2 || ncv > n) error_argument("'ncv' must be between 2 and n");
    }
    if (job->solver == SOLVER_RANDOMIZED) {
        if (f == 0) error_argument("the randomized solver needs 'features' > 0");
        if (!R_FINITE(oversample) || oversample < 0 || oversample > n)
            error_argument("'oversample' must be between 0 and n");
        if (!R_FINITE(power) || power < 0 || power > 1000)
            error_argument("'power' must be between 0 and 1000");
    }
    job->tol = tol;
    job->maxit = (int) maxit;
    job->ncv = (int) ncv;
    job->exact_method = (int) c[CONTROL_EXACT_METHOD];
    job->oversample = (int) oversample;
    job->power = (int) power;
}

/* .Call (dense_eigen() in R/eigen.R): fit kernel PCA.
 * x: double matrix, the data (n x d), or the kernel matrix (n x n) when
 *    kernel is NULL (precomputed), or a character vector for a string
 *    kernel; kernel: a program from
 *    fastkpca:::kernel_program(); weights: the conformal weights of the rows
 *    of x (a list, empty for most kernels); features: integer, 0 for "all
 * eigenvalues of Kc/n above th"; th: double; solver: integer code;
 * threads: integer; control: double vector (tol, maxit, ncv) for the
 * iterative solver, the exact solver's method code, and (oversample,
 * power) for the randomized solver (see fastkpca.h);
 * variance: double, 0 or the proportion of trace(Kc) that the fewest
 * leading components must reach (features is then 0 and the solver exact);
 * step: NULL or an R function of the fraction of the fit done, called at
 * the checkpoints of its steps (progress_at() in args.c).
 * Returns list(values, vectors, colmeans, grand_mean, variance_total,
 * converged, restarts, residual, residual_norms): the eigenvalues of Kc/n (decreasing), the
 * unit eigenvectors (n x k, each column's largest-magnitude entry positive), the centering terms of K, trace(Kc)/n, and for
 * the iterative solver whether it converged, its restarts and its largest
 * relative residual, and each pair's residual norm ||(Kc/n) v - value v||
 * (certificate_norms()); its attribute "stage_seconds" holds the wall
 * seconds of each step (the stage clock, args.c). */
SEXP dense_eigen(SEXP x, SEXP kernel, SEXP weights, SEXP features, SEXP th,
              SEXP solver, SEXP threads, SEXP control, SEXP variance, SEXP step)
{
    engine_entered(__func__);
    kernel_eval k, *kernel_ptr = NULL;
    int n, d, nthreads;
    if (!isNull(kernel)) {
        /* the rows (or the strings, indexed here) read once */
        nthreads = kernel_call_read(kernel, threads, R_NilValue, NULL, x, "x", &k);
        kernel_ptr = &k;
        n = k.n_fixed;
        d = k.any_string ? 1 : k.d;
    } else {
        check_double_matrix(x, "x");
        nthreads = as_threads(threads);
        n = nrows(x);
        d = ncols(x);
    }
    if (n < 2) error_argument("'x' must have at least 2 rows");
    if (d < 1) error_argument("'x' must have at least 1 column");
    if (kernel_ptr == NULL && d != n) error_argument("'x' must be a square kernel matrix");
    if (kernel_ptr != NULL) check_weights(&k, weights, "weights");
    int f = as_count(features, "features", 0, n);
    double threshold = as_number(th, "th");
    if (threshold < 0) error_argument("'th' must be non-negative");
    fit_job job = {kernel_ptr, {0}, x, n, d, f, threshold, 0, nthreads, 0.0, 0, 0, 0, 0.0,
                   0, 0, step};
    solver_settings(&job, solver, control);
    check_step(step);
    job.variance = as_number(variance, "variance");
    if (job.variance < 0 || job.variance > 1)
        error_argument("'variance' must be between 0 and 1");
    if (job.variance > 0 && (f != 0 || job.solver != SOLVER_EXACT))
        error_argument("'variance' needs 'features' = 0 and the exact solver");
    if (kernel_ptr != NULL) kernel_points_fixed(kernel_ptr, x, weights, &job.points);
    /* the one n x n buffer, freed as soon as the fit is done */
    return with_square_buffer(n, fit_steps, &job);
}

/* .Call (scaled_columns() in R/kpca.R, alpha and rotated of an exact
 * fit): V (n x k doubles) with column j divided by scale[j] (divide) or
 * multiplied by it, into a new matrix, each entry as R's V[, j] / scale[j]
 * or V[, j] * scale[j] gives it. Its pages are advised huge before the
 * first write (advise_huge_pages()): R's own arithmetic on the n x k
 * vectors took a fresh 4 KB page at a time, and on the project machine
 * each cost about 12 us (3 ms a megabyte, 0.1 s of the default call at
 * n = 3000 for alpha, rotated and their temporaries). Its dimnames (NULL
 * or a list of two) are set here: set in R, by byte-compiled code on the
 * value engine_call() passed back, they copied the whole matrix (two
 * 15 MB copies, into fresh pages, in the default call at n = 3000:
 * tracemem). */
SEXP scaled_columns(SEXP V, SEXP scale, SEXP divide, SEXP dimnames)
{
    engine_entered(__func__);
    check_double_matrix(V, "V");
    R_xlen_t n = nrows(V);
    int k = ncols(V);
    if (!isReal(scale) || XLENGTH(scale) != k)
        error_argument("'scale' must be %d doubles, one a column of 'V'", k);
    if (!isLogical(divide) || XLENGTH(divide) != 1 || LOGICAL(divide)[0] == NA_LOGICAL)
        error_argument("'divide' must be TRUE or FALSE");
    int by_division = LOGICAL(divide)[0];
    if (!isNull(dimnames) && (TYPEOF(dimnames) != VECSXP || XLENGTH(dimnames) != 2))
        error_argument("'dimnames' must be NULL or a list of two");
    SEXP out = PROTECT(allocMatrix(REALSXP, (int) n, k));
    advise_huge_pages(REAL(out), (size_t) n * k * sizeof(double));
    const double *v = REAL(V), *s = REAL(scale);
    double *o = REAL(out);
    for (int j = 0; j < k; j++) {
        const double *vj = v + (size_t) j * n;
        double *oj = o + (size_t) j * n, sj = s[j];
        if (by_division)
            for (R_xlen_t i = 0; i < n; i++) oj[i] = vj[i] / sj;
        else
            for (R_xlen_t i = 0; i < n; i++) oj[i] = vj[i] * sj;
    }
    /* R's checks of the names' lengths (an R error on a mismatch) */
    if (!isNull(dimnames)) setAttrib(out, R_DimNamesSymbol, dimnames);
    UNPROTECT(1);
    return out;
}
