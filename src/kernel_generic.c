/* The generic evaluator: any kernel program on any kind of points, one
 * column segment at a time. Each base kernel fills a segment of a small
 * stack, each operation combines segments in place, and the bottom of the
 * stack is the output column itself; a single base kernel is one op and
 * writes the output directly. A base kernel's segment comes from its
 * kind's value function: the string kernels' (string_segment()), the
 * sparse rows' (sparse_segment()), or the dense points' (the fast kernels'
 * distance or product and their vector transform, else kernel_value()). */
#include "fastkpca.h"
#include "simd.h"
#include <Rmath.h>
#include <math.h>
#include <float.h>
#include <string.h>

/* Rough cost of one value of the program, in units of one multiply-add:
 * its base kernels' (kernel_value_cost(), string_value_cost()) and 4 per
 * operation. */
double kernel_program_cost(const kernel_eval *k, int d)
{
    double cost = 0.0;
    for (int b = 0; b < k->nbase; b++) {
        const kernel_spec *spec = k->bases + b;
        cost += spec->code == KERNEL_STRING ? string_value_cost(spec)
                                            : kernel_value_cost(spec, d);
    }
    return cost + 4.0 * (k->nops - k->nbase);
}

/* dst[i - i0] = base kernel (a_i, b_j) for i in [i0, i1). work: floor(order)
 * + 1 doubles for besseldot. */
static void base_segment(const kernel_spec *spec, const kernel_points *a,
                         const kernel_points *b, int j, int i0, int i1, double *dst,
                         double *work)
{
    if (spec->code == KERNEL_STRING) {
        string_segment(spec, a->first, i0, i1, b->first + j, dst, work);
        return;
    }
    if (a->sparse) {
        sparse_segment(spec, a, b, j, i0, i1, dst, work);
        return;
    }
    if (a->in_place) {
        kernel_fast_in_place(spec, a, b, j, i0, i1, dst);
        return;
    }
    int d = a->d, dist = kernel_is_distance(spec->code);
    const double *ap = dist ? a->shifted : a->inner;
    const double *an = dist ? a->shifted_norms : a->inner_norms;
    const double *bj = (dist ? b->shifted : b->inner) + (size_t) j * d;
    double bn = (dist ? b->shifted_norms : b->inner_norms)[j];
    if (kernel_fast_supported(spec)) {
        /* the distance or inner product as the fast blocks form it, then
         * their vector code for the kernel's function */
        int diff = dist && !kernel_expanded_form(spec, d);
        for (int i = i0; i < i1; i++) {
            const double *ai = ap + (size_t) i * d;
            double s = 0.0;
            if (diff) {
                for (int k = 0; k < d; k++) s += (ai[k] - bj[k]) * (ai[k] - bj[k]);
            } else if (dist) {
                s = kernel_sq_distance(ai, bj, d, an[i], bn);
            } else {
                s = kernel_dot(ai, bj, d);
            }
            dst[i - i0] = s;
        }
        kernel_fast_transform(spec, dst, i1 - i0);
        /* the expanded form's lost digits and a point against itself */
        if (dist && !diff)
            kernel_fast_refine(spec, ap + (size_t) i0 * d, an + i0, bj, bn, d, i1 - i0, dst);
        return;
    }
    for (int i = i0; i < i1; i++)
        dst[i - i0] = kernel_value(spec, ap + (size_t) i * d, bj, d, an[i], bn, work);
}

/* col[i] = k(a_i, b_j) for i in [i0, a->n): the program run on segments.
 * Stack level 0 is the output itself; levels 1.. are in stack, each of
 * a->n doubles. */
static void program_segment(const kernel_eval *k, const kernel_points *a,
                            const kernel_points *b, int j, int i0, double *col,
                            double *stack, double *work)
{
    int i1 = a->n, len = i1 - i0;
    if (k->nops == 1) {
        base_segment(k->bases, a, b, j, i0, i1, col + i0, work);
        return;
    }
    int top = 0; /* number of values on the stack */
#define LEVEL(t) ((t) == 0 ? col + i0 : stack + (size_t) ((t) - 1) * a->n)
    for (int o = 0; o < k->nops; o++) {
        double arg = k->args[o];
        double *s = top > 0 ? LEVEL(top - 1) : NULL;
        switch (k->ops[o]) {
        case OP_BASE:
            base_segment(k->bases + (int) arg, a, b, j, i0, i1, LEVEL(top), work);
            top++;
            break;
        case OP_ADD: {
            double *u = LEVEL(top - 2);
            for (int i = 0; i < len; i++) u[i] += s[i];
            top--;
            break;
        }
        case OP_MUL: {
            double *u = LEVEL(top - 2);
            for (int i = 0; i < len; i++) u[i] *= s[i];
            top--;
            break;
        }
        case OP_SCALE:
            for (int i = 0; i < len; i++) s[i] *= arg;
            break;
        case OP_POWER:
            for (int i = 0; i < len; i++) s[i] = R_pow_di(s[i], (int) arg);
            break;
        case OP_EXP:
            for (int i = 0; i < len; i++) s[i] = exp(s[i]);
            break;
        case OP_CONFORMAL: {
            const double *wa = a->weights[(int) arg] + i0;
            double wb = b->weights[(int) arg][j];
            for (int i = 0; i < len; i++) s[i] *= wa[i] * wb;
            break;
        }
        default:
            break; /* unreachable: ops are checked in kernel_eval_from_R */
        }
    }
#undef LEVEL
}

/* Scratch per thread of the base kernels' value functions: besseldot's
 * floor(order) + 1 doubles, the string kernels' string_work_length(). */
size_t kernel_work_length(const kernel_eval *k)
{
    size_t len = (size_t) floor(k->bessel_order) + 1;
    if (k->any_string) {
        size_t s = string_work_length(k);
        if (s > len) len = s;
    }
    /* sparse rows: the column's row scattered, in the first d of
     * SPARSE_COLUMNS x d doubles, before the rest (sparse_segment()) */
    if (k->sparse) len += SPARSE_COLUMNS * (size_t) k->sparse_d;
    return len;
}

/* The value functions' scratch for threads threads, zero (sparse rows
 * scatter into it and leave it zero). */
double *kernel_work(const kernel_eval *k, int threads)
{
    size_t len = kernel_work_length(k) * (size_t) threads;
    double *work = (double *) R_alloc(len, sizeof(double));
    memset(work, 0, len * sizeof(double));
    return work;
}

/* out[i] = k(p_i, p_i) for the n points of p: one kernel value per point
 * (not a tile per block of points), on one thread, with an interrupt check
 * every few thousand points. Errors if a value is not finite. */
void kernel_diagonal(const kernel_eval *k, const kernel_points *p, double *out)
{
    double *work = kernel_work(k, 1);
    double *stack = (double *) R_alloc((size_t) (k->depth > 1 ? k->depth - 1 : 0) + 1,
                                       sizeof(double));
    const double **wbuf = (const double **) R_alloc((size_t) k->nweights + 1,
                                                    sizeof(double *));
    for (int i = 0; i < p->n; i++) {
        kernel_points v = kernel_points_view(k, p, i, 1, wbuf);
        program_segment(k, &v, &v, 0, 0, out + i, stack, work);
        if (simd_not_finite(out[i])) kernel_nonfinite_error(k, "");
        if (i % 4096 == 4095) R_CheckUserInterrupt();
    }
}

/* Column c of out (rows a->n) for generic_block(): the program run on its
 * segment. Returns 1 if a value is not finite. No R API: called on the
 * threads. */
static int generic_column(const kernel_eval *k, const kernel_points *a,
                          const kernel_points *b, int c, int lower_only, double *out,
                          double *stack, double *work)
{
    int rows = a->n, bad = 0;
    double *col = out + (size_t) c * rows;
    int i0 = lower_only ? c : 0;
    if (i0 >= rows) return 0;
    program_segment(k, a, b, c, i0, col, stack, work);
    for (int i = i0; i < rows; i++) bad |= simd_not_finite(col[i]);
    return bad;
}

/* kernel_block() (kernel_plan.c) by the generic interpreter: blocks of
 * columns of about block_work multiply-adds (at least min_columns per
 * thread), the columns of a block on the threads, an interrupt check
 * between blocks. */
void generic_block(const kernel_eval *k, const kernel_points *a, const kernel_points *b,
                   int lower_only, double *out, int threads, const char *what,
                   double block_work, int min_columns)
{
    int rows = a->n, cols = b->n;
    /* bessel_j_ex may warn through R, so besseldot is computed on one thread */
    if (k->any_bessel) threads = 1;
    size_t work_len = kernel_work_length(k);
    double *work = kernel_work(k, threads);
    size_t stack_len = (size_t) (k->depth > 1 ? k->depth - 1 : 0) * (size_t) rows;
    double *stack = (double *) R_alloc(stack_len * (size_t) threads + 1, sizeof(double));
    double cost = kernel_program_cost(k, a->d);
    for (int j0 = 0, j1; j0 < cols; j0 = j1) {
        j1 = column_block_end(j0, cols, rows, lower_only, 0, cost, cost, block_work,
                              min_columns * threads);
        int nonfinite = 0;
        /* string kernels: the dense part of the block's tile, one product */
        if (k->any_string) string_tiles(k, a, b, lower_only ? j0 : 0, j0, j1, threads);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (threads > 1) \
    reduction(|:nonfinite)
#endif
        for (int j = j0; j < j1; j++) {
#ifdef _OPENMP
            int t = omp_get_thread_num();
#else
            int t = 0;
#endif
            nonfinite |= generic_column(k, a, b, j, lower_only, out,
                                        stack + stack_len * (size_t) t,
                                        work + work_len * (size_t) t);
        }
        /* outside the parallel region: R API calls are safe here */
        if (nonfinite) kernel_nonfinite_error(k, what);
        if (lower_only == KERNEL_SYMMETRIC) mirror_lower_columns(out, rows, j0, j1, threads);
        R_CheckUserInterrupt();
        progress_fill_columns(j1, cols, lower_only);
    }
    if (k->any_string) string_tiles_release(k);
}
