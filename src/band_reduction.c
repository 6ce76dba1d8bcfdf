/* The two-stage tridiagonal reduction of the exact solver, and its
 * back-transformation for the wanted vectors only.
 *
 * The one-stage reduction (dsytrd's, eigen.c) spends half of its
 * multiply-adds in symmetric matrix-vector products, which read the whole
 * trailing matrix once per column: they run at the memory's rate, not the
 * tiles'. Here the matrix is reduced in two stages, as in the two-stage
 * methods of ELPA, PLASMA and MAGMA:
 *   stage 1, dense to band (band_reduce()): for each panel of b columns,
 *     the QR factorization of the rows below its band (dgeqr2's steps, on
 *     the vectors: band_sweep.h's panel_qr), then the
 *     trailing matrix's two-sided update A22 <- Q' A22 Q as one symmetric
 *     product and one rank-2b update, both on the register tiles;
 *   stage 2, band to tridiagonal (band_chase()): sweep s annihilates
 *     column s below its subdiagonal with a reflector of length b, and
 *     chases the bulge that reflector makes down the band, one reflector
 *     of length b per step; the band (with room for the bulge) is a
 *     (2b + 1) x n array that stays in the cache.
 * Stage 1 leaves its reflectors where dgeqrf would put them (below the band, in
 * A's lower triangle); stage 2's reflectors go to A's strict upper
 * triangle, which nothing else uses: sweep s's reflectors make up row s,
 * the reflector of step t starting at column s + 1 + t b, its first
 * (unit) entry replaced by its tau. No more memory than the buffer and
 * O(n b) scratch.
 *
 * The back-transformation (band_back_transform()) applies Q = Q1 Q2 to
 * the k eigenvectors of the tridiagonal: stage 2's reflectors grouped
 * (those of g consecutive sweeps at the same step form one block
 * reflector, V of b + g - 1 rows by g, applied in an order that respects
 * every overlap) as two products on the tiles each (V' Z, then Z -= (V T)
 * times it), then stage 1's panels as three (apply_block_reflector()).
 *
 * Why not LAPACK's own two stages: dsytrd_2stage (dsytrd_sy2sb, dense to
 * band, then dsytrd_sb2st, band to tridiagonal) and the drivers on it
 * (dsyevr_2stage, dsyevd_2stage, dsyev_2stage) compute no eigenvectors in
 * LAPACK 3.x: JOBZ = 'V' is "not available in this release" (the drivers
 * refuse it), and dsytrd_sb2st accepts only VECT = 'N', so the reflectors
 * of its stage 2 (Q2) are not returned in a form anything could apply.
 *
 * Stage 2 is the algorithm of dsytrd_sb2st (Haidar, Ltaief and Dongarra's
 * bulge chasing), in LAPACK's terms: the band is kept as in dsbtrd's lower
 * band storage, AB(1 + i - j, j) = A(i, j), with b more rows for the bulge
 * (2b + 1 rows in all, as dsytrd_sb2st's working copy, LDA = 2 KD + 1), and
 * read with leading dimension 2b, so that a block of the band reads as a
 * block of a full matrix (dsb2st_kernels' LDA - 1). A sweep's steps are
 * dsb2st_kernels' three: ttype 1, the sweep's first reflector (dlarfg) and
 * its two-sided update of the diagonal block (dlarfy); ttype 2, the last
 * reflector applied from the right to the block below (dlarfx), a new
 * reflector for that block's first column (dlarfg) applied from the left
 * to its other columns (dlarfx); ttype 3, the new reflector's two-sided
 * update of the next diagonal block (dlarfy). They are the package's own
 * (band_sweep.h, one copy per rule of arithmetic, as tiles_vector.h's), not
 * LAPACK's: no LAPACK call runs on a worker thread, and every sum has one
 * order, written out, whatever the compiler and its flags.
 *
 * Every product sums each entry in one order whatever the thread count
 * (tiles.c), and stage 2's steps compute on the threads what they would in
 * one sweep after the other: the bits do not depend on the number of
 * threads. */
#include "fastkpca.h"
#include "simd.h"
#include <float.h>
#include <math.h>
#include <string.h>


/* ---- stage 1: dense to band ----------------------------------------------- */

/* The copy of band_sweep.h's kernels for a path (band_copy_for(), below
 * the copies): stage 1's panel factorization and stage 2's sweep. */
typedef struct band_state band_state;
typedef void (*band_panel_qr_fn)(double *, int, int, int, double *, double *);
typedef void (*band_sweep_fn)(band_state *, int, int, int, double *, double *, double *,
                              const int *, int *);
typedef struct {
    band_panel_qr_fn panel_qr;
    band_sweep_fn sweep;
} band_copy;
static band_copy band_copy_for(simd_path path);

/* Scratch of stage 1, taken once per fit (n rows at most). */
typedef struct {
    double *panel;   /* [V | W], rows x 2b */
    double *T, *Tfull, *M, *gram;  /* b x b */
    double *square;  /* BAND_STRIP x BAND_STRIP */
    double *ys;      /* b x BAND_STRIP */
    double *qr_scratch;  /* rows */
    band_panel_qr_fn panel_qr;
} band_scratch;

/* square (w x w, full) <- the symmetric block D (its lower triangle,
 * leading dimension lda), by blocks of 8 x 8: column j's entries go to
 * row j of the square, 2 KB apart (w = BAND_STRIP), and lines 2 KB apart
 * share 2 of L1's 64 sets, 16 lines; a plain column loop wrote to 256
 * and missed at nearly every store (the fill was 2.4% of a one-thread
 * fit at n = 3000, perf, and the other threads waited for it). A copy:
 * the same values. */
static void symmetric_square(const double *D, int lda, int w, double *square)
{
    for (int jb = 0; jb < w; jb += 8) {
        int je = jb + 8 < w ? jb + 8 : w;
        for (int ib = jb; ib < w; ib += 8) {
            int ie = ib + 8 < w ? ib + 8 : w;
            for (int j = jb; j < je; j++)
                for (int i = ib > j ? ib : j; i < ie; i++)
                    square[i + (size_t) j * w] = square[j + (size_t) i * w] =
                        D[i + (size_t) j * lda];
        }
    }
}

/* Y (m x k, zeroed here) = A V, A symmetric m x m in its lower triangle
 * (leading dimension lda), V m x k (Vt: V', k x m): strip by strip of
 * BAND_STRIP columns, the strip's diagonal block through a full square,
 * the block below it used twice: Y_below += B V_strip, and
 * Y_strip += B' V_below as (Y_strip)' += V_below' B, in ys (k x the
 * strip), so that the tiles read B in place both times (B' would be
 * packed, a pass over the trailing matrix per panel); the same terms in
 * the same order, so the same bits. */
static void symmetric_panel_product(const double *A, int lda, int m, const double *V,
                                    const double *Vt, int k, double *Y, double *square,
                                    double *ys, int threads)
{
    memset(Y, 0, (size_t) m * k * sizeof(double));
    for (int c0 = 0; c0 < m; c0 += BAND_STRIP) {
        int w = m - c0 < BAND_STRIP ? m - c0 : BAND_STRIP, below = m - c0 - w;
        const double *D = A + c0 + (size_t) c0 * lda, *B = D + w;
        symmetric_square(D, lda, w, square);
        panel_gemm(w, k, w, square, w, 0, V + c0, m, 0, 1.0, Y + c0, m, threads);
        if (below > 0) {
            panel_gemm(below, k, w, B, lda, 0, V + c0, m, 0, 1.0, Y + c0 + w, m, threads);
            for (int c = 0; c < k; c++)
                for (int i = 0; i < w; i++)
                    ys[c + (size_t) i * k] = Y[c0 + i + (size_t) c * m];
            panel_gemm(k, w, below, Vt + (size_t) (c0 + w) * k, k, 0, B, lda, 0, 1.0, ys, k,
                       threads);
            for (int c = 0; c < k; c++)
                for (int i = 0; i < w; i++)
                    Y[c0 + i + (size_t) c * m] = ys[c + (size_t) i * k];
        }
    }
}

/* One panel of stage 1: columns j0 .. j0 + b - 1 of A (n x n, lower),
 * whose rows from j0 + b on (m of them) are factored Q R (panel_qr, as
 * LAPACK's dgeqr2, which dgeqrf runs on a panel this narrow: R in the
 * band, the reflectors below it, tau in tau1[j0 ...]); then the trailing
 * A22 <- Q' A22 Q = A22 - V W' - W V', with X = A22 V T and
 * W = X - V (T' V' X) / 2. */
static void band_panel(double *A, int n, int j0, int b, double *tau1, band_scratch *s,
                       int threads)
{
    int m = n - j0 - b, k = m < b ? m : b;
    double *P = A + (j0 + b) + (size_t) j0 * n, *A22 = P + (size_t) b * n;
    s->panel_qr(P, n, m, b, tau1 + j0, s->qr_scratch);
    double *V = s->panel, *X = V + (size_t) m * k;
    explicit_reflectors(P, n, m, k, V);
    triangular_factor(V, m, k, tau1 + j0, s->T, b, s->gram, threads);
    for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++)
            s->Tfull[i + (size_t) j * k] = i <= j ? s->T[i + (size_t) j * b] : 0.0;
    /* Y = A22 V in the square's place of X's, then X = Y T */
    double *Y = s->square + (size_t) BAND_STRIP * BAND_STRIP;
    /* V' in X's place until X is made */
    for (int c = 0; c < k; c++)
        for (int i = 0; i < m; i++) X[c + (size_t) i * k] = V[i + (size_t) c * m];
    symmetric_panel_product(A22, n, m, V, X, k, Y, s->square, s->ys, threads);
    memset(X, 0, (size_t) m * k * sizeof(double));
    panel_gemm(m, k, k, Y, m, 0, s->Tfull, k, 0, 1.0, X, m, threads);
    /* M = T' (V' X) / 2 (halving is exact), then W = X - V M in X's place */
    memset(s->gram, 0, (size_t) k * k * sizeof(double));
    panel_gemm(k, k, m, V, m, 1, X, m, 0, 1.0, s->gram, k, threads);
    memset(s->M, 0, (size_t) k * k * sizeof(double));
    panel_gemm(k, k, k, s->Tfull, k, 1, s->gram, k, 0, 1.0, s->M, k, threads);
    for (int i = 0; i < k * k; i++) s->M[i] *= 0.5;
    panel_gemm(m, k, k, V, m, 0, s->M, k, 0, -1.0, X, m, threads);
    /* A22 -= V W' + W V' */
    rank2k_update_tiles(m, k, V, X, m, A22, n, s->square, threads,
                        tile_thread_work() / BAND_THREAD_SHARE);
}

/* Stage 1: A (n x n, lower triangle) to a band of b subdiagonals; the
 * reflectors stay below the band, their tau in tau1 (n). */
void band_reduce(double *A, int n, int b, double *tau1, int threads)
{
    const void *vmax = vmaxget();  /* the scratch given back at the end */
    band_scratch s;
    int rows = n > b ? n - b : 1;
    s.panel_qr = band_copy_for(simd_active()).panel_qr;
    s.qr_scratch = (double *) R_alloc((size_t) rows, sizeof(double));
    s.panel = (double *) R_alloc((size_t) rows * 2 * b, sizeof(double));
    s.T = (double *) R_alloc((size_t) b * b, sizeof(double));
    s.Tfull = (double *) R_alloc((size_t) b * b, sizeof(double));
    s.M = (double *) R_alloc((size_t) b * b, sizeof(double));
    s.gram = (double *) R_alloc((size_t) b * b, sizeof(double));
    /* the strip's square, then the product Y (rows x b) */
    s.square = (double *) R_alloc((size_t) BAND_STRIP * BAND_STRIP + (size_t) rows * b,
                                  sizeof(double));
    s.ys = (double *) R_alloc((size_t) b * BAND_STRIP, sizeof(double));
    memset(tau1, 0, (size_t) n * sizeof(double));
    for (int j0 = 0; j0 + b < n; j0 += b) {
        band_panel(A, n, j0, b, tau1, &s, threads_unless_busy(threads));
        R_CheckUserInterrupt();
        progress_at(PROGRESS_REDUCE, 0.9 * (1.0 - pow((double) (n - j0 - b) / n, 3)));
    }
    vmaxset(vmax);
}

/* ---- stage 2: band to tridiagonal ---------------------------------------- */

/* The band during stage 2: (2b + 1) x n, LAPACK's lower band storage
 * (entry (i, j), 0 <= i - j <= 2b, at row i - j of column j), read as
 * entry i + j ld with ld = 2b, so that a block of it reads as a block of a
 * full matrix of leading dimension ld. */
struct band_state {
    double *w;
    int ld, n, b;
    double *A;  /* the buffer, whose strict upper triangle takes the reflectors */
};

#define BAND(st, i, j) ((st)->w[(size_t) (i) + (size_t) (j) * (st)->ld])

/* The sweeps on the threads: sweep s's step t (t = 0: its first
 * reflector and block) reads and writes the band from row and column
 * s + 1 + (t - 1) b to s + (t + 1) b; sweep s - 1's step t + 1 ends inside
 * that block, its step t + 2 starts below it. So step t of sweep s waits
 * until sweep s - 1 has done t + 2 steps (done[s - 1], written with
 * release and read with acquire); sweeps further back are further ahead.
 * A thread whose run of a sweep's steps starts after another's waits for
 * done[s] to reach its first step. Every thread takes its steps in the
 * order of (sweep, step) and waits only for earlier ones: no cycle of
 * waits. Every step computes what it would in one sweep after the other:
 * the bits do not depend on the threads. */
#define SWEEP_FINISHED 2147483647

static void sweep_wait(const int *prev, int steps)
{
    if (prev != NULL) wait_for_count(prev, steps);  /* threads.c: spins, then yields */
}

static void sweep_done(int *mine, int steps)
{
    count_publish(mine, steps);
}

/* The reflector of sweep s whose rows are r .. r + len - 1, from row s of
 * A's upper triangle (n x n), where BS(reflector) leaves it: into v (len,
 * v[0] = 1, the unit entry, whose place holds tau); its tau returned. For
 * a sweep's run that starts after another thread's (BS(sweep)) and for
 * the back-transformation's groups (band_group_make()). */
static inline double band_reflector_read(const double *A, int n, int s, int r, int len,
                                         double *v)
{
    v[0] = 1.0;
    for (int i = 1; i < len; i++) v[i] = A[s + (size_t) (r + i) * n];
    return A[s + (size_t) r * n];
}

/* Whether the m entries of x are all zero (a reflector's x whose squares
 * summed to 0: zero, or so small that every square underflowed). */
static inline int band_all_zero(const double *x, int m)
{
    for (int i = 0; i < m; i++)
        if (x[i] != 0.0) return 0;
    return 1;
}

/* The reflectors' limits (band_sweep.h): LAPACK's safe minimum of dlarfg,
 * dlamch('S') / dlamch('E') = 2^-1022 / 2^-53, below which 1 / (alpha -
 * beta) could overflow; the sums of squares whose root is taken directly
 * (no square that matters has underflowed, none has overflowed: the
 * largest of at most 2b + 1 terms is at least 2^-960 / (2b + 1), the ones
 * lost below 2^-1074 far beneath its rounding); the largest scale 2^e
 * taken for the others. */
#define BAND_SAFE_MIN 0x1p-969
#define BAND_NORM_SMALL 0x1p-960
#define BAND_NORM_BIG 0x1p960
#define BAND_ALPHA_BIG 0x1p480
#define BAND_SCALE_MAX 1000

/* Stage 2's sweep, one copy per rule of arithmetic (band_sweep.h, which
 * undefines its parameters at its end); the bits depend on the path, not
 * the compiler or the threads. */

/* plain loops: a product, then a sum */
#define BS(name) band_##name##_plain
#define BS_ATTR
#define BS_VECTOR 0
#define BS_FMA(x, y, acc) SD_MUL_ADD(x, y, acc)
#define BS_FMA1(x, y, acc) SD_MUL_ADD(x, y, acc)
#include "band_sweep.h"

#ifdef SIMD_VECTOR
/* two doubles a vector (a dot product's four lanes in two): SSE2 (a product,
 * then a sum) or NEON (fused) */
# define BS(name) band_##name##_v2
# define BS_ATTR
# define BS_VECTOR 2
# define BS_FMA(x, y, acc) VD2_FMA(x, y, acc)
# define BS_FMA1(x, y, acc) VD2_FMA1(x, y, acc)
# include "band_sweep.h"
#endif

#ifdef SIMD_X86
/* AVX2 with FMA, for the AVX2 and AVX-512 paths: fused (the loops are at
 * most b = 48 long, and a dot product keeps its four lanes on AVX-512 too:
 * one copy, so the two paths give the same bits) */
# define BS(name) band_##name##_avx2
# define BS_ATTR SIMD_AVX2_ATTR
# define BS_VECTOR 4
# define BS_FMA(x, y, acc) VD4_FMA(x, y, acc)
# define BS_FMA1(x, y, acc) VD4_FMA1(x, y, acc)
# include "band_sweep.h"
#endif

/* The copy of a path (simd_active()): AVX2 with FMA for AVX2 and
 * AVX-512, two-double vectors for SSE2 and NEON, else plain. */
static band_copy band_copy_for(simd_path path)
{
#ifdef SIMD_X86
    if (path == SIMD_AVX2 || path == SIMD_AVX512)
        return (band_copy) {band_panel_qr_avx2, band_sweep_avx2};
#endif
#ifdef SIMD_VECTOR
    if (path != SIMD_PLAIN) return (band_copy) {band_panel_qr_v2, band_sweep_v2};
#endif
    (void) path;
    return (band_copy) {band_panel_qr_plain, band_sweep_plain};
}

/* Sweeps per thread between two interrupt checks. */
#define SWEEPS_PER_CHECK 64

/* Stage 2: the band of b subdiagonals in A's lower triangle to the
 * tridiagonal (diag, offdiag); the reflectors to A's strict upper
 * triangle. Every sweep's steps are shared by the team, thread i taking
 * the i-th of equal runs (BS(sweep)): a pipeline in which each thread
 * keeps to its part of the band. In regions of SWEEPS_PER_CHECK sweeps a
 * thread, with an interrupt check between them. */
void band_chase(double *A, int n, int b, double *diag, double *offdiag, int threads)
{
    const void *vmax = vmaxget();
    band_state st = {NULL, 2 * b, n, b, A};
    st.w = (double *) R_alloc((size_t) (2 * b + 1) * n, sizeof(double));
    memset(st.w, 0, (size_t) (2 * b + 1) * n * sizeof(double));
    for (int j = 0; j < n; j++)
        for (int i = j; i <= j + b && i < n; i++) BAND(&st, i, j) = A[i + (size_t) j * n];
    /* about 6 b^2 multiply-adds a step, n / b steps a sweep */
    int nt0 = threads > 1 && 6.0 * n * b * SWEEPS_PER_CHECK >= tile_thread_work()
        ? threads : 1;
    band_sweep_fn sweep = band_copy_for(simd_active()).sweep;
    double *scratch = (double *) R_alloc((3 * (size_t) b + 3) * nt0, sizeof(double));
    int *done = (int *) R_alloc((size_t) n, sizeof(int));
    memset(done, 0, (size_t) n * sizeof(int));
    for (int s0 = 0; s0 < n - 1; s0 += SWEEPS_PER_CHECK * nt0) {
        int s1 = s0 + SWEEPS_PER_CHECK * nt0 < n - 1 ? s0 + SWEEPS_PER_CHECK * nt0 : n - 1;
        /* the sweeps meet at every step: one thread on a busy machine */
        int nt = threads_unless_busy(nt0);
        (void) nt;  /* without OpenMP */
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
        {
            /* each sweep's steps shared by the team OpenMP gave, which may
             * be smaller than nt (OMP_DYNAMIC, a thread limit): steps given
             * to a thread that does not exist would never run, and the
             * next would wait for them forever */
            int id, team;
            thread_team(&id, &team);
            double *v = scratch + (3 * (size_t) b + 3) * id, *u = v + b + 1, *work = u + b + 1;
            for (int s = s0; s < s1; s++)
                sweep(&st, s, id, team, v, u, work, s > s0 ? done + s - 1 : NULL, done + s);
        }
        R_CheckUserInterrupt();
        progress_at(PROGRESS_REDUCE, 0.9 + 0.1 * (1.0 - pow((double) (n - s1) / n, 2)));
    }
    for (int i = 0; i < n; i++) diag[i] = BAND(&st, i, i);
    for (int i = 0; i + 1 < n; i++) offdiag[i] = BAND(&st, i + 1, i);
    vmaxset(vmax);
}

/* ---- the back-transformation --------------------------------------------- */

/* One group of stage 2's reflectors: those of sweeps S .. S + g - 1 at
 * step t, rows r0 .. r0 + rows - 1; applied as Z -= (V T) (V' Z). */
typedef struct {
    int r0, rows, g;
    double *Vt;  /* g x rows: V' */
    double *VT;  /* rows x g: -V T */
} band_group;

/* The group of sweeps S .. S + g - 1 at step t from A's upper triangle,
 * into space taken from *pool (2 g rows); V: rows x g scratch, T and
 * gram: g x g, tau: g. */
static void band_group_make(const double *A, int n, int b, int S, int g, int t,
                            band_group *grp, double **pool, double *V, double *T,
                            double *gram, double *tau)
{
    int r0 = S + 1 + t * b, r1 = S + g - 1 + t * b + b;
    if (r1 > n - 1) r1 = n - 1;
    int rows = r1 - r0 + 1;
    grp->r0 = r0; grp->rows = rows; grp->g = g;
    grp->Vt = *pool; grp->VT = grp->Vt + (size_t) g * rows;
    *pool = grp->VT + (size_t) g * rows;
    memset(V, 0, (size_t) g * rows * sizeof(double));
    for (int c = 0; c < g; c++) {
        int s = S + c, start = s + 1 + t * b, len = n - start < b ? n - start : b;
        double *col = V + (size_t) c * rows;
        tau[c] = 0.0;
        if (start > n - 1) continue;
        tau[c] = band_reflector_read(A, n, s, start, len, col + (start - r0));
    }
    triangular_factor(V, rows, g, tau, T, g, gram, 1);
    for (int j = 0; j < g; j++)
        for (int i = j + 1; i < g; i++) T[i + (size_t) j * g] = 0.0;
    memset(grp->VT, 0, (size_t) g * rows * sizeof(double));
    tile_gemm(rows, g, g, V, rows, 0, T, g, 0, -1.0, grp->VT, rows, 1);
    for (int c = 0; c < g; c++)
        for (int i = 0; i < rows; i++) grp->Vt[c + (size_t) i * g] = V[i + (size_t) c * rows];
}

/* Columns c0 .. c0 + w - 1 of Z (leading dimension ldz) <- the groups
 * applied in order; y: g x w scratch. No R: runs on the threads. */
static void band_groups_apply(const band_group *grp, int groups, double *Z, int ldz,
                              int w, double *y)
{
    for (int q = 0; q < groups; q++) {
        const band_group *G = grp + q;
        double *Zr = Z + G->r0;
        memset(y, 0, (size_t) G->g * w * sizeof(double));
        tile_gemm_add(G->g, w, G->rows, G->Vt, G->g, Zr, ldz, y, G->g);
        tile_gemm_add(G->rows, w, G->g, G->VT, G->rows, y, G->g, Zr, ldz);
    }
}

/* Z (n x k) <- Q2 Z: for the groups of g sweeps from the last to the
 * first, the steps t = 0, 1, ... in order (a reflector of sweep s at step
 * t overlaps those of later sweeps at steps t and below only, and those
 * come first), the columns of Z shared among the threads by chunks. */
static void band_back_stage2(const double *A, int n, int b, double *Z, int k, int threads)
{
    const void *vmax = vmaxget();
    int g = tuning.band_group, chunk = tuning.band_chunk, steps = (n - 2) / b + 1;
    int chunks = (k + chunk - 1) / chunk;
    double *pool0 = (double *) R_alloc(2 * (size_t) g * (b + g) * steps, sizeof(double));
    band_group *grp = (band_group *) R_alloc((size_t) steps, sizeof(band_group));
    double *V = (double *) R_alloc((size_t) g * (b + g) + 2 * (size_t) g * g + g,
                                   sizeof(double));
    double *T = V + (size_t) g * (b + g), *gram = T + (size_t) g * g, *tau = gram + (size_t) g * g;
    int nt0 = threads > chunks ? chunks : threads;
    if (nt0 < 1) nt0 = 1;
    double *scratch = (double *) R_alloc((size_t) g * chunk * nt0, sizeof(double));
    tile_kernels_ready();
    for (int S = ((n - 2) / g) * g; S >= 0; S -= g) {
        int gs = n - 1 - S < g ? n - 1 - S : g, count = 0;
        double *pool = pool0;
        for (int t = 0; S + 1 + t * b <= n - 1; t++)
            band_group_make(A, n, b, S, gs, t, grp + count++, &pool, V, T, gram, tau);
        /* each group 2 (b + g) g k multiply-adds */
        int nt = 2.0 * (b + g) * g * k * count < tile_thread_work() ? 1 : threads_unless_busy(nt0);
#ifdef _OPENMP
/* dynamic: on a busy machine a thread the system holds back leaves its
 * chunks to the others (each chunk's columns are its own: the same bits) */
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#else
        (void) nt;
#endif
        for (int c = 0; c < chunks; c++) {
            int id = 0;
#ifdef _OPENMP
            id = omp_get_thread_num();
#endif
            int c0 = c * chunk, w = k - c0 < chunk ? k - c0 : chunk;
            band_groups_apply(grp, count, Z + (size_t) c0 * n, n, w,
                              scratch + (size_t) g * chunk * id);
        }
        R_CheckUserInterrupt();
        progress_at(PROGRESS_BACK, 0.5 * (1.0 - pow((double) S / n, 2)));
    }
    vmaxset(vmax);
}

/* Z (n x k) <- Q Z, Q = Q1 Q2 the orthogonal factor of the two stages
 * (stage 1's panels applied last panel first, each by
 * apply_block_reflector() on the tiles). */
void band_back_transform(const double *A, int n, int b, const double *tau1, double *Z,
                         int k, int threads)
{
    if (k == 0 || n < 2) return;
    band_back_stage2(A, n, b, Z, k, threads);
    stage_clock_mark(STAGE_BACK_2);
    if (n - 1 - b < 0) return;
    int last = ((n - 1 - b) / b) * b;
    int cols = (int) (tuning.eigen_check_work / (2.0 * n * b));
    if (cols < 8) cols = 8;
    if (cols > k) cols = k;
    double *T = (double *) R_alloc((size_t) b * b, sizeof(double));
    double *work = (double *) R_alloc((size_t) cols * b, sizeof(double));
    double *Vb = (double *) R_alloc((size_t) (n - b) * b, sizeof(double));
    double *gram = (double *) R_alloc((size_t) b * b, sizeof(double));
    for (int j0 = last; j0 >= 0; j0 -= b) {
        int m = n - j0 - b, kk = m < b ? m : b;
        apply_block_reflector(A + (j0 + b) + (size_t) j0 * n, n, m, kk, tau1 + j0, T, b,
                              Z + (j0 + b), n, k, cols, Vb, gram, work,
                              threads_unless_busy(threads));
        progress_at(PROGRESS_BACK, 0.5 + 0.5 * (1.0 - pow((double) j0 / n, 2)));
    }
    stage_clock_mark(STAGE_BACK_1);
}
