/* The tridiagonal eigenproblem of the exact solver (eigen.c reduces A to
 * the tridiagonal T and maps the vectors back): the wanted eigenpairs of
 * T, by MRRR (tridiagonal_mrrr(): dstemr's steps, its bisections and its
 * vectors on the threads) or by bisection and inverse iteration
 * (tridiagonal_bisection(): dstebz and dstein, what dsyevr runs for a
 * subset, and MRRR's fallback). Both write the vectors once, into the
 * caller's vector_store, in ascending order of eigenvalue. */
#include "fastkpca.h"
#include <float.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Of the found eigenvalues w (in dstebz's block order, with their blocks),
 * keep the il-th to iu-th smallest (1-based, clamped to what there is), in
 * the same order; returns how many are kept. */
static int keep_index_range(double *w, int *iblock, int found, int il, int iu)
{
    if (il < 1) il = 1;
    if (iu > found) iu = found;
    if (found == 0 || il > iu) return 0;
    double *key = (double *) R_alloc((size_t) found, sizeof(double));
    int *idx = (int *) R_alloc((size_t) found, sizeof(int));
    char *keep = (char *) R_alloc((size_t) found, sizeof(char));
    for (int k = 0; k < found; k++) { key[k] = w[k]; idx[k] = k; keep[k] = 0; }
    rsort_with_index(key, idx, found);
    for (int r = il - 1; r < iu; r++) keep[idx[r]] = 1;
    int kept = 0;
    for (int k = 0; k < found; k++)
        if (keep[k]) { w[kept] = w[k]; iblock[kept] = iblock[k]; kept++; }
    return kept;
}

/* Z's columns (n x k) in place, so that column j becomes the former
 * column idx[j]: cycle by cycle, through one column of scratch (the
 * vectors are not held twice). idx is left as it was. */
static void permute_columns(double *Z, int n, int k, const int *idx)
{
    char *done = (char *) R_alloc((size_t) k + 1, sizeof(char));
    double *tmp = (double *) R_alloc((size_t) n, sizeof(double));
    memset(done, 0, (size_t) k + 1);
    for (int j = 0; j < k; j++) {
        if (done[j] || idx[j] == j) continue;
        memcpy(tmp, Z + (size_t) j * n, (size_t) n * sizeof(double));
        int at = j;
        while (idx[at] != j) {
            memcpy(Z + (size_t) at * n, Z + (size_t) idx[at] * n, (size_t) n * sizeof(double));
            done[at] = 1;
            at = idx[at];
        }
        memcpy(Z + (size_t) at * n, tmp, (size_t) n * sizeof(double));
        done[at] = 1;
    }
}

/* Bisection and inverse iteration on the tridiagonal (dstebz, dstein), as
 * dsyevr does for a subset: the eigenvalues in (lower, upper] (range 'V') or
 * the il-th to iu-th smallest (range 'I'), with their vectors (n x found,
 * in the store's space, *Z), in ascending order. diag and offdiag are kept. */
int tridiagonal_bisection(const double *diag, const double *offdiag, int n, char range,
                          double lower, double upper, int il, int iu, double *w,
                          double **Z, vector_store store)
{
    const char order = 'B';
    int found = 0, nsplit = 0, info = 0;
    double abstol = 0.0;
    int *iblock = (int *) R_alloc((size_t) n, sizeof(int));
    int *isplit = (int *) R_alloc((size_t) n, sizeof(int));
    int *iwork = (int *) R_alloc(3 * (size_t) n, sizeof(int));
    double *work = (double *) R_alloc(5 * (size_t) n, sizeof(double));
    F77_CALL(dstebz)(&range, &order, &n, &lower, &upper, &il, &iu, &abstol, diag,
                     offdiag, &found, &nsplit, w, iblock, isplit, work, iwork,
                     &info FCONE FCONE);
    if (range == 'I' && (info == 2 || info == 3)) {
        /* Fewer than iu - il + 1 found: the Sturm count was not monotonic,
         * as on a kernel matrix that is the identity up to rounding.
         * LAPACK's documented cure: all eigenvalues (range 'A'), then the
         * il-th to iu-th smallest of them. */
        const char all = 'A';
        F77_CALL(dstebz)(&all, &order, &n, &lower, &upper, &il, &iu, &abstol, diag,
                         offdiag, &found, &nsplit, w, iblock, isplit, work, iwork,
                         &info FCONE FCONE);
        found = keep_index_range(w, iblock, found, il - (n - found), iu - (n - found));
    }
    /* info 1 (range 'A' or 'V'): some eigenvalues did not converge; dsyevr
     * goes on with them (dstein's info replaces this one), and so does this */
    if (info < 0 || info > 3) check_lapack_info(info, "dstebz");
    *Z = NULL;
    if (found == 0) return 0;
    double *z = store.take(store.ctx, n, found);
    int *ifail = (int *) R_alloc((size_t) found, sizeof(int));
    F77_CALL(dstein)(&n, diag, offdiag, &found, w, iblock, isplit, z, &n, work,
                     iwork, ifail, &info);
    check_lapack_info(info, "dstein");
    /* dstebz orders by split block: sort the pairs by increasing eigenvalue */
    int *idx = (int *) R_alloc((size_t) found, sizeof(int));
    double *key = (double *) R_alloc((size_t) found, sizeof(double));
    for (int k = 0; k < found; k++) { idx[k] = k; key[k] = w[k]; }
    rsort_with_index(key, idx, found);
    permute_columns(z, n, found, idx);
    memcpy(w, key, (size_t) found * sizeof(double));
    *Z = z;
    return found;
}

/* dstemr (LAPACK >= 3.1) is what dsyevr calls for the whole spectrum
 * (tridiagonal_mrrr() runs its steps itself, and calls it only to count
 * the eigenvalues of an interval); R's headers do not declare it, but R's
 * own LAPACK and every external one R links to export it. TRYRAC is a
 * Fortran LOGICAL (an int). */
extern void F77_NAME(dstemr)(const char *jobz, const char *range, const int *n,
                             double *d, double *e, const double *vl, const double *vu,
                             const int *il, const int *iu, int *m, double *w,
                             double *z, const int *ldz, const int *nzc, int *isuppz,
                             int *tryrac, double *work, const int *lwork, int *iwork,
                             const int *liwork, int *info FCLEN FCLEN);

/* MRRR's steps under dstemr (LAPACK >= 3.2): dlarrr (does T define its
 * eigenvalues to high relative accuracy), dlarre (the eigenvalues wanted
 * and the root representation L D L' = T - sigma I of each block of T),
 * dlarrv (the vectors of a range of them from that representation),
 * dlarrj (the eigenvalues refined to relative accuracy). Every LAPACK R
 * links to exports them. R's headers declare dlarre and dlarrv with the
 * arguments of LAPACK 3.0 (changed in 3.1), so these two are called
 * through pointers of their current types (dlarre_now, dlarrv_now:
 * volatile, so that the compiler does not see through to R's declaration
 * and warn); dlarrr and dlarrj they do not declare. */
typedef void dlarre_routine(const char *range, const int *n, double *vl, double *vu,
                            const int *il, const int *iu, double *d, double *e,
                            double *e2, const double *rtol1, const double *rtol2,
                            const double *spltol, int *nsplit, int *isplit, int *m,
                            double *w, double *werr, double *wgap, int *iblock,
                            int *indexw, double *gers, double *pivmin, double *work,
                            int *iwork, int *info FCLEN);
typedef void dlarrv_routine(const int *n, const double *vl, const double *vu, double *d,
                            double *l, const double *pivmin, const int *isplit,
                            const int *m, const int *dol, const int *dou,
                            const double *minrgp, const double *rtol1,
                            const double *rtol2, double *w, double *werr, double *wgap,
                            const int *iblock, const int *indexw, const double *gers,
                            double *z, const int *ldz, int *isuppz, double *work,
                            int *iwork, int *info);
static dlarre_routine *volatile dlarre_now =
    (dlarre_routine *) (void (*)(void)) F77_NAME(dlarre);
static dlarrv_routine *volatile dlarrv_now =
    (dlarrv_routine *) (void (*)(void)) F77_NAME(dlarrv);
extern void F77_NAME(dlarrr)(const int *n, const double *d, const double *e, int *info);
extern void F77_NAME(dlarrj)(const int *n, const double *d, const double *e2,
                             const int *ifirst, const int *ilast, const double *rtol,
                             const int *offset, double *w, double *werr, double *work,
                             int *iwork, const double *pivmin, const double *spdiam,
                             int *info);

/* dlarrv's cluster criterion (dstemr's MINRGP): eigenvalues whose relative
 * gap, in the root representation, is below it share a representation */
#define MRRR_MINRGP 1e-3
/* The groups of vectors are cut only where that gap is twice as wide
 * (mrrr_may_split()) */
#define MRRR_SPLIT_GAP (2 * MRRR_MINRGP)
/* The vector entries a thread computes between two interrupt checks:
 * about 0.3 s (the 1.9e6 of n = 3000, k = 621 took 0.13 s on one thread) */
#define MRRR_CHECK_ENTRIES 4e6

/* MRRR's root for the il-th to iu-th smallest eigenvalues of T: what
 * dstemr computes before its vectors (T scaled into range, dlarrr, dlarre),
 * kept for the groups of vectors, which all start from it. m, w, werr,
 * wgap, iblock and indexw: the wanted eigenvalues only. */
typedef struct {
    int n, m, tryrac;
    double wl, wu, pivmin, scale, tnrm, rtol1, rtol2;
    double *d, *l;      /* the root representations, a block's shift at its end */
    double *d0, *e2;    /* T's (scaled) diagonal and squared off-diagonal */
    double *w, *werr, *wgap, *gers;  /* w: shifted, in dlarre's block order */
    int *isplit, *iblock, *indexw;
} mrrr_root;

/* MRRR's LAPACK calls on the threads: count units (the pieces of its
 * bisections, its groups of vectors), unit u done by run(ctx, u, the
 * thread's scratch: `doubles` doubles, `ints` ints) and costing cost(ctx, u)
 * (in any unit), in batches of about budget a thread, dealt dynamically,
 * with an interrupt check between batches (and the progress of step, the
 * share of the cost done, where step >= 0). The units write disjoint
 * entries, and the LAPACK routines they call (dlarrd, dlarrb, dlarrv,
 * dlarrj and what those call: dlaebz, dlaneg, dlar1v, dlarrf, dlaset,
 * dlamch, dcopy, dscal) keep no state between calls: no SAVE, DATA or
 * COMMON in Reference LAPACK's sources (read at 3.12, where dlamch takes
 * its constants from Fortran's intrinsics), their scalars are the call's.
 * No R API in the region: the infos come back in an array. Returns 0, or
 * the first nonzero info of the first batch that had one. */
typedef struct {
    const void *ctx;
    double (*cost)(const void *ctx, int u);
    int (*run)(const void *ctx, int u, double *scratch, int *iscratch);
    size_t doubles, ints;
    double budget;
    int step;
} lapack_units;

static void lapack_units_batch(const lapack_units *w, int u0, int u1, double *scratch,
                               int *iscratch, int *info, int nt)
{
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
    for (int u = u0; u < u1; u++) {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        info[u] = w->run(w->ctx, u, scratch + (size_t) t * w->doubles,
                         iscratch + (size_t) t * w->ints);
    }
    (void) nt;
}

static int lapack_units_run(const lapack_units *w, int count, int threads)
{
    int most = threads < count ? threads : count;
    if (most < 1) most = 1;
    double *scratch = (double *) R_alloc((size_t) most * w->doubles, sizeof(double));
    int *iscratch = (int *) R_alloc((size_t) most * w->ints, sizeof(int));
    int *info = (int *) R_alloc((size_t) count + 1, sizeof(int));
    double total = 0.0, done = 0.0;
    for (int u = 0; u < count; u++) total += w->cost(w->ctx, u);
    for (int u0 = 0, u1; u0 < count; u0 = u1) {
        int nt = threads_unless_busy(most);
        double batch = 0.0;
        for (u1 = u0; u1 < count && (u1 == u0 || batch < nt * w->budget); u1++)
            batch += w->cost(w->ctx, u1);
        lapack_units_batch(w, u0, u1, scratch, iscratch, info, nt);
        R_CheckUserInterrupt();
        done += batch;
        if (w->step >= 0) progress_at((progress_step) w->step, done / total);
        for (int u = u0; u < u1; u++)
            if (info[u] != 0) return info[u];
    }
    return 0;
}

/* dlarre's steps on its bisection path, which tridiagonal_mrrr() runs
 * itself (LAPACK >= 3.1): dlarra (where T splits), dlarrd (the wanted
 * eigenvalues of T by bisection, to a relative sqrt(eps)), dlarrc (Sturm
 * counts at two points), dlarrb (the root representation's eigenvalues
 * refined by bisection), dlarnv (the root's random perturbation). R's
 * headers declare dlarrb with LAPACK 3.0's arguments (so dlarrb_now, as
 * above) and dlarra, dlarrc and dlarrd not at all. */
typedef void dlarrb_routine(const int *n, const double *d, const double *lld,
                            const int *ifirst, const int *ilast, const double *rtol1,
                            const double *rtol2, const int *offset, double *w,
                            double *wgap, double *werr, double *work, int *iwork,
                            const double *pivmin, const double *spdiam, const int *twist,
                            int *info);
static dlarrb_routine *volatile dlarrb_now =
    (dlarrb_routine *) (void (*)(void)) F77_NAME(dlarrb);
extern void F77_NAME(dlarra)(const int *n, const double *d, double *e, double *e2,
                             const double *spltol, const double *tnrm, int *nsplit,
                             int *isplit, int *info);
extern void F77_NAME(dlarrd)(const char *range, const char *order, const int *n,
                             const double *vl, const double *vu, const int *il,
                             const int *iu, const double *gers, const double *reltol,
                             const double *d, const double *e, const double *e2,
                             const double *pivmin, const int *nsplit, const int *isplit,
                             int *m, double *w, double *werr, double *wl, double *wu,
                             int *iblock, int *indexw, double *work, int *iwork,
                             int *info FCLEN FCLEN);
extern void F77_NAME(dlarrc)(const char *jobt, const int *n, const double *vl,
                             const double *vu, const double *d, const double *e,
                             const double *pivmin, int *eigcnt, int *lcnt, int *rcnt,
                             int *info FCLEN);

/* The bisection steps a thread takes between two interrupt checks, in
 * eigenvalues times rows: about 0.3 s (both bisections of n = 3000,
 * k = 621, 1.9e6, took 0.34 s on one thread) */
#define MRRR_BISECTION_CHECK 1.5e6

/* A piece of the wanted eigenvalues, first..last (1-based), bisected on
 * one thread: indices of T's spectrum (block < 0, dlarrd, the results at
 * at, in T's order) or of a block's (dlarrb, in place) */
typedef struct {
    int first, last, block, at;
} bisection_piece;

/* A block of T with wanted eigenvalues: its rows begin..begin + size - 1,
 * its wanted ones wbegin..wend in the root's arrays, the first's index in
 * the block (indl), its root's shift and its Gershgorin width */
typedef struct {
    int begin, size, wbegin, wend, indl;
    double sigma, spdiam;
} root_block;

/* What the pieces read and write: the root (r), T's off-diagonal after
 * the splits (e), the blocks' L D L' products d l^2 (lld), the rough
 * values of T's pieces (wl, wu: each piece's interval) */
typedef struct {
    mrrr_root *r;
    const double *e, *lld;
    const root_block *blocks;
    const bisection_piece *pieces;
    int nsplit;
    double *w, *werr, *wl, *wu;
    int *iblock, *indexw;
} bisection_work;

/* Piece u of b->pieces on any thread (lapack_units: no R API; the
 * scratch, 6 n doubles and 5 n ints, is the thread's). dlarrb writes its
 * own eigenvalues and the gaps between them only, and reads the gap
 * before its first, which no piece writes. Returns dlarrd's or dlarrb's
 * info, or 1 where dlarrd found another count than asked (ties it could
 * not resolve). */
static int bisection_piece_run(const void *ctx, int u, double *s, int *is)
{
    const bisection_work *b = (const bisection_work *) ctx;
    const bisection_piece *p = b->pieces + u;
    int at = u;
    mrrr_root *r = b->r;
    int n = r->n, info = 0;
    if (p->block < 0) {
        double vl = 0.0, vu = 0.0;
        int m = 0;
        F77_CALL(dlarrd)("I", "B", &n, &vl, &vu, &p->first, &p->last, r->gers, &r->rtol1,
                         r->d, b->e, r->e2, &r->pivmin, &b->nsplit, r->isplit, &m, s,
                         s + n, b->wl + at, b->wu + at, is, is + n, s + 2 * n,
                         is + 2 * n, &info FCONE FCONE);
        if (info != 0 || m != p->last - p->first + 1) return info != 0 ? info : 1;
        memcpy(b->w + p->at, s, (size_t) m * sizeof(double));
        memcpy(b->werr + p->at, s + n, (size_t) m * sizeof(double));
        memcpy(b->iblock + p->at, is, (size_t) m * sizeof(int));
        memcpy(b->indexw + p->at, is + n, (size_t) m * sizeof(int));
        return 0;
    }
    const root_block *k = b->blocks + p->block;
    int offset = k->indl - 1;
    dlarrb_now(&k->size, r->d + k->begin, b->lld + k->begin, &p->first, &p->last,
               &r->rtol1, &r->rtol2, &offset, r->w + k->wbegin, r->wgap + k->wbegin,
               r->werr + k->wbegin, s, is, &r->pivmin, &k->spdiam, &k->size, &info);
    return info;
}

/* Piece u's bisection steps, eigenvalues times rows */
static double bisection_piece_cost(const void *ctx, int u)
{
    const bisection_work *b = (const bisection_work *) ctx;
    const bisection_piece *p = b->pieces + u;
    return (double) (p->last - p->first + 1)
        * (p->block < 0 ? b->r->n : b->blocks[p->block].size);
}

/* Every piece on the threads, in batches of about MRRR_BISECTION_CHECK
 * steps a thread. Returns 0, or the first nonzero info. */
static int bisection_pieces_run(bisection_work *b, const bisection_piece *pieces, int np,
                                int threads)
{
    size_t n = (size_t) b->r->n;
    b->pieces = pieces;
    lapack_units w = {b, bisection_piece_cost, bisection_piece_run, 6 * n, 5 * n,
                      MRRR_BISECTION_CHECK, -1};
    return lapack_units_run(&w, np, threads);
}

/* The size of the pieces of k eigenvalues: at least the tuning's
 * mrrr_bisection_min and k / 64, at most k; it does not depend on the
 * thread count, so neither do the values */
static int bisection_piece_size(int k)
{
    int size = (k + 63) / 64;
    if (size < tuning.mrrr_bisection_min) size = tuning.mrrr_bisection_min;
    return size < k ? size : k > 0 ? k : 1;
}

/* The il-th to iu-th smallest eigenvalues of T (r->d, e after the splits),
 * roughly (dlarrd, relative sqrt(eps)), in dlarre's order (by block, then
 * ascending, with their blocks and indices in them), into r->w, werr,
 * iblock, indexw; the interval (r->wl, r->wu] that holds them. dlarre
 * makes one dlarrd call; here the index range is cut into pieces, each
 * its own call (the interval of its indices found by bisection first),
 * on the threads. Returns 0 or an info. */
static int root_rough_values(mrrr_root *r, const double *e, int nsplit, int il, int iu,
                             int threads)
{
    int k = iu - il + 1, size = bisection_piece_size(k), np = (k + size - 1) / size;
    bisection_piece *pieces = (bisection_piece *) R_alloc((size_t) np, sizeof(bisection_piece));
    for (int p = 0; p < np; p++) {
        pieces[p].first = il + p * size;
        pieces[p].last = p == np - 1 ? iu : il + (p + 1) * size - 1;
        pieces[p].block = -1;
        pieces[p].at = p * size;
    }
    bisection_work b = {r, e, NULL, NULL, NULL, nsplit, NULL, NULL, NULL, NULL, NULL, NULL};
    b.w = (double *) R_alloc((size_t) k, sizeof(double));
    b.werr = (double *) R_alloc((size_t) k, sizeof(double));
    b.wl = (double *) R_alloc((size_t) np, sizeof(double));
    b.wu = (double *) R_alloc((size_t) np, sizeof(double));
    b.iblock = (int *) R_alloc((size_t) k, sizeof(int));
    b.indexw = (int *) R_alloc((size_t) k, sizeof(int));
    int info = bisection_pieces_run(&b, pieces, np, threads);
    if (info != 0) return info;
    /* the pieces' values, ascending within each block, grouped by block
     * (T's order): a counting sort by block keeps each block's in order */
    int *start = (int *) R_alloc((size_t) nsplit + 1, sizeof(int));
    memset(start, 0, ((size_t) nsplit + 1) * sizeof(int));
    for (int j = 0; j < k; j++) start[b.iblock[j]]++;
    for (int blk = 1, sum = 0; blk <= nsplit; blk++) {
        int c = start[blk];
        start[blk] = sum;
        sum += c;
    }
    for (int j = 0; j < k; j++) {
        int to = start[b.iblock[j]]++;
        r->w[to] = b.w[j];
        r->werr[to] = b.werr[j];
        r->iblock[to] = b.iblock[j];
        r->indexw[to] = b.indexw[j];
    }
    r->wl = b.wl[0];
    r->wu = b.wu[np - 1];
    r->m = k;
    return 0;
}

/* dlarre's limits: tries at a root shift, the growth of its pivots, the
 * relative perturbation of the root (PERT) */
#define ROOT_TRIES 6
#define ROOT_MAX_GROWTH 64.0
#define ROOT_PERTURB 8.0

/* Block k's first root shift, as dlarre chooses it on its bisection
 * path: at the end of its wanted eigenvalues with fewer beyond it (Sturm
 * counts at a quarter and three quarters of their interval), the step
 * tau by which it moves away if the pivots grow, and the side (sgndef).
 * Sets the rough values' gaps first (tau reads them). */
static double root_shift(mrrr_root *r, const double *e, const root_block *k, double gl,
                         double gu, double eps, double *sgndef, double *tau)
{
    int wb = k->wbegin, we = k->wend, indu = r->indexw[we];
    double *w = r->w, *werr = r->werr, *wgap = r->wgap, vl = r->wl, vu = r->wu;
    for (int i = wb; i < we; i++)
        wgap[i] = fmax(0.0, w[i + 1] - werr[i + 1] - (w[i] + werr[i]));
    wgap[we] = fmax(0.0, vu - (w[we] + werr[we]));
    if (we == wb) {
        *sgndef = 1.0;
        *tau = werr[wb];
        return gl;
    }
    double isleft = fmax(gl, w[wb] - werr[wb] - 100 * eps * fabs(w[wb] - werr[wb])),
        isrght = fmin(gu, w[we] + werr[we] + 100 * eps * fabs(w[we] + werr[we])),
        width = fmin(isrght, vu) - fmax(isleft, vl),
        s1 = fmax(isleft, vl) + 0.25 * width, s2 = fmin(isrght, vu) - 0.25 * width;
    int cnt = 0, cnt1 = 0, cnt2 = 0, info = 0;
    F77_CALL(dlarrc)("T", &k->size, &s1, &s2, r->d + k->begin, e + k->begin, &r->pivmin,
                     &cnt, &cnt1, &cnt2, &info FCONE);
    *sgndef = cnt1 - k->indl >= indu - cnt2 ? 1.0 : -1.0;
    double avgap = fabs((w[we] + werr[we] - w[wb] - werr[wb]) / (double) (we - wb));
    *tau = *sgndef > 0 ? fmax(0.5 * fmax(wgap[wb], avgap), werr[wb])
        : fmax(0.5 * fmax(wgap[we - 1], avgap), werr[we]);
    return *sgndef > 0 ? fmax(isleft, vl) : fmin(isrght, vu);
}

/* L D L' = T_k - sigma I (d: T_k's diagonal, e its off-diagonal) into ld
 * and lv, inv the pivots' reciprocals; returns the largest |pivot|. */
static double root_factor(const double *d, const double *e, int in, double sigma,
                          double *ld, double *lv, double *inv)
{
    ld[0] = d[0] - sigma;
    double dmax = fabs(ld[0]);
    for (int i = 0; i < in - 1; i++) {
        inv[i] = 1.0 / ld[i];
        lv[i] = e[i] * inv[i];
        ld[i + 1] = (d[i + 1] - sigma) - lv[i] * e[i];
        dmax = fmax(dmax, fabs(ld[i + 1]));
    }
    return dmax;
}

/* Block k's root representation L D L' = T_k - sigma I, as dlarre makes
 * it on its bisection path: from root_shift()'s shift, moved away while
 * the pivots grow beyond ROOT_MAX_GROWTH times the block's width (the
 * try before last at the end of the block's Gershgorin interval); then D
 * and L in place of T_k's diagonal and off-diagonal (e), perturbed by a
 * few ulps at random (dlarnv, seed 1: the same every call), the shift at
 * e's block end, and the rough values shifted. work: 3 size doubles.
 * Returns 0, or 2 where no shift gave a representation (dlarre's info). */
static int root_block_make(mrrr_root *r, double *e, root_block *k, double gl, double gu,
                           double eps, double *work)
{
    int in = k->size, n = r->n;
    double *d = r->d + k->begin, *ld = work, *lv = work + in, sgndef = 1.0, tau = 0.0;
    double sigma = root_shift(r, e, k, gl, gu, eps, &sgndef, &tau);
    int made = 0;
    for (int attempt = 1; attempt <= ROOT_TRIES && !made; attempt++) {
        double dmax = root_factor(d, e + k->begin, in, sigma, ld, lv, work + 2 * in);
        made = !(dmax > ROOT_MAX_GROWTH * k->spdiam);
        if (made) break;
        if (attempt == ROOT_TRIES - 1)
            sigma = sgndef > 0 ? gl - 2 * k->spdiam * eps * n - 4 * r->pivmin
                : gu + 2 * k->spdiam * eps * n + 4 * r->pivmin;
        else {
            sigma -= sgndef * tau;
            tau *= 2;
        }
    }
    if (!made) return 2;
    k->sigma = sigma;
    e[k->begin + in - 1] = sigma;
    memcpy(d, ld, (size_t) in * sizeof(double));
    memcpy(e + k->begin, lv, (size_t) (in - 1) * sizeof(double));
    if (k->wend > k->wbegin) {
        int iseed[4] = {1, 1, 1, 1}, two = 2, count = 2 * in - 1;
        F77_CALL(dlarnv)(&two, iseed, &count, work);
        for (int i = 0; i < in - 1; i++) {
            d[i] *= 1.0 + eps * ROOT_PERTURB * work[i];
            e[k->begin + i] *= 1.0 + eps * ROOT_PERTURB * work[in + i];
        }
        d[in - 1] *= 1.0 + eps * 4.0 * work[in - 1];
    }
    for (int j = k->wbegin; j <= k->wend; j++) {
        r->w[j] -= sigma;
        r->werr[j] += fabs(r->w[j]) * eps;
    }
    return 0;
}

/* The blocks' wanted eigenvalues refined in the root representations
 * (dlarrb, to dlarrv's tolerances rtol1 and rtol2), each block's cut into
 * pieces on the threads, then the gaps at the pieces' ends (which dlarrb
 * leaves to the piece after) and at each block's end (to r->wu, as
 * dlarre). lld: the blocks' d l^2. Returns 0 or dlarrb's info. */
static int root_refine_values(mrrr_root *r, const root_block *blocks, int nb,
                              const double *lld, int threads)
{
    int size = bisection_piece_size(r->m), np = 0;
    for (int b = 0; b < nb; b++)
        np += (blocks[b].wend - blocks[b].wbegin + size) / size;
    bisection_piece *pieces = (bisection_piece *) R_alloc((size_t) np, sizeof(bisection_piece));
    np = 0;
    for (int b = 0; b < nb; b++) {
        int indu = blocks[b].indl + blocks[b].wend - blocks[b].wbegin;
        for (int first = blocks[b].indl; first <= indu; first += size, np++) {
            pieces[np].first = first;
            pieces[np].last = first + size - 1 < indu ? first + size - 1 : indu;
            pieces[np].block = b;
            pieces[np].at = 0;
        }
    }
    bisection_work work = {r, NULL, lld, blocks, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    int info = bisection_pieces_run(&work, pieces, np, threads);
    if (info != 0) return info;
    double *w = r->w, *werr = r->werr;
    for (int p = 0; p < np; p++) {
        const root_block *k = blocks + pieces[p].block;
        int j = k->wbegin + pieces[p].last - k->indl;
        r->wgap[j] = j < k->wend ? fmax(0.0, w[j + 1] - werr[j + 1] - w[j] - werr[j])
            : fmax(0.0, (r->wu - k->sigma) - (w[j] + werr[j]));
    }
    return 0;
}

/* The root of the il-th to iu-th smallest eigenvalues of T (r->d and
 * r->l, scaled; r->e2 its squares) as dlarre makes it on its bisection
 * path, with its two bisections on the threads: Gershgorin's intervals,
 * the splits (dlarra, at thresh), the rough values (root_rough_values()),
 * each block's root (root_block_make()), the values refined in the roots
 * (root_refine_values()). Every piece's results depend on the piece
 * alone, and the pieces on k alone: the same bits on any thread count.
 * They differ from dlarre's own in the last bits: each piece of the rough
 * values finds its own interval, and dlarrb's test at its start reads the
 * first value's right gap for both sides. Returns 0, or nonzero where
 * MRRR failed (dlarre's infos). */
static int root_by_bisection(mrrr_root *r, int il, int iu, double thresh, double eps,
                             double safmin, int threads)
{
    int n = r->n, nsplit = 0, info = 0;
    double *d = r->d, *e = r->l, gl = d[0], gu = d[0], eold = 0.0, emax = 0.0;
    e[n - 1] = 0.0;
    for (int i = 0; i < n; i++) {
        double eabs = fabs(e[i]), t = eabs + eold;
        r->werr[i] = r->wgap[i] = 0.0;
        emax = fmax(emax, eabs);
        r->gers[2 * i] = d[i] - t;
        r->gers[2 * i + 1] = d[i] + t;
        gl = fmin(gl, r->gers[2 * i]);
        gu = fmax(gu, r->gers[2 * i + 1]);
        eold = eabs;
    }
    r->pivmin = safmin * fmax(1.0, emax * emax);
    double spdiam = gu - gl;
    F77_CALL(dlarra)(&n, d, e, r->e2, &thresh, &spdiam, &nsplit, r->isplit, &info);
    if (info != 0 || root_rough_values(r, e, nsplit, il, iu, threads) != 0) return -1;
    root_block *blocks = (root_block *) R_alloc((size_t) nsplit, sizeof(root_block));
    double *lld = (double *) R_alloc((size_t) n, sizeof(double));
    double *work = (double *) R_alloc(3 * (size_t) n, sizeof(double));
    int nb = 0;
    for (int jblk = 1, begin = 0, wbegin = 0; jblk <= nsplit; jblk++) {
        int end = r->isplit[jblk - 1] - 1, in = end - begin + 1, mb = 0;
        while (wbegin + mb < r->m && r->iblock[wbegin + mb] == jblk) mb++;
        e[end] = 0.0;
        if (mb > 0 && in == 1) {
            /* a block of one row: its value, exact, no shift */
            r->w[wbegin] = d[begin];
            r->werr[wbegin] = r->wgap[wbegin] = 0.0;
        } else if (mb > 0) {
            root_block *k = blocks + nb++;
            double bgl = d[begin], bgu = d[begin];
            for (int i = begin; i <= end; i++) {
                bgl = fmin(bgl, r->gers[2 * i]);
                bgu = fmax(bgu, r->gers[2 * i + 1]);
            }
            *k = (root_block) {begin, in, wbegin, wbegin + mb - 1, r->indexw[wbegin], 0.0,
                               bgu - bgl};
            if (root_block_make(r, e, k, bgl, bgu, eps, work) != 0) return -1;
            for (int i = begin; i < end; i++) lld[i] = d[i] * e[i] * e[i];
        }
        begin = end + 1;
        wbegin += mb;
    }
    return root_refine_values(r, blocks, nb, lld, threads) != 0 ? -1 : 0;
}

/* MRRR's root for the il-th to iu-th smallest eigenvalues of T, as
 * dstemr makes it: T scaled into range, dlarrr (relative accuracy), then
 * for k = iu - il + 1 <= n / 2 root_by_bisection() (dlarre's bisection
 * path, on the threads), else dlarre itself (which takes dqds for every
 * eigenvalue of a block with more than half of them wanted, O(n^2), on
 * one thread). Returns 0 (the root is made) or nonzero (MRRR failed). */
static int mrrr_root_make(const double *diag, const double *offdiag, int n, int il,
                          int iu, double *w, mrrr_root *r, int threads)
{
    const char range = 'I';
    double safmin = F77_CALL(dlamch)("S" FCONE), eps = F77_CALL(dlamch)("P" FCONE);
    double smlnum = safmin / eps, rmin = sqrt(smlnum),
        rmax = fmin(sqrt(1.0 / smlnum), 1.0 / sqrt(sqrt(safmin)));
    r->n = n;
    r->d = (double *) R_alloc((size_t) n, sizeof(double));
    r->l = (double *) R_alloc((size_t) n, sizeof(double));
    r->d0 = (double *) R_alloc((size_t) n, sizeof(double));
    r->e2 = (double *) R_alloc((size_t) n, sizeof(double));
    memcpy(r->d, diag, (size_t) n * sizeof(double));
    memcpy(r->l, offdiag, (size_t) (n - 1) * sizeof(double));
    r->l[n - 1] = 0.0;
    double tnrm = 0.0;
    for (int i = 0; i < n; i++) tnrm = fmax(tnrm, fmax(fabs(r->d[i]), fabs(r->l[i])));
    r->scale = tnrm > 0.0 && tnrm < rmin ? rmin / tnrm : tnrm > rmax ? rmax / tnrm : 1.0;
    for (int i = 0; i < n; i++) { r->d[i] *= r->scale; r->l[i] *= r->scale; }
    r->tnrm = tnrm * r->scale;
    int info = 0;
    F77_CALL(dlarrr)(&n, r->d, r->l, &info);
    r->tryrac = info == 0; /* as dsyevr with abstol = 0: relative accuracy if T allows */
    double thresh = r->tryrac ? eps : -eps;
    memcpy(r->d0, r->d, (size_t) n * sizeof(double));
    for (int i = 0; i < n; i++) r->e2[i] = r->l[i] * r->l[i];
    r->rtol1 = sqrt(eps);
    r->rtol2 = fmax(sqrt(eps) * 5e-3, 4 * eps);
    r->w = w;
    r->werr = (double *) R_alloc((size_t) n, sizeof(double));
    r->wgap = (double *) R_alloc((size_t) n, sizeof(double));
    r->gers = (double *) R_alloc(2 * (size_t) n, sizeof(double));
    r->isplit = (int *) R_alloc((size_t) n, sizeof(int));
    r->iblock = (int *) R_alloc((size_t) n, sizeof(int));
    r->indexw = (int *) R_alloc((size_t) n, sizeof(int));
    r->wl = r->wu = 0.0;
    if (2 * (iu - il + 1) <= n)
        return root_by_bisection(r, il, iu, thresh, eps, safmin, threads);
    double *work = (double *) R_alloc(6 * (size_t) n, sizeof(double));
    int *iwork = (int *) R_alloc(5 * (size_t) n, sizeof(int));
    int nsplit = 0;
    dlarre_now(&range, &n, &r->wl, &r->wu, &il, &iu, r->d, r->l, r->e2, &r->rtol1,
               &r->rtol2, &thresh, &nsplit, r->isplit, &r->m, w, r->werr, r->wgap,
               r->iblock, r->indexw, r->gers, &r->pivmin, work, iwork, &info FCONE);
    return info;
}

/* Whether the vectors of the wanted eigenvalues j and j + 1 (dlarre's
 * order) may go to different groups: they are in different blocks of T
 * (disjoint supports), or dlarrv separates them at the root, by a margin.
 * dlarrv's own test, on these same numbers before it refines any, is
 * wgap[j] >= MRRR_MINRGP |w[j]| (w: the eigenvalue of the root
 * representation, shifted); this one asks for twice that of the larger of
 * the two. So no cluster of dlarrv's is ever cut: each group holds whole
 * root clusters, whose vectors dlarrv computes from the root alone (child
 * representations, Rayleigh quotient iteration) as in one call; the gaps
 * it refines only grow. The vectors either side of a cut come from the
 * same root, as in one call, so they are as orthogonal as any two of one
 * call (n eps / relative gap). Twice, not ten times (a relative gap of
 * 1e-2): the root of a whole spectrum (dlarre's dqds) sits at one
 * end of it, where the wanted eigenvalues at the other end have relative
 * gaps of gap / ||T||, and ten times left one group of 313 of 620 vectors
 * at n = 3000. */
static int mrrr_may_split(const mrrr_root *r, int j)
{
    if (r->iblock[j] != r->iblock[j + 1]) return 1;
    return r->wgap[j] >= MRRR_SPLIT_GAP * fmax(fabs(r->w[j]), fabs(r->w[j + 1]));
}

/* The groups, starts[g] to starts[g + 1] - 1: each of at least target
 * vectors, cut at the first place after that where it may be. Neither
 * depends on the thread count. Returns their count. */
static int mrrr_groups(const mrrr_root *r, int target, int *starts)
{
    int g = 0, size = 0;
    starts[0] = 0;
    for (int j = 0; j + 1 < r->m; j++)
        if (++size >= target && mrrr_may_split(r, j)) {
            starts[++g] = j + 1;
            size = 0;
        }
    starts[++g] = r->m;
    return g;
}

/* dlarrv's lower end of a group's interval, from which it measures the
 * left gap of a cluster at the group's start: dstemr's for a block's
 * first eigenvalue, else the true gap to the eigenvalue before. */
static double mrrr_group_lower(const mrrr_root *r, int from)
{
    if (from == 0 || r->iblock[from - 1] != r->iblock[from]) return r->wl;
    double sigma = r->l[r->isplit[r->iblock[from] - 1] - 1];
    return r->w[from] + sigma - r->werr[from] - r->wgap[from - 1];
}

/* One group's vectors, from..to - 1, into Z's columns of the same numbers,
 * from the root (copied into d and l, which dlarrv overwrites); the
 * eigenvalues refined to relative accuracy where T allows (dlarrj, block
 * by block, as dstemr). Runs on any thread (lapack_units): it touches
 * only the group's entries of w, werr, wgap, Z and isuppz and the
 * thread's scratch (dlarrv may write RTOL1 and RTOL2: its own copies).
 * dlarrj's info is not read, as dstemr does not. Returns dlarrv's info. */
static int mrrr_group(const mrrr_root *r, int from, int to, double vl, double *Z,
                      int *isuppz, double *d, double *l, double *work, int *iwork)
{
    int n = r->n, m = to - from, one = 1, info = 0;
    double vu = r->wu, pivmin = r->pivmin, minrgp = MRRR_MINRGP, rtol1 = r->rtol1,
        rtol2 = r->rtol2;
    memcpy(d, r->d, (size_t) n * sizeof(double));
    memcpy(l, r->l, (size_t) n * sizeof(double));
    dlarrv_now(&n, &vl, &vu, d, l, &pivmin, r->isplit, &m, &one, &m, &minrgp, &rtol1,
               &rtol2, r->w + from, r->werr + from, r->wgap + from, r->iblock + from,
               r->indexw + from, r->gers, Z + (size_t) from * n, &n,
               isuppz + 2 * (size_t) from, work, iwork, &info);
    if (info != 0 || !r->tryrac) return info;
    double rtol = 4 * F77_CALL(dlamch)("P" FCONE), spdiam = r->tnrm;
    for (int a = from, b; a < to; a = b) {
        int blk = r->iblock[a], first = blk > 1 ? r->isplit[blk - 2] : 0,
            in = r->isplit[blk - 1] - first, jinfo = 0;
        for (b = a + 1; b < to && r->iblock[b] == blk; b++) {}
        int ifirst = r->indexw[a], ilast = r->indexw[b - 1], offset = ifirst - 1;
        F77_CALL(dlarrj)(&in, r->d0 + first, r->e2 + first, &ifirst, &ilast, &rtol,
                         &offset, r->w + a, r->werr + a, work, iwork, &pivmin, &spdiam,
                         &jinfo);
    }
    return 0;
}

/* The groups of vectors and what their calls read and write */
typedef struct {
    const mrrr_root *r;
    const int *starts;   /* group g: starts[g] .. starts[g + 1] - 1 */
    const double *lower; /* mrrr_group_lower() of each group */
    double *Z;
    int *isuppz;
} mrrr_group_work;

/* Group u on any thread; its scratch 14 n doubles, 7 n ints */
static int mrrr_group_run(const void *ctx, int u, double *s, int *is)
{
    const mrrr_group_work *g = (const mrrr_group_work *) ctx;
    size_t n = (size_t) g->r->n;
    return mrrr_group(g->r, g->starts[u], g->starts[u + 1], g->lower[u], g->Z, g->isuppz, s,
                      s + n, s + 2 * n, is);
}

/* Group u's vector entries */
static double mrrr_group_cost(const void *ctx, int u)
{
    const mrrr_group_work *g = (const mrrr_group_work *) ctx;
    return (double) g->r->n * (g->starts[u + 1] - g->starts[u]);
}

/* Every group's vectors on the threads, in batches of about
 * MRRR_CHECK_ENTRIES vector entries a thread. Groups of at least
 * tuning.mrrr_group_min vectors and of k / 16. Returns 0, or -1 where
 * dlarrv failed for a group. */
static int mrrr_all_groups(const mrrr_root *r, double *Z, int threads)
{
    int k = r->m, target = (k + 15) / 16;
    if (target < tuning.mrrr_group_min) target = tuning.mrrr_group_min;
    int *starts = (int *) R_alloc((size_t) k + 1, sizeof(int));
    int ng = mrrr_groups(r, target, starts);
    double *lower = (double *) R_alloc((size_t) ng, sizeof(double));
    for (int g = 0; g < ng; g++) lower[g] = mrrr_group_lower(r, starts[g]);
    int *isuppz = (int *) R_alloc(2 * (size_t) k, sizeof(int));
    mrrr_group_work g = {r, starts, lower, Z, isuppz};
    size_t n = (size_t) r->n;
    lapack_units w = {&g, mrrr_group_cost, mrrr_group_run, 14 * n, 7 * n, MRRR_CHECK_ENTRIES,
                      PROGRESS_SOLVE};
    return lapack_units_run(&w, ng, threads) != 0 ? -1 : 0;
}

/* The pairs in ascending order of eigenvalue (dlarre gives them block by
 * block), the eigenvalues scaled back. */
static void mrrr_finish(const mrrr_root *r, double *Z)
{
    int k = r->m, sorted = 1;
    for (int j = 0; j < k; j++) r->w[j] /= r->scale;
    for (int j = 0; j + 1 < k; j++)
        if (r->w[j] > r->w[j + 1]) sorted = 0;
    if (sorted) return;
    int *idx = (int *) R_alloc((size_t) k, sizeof(int));
    for (int j = 0; j < k; j++) idx[j] = j;
    rsort_with_index(r->w, idx, k);
    permute_columns(Z, r->n, k, idx);
}

/* The number of eigenvalues of T in (lower, upper]: dstemr's count (its
 * query NZC = -1, a Sturm count on T, in its Z[0]); w is its scratch.
 * The range 'V' of both MRRR routines becomes the index range of the
 * counted eigenvalues: T is scaled inside dstemr, so those at the ends
 * may move across, and dstemr then writes past a Z of the counted size
 * (seen under valgrind); the caller trims any at or below lower. */
static int mrrr_count(const double *diag, const double *offdiag, int n, double lower,
                      double upper, double *w)
{
    const char jobz = 'V', range = 'V';
    double *d = (double *) R_alloc((size_t) n, sizeof(double));
    double *e = (double *) R_alloc((size_t) n, sizeof(double));
    memcpy(d, diag, (size_t) n * sizeof(double));
    if (n > 1) memcpy(e, offdiag, (size_t) (n - 1) * sizeof(double));
    e[n - 1] = 0.0;
    int found = 0, info = 0, lwork = -1, liwork = -1, nzc = -1, iwork_query = 0, il = 0,
        iu = 0, tryrac = 1, isuppz_query[2];
    double work_query = 0.0, z_query = 0.0;
    F77_CALL(dstemr)(&jobz, &range, &n, d, e, &lower, &upper, &il, &iu, &found, w,
                     &z_query, &n, &nzc, isuppz_query, &tryrac, &work_query, &lwork,
                     &iwork_query, &liwork, &info FCONE FCONE);
    check_lapack_info(info, "dstemr");
    int count = (int) z_query;
    if (count > n) error_numerical("LAPACK routine 'dstemr' counted %d eigenvalues of %d",
                                   count, n);
    return count;
}

/* MRRR on the tridiagonal (the algorithm of dsyevr for the whole
 * spectrum) for a subset only: the eigenvalues in (lower, upper] (range
 * 'V') or the il-th to iu-th smallest (range 'I'), with their vectors
 * (n x found, in the store's space, *Z), in ascending order.
 *
 * dstemr's steps, run here so that the vectors are computed on every
 * thread: the root representation once (mrrr_root_make()), then groups of
 * vectors from it (mrrr_all_groups()), cut only between eigenvalues that
 * dlarrv itself separates at the root (mrrr_may_split()): each group's
 * vectors are computed as dstemr computes them, and being all from one
 * root, they are as orthogonal across groups as within one (separate
 * dstemr calls would each choose their own root, and vectors from two
 * roots are orthogonal only to about eps ||T|| / gap). The groups do not
 * depend on the thread count: the same bits on any.
 *
 * The wanted eigenvalues of the root come from two bisections, O(n k)
 * steps (dlarre's bisection path, root_by_bisection()), in pieces on the
 * threads: at n = 3000, k = 621 they were 0.34 s of dstemr's 0.47 s on
 * one thread. Where more than half are wanted, dlarre runs as in dstemr.
 * (A root from every eigenvalue by dqds, O(n^2), was faster at the
 * default fit's k (0.10 s) but its vectors were less orthogonal on kernel
 * spectra: max |V'V - I| of the fit 1.1e-12 against 7.7e-13 at n = 3000,
 * k = 620: its shift sits at the far end of the whole spectrum.)
 *
 * For range 'V', mrrr_count() gives the index range.
 *
 * Returns the number found, or -1 if MRRR fails (dlarre's or dlarrv's
 * info, dstemr's info > 0), in which case the caller falls back to
 * bisection as dsyevr does; and for n < 3 (dstemr's formulas). diag and
 * offdiag are kept. */
int tridiagonal_mrrr(const double *diag, const double *offdiag, int n, char range,
                     double lower, double upper, int il, int iu, double *w, double **Z,
                     vector_store store, int threads)
{
    *Z = NULL;
    if (n < 3) return -1;
    if (range == 'V') {
        int count = mrrr_count(diag, offdiag, n, lower, upper, w);
        if (count <= 0) return 0;
        il = n - count + 1;
        iu = n;
    }
    mrrr_root r;
    if (mrrr_root_make(diag, offdiag, n, il, iu, w, &r, threads) != 0) return -1;
    if (r.m != iu - il + 1)
        error_numerical("LAPACK routine 'dlarre' found %d eigenvalues, not the %d "
                        "asked for", r.m, iu - il + 1);
    double *z = store.take(store.ctx, n, r.m);
    if (mrrr_all_groups(&r, z, threads) != 0) return -1;
    mrrr_finish(&r, z);
    *Z = z;
    return r.m;
}

/* LAPACK's dstemr in one call, on one thread, as tridiagonal_mrrr() but
 * for its steps: the tuning's exact_method "dstemr", the oracle of
 * test-tridiagonal-groups.R (with one piece and one group,
 * tridiagonal_mrrr() gives its bits). dstemr needs Z to hold every vector
 * it finds: for range 'I' exactly iu - il + 1 (documented). */
int tridiagonal_dstemr(const double *diag, const double *offdiag, int n, char range,
                       double lower, double upper, int il, int iu, double *w, double **Z,
                       vector_store store)
{
    const char jobz = 'V', by_index = 'I';
    *Z = NULL;
    if (range == 'V') {
        int count = mrrr_count(diag, offdiag, n, lower, upper, w);
        if (count <= 0) return 0;
        il = n - count + 1;
        iu = n;
    }
    /* dstemr overwrites d and e, and uses e[n - 1] as workspace */
    double *d = (double *) R_alloc((size_t) n, sizeof(double));
    double *e = (double *) R_alloc((size_t) n, sizeof(double));
    memcpy(d, diag, (size_t) n * sizeof(double));
    if (n > 1) memcpy(e, offdiag, (size_t) (n - 1) * sizeof(double));
    e[n - 1] = 0.0;
    int found = 0, info = 0, lwork = -1, liwork = -1, nzc = iu - il + 1, iwork_query = 0;
    int tryrac = 1; /* as dsyevr with abstol = 0: relative accuracy if T allows */
    double work_query = 0.0, z_query = 0.0;
    int isuppz_query[2];
    F77_CALL(dstemr)(&jobz, &by_index, &n, d, e, &lower, &upper, &il, &iu, &found, w,
                     &z_query, &n, &nzc, isuppz_query, &tryrac, &work_query, &lwork,
                     &iwork_query, &liwork, &info FCONE FCONE);
    check_lapack_info(info, "dstemr");
    lwork = (int) work_query;
    liwork = iwork_query;
    double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
    int *iwork = (int *) R_alloc((size_t) liwork, sizeof(int));
    int *isuppz = (int *) R_alloc(2 * (size_t) nzc, sizeof(int));
    double *z = store.take(store.ctx, n, nzc);
    F77_CALL(dstemr)(&jobz, &by_index, &n, d, e, &lower, &upper, &il, &iu, &found, w, z,
                     &n, &nzc, isuppz, &tryrac, work, &lwork, iwork, &liwork,
                     &info FCONE FCONE);
    if (info > 0) return -1;
    check_lapack_info(info, "dstemr");
    if (found != nzc) error_numerical("LAPACK routine 'dstemr' found %d eigenvalues, not the %d "
                                      "asked for", found, nzc);
    *Z = z;
    return found;
}
