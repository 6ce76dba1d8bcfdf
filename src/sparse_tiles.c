/* Tiles of a single gathered-product kernel (vanilladot, polydot, tanhdot,
 * rbfdot) on sparse rows, for the matrix-free passes (sparse_tile()) and
 * the kernel of a whole set with itself (the exact fill, kernel_matrix(x):
 * their block loop, sparse_tiles_block()).
 *
 * Text and counts have a few columns that most rows share (the words
 * "the" and "of"; a Zipf law's first columns) and many that few rows
 * have. A product of two rows that gathers one row against the other (as
 * sparse_columns() does) costs every stored value of the row, wherever the
 * columns fall, and on 10^5 columns each stored value is a cache miss.
 * Here the columns are split once per call:
 *   - the head: the columns stored in at least SPARSE_HEAD_SHARE of the
 *     rows (at most SPARSE_HEAD_MAX of them, the most frequent), kept as a
 *     dense matrix of head x rows, so that their share of a tile is one
 *     tiled product by tile_gemm() (the vector layer's register tiles);
 *   - the tail: every other stored value, as compressed rows. A tile sorts
 *     its row side's tail values by column (an index made for the tile and
 *     cleared after it, with a bit per column of the data to skip the
 *     columns it lacks), and each row of the column side adds the products
 *     of the columns it shares with them to its own column of the tile, in
 *     increasing column order.
 * Each value is the tail's sum (the shared tail columns in increasing
 * order) plus the head's (in increasing head column order): the same
 * terms in the same order whichever of the two rows is on which side, so
 * a tile serves both of its blocks. The values differ in their last bits
 * from sparse_columns()'s, whose one sum runs over all columns in order.
 * rbfdot's squared distance is ||a||^2 + ||b||^2 - 2 a'b, clamped at 0,
 * and exactly 0 for a row against itself.
 *
 * Measured (one matrix-free pass, kernel_block_product() alone, over 10^4
 * Zipf rows of 50 values among 10^4 columns, rbfdot, one thread of the
 * project machine): 17.5 ns a value with sparse_columns(); here 17 with no
 * head, 10.5 with the head at a share of 1/4 or 1/8, 13 to 16 at 1/16.
 * Whole fits: NEWS.md and the Benchmarks article (bench/sparse.R). */
#include "fastkpca.h"
#include "simd.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A column is in the head when at least this share of the rows store it:
 * as a head column it costs a multiply-add in every value of a tile, as a
 * tail column (share p) about p^2 scattered updates per value, which cost
 * more than a vector multiply-add from a share of about 1/8 on (the
 * measurements above). */
#define SPARSE_HEAD_SHARE 0.125
#define SPARSE_HEAD_MAX 128
/* tail values of the row side indexed at a time, per thread */
#define SPARSE_TAIL_CAP 65536
/* see sparse_tiles_prepare() */
#define SPARSE_DENSE_MAP 4

/* One side's rows as head and tail. */
typedef struct {
    const sparse_csr *s;
    const double *head;  /* nhead x s->n, each row's head columns contiguous */
    const int *tp, *tj;  /* the tail, compressed rows */
    const double *tx;
} split_rows;

struct sparse_tiles {
    const kernel_spec *spec;
    kernel_points a, b;
    int nhead, d, threads, cap;
    int dc;              /* the tails' columns, numbered by tail_columns() */
    int may_lose;        /* a pair's distance from the norms may need redoing */
    split_rows A, B;
    /* per thread: the row side's tail values of a tile, by (numbered) column */
    int *colstart, *colend; /* dc each: a column's values (colend 0 between tiles) */
    uint64_t *present;      /* dc / 64 + 1 words each: the columns with values */
    int *distinct, *erow;   /* cap each: the columns; the row of each value */
    double *ex;             /* cap each: the values */
};

/* Whether the kernel is a function of the rows' inner product or of
 * rbfdot's squared distance from it (a gathered product). */
int sparse_tiles_supported(const kernel_spec *spec)
{
    switch (spec->code) {
    case KERNEL_VANILLA: case KERNEL_POLY: case KERNEL_TANH: case KERNEL_RBF:
        return 1;
    default:
        return 0;
    }
}

typedef struct {
    int column, count;
} column_count;

static int more_frequent(const void *x, const void *y)
{
    const column_count *a = (const column_count *) x, *b = (const column_count *) y;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return a->column < b->column ? -1 : a->column > b->column;
}

static int earlier_column(const void *x, const void *y)
{
    const column_count *a = (const column_count *) x, *b = (const column_count *) y;
    return a->column < b->column ? -1 : a->column > b->column;
}

static int int_order(const void *x, const void *y)
{
    int a = *(const int *) x, b = *(const int *) y;
    return a < b ? -1 : a > b;
}

/* v[0..n-1] sorted, duplicates dropped in place: returns their number. */
static int sort_unique(int *v, int n)
{
    if (n == 0) return 0;
    qsort(v, (size_t) n, sizeof(int), int_order);
    int m = 1;
    for (int u = 1; u < n; u++)
        if (v[u] != v[m - 1]) v[m++] = v[u];
    return m;
}

/* The place of column c in the increasing list cols[0..n-1], -1 if absent. */
static int find_column(const int *cols, int n, int c)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (cols[mid] < c) lo = mid + 1; else if (cols[mid] > c) hi = mid - 1; else return mid;
    }
    return -1;
}

/* The head columns of the rows of s (head: SPARSE_HEAD_MAX ints): the most
 * frequent of those stored in at least SPARSE_HEAD_SHARE of the rows, at
 * most SPARSE_HEAD_MAX, in increasing order. Returns their number. The
 * columns are counted from a sorted copy of the stored columns: O(nnz)
 * memory, nothing per column of the data (2^28 hashed columns). */
static int choose_head(const sparse_csr *s, int *head)
{
    int nnz = s->p[s->n];
    int *cols = (int *) R_alloc((size_t) nnz + 1, sizeof(int));
    memcpy(cols, s->j, (size_t) nnz * sizeof(int));
    qsort(cols, (size_t) nnz, sizeof(int), int_order);
    double need = SPARSE_HEAD_SHARE * (double) s->n;
    if (need < 1.0) need = 1.0;
    /* the candidates, in column order, over the first part of cols */
    column_count *cand = (column_count *) R_alloc((size_t) (nnz / need) + 2, sizeof(column_count));
    int ncand = 0;
    for (int u = 0; u < nnz;) {
        int v = u;
        while (v < nnz && cols[v] == cols[u]) v++;
        if (v - u >= need) {
            cand[ncand].column = cols[u];
            cand[ncand++].count = v - u;
        }
        u = v;
    }
    /* more than SPARSE_HEAD_MAX: the most frequent (the earlier column of
     * two as frequent), then back in column order */
    if (ncand > SPARSE_HEAD_MAX) {
        qsort(cand, (size_t) ncand, sizeof(column_count), more_frequent);
        ncand = SPARSE_HEAD_MAX;
        qsort(cand, (size_t) ncand, sizeof(column_count), earlier_column);
    }
    for (int q = 0; q < ncand; q++) head[q] = cand[q].column;
    return ncand;
}

/* The tail columns of the sets A and B (those not in head), increasing:
 * the tails' columns are numbered by their place here (tail_rank), so
 * that a tile's index over them has one entry per column the data use,
 * not per column of the data. The numbering keeps the columns' order, so
 * every sum runs over the same terms in the same order. */
static int tail_columns(const sparse_csr *A, const sparse_csr *B, const int *head, int nhead,
                        int **out)
{
    int na = A->p[A->n], nb = B == A ? 0 : B->p[B->n];
    int *cols = (int *) R_alloc((size_t) na + nb + 1, sizeof(int));
    int m = 0;
    for (int u = 0; u < na; u++)
        if (find_column(head, nhead, A->j[u]) < 0) cols[m++] = A->j[u];
    for (int u = 0; u < nb; u++)
        if (find_column(head, nhead, B->j[u]) < 0) cols[m++] = B->j[u];
    *out = cols;
    return sort_unique(cols, m);
}

/* s's rows split into a dense head (nhead x n, head: the head's columns)
 * and a compressed tail whose columns are their places in tcols. */
static split_rows split(const sparse_csr *s, const int *head, int nhead, const int *tcols,
                        int ntcols, const int *slot, const int *rank)
{
    split_rows r;
    r.s = s;
    size_t n = (size_t) s->n;
    int nnz = s->p[s->n];
    int *place = (int *) R_alloc((size_t) nnz + 1, sizeof(int)); /* head place, or -1 */
    int ntail = 0;
    for (int u = 0; u < nnz; u++) {
        place[u] = slot ? slot[s->j[u]] : find_column(head, nhead, s->j[u]);
        ntail += place[u] < 0;
    }
    double *hd = (double *) R_alloc((size_t) nhead * n + 1, sizeof(double));
    memset(hd, 0, ((size_t) nhead * n + 1) * sizeof(double));
    int *tp = (int *) R_alloc(n + 1, sizeof(int));
    int *tj = (int *) R_alloc((size_t) ntail + 1, sizeof(int));
    double *tx = (double *) R_alloc((size_t) ntail + 1, sizeof(double));
    int out = 0;
    tp[0] = 0;
    for (size_t i = 0; i < n; i++) {
        for (int u = s->p[i]; u < s->p[i + 1]; u++) {
            int q = place[u];
            if (q >= 0) {
                hd[i * nhead + q] = s->x[u];
            } else {
                tj[out] = rank ? rank[s->j[u]] : find_column(tcols, ntcols, s->j[u]);
                tx[out++] = s->x[u];
            }
        }
        tp[i + 1] = out;
    }
    r.head = hd;
    r.tp = tp;
    r.tj = tj;
    r.tx = tx;
    return r;
}

sparse_tiles *sparse_tiles_prepare(const kernel_spec *spec, const kernel_points *a,
                                   const kernel_points *b, int threads)
{
    if (!sparse_tiles_supported(spec) || !a->sparse || !b->sparse)
        error_argument("sparse tiles need a gathered-product kernel on sparse rows");
    sparse_tiles *P = (sparse_tiles *) R_alloc(1, sizeof(sparse_tiles));
    memset(P, 0, sizeof(sparse_tiles));
    P->spec = spec;
    P->a = *a;
    P->b = *b;
    P->d = a->sparse->d;
    P->threads = threads < 1 ? 1 : threads;
    /* sparse_rbf_distance()'s rule can flag a pair only if its norms
     * overflow or are large enough for the cancellation to matter */
    double top = 0.0;
    for (int i = 0; i < a->n; i++) top = a->sparse_norms[i] > top ? a->sparse_norms[i] : top;
    for (int i = 0; i < b->n; i++) top = b->sparse_norms[i] > top ? b->sparse_norms[i] : top;
    P->may_lose = spec->code == KERNEL_RBF &&
        !(spec->sigma * (SQ_DISTANCE_ROUNDING * 2.0 * top) <= SQ_DISTANCE_TOL &&
          top < DBL_MAX / 4);
    int head[SPARSE_HEAD_MAX], *tcols;
    /* the head from all the rows of the column side's set, whatever part
     * of it the call takes (a matrix-free pass takes a view of its rows) */
    P->nhead = choose_head(b->sparse, head);
    /* the tails' columns numbered 0 .. P->dc - 1 (tail_columns()) */
    P->dc = tail_columns(a->sparse, b->sparse, head, P->nhead, &tcols);
    /* data of few columns (at most SPARSE_DENSE_MAP times their stored
     * values): the columns' places by look-up in two maps of one int per
     * column, rather than by binary search (the same places) */
    int *slot = NULL, *rank = NULL;
    size_t nnz = (size_t) a->sparse->p[a->sparse->n] +
        (b->sparse == a->sparse ? 0 : (size_t) b->sparse->p[b->sparse->n]);
    if ((size_t) P->d <= SPARSE_DENSE_MAP * (nnz + 1)) {
        slot = (int *) R_alloc((size_t) P->d + 1, sizeof(int));
        rank = (int *) R_alloc((size_t) P->d + 1, sizeof(int));
        for (int c = 0; c < P->d; c++) slot[c] = rank[c] = -1;
        for (int q = 0; q < P->nhead; q++) slot[head[q]] = q;
        for (int q = 0; q < P->dc; q++) rank[tcols[q]] = q;
    }
    P->A = split(a->sparse, head, P->nhead, tcols, P->dc, slot, rank);
    P->B = b->sparse == a->sparse ? P->A
        : split(b->sparse, head, P->nhead, tcols, P->dc, slot, rank);
    /* the index holds at least the longest tail row of the row side */
    int longest = 0;
    for (int r = 0; r < a->sparse->n; r++)
        if (P->A.tp[r + 1] - P->A.tp[r] > longest) longest = P->A.tp[r + 1] - P->A.tp[r];
    P->cap = longest > SPARSE_TAIL_CAP ? longest : SPARSE_TAIL_CAP;
    size_t T = (size_t) P->threads, words = (size_t) P->dc / 64 + 1;
    P->colstart = (int *) R_alloc(T * P->dc + 1, sizeof(int));
    P->colend = (int *) R_alloc(T * P->dc + 1, sizeof(int));
    memset(P->colend, 0, (T * P->dc + 1) * sizeof(int));
    P->present = (uint64_t *) R_alloc(T * words, sizeof(uint64_t));
    memset(P->present, 0, T * words * sizeof(uint64_t));
    P->distinct = (int *) R_alloc(T * P->cap, sizeof(int));
    P->erow = (int *) R_alloc(T * P->cap, sizeof(int));
    P->ex = (double *) R_alloc(T * P->cap, sizeof(double));
    return P;
}

/* out (nr x nc, leading dimension ldo) += the tail products of a's points r0 .. r0
 * + nr - 1 and b's points c0 .. c0 + nc - 1, on thread t's index. The row
 * side's tail values are sorted by column (a counting sort over the
 * columns they have), and each point of the column side adds the products
 * of the columns it shares with them to its own column of out, which
 * stays in the first level of cache while it does: the other way round,
 * each update fell on another column, and a linked list per column made
 * each look-up wait for the one before. */
static void tail_products(const sparse_tiles *P, int t, int r0, int nr, int c0, int nc,
                          double *out, size_t ldo)
{
    int *colstart = P->colstart + (size_t) t * P->dc, *colend = P->colend + (size_t) t * P->dc;
    uint64_t *present = P->present + (size_t) t * ((size_t) P->dc / 64 + 1);
    int *distinct = P->distinct + (size_t) t * P->cap, *erow = P->erow + (size_t) t * P->cap;
    double *ex = P->ex + (size_t) t * P->cap;
    const int *atp = P->A.tp, *atj = P->A.tj, *btp = P->B.tp, *btj = P->B.tj;
    const double *atx = P->A.tx, *btx = P->B.tx;
    int arow0 = P->a.first + r0, brow0 = P->b.first + c0;
    for (int i0 = 0; i0 < nr;) {
        /* the rows i0 .. i1 - 1 whose tail values fit: count them by column */
        int used = 0, nd = 0, i1 = i0;
        while (i1 < nr) {
            int len = atp[arow0 + i1 + 1] - atp[arow0 + i1];
            if (used + len > P->cap) break;
            for (int u = atp[arow0 + i1]; u < atp[arow0 + i1 + 1]; u++) {
                int c = atj[u];
                if (colend[c]++ == 0) {
                    distinct[nd++] = c;
                    present[c >> 6] |= (uint64_t) 1 << (c & 63);
                }
            }
            used += len;
            i1++;
        }
        for (int q = 0, pos = 0; q < nd; q++) {
            int c = distinct[q];
            colstart[c] = pos;
            pos += colend[c];
            colend[c] = colstart[c];
        }
        for (int i = i0; i < i1; i++)
            for (int u = atp[arow0 + i]; u < atp[arow0 + i + 1]; u++) {
                int e = colend[atj[u]]++;
                erow[e] = i;
                ex[e] = atx[u];
            }
        for (int j = 0; j < nc; j++) {
            double *col = out + (size_t) j * ldo;
            for (int u = btp[brow0 + j]; u < btp[brow0 + j + 1]; u++) {
                int c = btj[u];
                if (!(present[c >> 6] >> (c & 63) & 1)) continue;
                double w = btx[u];
                for (int e = colstart[c]; e < colend[c]; e++) col[erow[e]] += ex[e] * w;
            }
        }
        for (int q = 0; q < nd; q++) {
            colend[distinct[q]] = 0;
            present[distinct[q] >> 6] = 0;
        }
        i0 = i1;
    }
}

/* out (nr x nc, leading dimension ldo) = the kernel between a's points r0
 * .. r0 + nr - 1 and b's points c0 .. c0 + nc - 1. No R API: callable
 * inside a parallel region of at most the prepared number of threads.
 * Returns 1 if a value is not finite. */
int sparse_tile(const sparse_tiles *P, int r0, int nr, int c0, int nc, double *out,
                size_t ldo)
{
#ifdef _OPENMP
    int t = omp_get_thread_num();
#else
    int t = 0;
#endif
    if (t >= P->threads) t = 0;
    for (int j = 0; j < nc; j++) memset(out + (size_t) j * ldo, 0, (size_t) nr * sizeof(double));
    tail_products(P, t, r0, nr, c0, nc, out, ldo);
    if (P->nhead > 0)
        tile_gemm(nr, nc, P->nhead, P->A.head + (size_t) (P->a.first + r0) * P->nhead,
                  P->nhead, 1, P->B.head + (size_t) (P->b.first + c0) * P->nhead, P->nhead, 0,
                  1.0, out, (int) ldo, 1);
    const kernel_spec *spec = P->spec;
    int rbf = spec->code == KERNEL_RBF, bad = 0;
    for (int j = 0; j < nc; j++) {
        double *col = out + (size_t) j * ldo;
        if (rbf) {
            /* ||a||^2 + ||b||^2 - 2 a'b, clamped at 0; where the norms
             * are large (may_lose), each value by sparse_rbf_distance()'s
             * rule instead */
            const double *an = P->a.sparse_norms + r0;
            double bn = P->b.sparse_norms[c0 + j];
            if (P->may_lose) {
                for (int i = 0; i < nr; i++)
                    col[i] = sparse_rbf_distance(spec->sigma, an[i], bn, col[i], P->a.sparse,
                                                 P->a.first + r0 + i, P->b.sparse,
                                                 P->b.first + c0 + j);
            } else {
                for (int i = 0; i < nr; i++) col[i] = sq_distance_from_norms(an[i], bn, col[i]);
            }
            /* a point's distance to itself */
            if (P->a.sparse == P->b.sparse) {
                int self = P->b.first + c0 + j - P->a.first - r0;
                if (self >= 0 && self < nr) col[self] = 0.0;
            }
        }
        if (kernel_fast_supported(spec)) {
            kernel_fast_transform(spec, col, nr);
        } else {
            /* a polydot degree of kernel_fast.c's range; no scratch needed */
            for (int i = 0; i < nr; i++) col[i] = kernel_of_product(spec, col[i], NULL);
        }
        /* rbfdot's exp of a finite or infinite distance is finite */
        if (!rbf) {
            for (int i = 0; i < nr; i++) bad |= simd_not_finite(col[i]);
        }
    }
    return bad;
}

/* The kernel between the points of a (rows) and b (columns), out as
 * kernel_block() (kernel_plan.c) describes it, by the tiles: panels of
 * SPARSE_PANEL columns, each in tiles of SPARSE_PANEL_ROWS rows from its
 * diagonal (lower_only: the panel's square on the diagonal is computed
 * whole) or from row 0, the panels spread over the threads; blocks of
 * panels of about block_work values, with the interrupt check between
 * them. Returns 1 if a value is not finite (the caller reports it). */
#define SPARSE_PANEL 64
#define SPARSE_PANEL_ROWS 256
int sparse_tiles_block(const kernel_spec *spec, const kernel_points *a,
                       const kernel_points *b, int lower_only, double *out, int threads,
                       double block_work)
{
    int rows = a->n, cols = b->n;
    sparse_tiles *plan = sparse_tiles_prepare(spec, a, b, threads);
    tile_kernels_ready();
    int j0 = 0;
    while (j0 < cols) {
        int j1 = column_block_end(j0, cols, rows, lower_only, 0, 1.0, 1.0, block_work,
                                  SPARSE_PANEL * threads);
        int nonfinite = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1) \
    reduction(|:nonfinite)
#endif
        for (int c = j0; c < j1; c += SPARSE_PANEL) {
            int nc = j1 - c < SPARSE_PANEL ? j1 - c : SPARSE_PANEL;
            for (int i = lower_only && c < rows ? c : 0; i < rows; i += SPARSE_PANEL_ROWS) {
                int nr = rows - i < SPARSE_PANEL_ROWS ? rows - i : SPARSE_PANEL_ROWS;
                nonfinite |= sparse_tile(plan, i, nr, c, nc, out + (size_t) c * rows + i,
                                         (size_t) rows);
            }
        }
        if (nonfinite) return 1;
        if (lower_only == KERNEL_SYMMETRIC) mirror_lower_columns(out, rows, j0, j1, threads);
        R_CheckUserInterrupt();
        progress_fill_columns(j1, cols, lower_only);
        j0 = j1;
    }
    return 0;
}
