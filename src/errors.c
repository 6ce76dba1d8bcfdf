/* The engine's errors as classed R conditions. fastkpca_error() formats
 * the message as Rf_error() does and raises it through the package's own
 * stop_kind() (R/conditions.R), so that the error has the class
 * fastkpca_error_<kind> of the kind the C code gives, whatever the
 * message says and whatever language R speaks. Like Rf_error(), it never
 * returns, and must not be called inside an OpenMP region. */
#include "fastkpca.h"
#include <stdarg.h>
#include <stdio.h>

/* the kinds' names, as in the R classes fastkpca_error_<kind> */
static const char *const kind_names[KIND_COUNT] = {
    [KIND_ARGUMENT] = "argument", [KIND_DATA] = "data",
    [KIND_MEMORY] = "memory", [KIND_NUMERICAL] = "numerical"
};

void fastkpca_error(error_kind kind, const char *format, ...)
{
    /* the size of R's own error buffer */
    char message[8192];
    va_list ap;
    va_start(ap, format);
    vsnprintf(message, sizeof message, format, ap);
    va_end(ap);
    if ((int) kind < KIND_ARGUMENT || (int) kind >= KIND_COUNT) kind = KIND_ARGUMENT;
    SEXP name = PROTECT(mkString("fastkpca"));
    SEXP ns = PROTECT(R_FindNamespace(name));
    SEXP what = PROTECT(mkString(kind_names[kind]));
    SEXP text = PROTECT(mkString(message));
    SEXP call = PROTECT(lang3(install("stop_kind"), what, text));
    eval(call, ns);
    /* stop_kind() does not return; should it ever, the error is raised plainly */
    UNPROTECT(5);
    error("%s", message);
}
