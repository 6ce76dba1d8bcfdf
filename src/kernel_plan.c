/* The plan of a kernel evaluation: which evaluator computes the kernel
 * between two sets of points, chosen in one place (kernel_plan()), with
 * the reasons; kernel_block() (a block of columns) and kernel_tile() (one
 * tile, on any thread) hand the work to it. The evaluators, each in its
 * own file with its block loop and its tiles: the fast tiles of a single
 * kernel of a product or a distance on dense rows (kernel_fast.c), the
 * sparse tiles of a single gathered-product kernel on sparse rows
 * (sparse_tiles.c), the sparse rows' 8-column products of any other
 * single kernel (sparse_columns.c), and the generic interpreter of any
 * program on any points (kernel_generic.c, with the string tiles of
 * string_kernel.c). The plan only chooses and dispatches: the loops, their
 * threads and their interrupt checks are the evaluators'. */
#include "fastkpca.h"
#include <string.h>

/* Work (in rough units of one multiply-add) done between two interrupt
 * checks: a few tens of milliseconds on one core, whatever the kernel and d. */
#define KERNEL_BLOCK_WORK 3.0e7
/* Columns per thread in a block, at least, so that threads share a block. */
#define KERNEL_BLOCK_MIN_COLUMNS 8

/* The evaluator of the kernel k between the points a (rows) and b
 * (columns), for a use: the one place of the choice.
 * - A single base kernel of kernel_fast.c's on dense rows: its fast tiles,
 *   for every use.
 * - A single gathered-product kernel on sparse rows: the sparse tiles when
 *   one preparation serves many tiles (KERNEL_USE_TILES: the matrix-free
 *   passes; or the kernel of one whole set with itself: the exact fill,
 *   kernel_matrix(x)). They prepare the sets whole (their head chosen from
 *   all the rows, every row split), which does not pay for the panels of
 *   predict() and Nystrom or kcca()'s pivots, called again and again on
 *   parts of the rows; those keep the 8-column products, one rule for every
 *   row, so a row of newdata gets the same bits alone or among others.
 * - Any other single kernel on sparse rows: the 8-column products.
 * - Anything else (kernel expressions, strings, the kernels only
 *   kernel_values.c computes): the generic interpreter. */
kernel_evaluator kernel_plan(const kernel_eval *k, const kernel_points *a,
                             const kernel_points *b, kernel_use use)
{
    if (kernel_fast_points(k)) return EVAL_FAST;
    if (k->nops != 1 || !k->sparse) return EVAL_GENERIC;
    int whole_set_with_itself = a->sparse == b->sparse && a->first == 0 && b->first == 0 &&
        a->n == a->sparse->n && b->n == b->sparse->n;
    if (sparse_tiles_supported(k->bases) && (use == KERNEL_USE_TILES || whole_set_with_itself))
        return EVAL_SPARSE_TILES;
    return EVAL_SPARSE_COLUMNS;
}

/* The kernel between the points of a (rows) and b (columns) into out
 * (leading dimension a->n): column j gets k(a_i, b_j) for i from j
 * (lower_only: the lower triangle with the diagonal; KERNEL_SYMMETRIC: the
 * same, then copied into the upper triangle, a and b the same points) or 0
 * to a->n - 1, by the plan's evaluator: in blocks of columns of about
 * KERNEL_BLOCK_WORK, in parallel within a block, with an interrupt check
 * between blocks. Errors if a value is not finite: an overflowing kernel
 * would reach LAPACK as Inf and come back as NaN. what: see
 * kernel_nonfinite_error(). */
void kernel_block(const kernel_eval *k, const kernel_points *a, const kernel_points *b,
                  int lower_only, double *out, int threads, const char *what)
{
    if (a->d != b->d) error_argument("kernel points of %d and %d coordinates", a->d, b->d);
    threads = threads_unless_busy(threads);  /* the cores others leave free */
    int bad = 0;
    switch (kernel_plan(k, a, b, KERNEL_USE_BLOCK)) {
    case EVAL_FAST:
        bad = kernel_fast_block(k->bases, a, b, lower_only, out, threads, KERNEL_BLOCK_WORK);
        break;
    case EVAL_SPARSE_TILES:
        bad = sparse_tiles_block(k->bases, a, b, lower_only, out, threads, KERNEL_BLOCK_WORK);
        break;
    case EVAL_SPARSE_COLUMNS:
        bad = sparse_columns_block(k->bases, a, b, lower_only, out, threads, KERNEL_BLOCK_WORK,
                                   KERNEL_BLOCK_MIN_COLUMNS);
        break;
    default:
        generic_block(k, a, b, lower_only, out, threads, what, KERNEL_BLOCK_WORK,
                      KERNEL_BLOCK_MIN_COLUMNS);
        break;
    }
    if (bad) kernel_nonfinite_error(k, what);
}

/* Whether the fast tiles of kernel_fast.c compute the kernel k on the
 * call's points: a single base kernel of theirs, on dense rows. */
int kernel_fast_points(const kernel_eval *k)
{
    return k->nops == 1 && !k->sparse && kernel_fast_supported(k->bases);
}

/* Whether the tiles of kernel_tile() compute the kernel k on the call's
 * points without R: the plan's evaluator for tiles is not the generic
 * interpreter, nor besseldot's (whose Bessel function may warn through R)
 * 8-column products. The matrix-free passes use the symmetry of the
 * kernel matrix through these tiles. */
int kernel_tiles_shared(const kernel_eval *k)
{
    if (k->sparse) return k->nops == 1 && k->bases[0].code != KERNEL_BESSEL;
    return kernel_fast_points(k);
}

/* A source of tiles of the kernel between the points of a and b, on any
 * thread: the plan's evaluator for tiles, prepared once: kernel_fast.c's
 * plan for dense rows; for sparse rows, sparse_tiles.c's (a kernel of a
 * gathered product: the frequent columns as a dense head, the rest
 * indexed per tile) or sparse_columns.c's (the others). */
struct kernel_tiles {
    kernel_fast_plan *fast;
    sparse_tiles *sparse;
    sparse_columns_plan *columns;
};

kernel_tiles *kernel_tiles_prepare(const kernel_eval *k, const kernel_points *a,
                                   const kernel_points *b, int threads)
{
    if (!kernel_tiles_shared(k)) error_argument("the kernel has no tiles on these points");
    kernel_tiles *P = (kernel_tiles *) R_alloc(1, sizeof(kernel_tiles));
    memset(P, 0, sizeof(kernel_tiles));
    kernel_evaluator ev = kernel_plan(k, a, b, KERNEL_USE_TILES);
    if (ev == EVAL_FAST) {
        P->fast = kernel_fast_prepare(k->bases, a, b);
    } else if (ev == EVAL_SPARSE_TILES) {
        P->sparse = sparse_tiles_prepare(k->bases, a, b, threads);
        tile_kernels_ready();
    } else {
        P->columns = sparse_columns_prepare(k->bases, a, b, threads);
    }
    return P;
}

/* out (nr x nc, leading dimension nr) = the kernel between a's points r0 ..
 * r0 + nr - 1 (r0 a multiple of 8) and b's points c0 .. c0 + nc - 1. No R
 * API: callable inside a parallel region of at most the prepared number
 * of threads. Returns 1 if a value is not finite. */
int kernel_tile(const kernel_tiles *P, int r0, int nr, int c0, int nc, double *out)
{
    if (P->fast) return kernel_fast_tile(P->fast, r0, nr, c0, nc, out);
    if (P->sparse) return sparse_tile(P->sparse, r0, nr, c0, nc, out, (size_t) nr);
    return sparse_columns_tile(P->columns, r0, nr, c0, nc, out);
}
