/* The engine's settings, from R (fastkpca:::engine_settings(), R/simd.R,
 * before every call into the engine): the entry points that pass them down
 * to where each is used, the vector path to simd.c, the thread work to
 * tiles.c, the dense share to string_kernel.c, and that read their
 * defaults from there; and the engine's limits for R. An entry file:
 * nothing of the engine calls it (the record of the path each entry
 * point ran on is entry_record.c's). */
#include "fastkpca.h"
#include "simd.h"
#include <limits.h>
#include <math.h>

/* One setting: a double, finite, at least lo (above it when strict). */
static double setting_value(SEXP s, const char *what, double lo, int strict)
{
    double v = isReal(s) && XLENGTH(s) == 1 ? REAL(s)[0] : R_NaN;
    if (!R_FINITE(v) || v < lo || (strict && v == lo))
        error_argument("'%s' must be one %s number", what, strict ? "positive" : "non-negative");
    return v;
}

/* .Call: the settings of the engine for the calls that follow (from
 * fastkpca:::engine_settings(), R/simd.R). path: integer, a simd_path;
 * thread_work: double >= 0, the fewest multiply-adds per parallel region
 * of the tiles; dense_share: double > 0; wide_min_d: double > 0, the
 * fewest coordinates for which the fast kernels' blocks are matrix
 * products (kernel_fast.c); band_rows: double >= 0, the smallest n the
 * exact solver's two-stage reduction takes (eigen.c; engine_defaults()
 * gives the four defaults). Returns NULL. */
SEXP engine_settings(SEXP path, SEXP thread_work, SEXP dense_share, SEXP wide_min_d,
                     SEXP band_rows)
{
    int p = as_count(path, "path", SIMD_AUTO, SIMD_PATH_COUNT - 1);
    double w = setting_value(thread_work, "thread_work", 0.0, 0);
    double s = setting_value(dense_share, "dense_share", 0.0, 1);
    double m = setting_value(wide_min_d, "wide_min_d", 0.0, 1);
    double b = setting_value(band_rows, "band_rows", 0.0, 0);
    simd_request(p);
    (void) simd_best();   /* the CPU's features, found here on the main thread */
    tile_thread_work_set(w);
    string_dense_share_set(s);
    kernel_wide_min_d_set(m < INT_MAX ? (int) ceil(m) : INT_MAX);
    band_min_rows_set(b);
    return R_NilValue;
}

/* .Call: the defaults of the numeric settings, for R (R/simd.R):
 * c(thread_work, dense_share, wide_min_d, band_rows). */
SEXP engine_defaults(void)
{
    SEXP ans = PROTECT(allocVector(REALSXP, 4));
    REAL(ans)[0] = tile_thread_work_default();
    REAL(ans)[1] = string_dense_share_default();
    REAL(ans)[2] = kernel_wide_min_d_default();
    REAL(ans)[3] = band_min_rows_default();
    const char *names[] = {"thread_work", "dense_share", "wide_min_d", "band_rows"};
    SEXP nm = PROTECT(allocVector(STRSXP, 4));
    for (int i = 0; i < 4; i++) SET_STRING_ELT(nm, i, mkChar(names[i]));
    setAttrib(ans, R_NamesSymbol, nm);
    UNPROTECT(2);
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
