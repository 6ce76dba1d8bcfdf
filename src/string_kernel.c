/* String kernels (kernlab's stringdot types) and their algebra.
 *
 * Every type but "sequence" is a weighted count of common substrings:
 *   k(x, y) = sum over substrings s of n_s(x) n_s(y) w(|s|),
 * with n_s the number of occurrences of s, and the weights
 *   spectrum    w(l) = 1 for l = length, else 0
 *   boundrange  w(l) = 1 for l <= length
 *   constant    w(l) = 1
 *   exponential w(l) = lambda^-l
 *   string      w(l) = lambda^(2 length + 2) for l = length, else 0
 *   fullstring  w(l) = lambda^(2 l) for l <= length
 * (facts from kernlab's sources, checked against kernlab::kernelMatrix; the
 * first four see each string with a newline appended, as kernlab's do).
 * Summing over pairs of positions instead of substrings,
 *   k(x, y) = sum_{i in x, j in y} W(lcp(x[i:], y[j:])),  W(L) = sum_{l<=L} w(l).
 *
 * Instead of a suffix tree per pair (kernlab), the suffixes of ALL strings
 * of a call are sorted once (one generalized suffix array, prefix doubling
 * with counting sorts, O(N log N) for N characters), with the longest common
 * prefixes of neighbours (Kasai). Suffixes that agree on their first
 * `length` characters (bounded types) fall into one class, and each string
 * keeps the sorted list of its classes with their counts: its profile. A
 * kernel value is then one merge of two profiles, O(|x| + |y|):
 *   spectrum, string: the dot product of the two profiles;
 *   the others: a walk through the merged profiles that keeps, for each
 *   side, a monotone stack of (common prefix with the current suffix,
 *   count), so that each new suffix adds W(lcp) over all suffixes of the
 *   other string before it; the lcp of two neighbours in the walk is the
 *   minimum of the neighbour lcps between their classes (a range-minimum
 *   query: blocks of 32 plus a sparse table over the blocks).
 * Normalized kernels divide by sqrt(k(x, x) k(y, y)); a string with no
 * substring of the weighted lengths (k(x, x) = 0) gets kernel values 0.
 *
 * "sequence" (the gap-weighted subsequence kernel of Lodhi et al. 2002) is
 * the dynamic programme of that paper, O(length |x| |y|) per pair.
 *
 * A string kernel is a base kernel of the one kernel program (KERNEL_STRING,
 * src/kernel.c reads, checks and runs the program); this file indexes the
 * strings of a call (string_kernels_prepare(), from kernel_point_sets())
 * and gives the base kernel's values on a column segment (string_segment()). */
#include "fastkpca.h"
#include <Rmath.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
# include <omp.h>
#endif

#define RMQ_BLOCK 32

/* One base string kernel on the strings of a call: the profiles. */
struct string_base {
    int type, length, normalized;
    double lambda;
    int nstr;
    /* profile of string s at level l: cls[l], cnt[l] from start[s], count_of[l][s] entries */
    const int *start, **count_of, **cls, **cnt;
    const int *text_len_walk;    /* string lengths in walk_text, without terminators */
    int nlev;                    /* > 0: a sum of nlev dot products, weights lweight */
    const double *lweight;
    const int *class_lcp, *class_len; /* lcp with the previous class; common length of a class */
    const int *walk_pos, *walk_text;  /* the walk: a suffix of each profile entry, in walk_text */
    int cap;                          /* the walk's cap on common prefixes */
    int nclass;
    const int *block_min, *sparse, *lg; /* range minima of class_lcp */
    int nblock, nlevel;
    const double *W;             /* W[L] for L = 0..wmax */
    int wmax, max_profile;
    const double *self;          /* k(s, s), unnormalized */
    /* "sequence": the strings themselves */
    const int *text, *text_start, *text_len;
};

/* ---- decoding ----------------------------------------------------------- */

/* The characters of s as Unicode code points (UTF-8 decoded; bytes of an
 * invalid sequence are taken one by one). Returns the count written to out
 * (at most strlen(s) + 1 with the newline). */
static int decode_utf8(const char *s, int newline, int *out)
{
    const unsigned char *u = (const unsigned char *) s;
    int n = 0;
    while (*u) {
        int c = *u, extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
        int ok = c >= 0xC0 && c < 0xF8;
        for (int k = 1; ok && k <= extra; k++) ok = (u[k] & 0xC0) == 0x80;
        if (extra > 0 && ok) {
            c &= 0x3F >> extra;
            for (int k = 1; k <= extra; k++) c = (c << 6) | (u[k] & 0x3F);
            u += extra + 1;
        } else {
            u++;
        }
        out[n++] = c;
    }
    if (newline) out[n++] = '\n';
    return n;
}

static int type_adds_newline(int type)
{
    return type >= STRING_SPECTRUM && type <= STRING_EXPONENTIAL;
}

/* ---- the generalized suffix array --------------------------------------- */

/* Sort the suffixes of T[0..N) (symbols 0..K-1; every string ends in a
 * terminator symbol of its own, so sorting the cyclic shifts sorts the
 * suffixes) into p, by prefix doubling with counting sorts. */
static void suffix_array(const int *T, int N, int K, int *p, int *c, int *pn, int *cn,
                         int *cnt)
{
    memset(cnt, 0, (size_t) K * sizeof(int));
    for (int i = 0; i < N; i++) cnt[T[i]]++;
    for (int i = 1; i < K; i++) cnt[i] += cnt[i - 1];
    for (int i = N - 1; i >= 0; i--) p[--cnt[T[i]]] = i;
    int classes = 1;
    c[p[0]] = 0;
    for (int i = 1; i < N; i++) {
        if (T[p[i]] != T[p[i - 1]]) classes++;
        c[p[i]] = classes - 1;
    }
    for (long h = 1; classes < N; h <<= 1) {
        for (int i = 0; i < N; i++) {
            long v = p[i] - h;
            pn[i] = (int) (v < 0 ? v + N : v);
        }
        memset(cnt, 0, (size_t) classes * sizeof(int));
        for (int i = 0; i < N; i++) cnt[c[pn[i]]]++;
        for (int i = 1; i < classes; i++) cnt[i] += cnt[i - 1];
        for (int i = N - 1; i >= 0; i--) p[--cnt[c[pn[i]]]] = pn[i];
        cn[p[0]] = 0;
        classes = 1;
        for (int i = 1; i < N; i++) {
            long a = p[i] + h, b = p[i - 1] + h;
            if (a >= N) a -= N;
            if (b >= N) b -= N;
            if (c[p[i]] != c[p[i - 1]] || c[a] != c[b]) classes++;
            cn[p[i]] = classes - 1;
        }
        int *tmp = c; c = cn; cn = tmp;
        R_CheckUserInterrupt();
    }
}

/* lcp[r] = common prefix of the suffixes at ranks r - 1 and r (Kasai et al.
 * 2001); rank: scratch of N. Terminators are unique, so no comparison runs
 * past the end of a string. */
static void lcp_array(const int *T, int N, const int *p, int *rank, int *lcp)
{
    for (int r = 0; r < N; r++) rank[p[r]] = r;
    int h = 0;
    for (int i = 0; i < N; i++) {
        int r = rank[i];
        if (r == 0) { lcp[0] = 0; h = 0; continue; }
        int j = p[r - 1];
        while (i + h < N && j + h < N && T[i + h] == T[j + h]) h++;
        lcp[r] = h;
        if (h > 0) h--;
    }
}

/* ---- range minima over class_lcp ---------------------------------------- */

static void rmq_build(string_base *b, int *class_lcp)
{
    int C = b->nclass, nb = (C + RMQ_BLOCK - 1) / RMQ_BLOCK, levels = 1;
    while ((1 << levels) <= nb) levels++;
    int *bmin = (int *) R_alloc((size_t) nb + 1, sizeof(int));
    int *lg = (int *) R_alloc((size_t) nb + 2, sizeof(int));
    int *sp = (int *) R_alloc((size_t) levels * nb + 1, sizeof(int));
    for (int k = 0; k < nb; k++) {
        int m = INT_MAX, end = (k + 1) * RMQ_BLOCK < C ? (k + 1) * RMQ_BLOCK : C;
        for (int i = k * RMQ_BLOCK; i < end; i++) if (class_lcp[i] < m) m = class_lcp[i];
        bmin[k] = sp[k] = m;
    }
    for (int l = 1; l < levels; l++)
        for (int k = 0; k + (1 << l) <= nb; k++) {
            int a = sp[(size_t) (l - 1) * nb + k], c = sp[(size_t) (l - 1) * nb + k + (1 << (l - 1))];
            sp[(size_t) l * nb + k] = a < c ? a : c;
        }
    lg[0] = lg[1] = 0;
    for (int k = 2; k <= nb; k++) lg[k] = lg[k / 2] + 1;
    b->block_min = bmin; b->sparse = sp; b->lg = lg; b->nblock = nb; b->nlevel = levels;
}

/* min(class_lcp[l..r]), l <= r */
static inline int rmq(const string_base *b, int l, int r)
{
    const int *a = b->class_lcp;
    int bl = l / RMQ_BLOCK, br = r / RMQ_BLOCK, m = INT_MAX;
    if (bl == br) {
        for (int i = l; i <= r; i++) if (a[i] < m) m = a[i];
        return m;
    }
    for (int i = l; i < (bl + 1) * RMQ_BLOCK; i++) if (a[i] < m) m = a[i];
    for (int i = br * RMQ_BLOCK; i <= r; i++) if (a[i] < m) m = a[i];
    if (bl + 1 <= br - 1) {
        int lo = bl + 1, len = br - 1 - lo + 1, l2 = b->lg[len];
        int x = b->sparse[(size_t) l2 * b->nblock + lo];
        int y = b->sparse[(size_t) l2 * b->nblock + br - (1 << l2)];
        if (x < m) m = x;
        if (y < m) m = y;
    }
    return m;
}

/* ---- weights ------------------------------------------------------------- */

static double *weight_table(int type, int length, double lambda, int wmax)
{
    double *W = (double *) R_alloc((size_t) wmax + 1, sizeof(double));
    W[0] = 0.0;
    for (int L = 1; L <= wmax; L++) {
        double w = 0.0;
        switch (type) {
        case STRING_SPECTRUM: w = L == length; break;
        case STRING_BOUNDRANGE: w = L <= length; break;
        case STRING_CONSTANT: w = 1.0; break;
        case STRING_EXPONENTIAL: w = R_pow_di(lambda, -L); break;
        case STRING_STRING: w = L == length ? R_pow_di(lambda, 2 * length + 2) : 0.0; break;
        case STRING_FULLSTRING: w = L <= length ? R_pow_di(lambda, 2 * L) : 0.0; break;
        }
        W[L] = W[L - 1] + w;
    }
    return W;
}

/* ---- profiles ------------------------------------------------------------ */

/* The text of a base: all strings decoded, each followed by its terminator
 * (symbol s of string s; characters come after the n terminators, as dense
 * ranks of the code points used). Returns N; start[s] is the first symbol of
 * string s and len[s] its length without the terminator. */
static int build_text(SEXP strings, int newline, int **T_out, int **start_out,
                      int **len_out, int *K_out)
{
    int n = (int) XLENGTH(strings);
    double total = 0;
    for (int s = 0; s < n; s++)
        total += (double) strlen(translateCharUTF8(STRING_ELT(strings, s))) + 2.0;
    if (total > INT_MAX / 2) error("'x' holds too many characters for a string kernel");
    int N = (int) total;
    int *T = (int *) R_alloc((size_t) N + 1, sizeof(int));
    int *start = (int *) R_alloc((size_t) n + 1, sizeof(int));
    int *len = (int *) R_alloc((size_t) n + 1, sizeof(int));
    int pos = 0, maxc = 0;
    for (int s = 0; s < n; s++) {
        start[s] = pos;
        len[s] = decode_utf8(translateCharUTF8(STRING_ELT(strings, s)), newline, T + pos);
        for (int i = 0; i < len[s]; i++) if (T[pos + i] > maxc) maxc = T[pos + i];
        pos += len[s];
        T[pos++] = -1 - s; /* terminator, mapped below */
    }
    start[n] = pos;
    /* dense ranks of the code points */
    int *map = (int *) R_alloc((size_t) maxc + 2, sizeof(int));
    memset(map, 0, ((size_t) maxc + 1) * sizeof(int));
    for (int i = 0; i < pos; i++) if (T[i] >= 0) map[T[i]] = 1;
    int K = n;
    for (int c = 0; c <= maxc; c++) if (map[c]) map[c] = K++;
    for (int i = 0; i < pos; i++) T[i] = T[i] >= 0 ? map[T[i]] : -1 - T[i];
    *T_out = T; *start_out = start; *len_out = len; *K_out = K;
    return pos;
}

/* Profiles at common-prefix cap `cap`: walking the suffixes in sorted
 * order, a new class starts where the lcp with the previous suffix is below
 * cap; each string's classes are appended to its profile (sorted, with
 * counts). only_full: skip suffixes shorter than cap. class_lcp and
 * class_len (the lcp with the previous class, the common length of a class)
 * are filled when not NULL. Returns the number of classes. */
static int profiles_at_cap(const int *p, const int *lcp, int N, const int *owner,
                           const int *tstart, const int *tlen, int n, int cap,
                           int only_full, int *cls, int *cnt, int *count_of,
                           int *class_lcp, int *class_len, int *entry_pos, int *wmax)
{
    int C = 0;
    *wmax = 0;
    for (int s = 0; s < n; s++) count_of[s] = 0;
    for (int r = 0; r < N; r++) {
        int pos = p[r], s = owner[pos];
        int slen = tstart[s] + tlen[s] - pos;     /* 0 for a terminator */
        if (r == 0 || lcp[r] < cap) {
            int len = slen < cap ? slen : cap;
            if (class_lcp) { class_lcp[C] = r == 0 ? 0 : lcp[r]; class_len[C] = len; }
            if (len > *wmax) *wmax = len;
            C++;
        }
        if (slen == 0 || (only_full && slen < cap)) continue;
        int *list = cls + tstart[s], *counts = cnt + tstart[s], k = count_of[s];
        if (k > 0 && list[k - 1] == C - 1) counts[k - 1]++;
        else {
            list[k] = C - 1; counts[k] = 1; count_of[s] = k + 1;
            if (entry_pos) entry_pos[tstart[s] + k] = pos;
        }
    }
    return C;
}

/* Bounded types up to this length are sums of dot products of profiles at
 * each length (about `length` merges of two profiles per value); longer
 * ones, and the unbounded types, take the walk (one merge, with stacks and
 * range minima). */
#define STRING_MAX_LEVELS 16

/* The profiles of all strings for base b (type, length, lambda set): the
 * text, the suffix array and lcps (scratch, released at the end), then the
 * profiles at each level. One function, as every step shares the arrays of
 * the one before. */
static void build_profiles(string_base *b, SEXP strings)
{
    int n = b->nstr, len = b->length, type = b->type;
    int *T, *tstart, *tlen, K;
    int N = build_text(strings, type_adds_newline(type), &T, &tstart, &tlen, &K);
    int single = type == STRING_SPECTRUM || type == STRING_STRING;
    int bounded = type != STRING_CONSTANT && type != STRING_EXPONENTIAL;
    b->nlev = single ? 1 : bounded && len <= STRING_MAX_LEVELS ? len : 0;

    /* what the kernel keeps */
    int *owner = (int *) R_alloc((size_t) N + 1, sizeof(int));
    for (int s = 0; s < n; s++)
        for (int i = tstart[s]; i <= tstart[s] + tlen[s]; i++) owner[i] = s;
    int levels = b->nlev > 0 ? b->nlev : 1;
    int **cls = (int **) R_alloc((size_t) levels, sizeof(int *));
    int **cnt = (int **) R_alloc((size_t) levels, sizeof(int *));
    int **count_of = (int **) R_alloc((size_t) levels, sizeof(int *));
    double *lweight = (double *) R_alloc((size_t) levels, sizeof(double));
    for (int l = 0; l < levels; l++) {
        cls[l] = (int *) R_alloc((size_t) N + 1, sizeof(int));
        cnt[l] = (int *) R_alloc((size_t) N + 1, sizeof(int));
        count_of[l] = (int *) R_alloc((size_t) n + 1, sizeof(int));
    }
    int *class_lcp = NULL, *class_len = NULL, *entry_pos = NULL;
    if (b->nlev == 0) {
        class_lcp = (int *) R_alloc((size_t) N + 1, sizeof(int));
        class_len = (int *) R_alloc((size_t) N + 1, sizeof(int));
        entry_pos = (int *) R_alloc((size_t) N + 1, sizeof(int));
    }

    const void *vmax = vmaxget();   /* the scratch below is released at the end */
    int size = K > N ? K : N;
    int *p = (int *) R_alloc((size_t) N, sizeof(int));
    int *c = (int *) R_alloc((size_t) N, sizeof(int));
    int *pn = (int *) R_alloc((size_t) N, sizeof(int));
    int *cn = (int *) R_alloc((size_t) N, sizeof(int));
    int *work = (int *) R_alloc((size_t) size, sizeof(int));
    suffix_array(T, N, K, p, c, pn, cn, work);
    int *lcp = pn; /* pn and cn are free now */
    lcp_array(T, N, p, cn, lcp);

    int wmax = 0;
    if (b->nlev == 0) {
        int cap = bounded ? len : INT_MAX;
        b->nclass = profiles_at_cap(p, lcp, N, owner, tstart, tlen, n, cap, 0, cls[0],
                                    cnt[0], count_of[0], class_lcp, class_len, entry_pos,
                                    &wmax);
    } else {
        for (int l = 0; l < levels; l++) {
            int cap = single ? len : l + 1, ignored;
            profiles_at_cap(p, lcp, N, owner, tstart, tlen, n, cap, 1, cls[l], cnt[l],
                            count_of[l], NULL, NULL, NULL, &ignored);
        }
        wmax = len;
    }
    vmaxset(vmax);

    b->W = weight_table(type, len, b->lambda, wmax);
    for (int l = 0; l < levels; l++)
        lweight[l] = single ? b->W[len] : b->W[l + 1] - b->W[l];
    int max_profile = 0;
    for (int s = 0; s < n; s++) if (count_of[0][s] > max_profile) max_profile = count_of[0][s];
    b->start = tstart; b->count_of = (const int **) count_of;
    b->cls = (const int **) cls; b->cnt = (const int **) cnt; b->lweight = lweight;
    b->class_lcp = class_lcp; b->class_len = class_len;
    b->walk_pos = entry_pos; b->walk_text = T; b->text_len_walk = tlen;
    b->cap = bounded ? len : INT_MAX;
    b->wmax = wmax; b->max_profile = max_profile;
    if (b->nlev == 0) rmq_build(b, class_lcp);
}

/* ---- one kernel value ---------------------------------------------------- */

/* Scratch for one thread: the two stacks of the merge walk, and the
 * dynamic programme of "sequence". */
typedef struct {
    int *h[2];
    double *c[2];
    double *dp;
} pair_scratch;

/* sum over levels of the level's weight times the dot product of the two
 * profiles at that level */
static double profile_dots(const string_base *b, int x, int y)
{
    double total = 0.0;
    for (int l = 0; l < b->nlev; l++) {
        const int *cx = b->cls[l] + b->start[x], *nx = b->cnt[l] + b->start[x];
        const int *cy = b->cls[l] + b->start[y], *ny = b->cnt[l] + b->start[y];
        int lx = b->count_of[l][x], ly = b->count_of[l][y], i = 0, j = 0;
        double sum = 0.0;
        while (i < lx && j < ly) {
            if (cx[i] < cy[j]) i++;
            else if (cx[i] > cy[j]) j++;
            else { sum += (double) nx[i] * ny[j]; i++; j++; }
        }
        total += sum * b->lweight[l];
    }
    return total;
}

/* Clamp a stack to common prefix h: entries at or above h merge into one. */
static inline void clamp_stack(int *hs, double *cs, int *top, double *sum, int h,
                               const double *W)
{
    double moved = 0.0;
    while (*top > 0 && hs[*top - 1] >= h) {
        (*top)--;
        moved += cs[*top];
        if (hs[*top] != INT_MAX) *sum -= cs[*top] * W[hs[*top]];
    }
    if (moved > 0.0) {
        hs[*top] = h;
        cs[*top] = moved;
        (*top)++;
        *sum += moved * W[h];
    }
}

/* Characters compared directly before a range-minimum query: common
 * prefixes of neighbouring suffixes are short in most text, and a few
 * comparisons cost less than the query. */
#define STRING_DIRECT_LCP 24

/* The common prefix of two suffixes at text positions u and v, of lengths
 * lu and lv (each capped already), classes c1 < c2: compared directly (the
 * suffixes lie in the two strings' own text, close in memory), and by a
 * range-minimum query past STRING_DIRECT_LCP characters. */
static inline int suffix_lcp(const string_base *b, int u, int lu, int v, int lv, int c1,
                             int c2)
{
    const int *tu = b->walk_text + u, *tv = b->walk_text + v;
    int cap = lu < lv ? lu : lv;
    int lim = cap < STRING_DIRECT_LCP ? cap : STRING_DIRECT_LCP;
    for (int k = 0; k < lim; k++) if (tu[k] != tv[k]) return k;
    if (lim == cap) return cap;
    return rmq(b, c1 + 1, c2);
}

/* sum over suffixes i of x and j of y of W(lcp(i, j)), by one walk through
 * the two sorted profiles. */
static double profile_walk(const string_base *b, int x, int y, pair_scratch *ws)
{
    const int *cl[2] = {b->cls[0] + b->start[x], b->cls[0] + b->start[y]};
    const int *ps[2] = {b->walk_pos + b->start[x], b->walk_pos + b->start[y]};
    /* a suffix's length (before its terminator) is its string's end minus its position */
    int end[2] = {b->start[x] + b->text_len_walk[x], b->start[y] + b->text_len_walk[y]};
    int prev_pos = 0, prev_len = 0;
    const int *nm[2] = {b->cnt[0] + b->start[x], b->cnt[0] + b->start[y]};
    int len[2] = {b->count_of[0][x], b->count_of[0][y]}, at[2] = {0, 0}, top[2] = {0, 0};
    double sum[2] = {0.0, 0.0}, total = 0.0;
    int prev = -1;
    const double *W = b->W;
    while (at[0] < len[0] || at[1] < len[1]) {
        int side = at[1] >= len[1] || (at[0] < len[0] && cl[0][at[0]] <= cl[1][at[1]]) ? 0 : 1;
        int c = cl[side][at[side]], pos = ps[side][at[side]];
        int slen = end[side] - pos;
        if (slen > b->cap) slen = b->cap;
        double count = nm[side][at[side]];
        if (prev >= 0) {
            int h = c == prev ? slen : suffix_lcp(b, prev_pos, prev_len, pos, slen, prev, c);
            clamp_stack(ws->h[0], ws->c[0], top, sum, h, W);
            clamp_stack(ws->h[1], ws->c[1], top + 1, sum + 1, h, W);
        }
        total += count * sum[1 - side];
        ws->h[side][top[side]] = INT_MAX;   /* its lcp with what follows: not yet known */
        ws->c[side][top[side]] = count;
        top[side]++;
        at[side]++;
        prev = c;
        prev_pos = pos;
        prev_len = slen;
    }
    return total;
}

/* The gap-weighted subsequence kernel of subsequences of length n (Lodhi et
 * al. 2002): K'_0 = 1; for i < n, row by row,
 *   K''_i(a, c) = lambda K''_i(a, c-1) + [s_a = t_c] lambda^2 K'_{i-1}(a-1, c-1),
 *   K'_i(a, c)  = lambda K'_i(a-1, c) + K''_i(a, c),
 * and K_n = sum over matching a, c of lambda^2 K'_{n-1}(a-1, c-1).
 * O(n |s| |t|) time; dp holds two (|s|+1) x (|t|+1) tables. */
static double subsequence_value(const string_base *b, int x, int y, double *dp)
{
    const int *s = b->text + b->text_start[x], *t = b->text + b->text_start[y];
    int p = b->text_len[x], q = b->text_len[y], n = b->length;
    double lambda = b->lambda, l2 = lambda * lambda;
    if (p < n || q < n) return 0.0;
    size_t w = (size_t) q + 1;
    double *prev = dp, *cur = dp + ((size_t) p + 1) * w;
    for (size_t k = 0; k < ((size_t) p + 1) * w; k++) prev[k] = 1.0;
    for (int i = 1; i < n; i++) {
        for (int c = 0; c <= q; c++) cur[c] = 0.0;
        for (int a = 1; a <= p; a++) {
            double kpp = 0.0;
            double *row = cur + (size_t) a * w, *up = cur + (size_t) (a - 1) * w;
            const double *pup = prev + (size_t) (a - 1) * w;
            row[0] = 0.0;
            for (int c = 1; c <= q; c++) {
                kpp *= lambda;
                if (s[a - 1] == t[c - 1]) kpp += l2 * pup[c - 1];
                row[c] = lambda * up[c] + kpp;
            }
        }
        double *tmp = prev; prev = cur; cur = tmp;
    }
    double result = 0.0;
    for (int a = 1; a <= p; a++)
        for (int c = 1; c <= q; c++)
            if (s[a - 1] == t[c - 1]) result += l2 * prev[(size_t) (a - 1) * w + c - 1];
    return result;
}

static double base_raw(const string_base *b, int x, int y, pair_scratch *ws)
{
    if (b->type == STRING_SEQUENCE) return subsequence_value(b, x, y, ws->dp);
    if (b->nlev > 0) return profile_dots(b, x, y);
    return profile_walk(b, x, y, ws);
}

static double base_value(const string_base *b, int x, int y, pair_scratch *ws)
{
    if (b->normalized) {
        double d = b->self[x] * b->self[y];
        if (!(d > 0)) return 0.0;
        if (x == y) return 1.0;
        return base_raw(b, x, y, ws) / sqrt(d);
    }
    return x == y ? b->self[x] : base_raw(b, x, y, ws);
}

/* ---- the base kernel's value function ------------------------------------ */

/* Doubles of scratch per thread: the two stacks of the walk (counts and,
 * in the same room, the common prefixes), or the tables of "sequence". */
static size_t base_work_length(const string_base *b)
{
    if (b->type == STRING_SEQUENCE) {
        int mx = 0;
        for (int s = 0; s < b->nstr; s++) if (b->text_len[s] > mx) mx = b->text_len[s];
        return (size_t) (2.0 * (mx + 1.0) * (mx + 1.0));
    }
    return 3 * ((size_t) b->max_profile * 2 + 2);
}

static pair_scratch carve_scratch(const string_base *b, double *work)
{
    pair_scratch ws;
    size_t len = (size_t) b->max_profile * 2 + 2;
    ws.dp = work;
    ws.c[0] = work;
    ws.c[1] = work + len;
    ws.h[0] = (int *) (work + 2 * len);
    ws.h[1] = ws.h[0] + len;
    return ws;
}

size_t string_work_length(const kernel_eval *k)
{
    size_t len = 1;
    for (int i = 0; i < k->nbase; i++) {
        const kernel_spec *spec = k->bases + i;
        if (spec->code != KERNEL_STRING || spec->strings == NULL) continue;
        size_t need = base_work_length(spec->strings);
        if (need > len) len = need;
    }
    return len;
}

/* Rough cost of one value, in multiply-adds (kernel_block()'s budget
 * between interrupt checks): a merge of two profiles, or a dynamic
 * programme for "sequence". */
double string_value_cost(const kernel_spec *spec)
{
    return spec->string_type == STRING_SEQUENCE ? 75000.0 : 1500.0;
}

/* dst[i - i0] = k(x0 + i, y) for i in [i0, i1): the strings are numbered
 * in the call's strings; work: string_work_length() doubles. */
void string_segment(const kernel_spec *spec, int x0, int i0, int i1, int y, double *dst,
                    double *work)
{
    const string_base *b = spec->strings;
    pair_scratch ws = carve_scratch(b, work);
    for (int i = i0; i < i1; i++) dst[i - i0] = base_value(b, x0 + i, y, &ws);
}

/* The index of the strings (a character vector without NA) for every
 * string base kernel of k, with the self values k(s, s), computed on
 * threads threads. */
void string_kernels_prepare(kernel_eval *k, SEXP strings, int threads)
{
    int n = (int) XLENGTH(strings);
    for (int i = 0; i < k->nbase; i++) {
        kernel_spec *spec = k->bases + i;
        if (spec->code != KERNEL_STRING) continue;
        string_base *b = (string_base *) R_alloc(1, sizeof(string_base));
        memset(b, 0, sizeof(string_base));
        b->type = spec->string_type;
        b->length = spec->length;
        b->lambda = spec->lambda;
        b->normalized = spec->normalized;
        b->nstr = n;
        spec->strings = b;
        double *self = (double *) R_alloc((size_t) n + 1, sizeof(double));
        b->self = self;
        if (n == 0) continue;  /* nothing to index */
        if (b->type == STRING_SEQUENCE) {
            int *T, *start, *len, K;
            build_text(strings, 0, &T, &start, &len, &K);
            b->text = T; b->text_start = start; b->text_len = len;
        } else {
            build_profiles(b, strings);
        }
        size_t wlen = base_work_length(b);
        if (b->type == STRING_SEQUENCE && wlen > 2e8)
            error("the strings are too long for the \"sequence\" kernel (%.0f doubles of scratch)",
                  (double) wlen);
        double *work = (double *) R_alloc(wlen * (size_t) threads, sizeof(double));
        int bad = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (threads > 1) \
    reduction(|:bad)
#endif
        for (int s = 0; s < n; s++) {
#ifdef _OPENMP
            int t = omp_get_thread_num();
#else
            int t = 0;
#endif
            pair_scratch ws = carve_scratch(b, work + wlen * (size_t) t);
            self[s] = base_raw(b, s, s, &ws);
            bad |= !(self[s] <= DBL_MAX);
        }
        if (bad) error("string kernel values are not finite: try another 'lambda'");
        R_CheckUserInterrupt();
    }
}
