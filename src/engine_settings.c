/* The engine's settings, from R (fastkpca:::engine_settings(), R/simd.R,
 * before every call into the engine): the vector path, handed to simd.c,
 * and the tuning (ENGINE_TUNING, fastkpca.h), held here in the one struct
 * that every file reads; the tuning's table and the engine's limits for R.
 * An entry file: nothing of the engine calls it (init.c puts the tuning at
 * its defaults as the library loads; the record of the path each entry
 * point ran on is entry_record.c's). */
#include "fastkpca.h"
#include "simd.h"
#include <limits.h>
#include <math.h>
#include <string.h>

/* The tuning in force: set on the main thread, between calls; read on any
 * thread. */
engine_tuning tuning;

/* The tuning's table, a row per setting of ENGINE_TUNING: where its field
 * is, whether it is a whole number (an int), its bounds. */
typedef struct {
    const char *name;
    size_t offset;
    int whole;
    double lower, upper;
} tuning_row;

enum { TUNING_KIND_NUMBER = 0, TUNING_KIND_WHOLE = 1 };
#define TUNING_ROW(kind, name, value, lower, upper) \
    {#name, offsetof(engine_tuning, name), TUNING_KIND_##kind, lower, upper},
static const tuning_row tuning_rows[] = {ENGINE_TUNING(TUNING_ROW)};
#undef TUNING_ROW
#define TUNING_COUNT ((int) (sizeof(tuning_rows) / sizeof(tuning_rows[0])))

/* Every setting of t at its default. */
static void tuning_defaults(engine_tuning *t)
{
#define TUNING_DEFAULT(kind, name, value, lower, upper) t->name = (value);
    ENGINE_TUNING(TUNING_DEFAULT)
#undef TUNING_DEFAULT
}

void tuning_reset(void)
{
    tuning_defaults(&tuning);
}

/* The setting of a row in t, as a double. */
static double tuning_get(const engine_tuning *t, const tuning_row *r)
{
    const char *field = (const char *) t + r->offset;
    return r->whole ? (double) *(const int *) field : *(const double *) field;
}

/* The setting named name of t set to v, checked against its row (R has
 * checked it already: R/tuning.R). */
static void tuning_set(engine_tuning *t, const char *name, double v)
{
    for (int i = 0; i < TUNING_COUNT; i++) {
        const tuning_row *r = tuning_rows + i;
        if (strcmp(name, r->name) != 0) continue;
        if (!R_FINITE(v) || v < r->lower || v > r->upper || (r->whole && v != floor(v)))
            error_argument("'fastkpca.tuning$%s' must be a %s between %.10g and %.10g", name,
                           r->whole ? "whole number" : "number", r->lower, r->upper);
        char *field = (char *) t + r->offset;
        if (r->whole) *(int *) field = (int) v;
        else *(double *) field = v;
        return;
    }
    error_argument("'fastkpca.tuning' has no setting '%s'", name);
}

/* .Call: the settings of the engine for the calls that follow (from
 * fastkpca:::engine_settings(), R/simd.R). path: integer, a simd_path;
 * settings: NULL, or a named double vector, the tuning settings R's
 * option sets (the others at their defaults). Returns NULL. */
SEXP engine_settings(SEXP path, SEXP settings)
{
    int p = as_count(path, "path", SIMD_AUTO, SIMD_PATH_COUNT - 1);
    SEXP names = getAttrib(settings, R_NamesSymbol);
    if (settings != R_NilValue && (!isReal(settings) || TYPEOF(names) != STRSXP))
        error_argument("'settings' must be NULL or a named double vector");
    engine_tuning t;
    tuning_defaults(&t);
    R_xlen_t count = settings == R_NilValue ? 0 : XLENGTH(settings);
    for (R_xlen_t i = 0; i < count; i++)
        tuning_set(&t, CHAR(STRING_ELT(names, i)), REAL(settings)[i]);
    tuning = t;
    simd_request(p);
    (void) simd_best();   /* the CPU's features, found here on the main thread */
    return R_NilValue;
}

/* .Call: the tuning's table, for R (R/tuning.R): a list of columns, a row
 * per setting: name, default (the one in force on this system: the
 * BLAS's say for band_min_rows), lower and upper (inclusive bounds),
 * whole (an integer setting). */
SEXP engine_defaults(void)
{
    engine_tuning d;
    tuning_defaults(&d);
    const char *columns[] = {"name", "default", "lower", "upper", "whole"};
    SEXP ans = PROTECT(allocVector(VECSXP, 5));
    SEXP name = allocVector(STRSXP, TUNING_COUNT);
    SET_VECTOR_ELT(ans, 0, name);
    for (int c = 1; c < 4; c++) SET_VECTOR_ELT(ans, c, allocVector(REALSXP, TUNING_COUNT));
    SET_VECTOR_ELT(ans, 4, allocVector(LGLSXP, TUNING_COUNT));
    for (int i = 0; i < TUNING_COUNT; i++) {
        const tuning_row *r = tuning_rows + i;
        SET_STRING_ELT(name, i, mkChar(r->name));
        REAL(VECTOR_ELT(ans, 1))[i] = tuning_get(&d, r);
        REAL(VECTOR_ELT(ans, 2))[i] = r->lower;
        REAL(VECTOR_ELT(ans, 3))[i] = r->upper;
        LOGICAL(VECTOR_ELT(ans, 4))[i] = r->whole;
    }
    set_list_names(ans, columns);
    UNPROTECT(1);
    return ans;
}

/* .Call: the name of the path a request (integer, a simd_path) gives on
 * this CPU (fastkpca::simd_path()). */
SEXP simd_path_resolve(SEXP path)
{
    engine_entered(__func__);
    int p = as_count(path, "path", SIMD_AUTO, SIMD_PATH_COUNT - 1);
    return mkString(simd_name(simd_resolve(p)));
}

/* .Call (engine_limits() in R/validate.R): the limits of fastkpca.h as a
 * named list, so that R checks the user's arguments against the same
 * numbers. */
SEXP engine_limits(void)
{
    engine_entered(__func__);
    const char *names[] = {"threads", "bessel_order", "kernel_power", "solver_iterations"};
    double values[] = {MAX_THREADS, BESSEL_MAX_ORDER, KERNEL_MAX_POWER,
                       SOLVER_MAX_ITERATIONS};
    SEXP ans = PROTECT(allocVector(VECSXP, 4));
    for (int i = 0; i < 4; i++) SET_VECTOR_ELT(ans, i, ScalarReal(values[i]));
    set_list_names(ans, names);
    UNPROTECT(1);
    return ans;
}
