/* The engine's settings, from R (fastkpca:::engine_settings(), R/simd.R,
 * before every call into the engine): the entry points that pass them down
 * to where each is used, the vector path to simd.c, the thread work to
 * tiles.c, the dense share to string_kernel.c, and that read their
 * defaults from there. An entry file: nothing of the engine calls it. */
#include "fastkpca.h"
#include "simd.h"

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
 * of the tiles; dense_share: double > 0 (engine_defaults() gives both
 * defaults). Returns NULL. */
SEXP engine_settings(SEXP path, SEXP thread_work, SEXP dense_share)
{
    int p = as_count(path, "path", SIMD_AUTO, SIMD_PATH_COUNT - 1);
    double w = setting_value(thread_work, "thread_work", 0.0, 0);
    double s = setting_value(dense_share, "dense_share", 0.0, 1);
    simd_request(p);
    (void) simd_best();   /* the CPU's features, found here on the main thread */
    tile_thread_work_set(w);
    string_dense_share_set(s);
    return R_NilValue;
}

/* .Call: the defaults of the numeric settings, for R (R/simd.R):
 * c(thread_work, dense_share). */
SEXP engine_defaults(void)
{
    SEXP ans = PROTECT(allocVector(REALSXP, 2));
    REAL(ans)[0] = tile_thread_work_default();
    REAL(ans)[1] = string_dense_share_default();
    const char *names[] = {"thread_work", "dense_share"};
    SEXP nm = PROTECT(allocVector(STRSXP, 2));
    for (int i = 0; i < 2; i++) SET_STRING_ELT(nm, i, mkChar(names[i]));
    setAttrib(ans, R_NamesSymbol, nm);
    UNPROTECT(2);
    return ans;
}

/* .Call: the name of the path a request (integer, a simd_path) gives on
 * this CPU (fastkpca::simd_path()). */
SEXP simd_path_resolve(SEXP path)
{
    int p = as_count(path, "path", SIMD_AUTO, SIMD_PATH_COUNT - 1);
    return mkString(simd_name(simd_resolve(p)));
}
