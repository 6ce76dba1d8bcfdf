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
 * prefixes of neighbours (Kasai). Then, by type:
 *   spectrum, string, and the bounded types up to STRING_MAX_LEVELS:
 *   suffixes that agree on their first l characters fall into one class,
 *   and each string keeps the sorted list of its classes with their counts
 *   (its profile at level l); a kernel value is one merge of two profiles
 *   per level, O(|x| + |y|).
 *   constant, exponential, the longer bounded types: the whole matrix at
 *   once, from the nodes of the generalized suffix tree (the lcp intervals
 *   of the suffix array, found bottom-up with a stack). A node v of string
 *   depth d_v under a parent of depth d_p stands for the substrings of
 *   lengths d_p + 1 .. d_v that its suffixes share, so with c_v(s) the
 *   number of suffixes of s below v,
 *     k(x, y) = sum_v (W(d_v) - W(d_p)) c_v(x) c_v(y)    (x != y),
 *   and k(x, x) adds each suffix alone, W(its length) - W(its deepest
 *   shared prefix). Nodes shared by a large share of the strings (the
 *   short substrings) are columns of a dense matrix A, scaled by the root
 *   of their weights, and a tile of the kernel is one product A_rows A_cols'
 *   (in register tiles, tiles.c); the other nodes shared by two strings or more form an inverted
 *   index (each string's nodes; each node's strings), which adds their
 *   terms column by column. Nodes of one string only add to k(x, x).
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
#include "simd.h"
#include <Rmath.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>

/* One base string kernel on the strings of a call: the profiles, or the
 * nodes of the suffix tree. */
struct string_base {
    int type, length, normalized;
    double lambda;
    int nstr;
    /* profile of string s at level l: cls[l], cnt[l] from start[s], count_of[l][s] entries */
    const int *start, **count_of, **cls, **cnt;
    int nlev;                    /* > 0: a sum of nlev dot products, weights lweight */
    const double *lweight;
    /* nlev == 0: the nodes shared by two strings or more */
    int ndense;                  /* dense nodes: A is nstr x ndense, column-major */
    const double *A;             /* sqrt(weight) * count */
    const int *list_start, *list_node, *list_count; /* each string's sparse nodes */
    const int *post_start, *post_string, *post_count; /* each sparse node's strings, sorted */
    const double *node_weight;   /* each sparse node's weight */
    double pair_cost;            /* the sparse nodes' work per kernel value */
    /* the dense part of the current tile of kernel_block() (string_tiles()) */
    double *tile;
    size_t tile_cap;
    int tile_x0, tile_rows, tile_y0, tile_cols;
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
    if (total > INT_MAX / 2) error_argument("'x' holds too many characters for a string kernel");
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
 * cap; each string's classes of suffixes of cap characters or more are
 * appended to its profile (sorted, with counts). */
static void profiles_at_cap(const int *p, const int *lcp, int N, const int *owner,
                            const int *tstart, const int *tlen, int n, int cap, int *cls,
                            int *cnt, int *count_of)
{
    int C = 0;
    for (int s = 0; s < n; s++) count_of[s] = 0;
    for (int r = 0; r < N; r++) {
        int pos = p[r], s = owner[pos];
        int slen = tstart[s] + tlen[s] - pos;     /* 0 for a terminator */
        if (r == 0 || lcp[r] < cap) C++;
        if (slen < cap || slen == 0) continue;
        int *list = cls + tstart[s], *counts = cnt + tstart[s], k = count_of[s];
        if (k > 0 && list[k - 1] == C - 1) counts[k - 1]++;
        else { list[k] = C - 1; counts[k] = 1; count_of[s] = k + 1; }
    }
}

/* Bounded types up to this length are sums of dot products of profiles at
 * each length (about `length` merges of two profiles per value); longer
 * ones, and the unbounded types, take the nodes of the suffix tree. */
#define STRING_MAX_LEVELS 16

/* A node shared by at least this share of the strings (and by at least
 * STRING_DENSE_MIN of them) is a column of the dense matrix A: its terms
 * cost one multiply-add per kernel value in a tiled product, where the inverted
 * index pays one scattered add per pair of its strings that share it.
 * Measured (bench/string-dense-rule.R: "constant" and "exponential" on 400
 * and 1000 DNA strings of 200 to 1000 characters, 2000 of 50 to 100, and
 * 1000 texts of 30 to 150 English words; CPU time on one thread, R's
 * reference BLAS, a machine loaded 5x over): shares of 0.02 and 0.1 put
 * thousands of nodes in A and were 2x to 20x slower; from 0.3 to 0.95
 * the times were within 25% of each other, 0.5 the fastest on 4 of the 8
 * cases and within 25% of the fastest on all; with no dense node at all,
 * from 20% faster (1000 DNA strings, "constant") to 40% slower. The share
 * is the tuning setting string_dense_share (ENGINE_TUNING, fastkpca.h),
 * which bench/string-dense-rule.R sets to measure the rule (the values do
 * not depend on it, beyond rounding). */
#define STRING_DENSE_MIN 8

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

/* The nodes of the generalized suffix tree that carry weight: lcp
 * intervals of the suffix array (the suffixes of ranks lb .. rb share
 * the node's substrings), each with its weight W(depth) - W(parent's). */
typedef struct {
    int *lb, *rb;
    double *weight;
    int count;
} tree_nodes;

/* The postings of the nodes shared by two strings or more: node v's
 * strings (sorted) and their counts at start[v] .. start[v + 1] - 1, its
 * weight, whether it is a dense column (dense_min strings or more). */
typedef struct {
    int *start, *string, *count;
    double *weight;
    char *dense;
    int kept, used, ndense;
    double pairs;                /* the sparse nodes' pairs of strings */
} node_postings;

/* Each suffix alone adds to its string's k(s, s), from its deepest prefix
 * shared with another suffix (the larger lcp with its neighbours) to its
 * end. */
static void add_lone_suffixes(const int *p, const int *lcp, int N, const int *owner,
                              const int *tstart, const int *tlen, int cap, const double *W,
                              double *self)
{
    for (int r = 0; r < N; r++) {
        int pos = p[r], s = owner[pos], slen = tstart[s] + tlen[s] - pos;
        if (slen == 0) continue;
        int h = lcp[r];
        if (r + 1 < N && lcp[r + 1] > h) h = lcp[r + 1];
        self[s] += W[slen < cap ? slen : cap] - W[h < cap ? h : cap];
    }
}

/* Pass 1: the weighted nodes, bottom-up, into nodes (room for N): lcp
 * intervals [lb, rb] of depth l under a parent of depth max(next lcp, the
 * stack's top); stack: 2 (N + 2) ints. Returns the number of postings the
 * nodes can have, at most min(size, n) strings each. */
static double find_nodes(const int *lcp, int N, int n, int cap, const double *W, int *stack,
                         tree_nodes *nodes)
{
    int *st_l = stack, *st_lb = stack + N + 2;
    int nnodes = 0, top = 0;
    double bound = 0.0;
    st_l[0] = 0;
    st_lb[0] = 0;
    for (int r = 1; r <= N; r++) {
        int h = r < N ? lcp[r] : 0, lb = r - 1;
        while (h < st_l[top]) {
            int l = st_l[top], ilb = st_lb[top];
            top--;
            int parent = h > st_l[top] ? h : st_l[top];
            int d = l < cap ? l : cap, pd = parent < cap ? parent : cap;
            if (d > pd) {
                nodes->lb[nnodes] = ilb;
                nodes->rb[nnodes] = r - 1;
                nodes->weight[nnodes] = W[d] - W[pd];
                int size = r - ilb;
                bound += size < n ? size : n;
                nnodes++;
            }
            lb = ilb;
        }
        if (h > st_l[top]) {
            top++;
            st_l[top] = h;
            st_lb[top] = lb;
        }
    }
    nodes->count = nnodes;
    return bound;
}

/* Pass 2: each node's strings and their counts (count: a zero for each
 * string, touched: as many ints of scratch). Every node adds w c^2 to the
 * k(s, s) of each of its strings; the nodes shared by two strings or more
 * are kept in post (bound postings at most), dense from dense_min strings
 * on. */
static void collect_postings(const tree_nodes *nodes, const int *p, const int *owner,
                             int bound, double dense_min, int *count, int *touched,
                             double *self, node_postings *post)
{
    int nnodes = nodes->count;
    post->string = (int *) R_alloc((size_t) bound + 1, sizeof(int));
    post->count = (int *) R_alloc((size_t) bound + 1, sizeof(int));
    post->start = (int *) R_alloc((size_t) nnodes + 2, sizeof(int));
    post->weight = (double *) R_alloc((size_t) nnodes + 1, sizeof(double));
    post->dense = (char *) R_alloc((size_t) nnodes + 1, 1);
    int kept = 0, used = 0, ndense = 0;
    double pairs = 0.0;
    for (int v = 0; v < nnodes; v++) {
        int nt = 0;
        for (int r = nodes->lb[v]; r <= nodes->rb[v]; r++) {
            int s = owner[p[r]];
            if (count[s]++ == 0) touched[nt++] = s;
        }
        double w = nodes->weight[v];
        for (int t = 0; t < nt; t++) {
            double c = count[touched[t]];
            self[touched[t]] += w * c * c;
        }
        if (nt >= 2) {
            qsort(touched, (size_t) nt, sizeof(int), compare_int);
            post->start[kept] = used;
            post->weight[kept] = w;
            post->dense[kept] = nt >= dense_min;
            if (post->dense[kept]) ndense++; else pairs += (double) nt * nt;
            for (int t = 0; t < nt; t++) {
                post->string[used] = touched[t];
                post->count[used] = count[touched[t]];
                used++;
            }
            kept++;
        }
        for (int t = 0; t < nt; t++) count[touched[t]] = 0;
        if (v % 65536 == 65535) R_CheckUserInterrupt();
    }
    post->start[kept] = used;
    post->kept = kept;
    post->used = used;
    post->ndense = ndense;
    post->pairs = pairs;
}

/* The dense nodes as the columns of A (n x ndense, column-major): a
 * string's count scaled by the root of the node's weight. */
static double *dense_columns(const node_postings *post, int n)
{
    double *A = (double *) R_alloc((size_t) n * post->ndense + 1, sizeof(double));
    memset(A, 0, ((size_t) n * post->ndense + 1) * sizeof(double));
    int col = 0;
    for (int v = 0; v < post->kept; v++) {
        if (!post->dense[v]) continue;
        double sw = sqrt(post->weight[v]);
        for (int q = post->start[v]; q < post->start[v + 1]; q++)
            A[post->string[q] + (size_t) col * n] = sw * post->count[q];
        col++;
    }
    return A;
}

/* The sparse nodes of base b: renumbered, their postings compacted to the
 * front of post's arrays, in order (after dense_columns(), which reads
 * the dense nodes' postings that this overwrites), with the inverted
 * index of each string's sparse nodes and counts. */
static void sparse_index(string_base *b, node_postings *post, int n)
{
    int *list_start = (int *) R_alloc((size_t) n + 2, sizeof(int));
    memset(list_start, 0, ((size_t) n + 2) * sizeof(int));
    int nsparse = 0, sparse_used = 0;
    for (int v = 0; v < post->kept; v++) {
        if (post->dense[v]) continue;
        for (int q = post->start[v]; q < post->start[v + 1]; q++) {
            list_start[post->string[q] + 1]++;
            post->string[sparse_used] = post->string[q];
            post->count[sparse_used] = post->count[q];
            sparse_used++;
        }
        int len = post->start[v + 1] - post->start[v];
        post->start[nsparse] = sparse_used - len;
        post->weight[nsparse] = post->weight[v];
        nsparse++;
    }
    post->start[nsparse] = sparse_used;
    for (int s = 0; s < n; s++) list_start[s + 1] += list_start[s];
    int *list_node = (int *) R_alloc((size_t) sparse_used + 1, sizeof(int));
    int *list_count = (int *) R_alloc((size_t) sparse_used + 1, sizeof(int));
    int *fill = (int *) R_alloc((size_t) n + 1, sizeof(int));
    memcpy(fill, list_start, (size_t) n * sizeof(int));
    for (int v = 0; v < nsparse; v++)
        for (int q = post->start[v]; q < post->start[v + 1]; q++) {
            int s = post->string[q];
            list_node[fill[s]] = v;
            list_count[fill[s]] = post->count[q];
            fill[s]++;
        }
    b->list_start = list_start;
    b->list_node = list_node;
    b->list_count = list_count;
    b->post_start = post->start;
    b->post_string = post->string;
    b->post_count = post->count;
    b->node_weight = post->weight;
}

/* The nodes of the generalized suffix tree for base b (nlev == 0), from the
 * suffix array p and its lcps, with the self values k(s, s): each suffix
 * alone, the weighted nodes (pass 1), their strings (pass 2), then the
 * dense nodes as the columns of A and the sparse ones as an inverted
 * index. */
static void build_nodes(string_base *b, const int *p, const int *lcp, int N,
                        const int *owner, const int *tstart, const int *tlen, int cap)
{
    int n = b->nstr, maxlen = 0;
    for (int s = 0; s < n; s++) if (tlen[s] > maxlen) maxlen = tlen[s];
    int wmax = cap < maxlen ? cap : maxlen;
    const double *W = weight_table(b->type, b->length, b->lambda, wmax);
    double *self = (double *) R_alloc((size_t) n + 1, sizeof(double));
    memset(self, 0, ((size_t) n + 1) * sizeof(double));
    add_lone_suffixes(p, lcp, N, owner, tstart, tlen, cap, W, self);

    /* the passes' scratch in protected vectors, which the garbage collector
     * takes back once done: the stack, the nodes, the counts of pass 2 */
    SEXP iscratch = PROTECT(allocVector(INTSXP, (R_xlen_t) 4 * N + 2 * (R_xlen_t) n + 8));
    SEXP dscratch = PROTECT(allocVector(REALSXP, (R_xlen_t) N + 1));
    int *stack = INTEGER(iscratch), *node_lb = stack + 2 * (N + 2);
    int *node_rb = node_lb + N + 1, *count = node_rb + N + 1, *touched = count + n + 1;
    tree_nodes nodes = {node_lb, node_rb, REAL(dscratch), 0};
    double bound = find_nodes(lcp, N, n, cap, W, stack, &nodes);
    if (bound > INT_MAX) error_argument("'x' holds too many shared substrings for a string kernel");
    R_CheckUserInterrupt();
    double dense_min = tuning.string_dense_share * n;
    if (dense_min < STRING_DENSE_MIN) dense_min = STRING_DENSE_MIN;
    memset(count, 0, ((size_t) n + 1) * sizeof(int));
    node_postings post;
    collect_postings(&nodes, p, owner, (int) bound, dense_min, count, touched, self, &post);
    UNPROTECT(2);

    b->ndense = post.ndense;
    b->A = dense_columns(&post, n);
    sparse_index(b, &post, n);
    b->pair_cost = n > 0 ? post.pairs / ((double) n * n) : 0.0;
    b->self = self;
}

/* The index of all strings for base b (type, length, lambda set): the
 * text, the suffix array and lcps (scratch, released at the end), then the
 * profiles at each level, or the nodes of the suffix tree. One function, as
 * every step shares the arrays of the one before. */
static void build_index(string_base *b, SEXP strings)
{
    int n = b->nstr, len = b->length, type = b->type;
    int *T, *tstart, *tlen, K;
    int N = build_text(strings, type_adds_newline(type), &T, &tstart, &tlen, &K);
    int single = type == STRING_SPECTRUM || type == STRING_STRING;
    int bounded = type != STRING_CONSTANT && type != STRING_EXPONENTIAL;
    b->nlev = single ? 1 : bounded && len <= STRING_MAX_LEVELS ? len : 0;

    /* what the profiles keep */
    int levels = b->nlev;
    int **cls = (int **) R_alloc((size_t) levels + 1, sizeof(int *));
    int **cnt = (int **) R_alloc((size_t) levels + 1, sizeof(int *));
    int **count_of = (int **) R_alloc((size_t) levels + 1, sizeof(int *));
    double *lweight = (double *) R_alloc((size_t) levels + 1, sizeof(double));
    for (int l = 0; l < levels; l++) {
        cls[l] = (int *) R_alloc((size_t) N + 1, sizeof(int));
        cnt[l] = (int *) R_alloc((size_t) N + 1, sizeof(int));
        count_of[l] = (int *) R_alloc((size_t) n + 1, sizeof(int));
    }

    /* scratch in a protected vector, which the garbage collector takes
     * back once the index is built */
    int size = K > N ? K : N;
    SEXP scratch = PROTECT(allocVector(INTSXP, (R_xlen_t) 5 * N + size + 1));
    int *p = INTEGER(scratch), *c = p + N, *pn = c + N, *cn = pn + N, *owner = cn + N;
    int *work = owner + N;
    for (int s = 0; s < n; s++)
        for (int i = tstart[s]; i <= tstart[s] + tlen[s]; i++) owner[i] = s;
    suffix_array(T, N, K, p, c, pn, cn, work);
    int *lcp = pn; /* pn and cn are free now */
    lcp_array(T, N, p, cn, lcp);

    if (b->nlev == 0) {
        build_nodes(b, p, lcp, N, owner, tstart, tlen, bounded ? len : INT_MAX);
        UNPROTECT(1);
        return;
    }
    for (int l = 0; l < levels; l++)
        profiles_at_cap(p, lcp, N, owner, tstart, tlen, n, single ? len : l + 1, cls[l],
                        cnt[l], count_of[l]);
    UNPROTECT(1);

    const double *W = weight_table(type, len, b->lambda, len);
    for (int l = 0; l < levels; l++)
        lweight[l] = single ? W[len] : W[l + 1] - W[l];
    b->start = tstart; b->count_of = (const int **) count_of;
    b->cls = (const int **) cls; b->cnt = (const int **) cnt; b->lweight = lweight;
}

/* ---- one kernel value ---------------------------------------------------- */

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

/* k(x, y), unnormalized, for the types of profiles and "sequence" (dp: the
 * dynamic programme's tables). */
static double base_raw(const string_base *b, int x, int y, double *dp)
{
    if (b->type == STRING_SEQUENCE) return subsequence_value(b, x, y, dp);
    return profile_dots(b, x, y);
}

/* The kernel value from the unnormalized one raw (x != y): normalized, or
 * k(x, x) on the diagonal. */
static inline double finish_value(const string_base *b, int x, int y, double raw)
{
    if (b->normalized) {
        double d = b->self[x] * b->self[y];
        if (!(d > 0)) return 0.0;
        if (x == y) return 1.0;
        return raw / sqrt(d);
    }
    return x == y ? b->self[x] : raw;
}

/* ---- the base kernel's value function ------------------------------------ */

/* Doubles of scratch per thread: the tables of "sequence". */
static size_t base_work_length(const string_base *b)
{
    if (b->type != STRING_SEQUENCE) return 1;
    int mx = 0;
    for (int s = 0; s < b->nstr; s++) if (b->text_len[s] > mx) mx = b->text_len[s];
    return (size_t) (2.0 * (mx + 1.0) * (mx + 1.0));
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
 * between interrupt checks): a merge of two profiles, a dynamic programme
 * for "sequence", or the dense nodes' products and the sparse nodes'
 * pairs. */
double string_value_cost(const kernel_spec *spec)
{
    const string_base *b = spec->strings;
    if (spec->string_type == STRING_SEQUENCE) return 75000.0;
    if (b != NULL && b->nlev == 0) return 2.0 * b->ndense + 4.0 * b->pair_cost + 16.0;
    return 1500.0;
}

/* The dense nodes' part of the kernel between strings x0.. and y, as the
 * product of string_tiles() gives it, or (outside a tile: the diagonal of
 * kernel_self()) by the same tiles, one thread, so that each value is the
 * same sum in the same order either way. */
static void dense_segment(const string_base *b, int lo, int hi, int y, double *dst)
{
    if (b->tile != NULL && lo >= b->tile_x0 && hi <= b->tile_x0 + b->tile_rows &&
        y >= b->tile_y0 && y < b->tile_y0 + b->tile_cols) {
        const double *t = b->tile + (size_t) (y - b->tile_y0) * b->tile_rows - b->tile_x0;
        for (int x = lo; x < hi; x++) dst[x - lo] = t[x];
        return;
    }
    if (hi <= lo) return;
    memset(dst, 0, (size_t) (hi - lo) * sizeof(double));
    tile_gemm(hi - lo, 1, b->ndense, b->A + lo, b->nstr, 0, b->A + y, b->nstr, 1, 1.0, dst,
              hi - lo, 1);
}

/* raw[x - lo] = k(x, y), unnormalized, for x in [lo, hi) (nlev == 0): the
 * dense part, then the terms of y's sparse nodes, each node's strings
 * (sorted) from the first one at or after lo. */
static void node_segment(const string_base *b, int lo, int hi, int y, double *raw)
{
    dense_segment(b, lo, hi, y, raw);
    for (int e = b->list_start[y]; e < b->list_start[y + 1]; e++) {
        int v = b->list_node[e];
        double wc = b->node_weight[v] * b->list_count[e];
        int q0 = b->post_start[v], q1 = b->post_start[v + 1];
        while (q0 < q1) {  /* the first string >= lo */
            int mid = q0 + (q1 - q0) / 2;
            if (b->post_string[mid] < lo) q0 = mid + 1; else q1 = mid;
        }
        for (int q = q0; q < b->post_start[v + 1]; q++) {
            int x = b->post_string[q];
            if (x >= hi) break;
            raw[x - lo] += wc * b->post_count[q];
        }
    }
}

/* dst[i - i0] = k(x0 + i, y) for i in [i0, i1): the strings are numbered
 * in the call's strings; work: string_work_length() doubles. */
void string_segment(const kernel_spec *spec, int x0, int i0, int i1, int y, double *dst,
                    double *work)
{
    const string_base *b = spec->strings;
    int lo = x0 + i0, hi = x0 + i1;
    if (b->nlev == 0 && b->type != STRING_SEQUENCE) {
        node_segment(b, lo, hi, y, dst);
        for (int x = lo; x < hi; x++) dst[x - lo] = finish_value(b, x, y, dst[x - lo]);
        return;
    }
    for (int x = lo; x < hi; x++) {
        int skip = x == y || (b->normalized && !(b->self[x] * b->self[y] > 0));
        dst[x - lo] = finish_value(b, x, y, skip ? 0.0 : base_raw(b, x, y, work));
    }
}

/* The dense part of the tile of kernel_block() between the points a (rows
 * row0 ..) and the columns j0 .. j1 - 1 of b, for every string kernel
 * with dense nodes: one product in register tiles each (tiles.c: each
 * value summed over the nodes in order, for any thread count), outside
 * the threads' region. The tile lives until string_tiles_release(), at the
 * end of kernel_block(). */
void string_tiles(const kernel_eval *k, const kernel_points *a, const kernel_points *b,
                  int row0, int j0, int j1, int threads)
{
    for (int i = 0; i < k->nbase; i++) {
        string_base *s = k->bases[i].code == KERNEL_STRING ? k->bases[i].strings : NULL;
        if (s == NULL || s->nlev != 0 || s->type == STRING_SEQUENCE || s->ndense == 0)
            continue;
        int rows = a->n - row0, cols = j1 - j0, inner = s->ndense, lda = s->nstr;
        s->tile_rows = 0;
        if (rows <= 0 || cols <= 0) continue;
        size_t need = (size_t) rows * cols;
        if (need > s->tile_cap) {
            s->tile = (double *) R_alloc(need, sizeof(double));
            s->tile_cap = need;
        }
        memset(s->tile, 0, need * sizeof(double));
        tile_gemm(rows, cols, inner, s->A + a->first + row0, lda, 0, s->A + b->first + j0,
                  lda, 1, 1.0, s->tile, rows, threads);
        s->tile_x0 = a->first + row0;
        s->tile_rows = rows;
        s->tile_y0 = b->first + j0;
        s->tile_cols = cols;
    }
}

/* Forget the tiles (their memory goes with the caller's R_alloc scope). */
void string_tiles_release(const kernel_eval *k)
{
    for (int i = 0; i < k->nbase; i++) {
        string_base *s = k->bases[i].code == KERNEL_STRING ? k->bases[i].strings : NULL;
        if (s == NULL) continue;
        s->tile = NULL;
        s->tile_cap = 0;
        s->tile_rows = s->tile_cols = 0;
    }
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
        if (n == 0) {  /* nothing to index */
            b->nlev = 1;
            continue;
        }
        if (b->type == STRING_SEQUENCE) {
            int *T, *start, *len, K;
            build_text(strings, 0, &T, &start, &len, &K);
            b->text = T; b->text_start = start; b->text_len = len;
        } else {
            build_index(b, strings);
        }
        if (b->self != NULL) {  /* the nodes' k(s, s), from the index */
            for (int s = 0; s < n; s++)
                if (simd_not_finite(b->self[s]))
                    error_data("string kernel values are not finite: try another 'lambda'");
            continue;
        }
        size_t wlen = base_work_length(b);
        if (wlen > 2e8)
            error_memory("the strings are too long for the \"sequence\" kernel "
                         "(%.0f doubles of scratch)", (double) wlen);
        double *self = (double *) R_alloc((size_t) n + 1, sizeof(double));
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
            self[s] = base_raw(b, s, s, work + wlen * (size_t) t);
            bad |= simd_not_finite(self[s]);
        }
        if (bad) error_data("string kernel values are not finite: try another 'lambda'");
        b->self = self;
        R_CheckUserInterrupt();
    }
}
