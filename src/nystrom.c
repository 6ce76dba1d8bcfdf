/* Centered Nystrom kernel PCA: pass 1 over row blocks (the sufficient
 * statistics), the blocked symmetric rank-k update it needs, the landmark
 * coefficients, and k-means++ landmarks. Pass 2 (the scores) is the
 * projection of rows in project.c, which predict() uses too.
 *
 * Pass 1 computes, block by block, the kernel between the block and the m
 * landmarks (block x m, never n x m) and sums
 *   sum_i (k_i - c) and sum_i (k_i - c)(k_i - c)' (m x m),
 * with k_i the kernel between row i and the landmarks and c a shift close
 * to their mean (so that the centered covariance does not come from the
 * difference of two large numbers). These are sums over rows, so chunks of
 * rows can be summed apart and added (R/nystrom.R).
 *
 * The rank-k update (the n m^2 part of a fit) is cache-blocked and
 * multithreaded here rather than left to the BLAS: R's reference dsyrk (as
 * crossprod()) ran at 0.8 G multiply-adds per second on the project
 * machine, this one at 3.2 on one core, about OpenBLAS's speed
 * (bench/nystrom.R, part syrk); at n = 10^6 and m = 500 that is 150 s
 * against 40 s. Every entry of the result is summed
 * in the same order whatever the number of threads. */
#include "fastkpca.h"
#include <float.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
# include <omp.h>
#endif

/* Rows of a block per slice of the rank-k update: a packed slice of the
 * block (KC x m doubles, 1 MB for m = 500) stays in the L2 cache while a
 * thread updates its tiles of the result from it. */
#define SYRK_KC 256
/* The result is updated in tiles of 8 rows by 4 columns, the packed slice
 * stored in panels of 8 columns (row by row, 8 doubles each). */
#define SYRK_MR 8
#define SYRK_NR 4

/* The tile kernel: acc (8 x 4, column-major) = sum over kc rows of
 * a[k, 0:8] b[k, 0:4]', with a and b rows SYRK_MR doubles apart (b points
 * into a panel at its column offset). With GCC or clang it is written with
 * vector extensions: SSE2 (2 doubles, every x86-64 CPU) by default, and on
 * x86-64 CPUs with AVX2 and FMA (checked at run time) 4 doubles with fused
 * multiply-adds, about twice as fast. Elsewhere, plain loops. */
#if defined(__GNUC__) && (__GNUC__ >= 5 || defined(__clang__))
# define SYRK_VECTOR 1
typedef double v2d __attribute__((vector_size(16)));
typedef double v2du __attribute__((vector_size(16), aligned(8), may_alias));
# if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 6)
#  define SYRK_AVX2 1
typedef double v4d __attribute__((vector_size(32)));
typedef double v4du __attribute__((vector_size(32), aligned(8), may_alias));
# endif
#endif

#ifdef SYRK_AVX2
__attribute__((target("avx2,fma")))
static void syrk_tile_avx2(int kc, const double *a, const double *b, double *acc)
{
    v4d c00 = {0, 0, 0, 0}, c10 = c00, c01 = c00, c11 = c00, c02 = c00, c12 = c00,
        c03 = c00, c13 = c00;
    for (int k = 0; k < kc; k++) {
        const double *ak = a + (size_t) k * SYRK_MR, *bk = b + (size_t) k * SYRK_MR;
        v4d a0 = *(const v4du *) ak, a1 = *(const v4du *) (ak + 4);
        v4d b0 = {bk[0], bk[0], bk[0], bk[0]};
        c00 += a0 * b0; c10 += a1 * b0;
        v4d b1 = {bk[1], bk[1], bk[1], bk[1]};
        c01 += a0 * b1; c11 += a1 * b1;
        v4d b2 = {bk[2], bk[2], bk[2], bk[2]};
        c02 += a0 * b2; c12 += a1 * b2;
        v4d b3 = {bk[3], bk[3], bk[3], bk[3]};
        c03 += a0 * b3; c13 += a1 * b3;
    }
    *(v4du *) (acc + 0) = c00;  *(v4du *) (acc + 4) = c10;
    *(v4du *) (acc + 8) = c01;  *(v4du *) (acc + 12) = c11;
    *(v4du *) (acc + 16) = c02; *(v4du *) (acc + 20) = c12;
    *(v4du *) (acc + 24) = c03; *(v4du *) (acc + 28) = c13;
}
#endif

static void syrk_tile_plain(int kc, const double *a, const double *b, double *acc)
{
#ifdef SYRK_VECTOR
    /* two 4 x 4 halves: 8 accumulators each, within SSE2's 16 registers */
    for (int h = 0; h < 2; h++) {
        v2d c00 = {0, 0}, c10 = c00, c01 = c00, c11 = c00, c02 = c00, c12 = c00,
            c03 = c00, c13 = c00;
        const double *ah = a + 4 * h;
        for (int k = 0; k < kc; k++) {
            const double *ak = ah + (size_t) k * SYRK_MR, *bk = b + (size_t) k * SYRK_MR;
            v2d a0 = *(const v2du *) ak, a1 = *(const v2du *) (ak + 2);
            v2d b0 = {bk[0], bk[0]};
            c00 += a0 * b0; c10 += a1 * b0;
            v2d b1 = {bk[1], bk[1]};
            c01 += a0 * b1; c11 += a1 * b1;
            v2d b2 = {bk[2], bk[2]};
            c02 += a0 * b2; c12 += a1 * b2;
            v2d b3 = {bk[3], bk[3]};
            c03 += a0 * b3; c13 += a1 * b3;
        }
        double *o = acc + 4 * h;
        *(v2du *) (o + 0) = c00;  *(v2du *) (o + 2) = c10;
        *(v2du *) (o + 8) = c01;  *(v2du *) (o + 10) = c11;
        *(v2du *) (o + 16) = c02; *(v2du *) (o + 18) = c12;
        *(v2du *) (o + 24) = c03; *(v2du *) (o + 26) = c13;
    }
#else
    for (int t = 0; t < SYRK_MR * SYRK_NR; t++) acc[t] = 0.0;
    for (int k = 0; k < kc; k++) {
        const double *ak = a + (size_t) k * SYRK_MR, *bk = b + (size_t) k * SYRK_MR;
        for (int j = 0; j < SYRK_NR; j++)
            for (int i = 0; i < SYRK_MR; i++) acc[i + j * SYRK_MR] += ak[i] * bk[j];
    }
#endif
}

typedef void (*syrk_tile_fn)(int, const double *, const double *, double *);

/* The tile kernel for this CPU. */
static syrk_tile_fn syrk_tile_choose(void)
{
#ifdef SYRK_AVX2
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return syrk_tile_avx2;
#endif
    return syrk_tile_plain;
}

/* G (m x m, lower triangle with the diagonal) += (B - 1 c')' (B - 1 c') and
 * colsum += (B - 1 c')' 1, for B nb x m (leading dimension nb). The block
 * is first packed, the shift c subtracted on the way, in slices of SYRK_KC
 * rows, each slice in panels of SYRK_MR columns (zero-padded, row by row).
 * Then, slice by slice, each thread updates its own row panels of G: the
 * same thread owns the same panels in every slice (a static schedule), so
 * the threads never wait for one another between slices, and every entry
 * is summed in the same order whatever the number of threads. One parallel
 * region per block: on a machine shared with other work, a barrier per
 * slice costs more than the slice. */
static void syrk_lower_add(const double *B, int nb, int m, const double *c, double *G,
                           double *colsum, int threads)
{
    int npanels = (m + SYRK_MR - 1) / SYRK_MR;
    int nslices = (nb + SYRK_KC - 1) / SYRK_KC;
    size_t panel_len = (size_t) SYRK_KC * SYRK_MR, slice_len = panel_len * npanels;
    double *P = (double *) R_alloc((size_t) nslices * slice_len, sizeof(double));
    syrk_tile_fn syrk_tile = syrk_tile_choose();
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int p = 0; p < npanels; p++) {
            for (int l = 0; l < SYRK_MR; l++) {
                int j = p * SYRK_MR + l;
                const double *col = j < m ? B + (size_t) j * nb : NULL;
                double s = 0.0;
                for (int k = 0; k < nb; k++) {
                    double v = col ? col[k] - c[j] : 0.0;
                    P[(k / SYRK_KC) * slice_len + p * panel_len +
                      (size_t) (k % SYRK_KC) * SYRK_MR + l] = v;
                    s += v;
                }
                if (col) colsum[j] += s;
            }
        }
        for (int sl = 0; sl < nslices; sl++) {
            int kc = nb - sl * SYRK_KC < SYRK_KC ? nb - sl * SYRK_KC : SYRK_KC;
            const double *S = P + (size_t) sl * slice_len;
            /* row panels of G, largest first, dealt out in turn */
#ifdef _OPENMP
#pragma omp for schedule(static, 1) nowait
#endif
            for (int q = 0; q < npanels; q++) {
                int pi = npanels - 1 - q, i0 = pi * SYRK_MR;
                const double *a = S + (size_t) pi * panel_len;
                double acc[SYRK_MR * SYRK_NR];
                for (int j0 = 0; j0 < i0 + SYRK_MR && j0 < m; j0 += SYRK_NR) {
                    const double *b = S + (size_t) (j0 / SYRK_MR) * panel_len + j0 % SYRK_MR;
                    syrk_tile(kc, a, b, acc);
                    for (int jj = 0; jj < SYRK_NR && j0 + jj < m; jj++) {
                        int j = j0 + jj;
                        double *gcol = G + (size_t) j * m;
                        for (int ii = 0; ii < SYRK_MR; ii++) {
                            int i = i0 + ii;
                            if (i >= j && i < m) gcol[i] += acc[ii + jj * SYRK_MR];
                        }
                    }
                }
            }
        }
    }
    R_CheckUserInterrupt();
}

static void check_double_matrix(SEXP x, const char *what)
{
    if (!isReal(x) || !isMatrix(x)) error("'%s' must be a double matrix", what);
}

/* The statistics of one block (its kernel Kb, nb x m) added to the totals
 * S (m) and G (m x m, lower triangle): the block's own sums bs and bg start
 * from zero, so that the totals are sums of whole blocks. */
static void add_block_statistics(const double *Kb, int nb, int m, const double *shift,
                                 double *bs, double *bg, double *S, double *G, int threads)
{
    memset(bs, 0, (size_t) m * sizeof(double));
    memset(bg, 0, (size_t) m * m * sizeof(double));
    syrk_lower_add(Kb, nb, m, shift, bg, bs, threads);
    for (int j = 0; j < m; j++) {
        S[j] += bs[j];
        for (int i = j; i < m; i++) G[i + (size_t) j * m] += bg[i + (size_t) j * m];
    }
}

/* A names attribute of two strings. */
static SEXP pair_names(const char *a, const char *b)
{
    SEXP names = PROTECT(allocVector(STRSXP, 2));
    SET_STRING_ELT(names, 0, mkChar(a));
    SET_STRING_ELT(names, 1, mkChar(b));
    UNPROTECT(1);
    return names;
}

/* .Call, pass 1: the sufficient statistics of the rows of x for the
 * landmarks, over blocks of rows, in one call: the kernel program is parsed
 * and the landmarks prepared (shifted by their column means, as predict()
 * shifts them, and transposed) once; each block's kernel with the
 * landmarks (block x m) is then folded into the sums. Each block's sums
 * start from zero and are added to the totals, so the result does not
 * depend on anything but the block size.
 * x: n x d double matrix (the data); landmarks: m x d double matrix;
 * kernel: a program from fastkpca:::kernel_program(); xweights, lweights:
 * the conformal weights of the rows of x and of the landmarks; shift: m
 * doubles, c; block_rows: integer, rows per block, 1 to n; threads; step:
 * NULL or a function called after each block (a progress bar).
 * Returns list(sums = sum_i (k_i - c), cross = sum_i (k_i - c)(k_i - c)',
 * m x m, symmetric). */
SEXP nystrom_statistics(SEXP x, SEXP landmarks, SEXP kernel, SEXP xweights,
                        SEXP lweights, SEXP shift, SEXP block_rows, SEXP threads,
                        SEXP step)
{
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    int d = check_point_sets(x, "x", landmarks, "landmarks");
    int n = nrows(x), m = nrows(landmarks);
    if (m < 1) error("'landmarks' must have at least one row");
    if (!isReal(shift) || XLENGTH(shift) != m) error("'shift' must hold %d doubles", m);
    int block = as_count(block_rows, "block_rows", 1, n);
    int nthreads = as_threads(threads);
    check_step(step);

    kernel_points lp;
    const double *lshift = kernel_points_fixed(&k, landmarks, lweights, &lp);
    check_weights(&k, xweights, "xweights");

    SEXP sums = PROTECT(allocVector(REALSXP, m));
    SEXP cross = PROTECT(allocMatrix(REALSXP, m, m));
    double *S = REAL(sums), *G = REAL(cross);
    memset(S, 0, (size_t) m * sizeof(double));
    memset(G, 0, (size_t) m * m * sizeof(double));
    double *Kb = (double *) R_alloc((size_t) block * m, sizeof(double));
    double *bs = (double *) R_alloc((size_t) m, sizeof(double));
    double *bg = (double *) R_alloc((size_t) m * m, sizeof(double));
    for (int row0 = 0; row0 < n; row0 += block) {
        int nb = n - row0 < block ? n - row0 : block;
        const void *vmax = vmaxget();
        kernel_points bp;
        kernel_points_prepare(&k, REAL(x), n, row0, nb, d, lshift, xweights, &bp);
        kernel_block(&k, &bp, &lp, 0, Kb, nthreads, "");
        add_block_statistics(Kb, nb, m, REAL(shift), bs, bg, S, G, nthreads);
        vmaxset(vmax);
        call_step(step);
    }
    for (int j = 0; j < m; j++)
        for (int i = j + 1; i < m; i++) G[j + (size_t) i * m] = G[i + (size_t) j * m];

    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SET_VECTOR_ELT(ans, 0, sums);
    SET_VECTOR_ELT(ans, 1, cross);
    setAttrib(ans, R_NamesSymbol, pair_names("sums", "cross"));
    UNPROTECT(3);
    return ans;
}

/* .Call: the coefficients of a Nystrom fit on its landmarks,
 * alpha = sqrt(n) T W, with each column's sign fixed by orient_columns()
 * (eigen.c), the one rule for the signs of every fit.
 * basis: m x r double matrix T = U diag(s^-1/2); vectors: r x k double
 * matrix W; n: the number of rows, a double >= 1. Returns m x k. */
SEXP nystrom_alpha(SEXP basis, SEXP vectors, SEXP n)
{
    check_double_matrix(basis, "basis");
    check_double_matrix(vectors, "vectors");
    int m = nrows(basis), r = ncols(basis), k = ncols(vectors);
    if (m < 1 || r < 1) error("'basis' must have at least 1 row and 1 column");
    if (nrows(vectors) != r) error("'vectors' must have %d rows, not %d", r, nrows(vectors));
    double rows = as_number(n, "n");
    if (rows < 1) error("'n' must be at least 1");
    SEXP ans = PROTECT(allocMatrix(REALSXP, m, k));
    double *A = REAL(ans);
    if (k > 0) {
        double one = 1.0, zero = 0.0, root = sqrt(rows);
        F77_CALL(dgemm)("N", "N", &m, &k, &r, &one, REAL(basis), &m, REAL(vectors), &r,
                        &zero, A, &m FCONE FCONE);
        /* sqrt(n) * (T %*% W), in that order, as R computed it */
        for (size_t t = 0; t < (size_t) m * k; t++) A[t] = root * A[t];
        orient_columns(m, k, A);
    }
    UNPROTECT(1);
    return ans;
}

/* One k-means++ draw: d2 (the squared feature-space distance of each row
 * to its nearest landmark) updated with the new landmark c, whose kernel
 * column is kc; then the next landmark drawn with probability proportional
 * to d2: the first row whose running sum passes u, so that a row with
 * d2 = 0 is never chosen, whatever the rounding. Returns -1 when every row
 * is at distance 0 (or the distances overflow). */
static int kmeanspp_next(double *d2, const double *diag, const double *kc, int n, int c)
{
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        double dist = diag[i] + diag[c] - 2.0 * kc[i];
        if (!(dist > 0.0)) dist = 0.0;
        if (dist < d2[i]) d2[i] = dist;
        if (i == c) d2[i] = 0.0; /* a landmark is never drawn again */
        total += d2[i];
    }
    if (!(total > 0.0) || !R_FINITE(total)) return -1;
    double u = unif_rand() * total, run = 0.0;
    int next = -1;
    for (int i = 0; i < n; i++) {
        if (d2[i] <= 0.0) continue;
        next = i;
        run += d2[i];
        if (run > u) break;
    }
    return next;
}

/* .Call: m landmark rows by kernel k-means++ seeding (D^2 sampling in
 * feature space; Arthur and Vassilvitskii 2007, Oglic and Gaertner 2017):
 * the first uniformly, each next one with probability proportional to its
 * squared feature-space distance k(x,x) + k(c,c) - 2 k(x,c) to the nearest
 * landmark so far. Uses R's random number generator.
 * x: n x d double matrix; m: integer, 1..n; kernel: a program; weights: the
 * conformal weights of the rows of x. One thread: each draw needs the one
 * before.
 * Returns the m row numbers (from 1), or fewer if the rest of the data are
 * at distance 0 from the landmarks already (duplicated rows). */
SEXP nystrom_kmeanspp(SEXP x, SEXP m_, SEXP kernel, SEXP weights)
{
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    check_double_matrix(x, "x");
    int n = nrows(x), d = ncols(x);
    int m = as_count(m_, "m", 1, n > 0 ? n : 1);
    if (n < 1 || d < 1) error("'x' must have at least 1 row and 1 column");

    kernel_points p;
    kernel_points_fixed(&k, x, weights, &p);
    const double **wb = (const double **) R_alloc((size_t) k.nweights + 1, sizeof(double *));

    double *diag = (double *) R_alloc((size_t) n, sizeof(double));
    kernel_diagonal(&k, &p, diag);

    double *d2 = (double *) R_alloc((size_t) n, sizeof(double));
    double *kc = (double *) R_alloc((size_t) n, sizeof(double));
    for (int i = 0; i < n; i++) d2[i] = R_PosInf;
    SEXP chosen = PROTECT(allocVector(INTSXP, m));
    int *idx = INTEGER(chosen), got = 0;

    GetRNGstate();
    int c = (int) R_unif_index((double) n);
    while (1) {
        idx[got++] = c + 1;
        if (got == m) break;
        /* kc[i] = k(x_i, x_c): one column of n rows, a tight loop on one
         * thread (as n columns of one row, the per-column overhead costs
         * more than the kernel values; and a parallel region per landmark
         * waits, on a busy machine, for a second thread to be scheduled) */
        kernel_points v = kernel_points_view(&k, &p, c, 1, wb);
        const void *vmax = vmaxget();
        kernel_block(&k, &p, &v, 0, kc, 1, "");
        vmaxset(vmax);
        int next = kmeanspp_next(d2, diag, kc, n, c);
        if (next < 0) break;
        c = next;
    }
    PutRNGstate();
    SEXP ans = PROTECT(allocVector(INTSXP, got));
    memcpy(INTEGER(ans), idx, (size_t) got * sizeof(int));
    UNPROTECT(2);
    return ans;
}
