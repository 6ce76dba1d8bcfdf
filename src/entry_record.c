/* The record of the path each entry point ran on, for the tests: that
 * every call from R reaches C through engine_call() with the session's
 * settings (test-engine-call.R), and which entry points a call entered
 * (entries_entered() in helper-work.R). Near the bottom of the engine:
 * every entry point calls engine_entered() first, and it calls only
 * simd.c. */
#include "fastkpca.h"
#include "simd.h"

/* The path each entry point found at its last call. Each entry point (but the
 * settings' own and this reader) calls engine_entered(__func__) first, on
 * the main thread. __func__ is a static array of each function, so one entry point
 * always gives the same pointer: kept and compared as is, never copied. */
#define ENTRY_RECORDS 64
static const char *entry_names[ENTRY_RECORDS];
static int entry_paths[ENTRY_RECORDS];
static int entry_count = 0;

void engine_entered(const char *name)
{
    int i = 0;
    while (i < entry_count && entry_names[i] != name) i++;
    if (i == ENTRY_RECORDS) return;
    if (i == entry_count) entry_names[entry_count++] = name;
    entry_paths[i] = simd_active();
}

/* .Call (fastkpca:::engine_entry_paths(), for the tests): the name of the
 * path each entry point ran on at its last call since the last reading,
 * named by the entry point; the record is then cleared. */
SEXP engine_entry_paths(void)
{
    SEXP ans = PROTECT(allocVector(STRSXP, entry_count));
    SEXP nm = PROTECT(allocVector(STRSXP, entry_count));
    for (int i = 0; i < entry_count; i++) {
        SET_STRING_ELT(ans, i, mkChar(simd_name(entry_paths[i])));
        SET_STRING_ELT(nm, i, mkChar(entry_names[i]));
    }
    setAttrib(ans, R_NamesSymbol, nm);
    entry_count = 0;
    UNPROTECT(2);
    return ans;
}
