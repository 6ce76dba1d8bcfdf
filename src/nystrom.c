/* Centered Nystrom kernel PCA: the two passes over row blocks, the blocked
 * symmetric rank-k update they need, and k-means++ landmarks.
 *
 * R (R/nystrom.R) drives the passes one block of rows at a time; each call
 * here computes the kernel between that block and the m landmarks
 * (block x m, never n x m) and returns the block's contribution:
 *   pass 1: sum_i (k_i - c) and sum_i (k_i - c)(k_i - c)' (m x m, lower),
 *           with k_i the kernel between row i and the landmarks and c a
 *           shift close to their mean (so that the centered covariance does
 *           not come from the difference of two large numbers);
 *   pass 2: the scores k_i' A - offset' of the rows of the block.
 * Both are sums (or stacks) over blocks, so blocks could go to workers.
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

/* What one block call needs: the kernel, the landmarks prepared for it, and
 * the block's rows. */
typedef struct {
    kernel_eval k;
    kernel_points landmarks;
    const double *shift;
    int n, d, m, threads;
} nystrom_setup;

static void check_double_matrix(SEXP x, const char *what)
{
    if (!isReal(x) || !isMatrix(x)) error("'%s' must be a double matrix", what);
}

/* Read the arguments every block call shares; the distance kernels are
 * shifted by the landmarks' column means, as predict() does (through
 * kernel_cross with the landmarks as the training rows). */
static void nystrom_setup_from_R(SEXP x, SEXP landmarks, SEXP kernel, SEXP lweights,
                                 SEXP threads, nystrom_setup *s)
{
    kernel_eval_from_R(kernel, &s->k);
    check_double_matrix(x, "x");
    check_double_matrix(landmarks, "landmarks");
    s->n = nrows(x);
    s->d = ncols(x);
    s->m = nrows(landmarks);
    if (ncols(landmarks) != s->d)
        error("'landmarks' must have %d columns, not %d", s->d, ncols(landmarks));
    if (s->m < 1) error("'landmarks' must have at least one row");
    s->threads = as_threads(threads);
    s->shift = kernel_shift(&s->k, REAL(landmarks), s->m, s->m, s->d);
    kernel_points_prepare(&s->k, REAL(landmarks), s->m, 0, s->m, s->d, s->shift,
                          lweights, &s->landmarks);
}

/* The row block rows = c(first row, number of rows) (first row from 0),
 * checked against n. */
static void block_rows(SEXP rows, int n, int *row0, int *nb)
{
    if (!isInteger(rows) || XLENGTH(rows) != 2) error("'rows' must be two integers");
    *row0 = INTEGER(rows)[0];
    *nb = INTEGER(rows)[1];
    if (*row0 == NA_INTEGER || *nb == NA_INTEGER || *row0 < 0 || *nb < 1 ||
        *nb > n - *row0)
        error("'rows' must be a block of rows of 'x'");
}

/* The kernel between rows row0..row0+nb-1 of x and the landmarks: nb x m. */
static double *block_kernel(const nystrom_setup *s, SEXP x, SEXP xweights, int row0,
                            int nb)
{
    kernel_points bp;
    kernel_points_prepare(&s->k, REAL(x), s->n, row0, nb, s->d, s->shift, xweights, &bp);
    double *Kb = (double *) R_alloc((size_t) nb * s->m, sizeof(double));
    kernel_block(&s->k, &bp, &s->landmarks, 0, Kb, s->threads, "");
    return Kb;
}

/* .Call, pass 1 on one block of rows.
 * x: n x d double matrix (the data); rows: c(first row from 0, rows);
 * landmarks: m x d double matrix; kernel: a program from
 * fastkpca:::kernel_program(); xweights, lweights: the conformal weights of
 * the rows of x and of the landmarks; shift: m doubles, c; threads.
 * Returns list(sums = sum_i (k_i - c), cross = the lower triangle of
 * sum_i (k_i - c)(k_i - c)', m x m with zeros above the diagonal). */
SEXP nystrom_pass1(SEXP x, SEXP rows, SEXP landmarks, SEXP kernel, SEXP xweights,
                   SEXP lweights, SEXP shift, SEXP threads)
{
    nystrom_setup s;
    nystrom_setup_from_R(x, landmarks, kernel, lweights, threads, &s);
    int row0, nb;
    block_rows(rows, s.n, &row0, &nb);
    if (!isReal(shift) || XLENGTH(shift) != s.m)
        error("'shift' must hold %d doubles", s.m);
    double *Kb = block_kernel(&s, x, xweights, row0, nb);

    SEXP sums = PROTECT(allocVector(REALSXP, s.m));
    SEXP cross = PROTECT(allocMatrix(REALSXP, s.m, s.m));
    memset(REAL(sums), 0, (size_t) s.m * sizeof(double));
    memset(REAL(cross), 0, (size_t) s.m * s.m * sizeof(double));
    syrk_lower_add(Kb, nb, s.m, REAL(shift), REAL(cross), REAL(sums), s.threads);

    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SEXP names = PROTECT(allocVector(STRSXP, 2));
    SET_VECTOR_ELT(ans, 0, sums);
    SET_VECTOR_ELT(ans, 1, cross);
    SET_STRING_ELT(names, 0, mkChar("sums"));
    SET_STRING_ELT(names, 1, mkChar("cross"));
    setAttrib(ans, R_NamesSymbol, names);
    UNPROTECT(4);
    return ans;
}

/* .Call, pass 2 on one block of rows: the scores K_b A - 1 offset', nb x f.
 * x, rows, landmarks, kernel, xweights, lweights, threads: as pass 1;
 * coef: m x f double matrix A; offset: f doubles. */
SEXP nystrom_pass2(SEXP x, SEXP rows, SEXP landmarks, SEXP kernel, SEXP xweights,
                   SEXP lweights, SEXP coef, SEXP offset, SEXP threads)
{
    nystrom_setup s;
    nystrom_setup_from_R(x, landmarks, kernel, lweights, threads, &s);
    int row0, nb;
    block_rows(rows, s.n, &row0, &nb);
    check_double_matrix(coef, "coef");
    if (nrows(coef) != s.m) error("'coef' must have %d rows", s.m);
    int f = ncols(coef);
    if (!isReal(offset) || XLENGTH(offset) != f) error("'offset' must hold %d doubles", f);
    double *Kb = block_kernel(&s, x, xweights, row0, nb);

    SEXP ans = PROTECT(allocMatrix(REALSXP, nb, f));
    double *S = REAL(ans);
    if (f > 0) {
        double one = 1.0, zero = 0.0;
        int m = s.m;
        F77_CALL(dgemm)("N", "N", &nb, &f, &m, &one, Kb, &nb, REAL(coef), &m, &zero, S,
                        &nb FCONE FCONE);
        const double *off = REAL(offset);
        for (int j = 0; j < f; j++) {
            double *col = S + (size_t) j * nb;
            for (int i = 0; i < nb; i++) col[i] -= off[j];
        }
    }
    UNPROTECT(1);
    return ans;
}

/* .Call: m landmark rows by kernel k-means++ seeding (D^2 sampling in
 * feature space; Arthur and Vassilvitskii 2007, Oglic and Gaertner 2017):
 * the first uniformly, each next one with probability proportional to its
 * squared feature-space distance k(x,x) + k(c,c) - 2 k(x,c) to the nearest
 * landmark so far. Uses R's random number generator.
 * x: n x d double matrix; m: integer, 1..n; kernel: a program; weights: the
 * conformal weights of the rows of x; threads (checked, unused: each draw
 * needs the one before).
 * Returns the m row numbers (from 1), or fewer if the rest of the data are
 * at distance 0 from the landmarks already (duplicated rows). */
SEXP nystrom_kmeanspp(SEXP x, SEXP m_, SEXP kernel, SEXP weights, SEXP threads)
{
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    check_double_matrix(x, "x");
    int n = nrows(x), d = ncols(x);
    int m = as_count(m_, "m", 1, n > 0 ? n : 1);
    as_threads(threads); /* checked; the draws are sequential, on one thread */
    if (n < 1) error("'x' must have at least one row");

    kernel_points p;
    const double *shift = kernel_shift(&k, REAL(x), n, n, d);
    kernel_points_prepare(&k, REAL(x), n, 0, n, d, shift, weights, &p);
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
        double total = 0.0;
        for (int i = 0; i < n; i++) {
            double dist = diag[i] + diag[c] - 2.0 * kc[i];
            if (!(dist > 0.0)) dist = 0.0;
            if (dist < d2[i]) d2[i] = dist;
            if (i == c) d2[i] = 0.0; /* a landmark is never drawn again */
            total += d2[i];
        }
        if (!(total > 0.0) || !R_FINITE(total)) break;
        /* the first row whose running sum passes u: a row with d2 = 0 is
         * never chosen, whatever the rounding */
        double u = unif_rand() * total, run = 0.0;
        int next = -1;
        for (int i = 0; i < n; i++) {
            if (d2[i] <= 0.0) continue;
            next = i;
            run += d2[i];
            if (run > u) break;
        }
        if (next < 0) break;
        c = next;
    }
    PutRNGstate();
    SEXP ans = PROTECT(allocVector(INTSXP, got));
    memcpy(INTEGER(ans), idx, (size_t) got * sizeof(int));
    UNPROTECT(2);
    return ans;
}
