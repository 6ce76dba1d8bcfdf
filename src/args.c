/* What the .Call entry points share: argument checks (R validates and
 * coerces first; these re-check what would crash C if a caller, or a
 * garbage .Call, got it wrong), progress, the blocks of columns between
 * interrupt checks and LAPACK's info. Near the bottom of the engine: it
 * calls nothing of the package but errors.c and threads.c. */
#include "fastkpca.h"
#include <time.h>
#if !defined(_OPENMP)
# include <sys/time.h>
#endif

int as_count(SEXP s, const char *what, int lo, int hi)
{
    if (!isInteger(s) || XLENGTH(s) != 1 || INTEGER(s)[0] == NA_INTEGER ||
        INTEGER(s)[0] < lo || INTEGER(s)[0] > hi)
        error_argument("'%s' must be a single integer between %d and %d", what, lo, hi);
    return INTEGER(s)[0];
}

/* 'threads', checked, then cut to what the process may run (thread_cap()
 * in threads.c: one in a forked child, at most OpenMP's thread limit). */
int as_threads(SEXP s)
{
    return threads_usable(as_count(s, "threads", 1, MAX_THREADS));
}

/* Values a thread of value_flags() takes at least: a smaller vector is
 * scanned on one (a team costs more than the scan). */
#define FLAG_THREAD_VALUES (1 << 20)

/* Whether the n doubles at v hold a missing value (NA or NaN) and whether
 * an infinite one, in one pass on up to threads threads (no R: also for a
 * kernel call's points, kernel_points.c). */
void scan_values(const double *v, R_xlen_t n, int threads, int *missing, int *infinite)
{
    int nt = threads;
    if (n < (R_xlen_t) FLAG_THREAD_VALUES * nt) nt = (int) (n / FLAG_THREAD_VALUES) + 1;
    int na = 0, inf = 0;
    const double pinf = R_PosInf;  /* read before the team: no R inside it */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1) reduction(|:na, inf)
#endif
    for (R_xlen_t i = 0; i < n; i++) {
        double a = v[i];
        na |= a != a;
        inf |= fabs(a) == pinf;
    }
    *missing = na;
    *infinite = inf;
}

/* .Call (value_flags() in R/validate.R): whether the double vector v holds
 * a missing value (NA or NaN) and whether it holds an infinite one, as two
 * logicals, in one pass over v in place on up to threads threads (R's
 * anyNA(), min() and max() were three passes on one: 0.16 s of
 * kernel_matrix() on 500 x 200000, a quarter of the call on 2 threads). */
SEXP value_flags(SEXP v, SEXP threads)
{
    engine_entered(__func__);
    if (!isReal(v)) error_argument("'v' must be a double vector");
    int missing, infinite;
    scan_values(REAL(v), XLENGTH(v), as_threads(threads), &missing, &infinite);
    SEXP ans = PROTECT(allocVector(LGLSXP, 2));
    LOGICAL(ans)[0] = missing;
    LOGICAL(ans)[1] = infinite;
    UNPROTECT(1);
    return ans;
}

double as_number(SEXP s, const char *what)
{
    if (!isReal(s) || XLENGTH(s) != 1 || !R_FINITE(REAL(s)[0]))
        error_argument("'%s' must be a single finite number", what);
    return REAL(s)[0];
}

/* The check of every double matrix argument. */
void check_double_matrix(SEXP x, const char *what)
{
    if (!isReal(x) || !isMatrix(x)) error_argument("'%s' must be a double matrix", what);
}

/* Call the R function step() (a progress bar) after a block; NULL: none. */
void call_step(SEXP step)
{
    if (isNull(step)) return;
    SEXP call = PROTECT(lang1(step));
    eval(call, R_GlobalEnv);
    UNPROTECT(1);
}

/* The progress of the running exact fit: an R function of the fraction of
 * the fit done (0 to 1; R/progress.R makes it), and each step's share.
 * Only dense_eigen() sets it, from progress_begin() until progress_end() or
 * the end of its buffer (free_buffer_call), so the checkpoints of other
 * entry points, which share the fill and the solver, report nothing. The fit
 * runs on the main thread; the function is protected as an argument of the
 * .Call while it is set. */
static struct {
    SEXP step;                     /* NULL: no progress to report */
    double share[PROGRESS_STEPS];  /* each step's share of the fit */
    double reported;               /* the fraction last reported */
} progress = {NULL, {0}, 0.0};

/* Intermediate reports are at least this fraction of the fit apart, so that
 * a small fit makes a few calls to R (at most about 100 beside one per
 * step): the overhead stays below a few percent whatever the size. */
#define PROGRESS_MIN_ADVANCE 0.01

/* step: NULL or an R function of one number; work: the estimated work of
 * each step (any unit; 0 for a step that does not run). */
void progress_begin(SEXP step, const double *work)
{
    double total = 0.0;
    for (int s = 0; s < PROGRESS_STEPS; s++) total += work[s];
    for (int s = 0; s < PROGRESS_STEPS; s++)
        progress.share[s] = total > 0 ? work[s] / total : 0.0;
    progress.reported = 0.0;
    progress.step = isNull(step) ? NULL : step;
}

/* Step s is the given fraction done: report the fit's fraction to R when
 * the step is done or the fit has advanced enough since the last report. */
void progress_at(progress_step s, double fraction)
{
    if (progress.step == NULL) return;
    double done = 0.0;
    for (int i = 0; i < (int) s; i++) done += progress.share[i];
    if (fraction > 1.0) fraction = 1.0;
    done += progress.share[s] * (fraction > 0.0 ? fraction : 0.0);
    if (fraction < 1.0 && done - progress.reported < PROGRESS_MIN_ADVANCE) return;
    if (done < progress.reported) done = progress.reported;
    progress.reported = done;
    SEXP call = PROTECT(lang2(progress.step, ScalarReal(done)));
    eval(call, R_GlobalEnv);
    UNPROTECT(1);
}

/* The kernel fill has its columns 0..done-1 of cols: the fraction of its
 * work done (of the lower triangle: the first columns are the longest). */
void progress_fill_columns(int done, int cols, int lower_only)
{
    if (progress.step == NULL || cols < 1) return;
    double left = (double) (cols - done) / cols;
    progress_at(PROGRESS_FILL, lower_only ? 1.0 - left * left : 1.0 - left);
}

void progress_end(void)
{
    progress.step = NULL;
}

/* The stage clock of the running exact fit: the wall seconds of each of
 * its steps (bench/two-stage.R and bench/run.R read them, through
 * stage_seconds() in R/eigen.R). Like the progress, only dense_eigen()
 * starts it; stage_clock_mark() gives the seconds since the last mark to
 * one stage, and does nothing while the clock is stopped, so that the
 * steps other entry points share mark nothing. A few clock reads a fit. */
static struct {
    int running;
    double last;                 /* the wall clock at the last mark */
    double seconds[STAGE_COUNT];
} stage_clock = {0, 0.0, {0}};

/* Wall seconds from a fixed start: OpenMP's clock where there is one, else
 * POSIX's monotonic clock, else the time of day (mingw-w64 has
 * gettimeofday() without OpenMP's runtime). */
static double wall_seconds(void)
{
#if defined(_OPENMP)
    return omp_get_wtime();
#elif defined(CLOCK_MONOTONIC) && !defined(_WIN32)
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
#else
    struct timeval t;
    gettimeofday(&t, NULL);
    return (double) t.tv_sec + 1e-6 * (double) t.tv_usec;
#endif
}

void stage_clock_start(void)
{
    for (int s = 0; s < STAGE_COUNT; s++) stage_clock.seconds[s] = 0.0;
    stage_clock.running = 1;
    stage_clock.last = wall_seconds();
}

void stage_clock_mark(fit_stage s)
{
    if (!stage_clock.running) return;
    double now = wall_seconds();
    stage_clock.seconds[s] += now - stage_clock.last;
    stage_clock.last = now;
}

/* The clock stopped (the time since the last mark is other) and read: a
 * named double vector of seconds, in fit_stage's order. */
SEXP stage_clock_seconds(void)
{
    static const char *names[STAGE_COUNT] = {
        "fill", "center", "stage1", "stage2", "tridiagonal", "back_stage2",
        "back_stage1", "certificate", "other"};
    stage_clock_mark(STAGE_OTHER);
    stage_clock.running = 0;
    SEXP out = PROTECT(allocVector(REALSXP, STAGE_COUNT));
    SEXP nms = PROTECT(allocVector(STRSXP, STAGE_COUNT));
    for (int s = 0; s < STAGE_COUNT; s++) {
        REAL(out)[s] = stage_clock.seconds[s];
        SET_STRING_ELT(nms, s, mkChar(names[s]));
    }
    setAttrib(out, R_NamesSymbol, nms);
    UNPROTECT(2);
    return out;
}

/* A step argument: NULL or an R function. */
void check_step(SEXP step)
{
    if (!isNull(step) && !isFunction(step))
        error_argument("'step' must be NULL or a function");
}

/* Give the list ans the names in names (one per element): the named
 * result lists of the entry points. */
void set_list_names(SEXP ans, const char **names)
{
    R_xlen_t n = XLENGTH(ans);
    SEXP nms = PROTECT(allocVector(STRSXP, n));
    for (R_xlen_t i = 0; i < n; i++) SET_STRING_ELT(nms, i, mkChar(names[i]));
    setAttrib(ans, R_NamesSymbol, nms);
    UNPROTECT(1);
}

/* The end (exclusive) of the block of columns that starts at j0, for the
 * kernel fills that check for interrupts between blocks: columns are added
 * until their work reaches budget and there are at least min_cols of them
 * (so that threads share a block). A column's work is value_cost times its
 * values (rows; with lower_only, the rows from its diagonal on, column j
 * starting at row j + diag) plus column_cost. */
int column_block_end(int j0, int cols, int rows, int lower_only, int diag,
                     double value_cost, double column_cost, double budget, int min_cols)
{
    int j1 = j0;
    double work = 0.0;
    while (j1 < cols && (work < budget || j1 - j0 < min_cols)) {
        work += value_cost * (double) (lower_only ? rows - (j1 + diag) : rows) + column_cost;
        j1++;
    }
    return j1;
}

/* The error for a LAPACK routine that reports a non-zero info. */
void check_lapack_info(int info, const char *routine)
{
    if (info != 0) error_numerical("error code %d from LAPACK routine '%s'", info, routine);
}
