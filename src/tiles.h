/* The register-tile products of tiles.c and tiles_vector.c through the
 * copy of a named path (a path simd_resolve() gives, one this CPU runs)
 * rather than the session's: for the tests' entry point (tile_product.c),
 * which checks every copy against plain R. The products and their arguments are those
 * of fastkpca.h (tile_gemm(), symv_lower(), syrk_lower_add(), gemv_add(),
 * gemv_t(), symm_lower()); tile_gemm_path() and syrk_lower_path() return
 * the path whose copy ran, vector_products_path() that of the others;
 * symm_lower_path() makes no interrupt check. */
#ifndef FASTKPCA_TILES_H
#define FASTKPCA_TILES_H

#include "simd.h"

simd_path tile_gemm_path(simd_path path, int m, int n, int k, const double *A, int lda,
                         int transa, const double *B, int ldb, int transb, double sign,
                         double *C, int ldc, int threads);
simd_path tile_gemm_transposed_add_path(simd_path path, int m, int n, int k, const double *A,
                                        int lda, const double *B, int ldb, double *C, int ldc);
simd_path syrk_lower_path(simd_path path, const double *Bt, int nb, int m, const double *c,
                          double *G, double *colsum, int threads);
simd_path vector_products_path(simd_path path);
void symv_lower_path(simd_path path, int n, const double *A, int lda, const double *x,
                     double *y, double *work, int threads);
void gemv_add_path(simd_path path, int n, int k, const double *A, int lda, const double *x,
                   double sign, double *y);
void gemv_t_path(simd_path path, int n, int k, const double *A, int lda, const double *x,
                 double *y);
void symm_lower_path(simd_path path, const double *A, int n, const double *X, int l,
                     double *Y, int threads);

#endif
