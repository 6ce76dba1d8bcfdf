/* The one heavy step of the matrix-free exact solver (R/matrix_free.R):
 * Y = K[rows, ] V, the uncentered kernel matrix's rows times a block of
 * vectors, with the kernel computed tile by tile and never stored.
 *
 * The kernels of kernel_fast.c (one base kernel of an inner product or a
 * distance) use the symmetry of K. The columns (and rows) are cut into
 * groups, 8 to 64 as n grows, at places that depend on n alone
 * (matrix_free_groups()); the group sum P[r, c] of a row of group r sums
 * its terms over the columns of group c in increasing order (the tiles of
 * tiles.c add their terms one by one), and an entry of Y is the sum of its
 * row's group sums in a binary tree over the groups, fixed by n (node (L,
 * i) holds the groups i 2^L to (i + 1) 2^L - 1; its sum is its two
 * children's). A pair of groups (g, h), h < g, gives both P[g, h] and
 * P[h, g] from the same kernel values; the square of a group, P[g, g],
 * comes from the tiles of its lower triangle (tile_pipeline(), both). So
 * each kernel value of the lower triangle is computed once: n^2 / 2 values
 * per pass, whoever computes the pairs. The pairs come in blocks of the
 * tree: the block within a node (its pairs) and the block between two
 * nodes of one level; a block is computed from its children's blocks and
 * gives each of its rows one node sum (mf_diagonal_block(),
 * mf_offdiagonal_block()). One process computes the root's block
 * (all_rows_product()); future's workers each compute a share of the
 * blocks (kernel_pair_products(), matrix_free_schedule() in R) and return
 * their node sums, one per row and block, which the caller adds in the
 * tree (matrix_free_fold()): a worker sends back its blocks' rows, not one
 * sum per pair of groups. A kernel value is the same either way round and
 * wherever it sits in a tile (kernel_simd.h: the squares of a - b and b -
 * a, the terms of an inner product, are equal), so the passes give the
 * same numbers to the last bit for any tile size, number of threads,
 * share of the blocks among the workers and plan. A call on part of the
 * rows (by_rows_product()) sums each row over the same groups and adds
 * them in the same tree, by whole blocks of rows per thread: the same
 * numbers again.
 *
 * Other kernels sum each row's terms over all the columns in increasing
 * order, by blocks of rows (at most MF_ROW_BLOCK, fewer for large n so
 * that an interrupt check comes at least every MF_CHECK_VALUES kernel
 * values) whose kernel with MF_COL_BLOCK columns at a time is computed
 * into one tile (kernel_block(), threaded) and multiplied by the matching
 * rows of V (tile_gemm(), also with an optimized BLAS, whose dgemm would
 * sum in an order that depends on the rows in the call); workers take
 * whole rows.
 *
 * Every call counts the kernel values it computed (the attribute
 * "kernel_values" of its answer). */
#include "fastkpca.h"
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define MF_ROW_BLOCK 256
#define MF_COL_BLOCK 2048
#define MF_CHECK_VALUES 33554432.0   /* 2^25 kernel values between checks */
#define MF_SYM_BLOCK 256             /* default rows and columns of a tile of the symmetric product */
#define MF_MIN_GROUPS 8              /* groups of rows and columns, at least (n permitting) */
#define MF_MAX_GROUPS 64             /* and at most */
#define MF_GROUP_ROWS 4096           /* rows per group from which the groups grow with n */

/* The groups of n rows: returns their number G and sets starts[0 .. G]
 * (starts[G] = n; starts holds MF_MAX_GROUPS + 1). About n / MF_GROUP_ROWS
 * groups, at least MF_MIN_GROUPS and at most MF_MAX_GROUPS, of equal size, a
 * multiple of 8 rows (the kernel's tiles start on a multiple of 8), the
 * last one smaller. Wide groups keep a pair's tiles enough row blocks for
 * the threads; many groups give the workers even shares. */
static int mf_groups(int n, int *starts)
{
    /* (in 64 bits: n may be as large as INT_MAX) */
    long long target = ((long long) n + MF_GROUP_ROWS - 1) / MF_GROUP_ROWS;
    if (target < MF_MIN_GROUPS) target = MF_MIN_GROUPS;
    if (target > MF_MAX_GROUPS) target = MF_MAX_GROUPS;
    long long width = ((long long) n + target - 1) / target;
    width = (width + 7) / 8 * 8;
    int G = (int) (((long long) n + width - 1) / width);
    for (int g = 0; g < G; g++) starts[g] = (int) (g * width);
    starts[G] = n;
    return G;
}

/* The binary tree over the G groups in which every row adds its group sums:
 * node (L, i) holds the groups i 2^L .. (i + 1) 2^L - 1 that are
 * below G; its sum is its left child's plus its right child's, or its left
 * child's alone where the right one holds no group. The root's level. */
static int mf_root_level(int G)
{
    int L = 0;
    while ((1 << L) < G) L++;
    return L;
}

/* The first group of node (L, i) and one past its last (both G where the
 * node holds none). */
static void mf_node_groups(int G, int L, int i, int *g0, int *g1)
{
    long long first = (long long) i << L, last = ((long long) i + 1) << L;
    *g0 = first < G ? (int) first : G;
    *g1 = last < G ? (int) last : G;
}

/* Y (rows x b, leading dimension ldy) += K[first + 0 .. rows - 1, c_lo ..
 * c_hi - 1] V[c_lo .. c_hi - 1, ] (plan: the rows first .. first + rows -
 * 1 against all n points), the blocks of rb rows spread over the threads:
 * each thread computes a block's kernel tile by tile into its own tile
 * and adds each tile times the matching rows of V (n x b) to the block's
 * rows of Y, on its own. One parallel region per group of blocks of about
 * threads x MF_CHECK_VALUES kernel values, with the interrupt check and
 * the error for values that are not finite between groups, on the main
 * thread, then step (NULL or an R function). */
static void block_product_by_rows(const kernel_eval *k, const kernel_tiles *plan,
                                  int rows, int rb, int c_lo, int c_hi, const double *V,
                                  int n, int b, double *Y, int ldy, double *T, int threads,
                                  double *count, SEXP step)
{
    int nblocks = (rows + rb - 1) / rb;
    int group = (int) (threads * MF_CHECK_VALUES / ((double) rb * (c_hi - c_lo)));
    if (group < threads) group = threads;
    for (int g0 = 0; g0 < nblocks; g0 += group) {
        int g1 = nblocks - g0 < group ? nblocks : g0 + group, bad = 0;
        double values = 0.0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) \
    reduction(|:bad) reduction(+:values) if (threads > 1)
#endif
        for (int blk = g0; blk < g1; blk++) {
#ifdef _OPENMP
            double *Tt = T + (size_t) omp_get_thread_num() * rb * MF_COL_BLOCK;
#else
            double *Tt = T;
#endif
            int i0 = blk * rb, nr = rows - i0 < rb ? rows - i0 : rb;
            for (int j0 = c_lo; j0 < c_hi; j0 += MF_COL_BLOCK) {
                int nc = c_hi - j0 < MF_COL_BLOCK ? c_hi - j0 : MF_COL_BLOCK;
                bad |= kernel_tile(plan, i0, nr, j0, nc, Tt);
                values += (double) nr * nc;
                tile_gemm_add(nr, b, nc, Tt, nr, V + j0, n, Y + i0, ldy);
            }
        }
        *count += values;
        if (bad) kernel_nonfinite_error(k, "");
        R_CheckUserInterrupt();
        call_step(step);
    }
}

/* The fewest doubles a tree addition shares among the threads: the
 * floor of krylov.c's O(n b) loops (a double read, added and written
 * costs about 30 multiply-adds of the tiles; the thread-work setting over
 * 32). A pass makes about 40 of them (G = 8), between its pipelines. */
#define MF_ADD_WORK 30.0
#define MF_ADD_SHARE 32.0

/* The threads of a loop over b whole columns of m rows: all of them
 * where the columns are large enough and the cores free
 * (threads_unless_busy(): on the main thread, between the pipelines'
 * regions), at most one per column. */
static int mf_loop_threads(int m, int b, int threads)
{
    int nt = (double) m * b * MF_ADD_WORK >= tile_thread_work() / MF_ADD_SHARE
             ? threads_unless_busy(threads) : 1;
    return nt > b ? (b > 0 ? b : 1) : nt;
}

/* Y (m x b, leading dimension ldy) += X (m x b, leading dimension ldx):
 * one sum of the tree added to its sibling's, in place; whole columns per
 * thread (each entry one addition: the bits of one thread). */
static void add_sums(int m, int b, const double *X, int ldx, double *Y, int ldy, int threads)
{
    int nt = mf_loop_threads(m, b, threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#else
    (void) nt;
#endif
    for (int j = 0; j < b; j++) {
        const double *x = X + (size_t) j * ldx;
        double *y = Y + (size_t) j * ldy;
        for (int i = 0; i < m; i++) y[i] += x[i];
    }
}

static void zero_sums(int m, int b, double *Y, int ldy)
{
    for (int j = 0; j < b; j++) memset(Y + (size_t) j * ldy, 0, (size_t) m * sizeof(double));
}

/* The tiles of K[R, C] for the rows R = r0 + 0 .. mr - 1 and the columns
 * C = c0 + 0 .. mc - 1 (plan: all n rows against all n points; r0 a
 * multiple of 8), each computed once and used twice: tile (I, J) of S
 * rows and columns adds K[I, J] V[J] to Yr[I] (mr x b, leading dimension
 * ldr) and K[I, J]' V[I] to Yc[J] (mc x b, leading dimension ldc). For a
 * pair of groups (square = 0), every tile of the rectangle. For the
 * square of a group (square = 1: R = C, Yc = Yr), the tiles J <= I of its
 * lower triangle, the transpose for J < I only. Yr and Yc are set, not
 * added to: each row block zeroes its rows of Yr before its first tile,
 * and row block 0 each Yc[J] before its transpose into it, on the threads
 * (a pass's new buffers take their page faults there too, not on the
 * main thread alone).
 *
 * Each row of Yr gets its terms in increasing column order (a row block
 * adds its tiles J = 0, 1, ... in turn), and each row of Yc in increasing
 * row order: row block I adds K[I, J]' V[I] to Yc[J] only once row block
 * I - 1 has added its own (done[I - 1] > J, written by that thread after
 * its tile J, read by this one before adding), and in the square, Y[J]
 * gets its own row's tiles (J, 0 .. J) before any transpose, since row J
 * + 1 waits for done[J] > J. The row blocks go to the threads in
 * increasing order (schedule(dynamic)), each computing its kernel tiles
 * without waiting and only the transposes after its predecessor, so the
 * threads run one tile apart with no barrier between the tiles; one
 * parallel region per band of row blocks (about threads x MF_CHECK_VALUES
 * kernel values, at least 8 row blocks per thread), with the interrupt
 * check and the error for values that are not finite between bands, on
 * the main thread, then step (NULL or an R function). The same numbers
 * for any number of threads. */
static void tile_pipeline(const kernel_eval *k, const kernel_tiles *plan, int r0, int mr,
                          int c0, int mc, int square, const double *V, int n, int b,
                          double *Yr, int ldr, double *Yc, int ldc, double *T, int threads,
                          int S, double *count, SEXP step)
{
    int NI = (mr + S - 1) / S, NJ = (mc + S - 1) / S;
    int *done = (int *) R_alloc((size_t) NI, sizeof(int));
    for (int I = 0; I < NI; I++) done[I] = 0;
    double row_values = (double) S * (square ? mc / 2.0 + S : mc);
    int band = (int) (threads * MF_CHECK_VALUES / row_values);
    if (band < 8 * threads) band = 8 * threads;
    for (int b0 = 0; b0 < NI; b0 += band) {
        int b1 = NI - b0 < band ? NI : b0 + band, bad = 0;
        double values = 0.0;
        /* the row blocks wait on one another: one thread on a busy machine */
        int nt = threads_unless_busy(threads);
        (void) nt;  /* without OpenMP */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) \
    reduction(|:bad) reduction(+:values) if (nt > 1 && b1 - b0 > 1)
#endif
        for (int I = b0; I < b1; I++) {
#ifdef _OPENMP
            double *Tt = T + (size_t) omp_get_thread_num() * S * S;
#else
            double *Tt = T;
#endif
            int i0 = I * S, ni = mr - i0 < S ? mr - i0 : S;
            int jend = square ? I + 1 : NJ;
            /* the sums start at zero here, on the threads (the pages of a
             * new buffer touched here too): its own rows before any tile,
             * which in the square come before any transpose into them */
            zero_sums(ni, b, Yr + i0, ldr);
            for (int J = 0; J < jend; J++) {
                int j0 = J * S, nj = mc - j0 < S ? mc - j0 : S;
                bad |= kernel_tile(plan, r0 + i0, ni, c0 + j0, nj, Tt);
                values += (double) ni * nj;
                tile_gemm_add(ni, b, nj, Tt, ni, V + c0 + j0, n, Yr + i0, ldr);
                if (!square || J < I) {
                    /* threads.c: spins, then yields to the thread it waits for */
                    if (I > b0) wait_for_count(done + I - 1, J + 1);
                    /* row block 0 adds to Yc[J] first: the others wait for it */
                    if (!square && I == 0) zero_sums(nj, b, Yc + j0, ldc);
                    /* K[I, J]' V[I] as (V[I]' K[I, J])': V[I]'s b columns
                     * packed, not the tile's S x S values (tiles.c) */
                    tile_gemm_transposed_add(b, nj, ni, V + r0 + i0, n, Tt, ni, Yc + j0, ldc);
                }
                count_publish(done + I, J + 1);
            }
        }
        *count += values;
        if (bad) kernel_nonfinite_error(k, "");
        R_CheckUserInterrupt();
        call_step(step);
    }
}

/* What the blocks of a pass share: the kernel and its plan of all n rows
 * against all n points, V (n x b), the threads and their tiles of S x S,
 * the G groups, the count of kernel values and the step; and the blocks'
 * partial sums, taken from one buffer as from a stack (work, its size and
 * *top, the doubles in use; mf_reserve()). */
typedef struct {
    const kernel_eval *k;
    const kernel_tiles *plan;
    const double *V;
    int n, b, threads, S, G;
    const int *starts;
    double *T, *count;
    SEXP step;
    double *work;
    size_t size, used, *top;   /* top: &used (the blocks see P as const) */
} mf_pass;

/* The doubles mf_take() counts for m rows of b sums: whole cache lines. */
static size_t mf_sums_size(int m, int b)
{
    return ((size_t) m * b + 7) & ~(size_t) 7;
}

/* m x b partial sums from the pass's buffer: the blocks take theirs in
 * nested order and give them back on return (*P->top restored), so one
 * buffer, sized by mf_block_need(), serves the whole tree. Per block, an
 * R_alloc() each would make R's vector heap churn by several times n x b
 * a pass, and R's garbage collector run (a full collection marks all of
 * the session's objects) where none of it is needed. */
static double *mf_take(const mf_pass *P, int m)
{
    size_t at = *P->top, need = mf_sums_size(m, P->b);
    if (need > P->size - at) error_argument("the pass's partial sums outgrew their buffer");
    *P->top = at + need;
    return P->work + at;
}

/* The first row of node (L, i) and its number of rows (0 where the node
 * holds no group). */
static void mf_node_rows(const mf_pass *P, int L, int i, int *r0, int *m)
{
    int g0, g1;
    mf_node_groups(P->G, L, i, &g0, &g1);
    *r0 = P->starts[g0];
    *m = P->starts[g1] - *r0;
}

static void mf_offdiagonal_block(const mf_pass *P, int L, int i, int j, double *A, int lda,
                                 double *B, int ldb);

/* The block of the pairs of node (L, i)'s groups (g, h), h <= g: D (the
 * node's rows x b, leading dimension ldd) = each row's sum, in the tree,
 * of its group sums over the node's groups. A leaf is one group's square
 * (tile_pipeline(), the tiles of its lower triangle); above, the left
 * child's block, the pairs between the right child and the left one, and
 * the right child's block, each row's two halves added. */
static void mf_diagonal_block(const mf_pass *P, int L, int i, double *D, int ldd)
{
    int r0, m, rl, ml, rr, mr;
    mf_node_rows(P, L, i, &r0, &m);
    if (L == 0) {
        tile_pipeline(P->k, P->plan, r0, m, r0, m, 1, P->V, P->n, P->b, D, ldd, D, ldd, P->T,
                      P->threads, P->S, P->count, P->step);
        return;
    }
    mf_node_rows(P, L - 1, 2 * i, &rl, &ml);
    mf_node_rows(P, L - 1, 2 * i + 1, &rr, &mr);
    if (mr == 0) {
        mf_diagonal_block(P, L - 1, 2 * i, D, ldd);
        return;
    }
    size_t top = *P->top;
    double *A = mf_take(P, mr), *B = mf_take(P, ml);
    mf_diagonal_block(P, L - 1, 2 * i, D, ldd);
    mf_offdiagonal_block(P, L - 1, 2 * i + 1, 2 * i, A, mr, B, ml);
    add_sums(ml, P->b, B, ml, D, ldd, P->threads);
    mf_diagonal_block(P, L - 1, 2 * i + 1, D + ml, ldd);
    add_sums(mr, P->b, A, mr, D + ml, ldd, P->threads);
    *P->top = top;
}

/* The block of the pairs between node (L, i) and node (L, j), j < i: A
 * (node i's rows x b, leading dimension lda) = each row's sum, in the
 * tree, over node j's groups; B (node j's rows x b, leading dimension ldb)
 * = each row's sum over node i's groups; each kernel value computed once,
 * for both. A leaf is one pair of groups (tile_pipeline()); above, the
 * four pairs of children, each row's two halves added. Node j is whole
 * (it ends before node i starts); node i's right child may hold no group. */
static void mf_offdiagonal_block(const mf_pass *P, int L, int i, int j, double *A, int lda,
                                 double *B, int ldb)
{
    int ri, mi, rj, mj;
    mf_node_rows(P, L, i, &ri, &mi);
    mf_node_rows(P, L, j, &rj, &mj);
    if (L == 0) {
        tile_pipeline(P->k, P->plan, ri, mi, rj, mj, 0, P->V, P->n, P->b, A, lda, B, ldb, P->T,
                      P->threads, P->S, P->count, P->step);
        return;
    }
    int r, mil, mir, mjl, mjr;
    mf_node_rows(P, L - 1, 2 * i, &r, &mil);
    mf_node_rows(P, L - 1, 2 * i + 1, &r, &mir);
    mf_node_rows(P, L - 1, 2 * j, &r, &mjl);
    mf_node_rows(P, L - 1, 2 * j + 1, &r, &mjr);
    size_t top = *P->top;
    double *tA = mf_take(P, mil > mir ? mil : mir), *tB = mf_take(P, mjl > mjr ? mjl : mjr);
    mf_offdiagonal_block(P, L - 1, 2 * i, 2 * j, A, lda, B, ldb);
    mf_offdiagonal_block(P, L - 1, 2 * i, 2 * j + 1, tA, mil, B + mjl, ldb);
    add_sums(mil, P->b, tA, mil, A, lda, P->threads);
    if (mir > 0) {
        mf_offdiagonal_block(P, L - 1, 2 * i + 1, 2 * j, A + mil, lda, tB, mjl);
        add_sums(mjl, P->b, tB, mjl, B, ldb, P->threads);
        mf_offdiagonal_block(P, L - 1, 2 * i + 1, 2 * j + 1, tA, mir, tB, mjr);
        add_sums(mir, P->b, tA, mir, A + mil, lda, P->threads);
        add_sums(mjr, P->b, tB, mjr, B + mjl, ldb, P->threads);
    }
    *P->top = top;
}

/* The most doubles mf_take() holds at once within the block of node (L,
 * i) and node (L, j) (j = i: the block within node i): its own partial
 * sums and the most any one of its children's blocks holds, the children
 * taken in turn as mf_diagonal_block() and mf_offdiagonal_block() take
 * them. */
static size_t mf_block_need(const mf_pass *P, int L, int i, int j)
{
    if (L == 0) return 0;
    int r, mil, mir, mjl, mjr, b = P->b;
    mf_node_rows(P, L - 1, 2 * i, &r, &mil);
    mf_node_rows(P, L - 1, 2 * i + 1, &r, &mir);
    size_t own, most;
    if (i == j) {
        if (mir == 0) return mf_block_need(P, L - 1, 2 * i, 2 * i);
        own = mf_sums_size(mir, b) + mf_sums_size(mil, b);
        most = mf_block_need(P, L - 1, 2 * i, 2 * i);
        size_t c = mf_block_need(P, L - 1, 2 * i + 1, 2 * i);
        if (c > most) most = c;
        c = mf_block_need(P, L - 1, 2 * i + 1, 2 * i + 1);
        if (c > most) most = c;
        return own + most;
    }
    mf_node_rows(P, L - 1, 2 * j, &r, &mjl);
    mf_node_rows(P, L - 1, 2 * j + 1, &r, &mjr);
    own = mf_sums_size(mil > mir ? mil : mir, b) + mf_sums_size(mjl > mjr ? mjl : mjr, b);
    most = 0;
    for (int a = 0; a < (mir > 0 ? 2 : 1); a++)
        for (int c = 0; c < 2; c++) {
            size_t need = mf_block_need(P, L - 1, 2 * i + a, 2 * j + c);
            if (need > most) most = need;
        }
    return own + most;
}

/* The pass's buffer of partial sums: need doubles (the most of
 * mf_block_need() over its blocks), on a cache line. */
static void mf_reserve(mf_pass *P, size_t need)
{
    char *raw = R_alloc(need * sizeof(double) + 64, 1);
    P->work = (double *) (((uintptr_t) raw + 63) & ~(uintptr_t) 63);
    P->size = need;
    *P->top = 0;
}

/* Node sums of one set of rows added in the tree as they come, node after
 * node in the order of their groups (a binary counter): held[L] says
 * whether slot[L] holds the sum of a whole node of level L still waiting
 * for its right sibling. A node of level L comes when nothing below L is
 * held (its groups start at a multiple of 2^L); the last may hold fewer
 * groups than its level. Each slot and the free buffer own one rows x b
 * buffer, swapped rather than copied. */
typedef struct {
    int rows, b, levels;
    double **slot, *free;
    int *held;
} mf_stack;

static void mf_stack_init(mf_stack *st, int rows, int b, int levels)
{
    st->rows = rows;
    st->b = b;
    st->levels = levels;
    st->slot = (double **) R_alloc((size_t) levels, sizeof(double *));
    st->held = (int *) R_alloc((size_t) levels, sizeof(int));
    for (int L = 0; L < levels; L++) {
        st->slot[L] = NULL;
        st->held[L] = 0;
    }
    st->free = (double *) R_alloc((size_t) rows * b + 1, sizeof(double));
}

/* Adds the sum in st->free (a node of level L) and takes a new free buffer. */
static void mf_stack_push(mf_stack *st, int L)
{
    double *carry = st->free;
    while (L < st->levels && st->held[L]) {
        add_sums(st->rows, st->b, st->slot[L], st->rows, carry, st->rows, 1);
        st->held[L] = 0;
        L++;
    }
    if (L >= st->levels) error_argument("the group sums do not form the tree of the groups");
    if (st->slot[L] == NULL)
        st->slot[L] = (double *) R_alloc((size_t) st->rows * st->b + 1, sizeof(double));
    st->free = st->slot[L];
    st->slot[L] = carry;
    st->held[L] = 1;
}

/* The root's sum into Y (rows x b, leading dimension ldy): the held nodes
 * added from the lowest level up (each lower one is the right part of the
 * one above). */
static void mf_stack_finish(mf_stack *st, double *Y, int ldy)
{
    double *acc = NULL;
    for (int L = 0; L < st->levels; L++) {
        if (!st->held[L]) continue;
        if (acc) add_sums(st->rows, st->b, st->slot[L], st->rows, acc, st->rows, 1);
        else acc = st->slot[L];
    }
    if (!acc) error_argument("no group sums to add");
    for (int j = 0; j < st->b; j++)
        memcpy(Y + (size_t) j * ldy, acc + (size_t) j * st->rows,
               (size_t) st->rows * sizeof(double));
}

/* The plan of all n rows against all n points, and each thread's tile of
 * S x S (or of rb x MF_COL_BLOCK where rb > 0) doubles. */
static kernel_tiles *all_rows_plan(const kernel_eval *k, const kernel_points *xp, int n,
                                   int threads)
{
    const double **wbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    kernel_points a = kernel_points_view(k, xp, 0, n, wbuf);
    return kernel_tiles_prepare(k, &a, xp, threads);
}

static double *thread_tiles(int threads, int S, int rb)
{
    size_t per_thread = (size_t) S * S;
    if ((size_t) rb * MF_COL_BLOCK > per_thread) per_thread = (size_t) rb * MF_COL_BLOCK;
    double *T = (double *) R_alloc((size_t) threads * per_thread, sizeof(double));
    tile_kernels_ready();
    return T;
}

/* The pass's common parts (mf_pass) for the plan of all n rows. */
static void mf_pass_setup(mf_pass *P, const kernel_eval *k, const kernel_points *xp,
                          const double *V, int n, int b, int threads, int S, double *count,
                          SEXP step)
{
    int *starts = (int *) R_alloc(MF_MAX_GROUPS + 1, sizeof(int));
    P->k = k;
    P->plan = all_rows_plan(k, xp, n, threads);
    P->V = V;
    P->n = n;
    P->b = b;
    P->threads = threads;
    P->S = S;
    P->G = mf_groups(n, starts);
    P->starts = starts;
    P->T = thread_tiles(threads, S, 0);
    P->count = count;
    P->step = step;
    P->work = NULL;
    P->size = P->used = 0;
    P->top = &P->used;
}

/* Y (n x b) = K V for all n rows, in one process: the block of the root of
 * the tree (mf_diagonal_block()), so each row's group sums are added in
 * the tree, as the caller of the workers adds the node sums of their
 * blocks (matrix_free_fold()). center: Y = H K H V / n instead (H the
 * centering), V's columns centered into the pass's buffer first, Y's in
 * place after (center_in_columns(): center_columns()'s bits). */
static void all_rows_product(const kernel_eval *k, const kernel_points *xp, const double *V,
                             int n, int b, double *Y, int threads, int S, int center,
                             double *count, SEXP step)
{
    mf_pass P;
    mf_pass_setup(&P, k, xp, V, n, b, threads, S, count, step);
    int root = mf_root_level(P.G);
    mf_reserve(&P, mf_block_need(&P, root, 0, 0) + (center ? mf_sums_size(n, b) : 0));
    if (center) {
        double *HV = mf_take(&P, n);
        center_in_columns(n, b, V, HV, 1.0, mf_loop_threads(n, b, threads));
        P.V = HV;
    }
    mf_diagonal_block(&P, root, 0, Y, n);
    if (center) center_in_columns(n, b, Y, Y, (double) n, mf_loop_threads(n, b, threads));
}

/* Y (rows x b) = K[R, ] V for the rows R = first + 0 .. rows - 1: each
 * row's group sums (by block_product_by_rows()), added in the tree group
 * after group (mf_stack), as all_rows_product() adds them. */
static void by_rows_product(const kernel_eval *k, const kernel_points *xp, int first,
                            int rows, int rb, const double *V, int n, int b, double *Y,
                            int threads, double *count, SEXP step)
{
    const double **wbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    kernel_points a = kernel_points_view(k, xp, first, rows, wbuf);
    kernel_tiles *plan = kernel_tiles_prepare(k, &a, xp, threads);
    double *T = thread_tiles(threads, 0, rb);
    int *starts = (int *) R_alloc(MF_MAX_GROUPS + 1, sizeof(int));
    int G = mf_groups(n, starts);
    mf_stack st;
    mf_stack_init(&st, rows, b, mf_root_level(G) + 1);
    for (int c = 0; c < G; c++) {
        zero_sums(rows, b, st.free, rows);
        block_product_by_rows(k, plan, rows, rb, starts[c], starts[c + 1], V, n, b, st.free,
                              rows, T, threads, count, step);
        mf_stack_push(&st, 0);
    }
    mf_stack_finish(&st, Y, rows);
}

/* The kernel program and the points of x (all n training rows; their
 * column means shift the distance kernels, as in the exact fit), checked:
 * the common start of the entry points below. */
static int mf_setup(SEXP x, SEXP kernel, SEXP weights, SEXP V, SEXP threads, kernel_eval *k,
                    kernel_points *xp, int *nthreads)
{
    /* the rows of x, or its strings for a string kernel (indexed here) */
    *nthreads = kernel_call_read(kernel, threads, R_NilValue, NULL, x, "x", k);
    check_double_matrix(V, "V");
    int n = k->n_fixed;
    if (n < 1) error_argument("'x' must have at least one row");
    if (nrows(V) != n) error_argument("'V' must have %d rows, not %d", n, nrows(V));
    kernel_points_fixed(k, x, weights, xp);
    return n;
}

static int mf_tile(SEXP tile)
{
    int S = as_count(tile, "tile", 8, 4096);
    if (S % 8) error_argument("'tile' must be a multiple of 8, not %d", S);
    return S;
}

static void set_count(SEXP ans, double count)
{
    SEXP c = PROTECT(ScalarReal(count));
    setAttrib(ans, install("kernel_values"), c);
    UNPROTECT(1);
}

/* Y (rows x b, zeroed) += K[first + 0 .. rows - 1, ] V for a kernel
 * without shared tiles: kernel_block() by blocks of rb rows and
 * MF_COL_BLOCK columns (into T, rb x MF_COL_BLOCK), each times its rows
 * of V; returns the kernel values computed. */
static double rows_by_blocks(const kernel_eval *k, const kernel_points *xp, int first,
                             int rows, int rb, const double *V, int n, int b, double *Y,
                             int threads, SEXP step, double *T)
{
    const double **rbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    const double **cbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    double count = 0.0;
    for (int i0 = 0; i0 < rows; i0 += rb) {
        int nr = rows - i0 < rb ? rows - i0 : rb;
        kernel_points a = kernel_points_view(k, xp, first + i0, nr, rbuf);
        for (int j0 = 0; j0 < n; j0 += MF_COL_BLOCK) {
            int nc = n - j0 < MF_COL_BLOCK ? n - j0 : MF_COL_BLOCK;
            const void *vmax = vmaxget();
            kernel_points c = kernel_points_view(k, xp, j0, nc, cbuf);
            kernel_block(k, &a, &c, 0, T, threads, "");
            vmaxset(vmax);
            count += (double) nr * nc;
            tile_gemm(nr, b, nc, T, nr, 0, V + j0, n, 0, 1.0, Y + i0, rows, threads);
        }
        R_CheckUserInterrupt();
        call_step(step);
    }
    return count;
}

/* Rows of K per block of the passes by rows: as many as keep a block's
 * values near MF_CHECK_VALUES, a multiple of 8 from 8 to MF_ROW_BLOCK. */
static int mf_row_block(int n)
{
    int rb = (int) (MF_CHECK_VALUES / n);
    return rb > MF_ROW_BLOCK ? MF_ROW_BLOCK : rb < 8 ? 8 : rb / 8 * 8;
}

/* Rows per block of kernel_times_vectors(): its scratch, a block's
 * values on each thread, stays small beside the buffer whose dead space
 * holds it. */
#define MF_TIMES_ROWS 64

size_t kernel_times_scratch(int threads)
{
    return (size_t) (threads > 1 ? threads : 1) * MF_TIMES_ROWS * MF_COL_BLOCK;
}

/* Y (n x b) = K V, K the kernel matrix of the n points of xp (read and
 * packed once, by the caller), in one process: blocks of MF_TIMES_ROWS
 * rows on the threads, every value of K computed once, each row summed
 * over the columns in order (no tree of group sums: no workers' sums to
 * match); T: kernel_times_scratch(threads) doubles. The exact fit's
 * certificate (fit.c). */
void kernel_times_vectors(const kernel_eval *k, const kernel_points *xp, const double *V,
                          int n, int b, double *Y, int threads, double *T)
{
    memset(Y, 0, (size_t) n * b * sizeof(double));
    if (!kernel_tiles_shared(k)) {
        rows_by_blocks(k, xp, 0, n, MF_TIMES_ROWS, V, n, b, Y, threads, R_NilValue, T);
        return;
    }
    double count = 0.0;
    kernel_tiles *plan = all_rows_plan(k, xp, n, threads);
    tile_kernels_ready();
    block_product_by_rows(k, plan, n, MF_TIMES_ROWS, 0, n, V, n, b, Y, n, T, threads, &count,
                          R_NilValue);
}

/* .Call (kernel_block_product() in R/matrix_free.R): K[rows, ] V, a
 * length(rows) x ncol(V) double matrix with the attribute kernel_values
 * (the kernel values computed), K the kernel matrix of the rows of x.
 * x: n x d double matrix, or n strings for a string kernel; row0, nrow:
 * integers, the rows row0 + 1 ... row0 + nrow (1-based, as R counts);
 * kernel: a program from fastkpca:::kernel_program(); weights: the
 * conformal weights of the rows of x; V: n x b double matrix; threads;
 * tile: the rows and columns of the symmetric product's tiles (a
 * multiple of 8; the numbers do not depend on it); center: TRUE for all
 * rows only, H K H V / n instead (H the centering: the fit's operator,
 * kernel_operator() in R/eigen.R, with centered_product()'s bits and
 * neither of its two n x b copies); step: NULL or a function called after
 * each interrupt check (the tests count the work done after an
 * interrupt). */
SEXP kernel_block_product(SEXP x, SEXP row0, SEXP nrow, SEXP kernel, SEXP weights, SEXP V,
                          SEXP threads, SEXP tile, SEXP center, SEXP step)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_points xp;
    int nthreads;
    int n = mf_setup(x, kernel, weights, V, threads, &k, &xp, &nthreads), b = ncols(V);
    int first = as_count(row0, "row0", 0, n - 1);
    int rows = as_count(nrow, "nrow", 1, n - first);
    int S = mf_tile(tile);
    if (!isLogical(center) || XLENGTH(center) != 1 || LOGICAL(center)[0] == NA_LOGICAL)
        error_argument("'center' must be TRUE or FALSE");
    int centered = LOGICAL(center)[0];
    if (centered && rows != n) error_argument("'center' needs all %d rows, not %d", n, rows);
    check_step(step);
    int rb = mf_row_block(n);
    double count = 0.0;

    SEXP ans = PROTECT(allocMatrix(REALSXP, rows, b));
    double *Y = REAL(ans);
    /* (the tree's products set every entry, on the threads: no zeros first) */
    if (kernel_tiles_shared(&k)) {
        if (first == 0 && rows == n)
            all_rows_product(&k, &xp, REAL(V), n, b, Y, nthreads, S, centered, &count, step);
        else
            by_rows_product(&k, &xp, first, rows, rb, REAL(V), n, b, Y, nthreads, &count,
                            step);
        set_count(ans, count);
        UNPROTECT(1);
        return ans;
    }
    const double *Vp = REAL(V);
    if (centered) {
        double *HV = (double *) R_alloc((size_t) n * b, sizeof(double));
        center_in_columns(n, b, Vp, HV, 1.0, mf_loop_threads(n, b, nthreads));
        Vp = HV;
    }
    zero_sums(rows, b, Y, rows);
    double *T = (double *) R_alloc((size_t) rb * MF_COL_BLOCK, sizeof(double));
    count = rows_by_blocks(&k, &xp, first, rows, rb, Vp, n, b, Y, nthreads, step, T);
    if (centered) center_in_columns(n, b, Y, Y, (double) n, mf_loop_threads(n, b, nthreads));
    set_count(ans, count);
    UNPROTECT(1);
    return ans;
}

/* Checks blocks (an integer matrix of 3 rows, each column a block of the
 * tree of the G groups: its level L, and the nodes i and j of that level,
 * j <= i, whose pairs of groups it holds; j = i: the pairs within node i)
 * and returns their number. */
static int mf_check_blocks(SEXP blocks, int G)
{
    if (!isInteger(blocks) || !isMatrix(blocks) || nrows(blocks) != 3)
        error_argument("'blocks' must be an integer matrix of 3 rows");
    int nb = ncols(blocks), root = mf_root_level(G);
    const int *B = INTEGER(blocks);
    for (int p = 0; p < nb; p++) {
        int L = B[3 * p], i = B[3 * p + 1], j = B[3 * p + 2], g0, g1;
        if (L == NA_INTEGER || i == NA_INTEGER || j == NA_INTEGER || L < 0 || L > root ||
            j < 0 || j > i)
            error_argument("'blocks' must hold levels 0 to %d and nodes j <= i", root);
        mf_node_groups(G, L, i, &g0, &g1);
        if (g0 >= G) error_argument("block %d: node %d of level %d holds no group", p + 1, i, L);
    }
    return nb;
}

/* .Call (kernel_pair_products() in R/matrix_free.R): a worker's share of
 * a pass, for a kernel that shares tiles (kernel_shares_tiles()). blocks:
 * blocks of pairs of groups (mf_check_blocks(); matrix_free_schedule());
 * the other arguments as for kernel_block_product(). Returns a list of 2
 * elements per block: for a block within node i (j = i), the node's rows'
 * sums over its groups (mf_diagonal_block()) and NULL; for a block between
 * nodes i and j, node i's rows' sums over node j's groups and node j's
 * rows' sums over node i's groups (mf_offdiagonal_block()); with the
 * attribute kernel_values. */
SEXP kernel_pair_products(SEXP x, SEXP blocks, SEXP kernel, SEXP weights, SEXP V,
                          SEXP threads, SEXP tile)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_points xp;
    int nthreads;
    int n = mf_setup(x, kernel, weights, V, threads, &k, &xp, &nthreads), b = ncols(V);
    int S = mf_tile(tile);
    if (!kernel_tiles_shared(&k))
        error_argument("the kernel does not share tiles: pass whole rows instead");
    double count = 0.0;
    mf_pass P;
    mf_pass_setup(&P, &k, &xp, REAL(V), n, b, nthreads, S, &count, R_NilValue);
    int nb = mf_check_blocks(blocks, P.G);
    const int *B = INTEGER(blocks);
    size_t need = 0;
    for (int p = 0; p < nb; p++) {
        size_t nbk = mf_block_need(&P, B[3 * p], B[3 * p + 1], B[3 * p + 2]);
        if (nbk > need) need = nbk;
    }
    mf_reserve(&P, need);
    SEXP ans = PROTECT(allocVector(VECSXP, 2 * (R_xlen_t) nb));
    for (int p = 0; p < nb; p++) {
        int L = B[3 * p], i = B[3 * p + 1], j = B[3 * p + 2], ri, mi, rj, mj;
        mf_node_rows(&P, L, i, &ri, &mi);
        mf_node_rows(&P, L, j, &rj, &mj);
        SEXP Ai = allocMatrix(REALSXP, mi, b);
        SET_VECTOR_ELT(ans, 2 * p, Ai);
        if (i == j) {
            mf_diagonal_block(&P, L, i, REAL(Ai), mi);
            continue;
        }
        SEXP Bj = allocMatrix(REALSXP, mj, b);
        SET_VECTOR_ELT(ans, 2 * p + 1, Bj);
        mf_offdiagonal_block(&P, L, i, j, REAL(Ai), mi, REAL(Bj), mj);
    }
    set_count(ans, count);
    UNPROTECT(1);
    return ans;
}

/* .Call (matrix_free_groups() in R/matrix_free.R): the 0-based first rows
 * of the groups of n rows, and n after the last (mf_groups()). */
SEXP matrix_free_groups(SEXP n)
{
    engine_entered(__func__);
    int rows = as_count(n, "n", 1, INT_MAX);
    int starts[MF_MAX_GROUPS + 1];
    int G = mf_groups(rows, starts);
    SEXP ans = PROTECT(allocVector(INTSXP, G + 1));
    for (int g = 0; g <= G; g++) INTEGER(ans)[g] = starts[g];
    UNPROTECT(1);
    return ans;
}

/* One node sum of a worker's block, for one group of rows: its group, the
 * node it sums over (level L, groups g0 .. g1 - 1), and where its rows are. */
typedef struct {
    int group, L, g0, g1, ld;
    const double *rows;
} mf_piece;

static int mf_piece_order(const void *a, const void *b)
{
    const mf_piece *p = (const mf_piece *) a, *q = (const mf_piece *) b;
    if (p->group != q->group) return p->group < q->group ? -1 : 1;
    return p->g0 < q->g0 ? -1 : p->g0 > q->g0;
}

/* The pieces of matrix_free_fold(): each block (L, i, j) of the nb in B
 * gives every group of its rows one piece, a node sum (the block's sum on
 * that side, in sums, checked to be n x b where n is its node's rows);
 * *npieces gets their number. */
static mf_piece *mf_fold_pieces(const int *B, int nb, SEXP sums, int G, const int *starts,
                                int b, size_t *npieces)
{
    size_t count = 0, q = 0;
    for (int p = 0; p < nb; p++) {
        int L = B[3 * p], i = B[3 * p + 1], j = B[3 * p + 2], g0, g1, h0, h1;
        mf_node_groups(G, L, i, &g0, &g1);
        mf_node_groups(G, L, j, &h0, &h1);
        count += (size_t) (g1 - g0) + (i == j ? 0 : (size_t) (h1 - h0));
    }
    mf_piece *pieces = (mf_piece *) R_alloc(count + 1, sizeof(mf_piece));
    for (int p = 0; p < nb; p++) {
        int L = B[3 * p], i = B[3 * p + 1], j = B[3 * p + 2];
        for (int side = 0; side < (i == j ? 1 : 2); side++) {
            int g0, g1, h0, h1;
            mf_node_groups(G, L, side ? j : i, &g0, &g1);   /* the rows' node */
            mf_node_groups(G, L, side ? i : j, &h0, &h1);   /* the node summed over */
            SEXP P = VECTOR_ELT(sums, 2 * (R_xlen_t) p + side);
            int m = starts[g1] - starts[g0];
            if (!isReal(P) || !isMatrix(P) || nrows(P) != m || ncols(P) != b)
                error_argument("sum %d of block %d must be a double matrix of %d rows and %d "
                               "columns", side + 1, p + 1, m, b);
            for (int g = g0; g < g1; g++, q++) {
                mf_piece pc = {g, L, h0, h1, m, REAL(P) + (starts[g] - starts[g0])};
                pieces[q] = pc;
            }
        }
    }
    *npieces = count;
    return pieces;
}

/* .Call (matrix_free_fold() in R/matrix_free.R): K V (n x b) from the
 * workers' node sums: blocks, a 3-row integer matrix of all the workers'
 * blocks (mf_check_blocks()), and sums, their 2 sums each as
 * kernel_pair_products() returns them, in one list. Each group of rows
 * gets its node sums added in the tree of the groups, node after node in
 * the order of their groups (mf_stack), as all_rows_product() adds them:
 * the same bits as one process, whatever the blocks. Errors unless the
 * blocks hold every pair of groups once. */
SEXP matrix_free_fold(SEXP n_, SEXP b_, SEXP blocks, SEXP sums)
{
    engine_entered(__func__);
    int n = as_count(n_, "n", 1, INT_MAX), b = as_count(b_, "b", 1, INT_MAX);
    int starts[MF_MAX_GROUPS + 1];
    int G = mf_groups(n, starts);
    int nb = mf_check_blocks(blocks, G);
    if (TYPEOF(sums) != VECSXP || XLENGTH(sums) != 2 * (R_xlen_t) nb)
        error_argument("'sums' must be a list of 2 sums per block (%d)", 2 * nb);
    size_t npieces;
    mf_piece *pieces = mf_fold_pieces(INTEGER(blocks), nb, sums, G, starts, b, &npieces);
    qsort(pieces, npieces, sizeof(mf_piece), mf_piece_order);
    SEXP Y = PROTECT(allocMatrix(REALSXP, n, b));
    int levels = mf_root_level(G) + 1;
    size_t q = 0;
    for (int g = 0; g < G; g++) {
        const void *vmax = vmaxget();
        int rows = starts[g + 1] - starts[g], next = 0;
        mf_stack st;
        mf_stack_init(&st, rows, b, levels);
        for (; q < npieces && pieces[q].group == g; q++) {
            const mf_piece *pc = pieces + q;
            if (pc->g0 != next)
                error_argument("the blocks must hold every pair of groups once (group %d)",
                               g + 1);
            next = pc->g1;
            for (int j = 0; j < b; j++)
                memcpy(st.free + (size_t) j * rows, pc->rows + (size_t) j * pc->ld,
                       (size_t) rows * sizeof(double));
            mf_stack_push(&st, pc->L);
        }
        if (next != G)
            error_argument("the blocks must hold every pair of groups once (group %d)", g + 1);
        mf_stack_finish(&st, REAL(Y) + starts[g], n);
        vmaxset(vmax);
    }
    UNPROTECT(1);
    return Y;
}

/* .Call (kernel_shares_tiles() in R/matrix_free.R): whether the passes of
 * the kernel of the program share the tiles of the lower triangle on the
 * rows x (kernel_tiles_shared()): the kind of rows is read from x (its
 * class), without reading the rows themselves, which the passes do. */
SEXP kernel_shares_tiles(SEXP kernel, SEXP x)
{
    engine_entered(__func__);
    kernel_eval k;
    kernel_eval_from_R(kernel, &k);
    k.sparse = !k.any_string && is_sparse_rows(x);
    return ScalarLogical(kernel_tiles_shared(&k));
}

/* .Call (oriented_columns() in R/matrix_free.R): a copy of the n x k double
 * matrix V with the sign rule of every fit applied (orient_columns() in
 * eigen.c). */
SEXP oriented_columns(SEXP V)
{
    engine_entered(__func__);
    if (!isReal(V) || !isMatrix(V) || nrows(V) < 1 || ncols(V) < 1)
        error_argument("'V' must be a double matrix with at least one row and one column");
    SEXP ans = PROTECT(duplicate(V));
    orient_columns(nrows(ans), ncols(ans), REAL(ans));
    UNPROTECT(1);
    return ans;
}
