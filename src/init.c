/* Registration of the .Call entry points. */
#include "fastkpca.h"
#include <R_ext/Rdynload.h>

#define CALLDEF(name, n) {#name, (DL_FUNC) &name, n}

static const R_CallMethodDef call_methods[] = {
    CALLDEF(dense_eigen, 10),
    CALLDEF(scaled_columns, 4),
    CALLDEF(value_flags, 2),
    CALLDEF(kernel_cross, 6),
    CALLDEF(kernel_matrix, 4),
    CALLDEF(kernel_self, 3),
    CALLDEF(kernel_project_rows, 11),
    CALLDEF(nystrom_statistics, 9),
    CALLDEF(nystrom_alpha, 3),
    CALLDEF(nystrom_kmeanspp, 5),
    CALLDEF(engine_limits, 0),
    CALLDEF(preimage_coefficients, 6),
    CALLDEF(preimage_fixed_point, 9),
    CALLDEF(kica_contrast, 3),
    CALLDEF(kica_sweeps, 9),
    CALLDEF(kcca_ichol, 5),
    CALLDEF(kernel_block_product, 10),
    CALLDEF(kernel_pair_products, 7),
    CALLDEF(matrix_free_groups, 1),
    CALLDEF(matrix_free_fold, 4),
    CALLDEF(kernel_shares_tiles, 2),
    CALLDEF(oriented_columns, 1),
    CALLDEF(orthonormal_columns, 6),
    CALLDEF(center_columns, 3),
    CALLDEF(dense_product, 4),
    CALLDEF(top_eigen_pairs, 2),
    CALLDEF(rayleigh_ritz_vectors, 6),
    CALLDEF(basis_cross_product, 5),
    CALLDEF(basis_matrix, 3),
    CALLDEF(tile_product, 8),
    CALLDEF(available_bytes, 1),
    CALLDEF(engine_settings, 2),
    CALLDEF(engine_defaults, 0),
    CALLDEF(simd_path_resolve, 1),
    CALLDEF(sparse_rows, 5),
    CALLDEF(engine_entry_paths, 0),
    CALLDEF(thread_limits, 1),
    {NULL, NULL, 0}
};

void R_init_fastkpca(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
    threads_record_process();  /* a fork of this process computes on one thread */
    tuning_reset();            /* the tuning at its defaults until R sets it */
}
