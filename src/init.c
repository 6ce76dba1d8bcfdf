/* Registration of the .Call entry points. */
#include "fastkpca.h"
#include <R_ext/Rdynload.h>

#define CALLDEF(name, n) {#name, (DL_FUNC) &name, n}

static const R_CallMethodDef call_methods[] = {
    CALLDEF(kpca_fit, 9),
    CALLDEF(kernel_cross, 6),
    CALLDEF(kernel_gram, 4),
    CALLDEF(kernel_diag, 3),
    CALLDEF(kernel_vector_exp, 2),
    CALLDEF(nystrom_pass1, 8),
    CALLDEF(nystrom_pass2, 9),
    CALLDEF(nystrom_kmeanspp, 5),
    CALLDEF(preimage_solve, 6),
    CALLDEF(kica_ichol, 3),
    CALLDEF(kica_contrast, 3),
    CALLDEF(kica_pair_search, 7),
    {NULL, NULL, 0}
};

void R_init_fastkpca(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
