/* Argument checks shared by the .Call entry points. R validates and
 * coerces first; these re-check what would crash C if a caller (or a
 * garbage .Call) got it wrong. */
#include "fastkpca.h"

int as_count(SEXP s, const char *what, int lo, int hi)
{
    if (!isInteger(s) || XLENGTH(s) != 1 || INTEGER(s)[0] == NA_INTEGER ||
        INTEGER(s)[0] < lo || INTEGER(s)[0] > hi)
        error("'%s' must be a single integer between %d and %d", what, lo, hi);
    return INTEGER(s)[0];
}

int as_threads(SEXP s)
{
    return as_count(s, "threads", 1, 1024);
}

double as_number(SEXP s, const char *what)
{
    if (!isReal(s) || XLENGTH(s) != 1 || !R_FINITE(REAL(s)[0]))
        error("'%s' must be a single finite number", what);
    return REAL(s)[0];
}
