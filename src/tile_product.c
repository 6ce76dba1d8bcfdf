/* The tests' and benchmarks' entry point to the register-tile products
 * (fastkpca:::tile_product(), R/tiles.R): each product of tiles.c and
 * tiles_vector.c through the copy of a named path (tiles.h), and what
 * blas.c decides. An entry file: nothing of the engine calls it. */
#include "fastkpca.h"
#include "simd.h"
#include "tiles.h"
#include <string.h>

/* op 0: out (m x n) += op(a) op(b) */
static simd_path gemm_op(simd_path run, SEXP a, SEXP b, int ta, int tb, int m, int n, int k,
                         double *out, int threads)
{
    return tile_gemm_path(run, m, n, k, REAL(a), nrows(a) > 0 ? nrows(a) : 1, ta, REAL(b),
                          nrows(b) > 0 ? nrows(b) : 1, tb, 1.0, out, m > 0 ? m : 1,
                          threads);
}

/* op 1: out (m x n) += A b, column by column of b, A the symmetric matrix
 * of a's lower triangle (m x m) */
static void symv_op(simd_path run, SEXP a, SEXP b, int m, int n, double *out, int threads)
{
    double *work = (double *) R_alloc(symv_lower_work(m) + 1, sizeof(double));
    double *y = (double *) R_alloc((size_t) (m > 0 ? m : 1), sizeof(double));
    for (int j = 0; j < n; j++) {
        double *oj = out + (size_t) j * m;
        symv_lower_path(run, m, REAL(a), m, REAL(b) + (size_t) j * m, y, work, threads);
        for (int i = 0; i < m; i++) oj[i] += y[i];
    }
}

/* op 2: out (m x m, lower triangle) += (a - 1 b)' (a - 1 b), a nb x m;
 * the column sums of a - 1 b as the result's attribute "sums" */
static simd_path syrk_op(simd_path run, SEXP a, SEXP b, int nb, int m, SEXP ans,
                         int threads)
{
    double *Bt = (double *) R_alloc((size_t) m * nb + 1, sizeof(double));
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < m; j++) Bt[j + (size_t) i * m] = REAL(a)[i + (size_t) j * nb];
    SEXP sums = PROTECT(allocVector(REALSXP, m));
    memset(REAL(sums), 0, (size_t) m * sizeof(double));
    simd_path ran = syrk_lower_path(run, Bt, nb, m, REAL(b), REAL(ans), REAL(sums), threads);
    setAttrib(ans, install("sums"), sums);
    UNPROTECT(1);
    return ran;
}

/* op 3: out (m x n) += a b; op 4: out (m x n) += a' b; column by column
 * of b, a with k rows (op 3: columns) */
static void gemv_op(simd_path run, SEXP a, SEXP b, int transposed, int m, int n, int k,
                    double *out)
{
    double *y = (double *) R_alloc((size_t) (m > 0 ? m : 1), sizeof(double));
    int lda = nrows(a) > 0 ? nrows(a) : 1;
    for (int j = 0; j < n; j++) {
        double *oj = out + (size_t) j * m;
        const double *x = REAL(b) + (size_t) j * k;
        if (!transposed) {
            gemv_add_path(run, m, k, REAL(a), lda, x, 1.0, oj);
        } else {
            gemv_t_path(run, k, m, REAL(a), lda, x, y);
            for (int i = 0; i < m; i++) oj[i] += y[i];
        }
    }
}

/* op 5: out (m x n) += A b, all columns of b at once (A as op 1) */
static void symm_op(simd_path run, SEXP a, SEXP b, int m, int n, double *out, int threads)
{
    if (m <= 0 || n <= 0) return;
    double *Y = (double *) R_alloc((size_t) m * n, sizeof(double));
    symm_lower_path(run, REAL(a), m, REAL(b), n, Y, threads);
    for (size_t t = 0; t < (size_t) m * n; t++) out[t] += Y[t];
}

/* op 6: out (m x n) += a' b, a k x m, as op 0 with trans_a, through
 * tile_gemm_transposed_add() (out' += b' a, the tiles' C transposed) */
static simd_path gemm_transposed_op(simd_path run, SEXP a, SEXP b, int m, int n, int k,
                                    double *out)
{
    return tile_gemm_transposed_add_path(run, n, m, k, REAL(b), nrows(b) > 0 ? nrows(b) : 1,
                                         REAL(a), nrows(a) > 0 ? nrows(a) : 1, out,
                                         m > 0 ? m : 1);
}

/* .Call, for the tests and benchmarks (fastkpca:::tile_product()), through
 * the kernels of one path (path: integer, a simd_path; SIMD_AUTO for the
 * session's, simd_active(); a path this CPU lacks gives the widest below
 * it that it runs):
 * op 0: c + op(a) op(b), op(x) = x' where trans_x is TRUE (tile_gemm());
 * op 1: c + A b, A symmetric from the lower triangle of the square a
 *       (symv_lower(), column by column of b);
 * op 2: c + the lower triangle (with the diagonal) of (a - 1 b)' (a - 1 b),
 *       b a 1 x ncol(a) shift (syrk_lower_add()); c's upper triangle is
 *       kept; the result's attribute "sums" is (a - 1 b)' 1;
 * op 3: c + a b (gemv_add(), column by column of b);
 * op 4: c + a' b (gemv_t(), column by column of b);
 * op 5: c + A b as op 1, all columns of b at once (symm_lower());
 * op 6: c + a' b as op 0 with trans_a, computed as (b' a)' by
 *       tile_gemm_transposed_add() (the matrix-free pipeline's transposed
 *       tiles).
 * a, b, c: double matrices of conforming sizes; threads: integer.
 * Returns a new matrix with attributes "path", the kernel that ran,
 * "blas", "optimized" or "reference" as blas_is_optimized() sees it, and
 * "large_products", "tiles" or "blas": where matrix_product() sends a
 * product of 10^9 multiply-adds. */
SEXP tile_product(SEXP a, SEXP b, SEXP c, SEXP trans_a, SEXP trans_b, SEXP threads,
                  SEXP path, SEXP op)
{
    engine_entered(__func__);
    if (!isReal(a) || !isMatrix(a)) error_argument("'a' must be a double matrix");
    if (!isReal(b) || !isMatrix(b)) error_argument("'b' must be a double matrix");
    if (!isReal(c) || !isMatrix(c)) error_argument("'c' must be a double matrix");
    int what = as_count(op, "op", 0, 6);
    int ta = asLogical(trans_a) == TRUE, tb = asLogical(trans_b) == TRUE;
    if (what != 0) ta = tb = 0;
    if (what == 4 || what == 6) ta = 1;
    if ((what == 1 || what == 5) && nrows(a) != ncols(a)) error_argument("'a' must be square");
    int m = ta ? ncols(a) : nrows(a), k = ta ? nrows(a) : ncols(a);
    int kb = tb ? ncols(b) : nrows(b), n = tb ? nrows(b) : ncols(b);
    if (what == 2) {
        m = n = ncols(a);
        k = nrows(a);
        if (nrows(b) != 1 || ncols(b) != m) error_argument("'b' must be 1 x %d", m);
    } else if (kb != k) {
        error_argument("'b' must have %d %s", k, tb ? "columns" : "rows");
    }
    if (nrows(c) != m || ncols(c) != n) error_argument("'c' must be %d x %d", m, n);
    int nthreads = as_threads(threads);
    int p = as_count(path, "path", SIMD_AUTO, SIMD_PATH_COUNT - 1);
    simd_path run = p == SIMD_AUTO ? simd_active() : simd_resolve(p);
    simd_path ran = vector_products_path(run);   /* ops 1, 3, 4, 5 */
    SEXP ans = PROTECT(duplicate(c));
    double *out = REAL(ans);
    switch (what) {
    case 0: ran = gemm_op(run, a, b, ta, tb, m, n, k, out, nthreads); break;
    case 1: symv_op(run, a, b, m, n, out, nthreads); break;
    case 2: ran = syrk_op(run, a, b, k, m, ans, nthreads); break;
    case 3: case 4: gemv_op(run, a, b, what == 4, m, n, k, out); break;
    case 6: ran = gemm_transposed_op(run, a, b, m, n, k, out); break;
    default: symm_op(run, a, b, m, n, out, nthreads); break;
    }
    setAttrib(ans, install("path"), mkString(simd_name(ran)));
    setAttrib(ans, install("blas"), mkString(blas_is_optimized() ? "optimized" : "reference"));
    setAttrib(ans, install("large_products"),
              mkString(tiles_preferred(1e9) ? "tiles" : "blas"));
    UNPROTECT(1);
    return ans;
}
