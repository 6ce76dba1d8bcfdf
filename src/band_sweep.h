/* Stage 2's sweep (band_chase() in band_reduction.c) and its kernels, and
 * stage 1's panel factorization (BS(panel_qr), band_panel()),
 * written once and compiled once per copy, as tiles_vector.h's products
 * are: band_reduction.c includes this file with BS(name) naming the copy,
 * BS_ATTR its target attribute, BS_VECTOR the width of its vectors (4: a
 * vd4, AVX2; 2: a vd2, SSE2 or NEON; 0: none, the plain loops), BS_FMA(x,
 * y, acc) its multiply-add of vectors and BS_FMA1 that of one double
 * (simd.h's helpers: fused in the copies whose instruction set fuses, a
 * product then a sum in the others; the plain copy's BS_FMA is its
 * BS_FMA1); it undefines them all at its end.
 *
 * The order of every sum is written here, never left to the compiler: a
 * dot product of len entries keeps four lanes (entry 4m + l in lane l
 * while four entries remain), sums them as (l0 + l1) + (l2 + l3), then
 * adds the entries left over in order, in every copy (BS_LANES); every
 * other entry is one chain of the copy's multiply-adds, column after
 * column. So a copy's bits follow its rule and the sizes alone: not the
 * compiler, its contraction flags or OpenMP (stage 2 was written with
 * "omp simd" reductions, which gcc split as it chose and nothing split
 * without OpenMP). In LAPACK's terms (dsb2st_kernels), a sweep's first
 * step is ttype 1 (BS(reflector), then BS(two_sided): dlarfg, dlarfy),
 * each later step ttype 2 (BS(right), BS(reflector), BS(left): dlarfx
 * from the right, dlarfg, dlarfx from the left) then ttype 3
 * (BS(two_sided)). Nothing here calls R or LAPACK: it runs on the
 * threads. */

/* The copy's vectors (BSV: BSV_W doubles; one double in the plain copy),
 * for the loops whose every entry is its own chain (the order of the
 * entries then does not matter), and the four lanes of a dot product
 * (BS_LANES: one vd4, two vd2 or four doubles; BS_LANES_ADD adds the
 * products of four entries, BS_LANES_SUM sums the lanes). */
#if BS_VECTOR == 4
# define BSV vd4
# define BSV_W 4
# define BSV_SPLAT(x) VD4_SPLAT(x)
# define BSV_LOAD(p) (*(const vd4u *) (p))
# define BSV_STORE(p, x) (*(vd4u *) (p) = (x))
# define BS_LANES(s) vd4 s = VD4_SPLAT(0.0)
# define BS_LANES_ADD(s, a, b) (s = BS_FMA(BSV_LOAD(a), BSV_LOAD(b), s))
# define BS_LANES_SUM(s) VD4_SUM(s)
#elif BS_VECTOR == 2
# define BSV vd2
# define BSV_W 2
# define BSV_SPLAT(x) VD2_SPLAT(x)
# define BSV_LOAD(p) (*(const vd2u *) (p))
# define BSV_STORE(p, x) (*(vd2u *) (p) = (x))
# define BS_LANES(s) vd2 s##_lo = VD2_SPLAT(0.0), s##_hi = VD2_SPLAT(0.0)
# define BS_LANES_ADD(s, a, b)                                                 \
    (s##_lo = BS_FMA(BSV_LOAD(a), BSV_LOAD(b), s##_lo),                        \
     s##_hi = BS_FMA(BSV_LOAD((a) + 2), BSV_LOAD((b) + 2), s##_hi))
# define BS_LANES_SUM(s) ((s##_lo[0] + s##_lo[1]) + (s##_hi[0] + s##_hi[1]))
#else
# define BSV double
# define BSV_W 1
# define BSV_SPLAT(x) (x)
# define BSV_LOAD(p) (*(p))
# define BSV_STORE(p, x) (*(p) = (x))
# define BS_LANES(s) double s[4] = {0.0, 0.0, 0.0, 0.0}
# define BS_LANES_ADD(s, a, b)                                                 \
    (s[0] = BS_FMA1((a)[0], (b)[0], s[0]), s[1] = BS_FMA1((a)[1], (b)[1], s[1]), \
     s[2] = BS_FMA1((a)[2], (b)[2], s[2]), s[3] = BS_FMA1((a)[3], (b)[3], s[3]))
# define BS_LANES_SUM(s) VD4_SUM(s)
#endif

/* a'b over len entries, in four lanes */
static inline BS_ATTR double BS(dot)(const double *a, const double *b, int len)
{
    BS_LANES(acc);
    int i = 0;
    for (; i + 4 <= len; i += 4) BS_LANES_ADD(acc, a + i, b + i);
    double s = BS_LANES_SUM(acc);
    for (; i < len; i++) s = BS_FMA1(a[i], b[i], s);
    return s;
}

/* The dot products of four columns (b0, its next three ld apart) with u,
 * over len entries, each as BS(dot)'s, in one pass over u. */
static inline BS_ATTR void BS(dot4)(const double *b0, int ld, const double *u, int len,
                                    double *out)
{
    const double *b1 = b0 + ld, *b2 = b1 + ld, *b3 = b2 + ld;
    BS_LANES(e0); BS_LANES(e1); BS_LANES(e2); BS_LANES(e3);
    int i = 0;
    for (; i + 4 <= len; i += 4) {
        BS_LANES_ADD(e0, b0 + i, u + i); BS_LANES_ADD(e1, b1 + i, u + i);
        BS_LANES_ADD(e2, b2 + i, u + i); BS_LANES_ADD(e3, b3 + i, u + i);
    }
    double s0 = BS_LANES_SUM(e0), s1 = BS_LANES_SUM(e1), s2 = BS_LANES_SUM(e2),
        s3 = BS_LANES_SUM(e3);
    for (; i < len; i++) {
        s0 = BS_FMA1(b0[i], u[i], s0); s1 = BS_FMA1(b1[i], u[i], s1);
        s2 = BS_FMA1(b2[i], u[i], s2); s3 = BS_FMA1(b3[i], u[i], s3);
    }
    out[0] = s0; out[1] = s1; out[2] = s2; out[3] = s3;
}

/* y += f x over len entries */
static inline BS_ATTR void BS(axpy)(double f, const double *x, double *y, int len)
{
    BSV fv = BSV_SPLAT(f);
    int i = 0;
    for (; i + BSV_W <= len; i += BSV_W)
        BSV_STORE(y + i, BS_FMA(BSV_LOAD(x + i), fv, BSV_LOAD(y + i)));
    for (; i < len; i++) y[i] = BS_FMA1(x[i], f, y[i]);
}

/* y = B v, B rows x cols (columns ld apart): each entry of y one chain of
 * multiply-adds over the columns in order, four columns a pass over y. */
static inline BS_ATTR void BS(gemv)(const double *B, int ld, int rows, int cols,
                                    const double *v, double *y)
{
    for (int i = 0; i < rows; i++) y[i] = 0.0;
    int j = 0;
    for (; j + 4 <= cols; j += 4) {
        const double *b0 = B + (size_t) j * ld, *b1 = b0 + ld, *b2 = b1 + ld, *b3 = b2 + ld;
        double x0 = v[j], x1 = v[j + 1], x2 = v[j + 2], x3 = v[j + 3];
        BSV s0 = BSV_SPLAT(x0), s1 = BSV_SPLAT(x1), s2 = BSV_SPLAT(x2), s3 = BSV_SPLAT(x3);
        int i = 0;
        for (; i + BSV_W <= rows; i += BSV_W)
            BSV_STORE(y + i, BS_FMA(BSV_LOAD(b3 + i), s3, BS_FMA(BSV_LOAD(b2 + i), s2,
                      BS_FMA(BSV_LOAD(b1 + i), s1, BS_FMA(BSV_LOAD(b0 + i), s0,
                                                          BSV_LOAD(y + i))))));
        for (; i < rows; i++)
            y[i] = BS_FMA1(b3[i], x3, BS_FMA1(b2[i], x2, BS_FMA1(b1[i], x1,
                                                                BS_FMA1(b0[i], x0, y[i]))));
    }
    for (; j < cols; j++) BS(axpy)(v[j], B + (size_t) j * ld, y, rows);
}

/* y += xk a, and a'x returned (in four lanes), over len entries: one pass
 * over a column for both of its uses in a symmetric product */
static inline BS_ATTR double BS(axpy_dot)(const double *a, const double *x, double *y,
                                          double xk, int len)
{
    BS_LANES(acc);
    BSV xkv = BSV_SPLAT(xk);
    int i = 0;
    for (; i + 4 <= len; i += 4) {
        for (int q = 0; q < 4; q += BSV_W)
            BSV_STORE(y + i + q, BS_FMA(BSV_LOAD(a + i + q), xkv, BSV_LOAD(y + i + q)));
        BS_LANES_ADD(acc, a + i, x + i);
    }
    double s = BS_LANES_SUM(acc);
    for (; i < len; i++) {
        y[i] = BS_FMA1(a[i], xk, y[i]);
        s = BS_FMA1(a[i], x[i], s);
    }
    return s;
}

/* Columns j .. j + 3 of w = C v (C symmetric len x len in its lower
 * triangle, columns ld apart): the entries of w from row j on get these
 * columns' terms, diagonal included, in column order; then w[j + k] gets
 * the dot product of column j + k below its diagonal with v: the rows of
 * the 4 x 4 block in order, plus those below it in four lanes. */
static inline BS_ATTR void BS(symv_quad)(const double *C, int ld, int len, int j,
                                         const double *v, double *w)
{
    const double *c0 = C + (size_t) j * ld, *c1 = c0 + ld, *c2 = c1 + ld, *c3 = c2 + ld;
    double x0 = v[j], x1 = v[j + 1], x2 = v[j + 2], x3 = v[j + 3];
    w[j] = BS_FMA1(c0[j], x0, w[j]);
    w[j + 1] = BS_FMA1(c1[j + 1], x1, BS_FMA1(c0[j + 1], x0, w[j + 1]));
    w[j + 2] = BS_FMA1(c2[j + 2], x2, BS_FMA1(c1[j + 2], x1, BS_FMA1(c0[j + 2], x0, w[j + 2])));
    w[j + 3] = BS_FMA1(c3[j + 3], x3, BS_FMA1(c2[j + 3], x2, BS_FMA1(c1[j + 3], x1,
                                                                    BS_FMA1(c0[j + 3], x0, w[j + 3]))));
    /* each chain from 0 by the copy's multiply-add: a bare product that
     * meets an addition would be fused or not as the contraction flags say */
    double d0 = BS_FMA1(c0[j + 3], x3, BS_FMA1(c0[j + 2], x2, BS_FMA1(c0[j + 1], x1, 0.0)));
    double d1 = BS_FMA1(c1[j + 3], x3, BS_FMA1(c1[j + 2], x2, 0.0));
    double d2 = BS_FMA1(c2[j + 3], x3, 0.0);
    BSV s0 = BSV_SPLAT(x0), s1 = BSV_SPLAT(x1), s2 = BSV_SPLAT(x2), s3 = BSV_SPLAT(x3);
    BS_LANES(e0); BS_LANES(e1); BS_LANES(e2); BS_LANES(e3);
    int i = j + 4;
    for (; i + 4 <= len; i += 4) {
        for (int q = i; q < i + 4; q += BSV_W)
            BSV_STORE(w + q, BS_FMA(BSV_LOAD(c3 + q), s3, BS_FMA(BSV_LOAD(c2 + q), s2,
                      BS_FMA(BSV_LOAD(c1 + q), s1, BS_FMA(BSV_LOAD(c0 + q), s0,
                                                          BSV_LOAD(w + q))))));
        BS_LANES_ADD(e0, c0 + i, v + i); BS_LANES_ADD(e1, c1 + i, v + i);
        BS_LANES_ADD(e2, c2 + i, v + i); BS_LANES_ADD(e3, c3 + i, v + i);
    }
    double t0 = BS_LANES_SUM(e0), t1 = BS_LANES_SUM(e1), t2 = BS_LANES_SUM(e2),
        t3 = BS_LANES_SUM(e3);
    for (; i < len; i++) {
        w[i] = BS_FMA1(c3[i], x3, BS_FMA1(c2[i], x2, BS_FMA1(c1[i], x1, BS_FMA1(c0[i], x0, w[i]))));
        t0 = BS_FMA1(c0[i], v[i], t0); t1 = BS_FMA1(c1[i], v[i], t1);
        t2 = BS_FMA1(c2[i], v[i], t2); t3 = BS_FMA1(c3[i], v[i], t3);
    }
    w[j] += d0 + t0;
    w[j + 1] += d1 + t1;
    w[j + 2] += d2 + t2;
    w[j + 3] += t3;
}

/* c -= v wj + w vj over len entries (as c - v wj, then - w vj) */
static inline BS_ATTR void BS(rank2)(double *c, const double *v, double wj, const double *w,
                                     double vj, int len)
{
    double nw = -wj, nv = -vj;
    BSV nwv = BSV_SPLAT(nw), nvv = BSV_SPLAT(nv);
    int i = 0;
    for (; i + BSV_W <= len; i += BSV_W)
        BSV_STORE(c + i, BS_FMA(BSV_LOAD(w + i), nvv,
                                BS_FMA(BSV_LOAD(v + i), nwv, BSV_LOAD(c + i))));
    for (; i < len; i++) c[i] = BS_FMA1(w[i], nv, BS_FMA1(v[i], nw, c[i]));
}

/* C <- H C H, H = I - tau v v', C the symmetric len x len block at (r, r)
 * (lower triangle; LAPACK's dlarfy): w = tau C v (four columns a pass,
 * the last ones one by one), w -= (tau / 2) (w'v) v, C -= v w' + w v'. */
static inline BS_ATTR void BS(two_sided)(band_state *st, int r, int len, const double *v,
                                         double tau, double *w)
{
    if (tau == 0.0) return;
    const double *C = &BAND(st, r, r);
    int ld = st->ld, j = 0;
    for (int i = 0; i < len; i++) w[i] = 0.0;
    for (; j + 4 <= len; j += 4) BS(symv_quad)(C, ld, len, j, v, w);
    for (; j < len; j++) {
        const double *c = C + (size_t) j * ld;
        w[j] = BS_FMA1(c[j], v[j], w[j]);
        w[j] += BS(axpy_dot)(c + j + 1, v + j + 1, w + j + 1, v[j], len - j - 1);
    }
    for (int i = 0; i < len; i++) w[i] *= tau;
    double alpha = -0.5 * tau * BS(dot)(w, v, len);
    BS(axpy)(alpha, v, w, len);
    for (j = 0; j < len; j++)
        BS(rank2)(&BAND(st, r + j, r + j), v + j, w[j], w + j, v[j], len - j);
}

/* The rows x cols block at (r, c) <- block H (from the right; dlarfx
 * 'Right'): y = B v, B -= tau y v'. */
static inline BS_ATTR void BS(right)(band_state *st, int r, int rows, int c, int cols,
                                     const double *v, double tau, double *y)
{
    if (tau == 0.0) return;
    BS(gemv)(&BAND(st, r, c), st->ld, rows, cols, v, y);
    for (int j = 0; j < cols; j++) BS(axpy)(-(tau * v[j]), y, &BAND(st, r, c + j), rows);
}

/* The rows x cols block at (r, c) <- H block (from the left; dlarfx
 * 'Left'): each column -= tau (v'column) v, the dot products four columns
 * a pass over v. */
static inline BS_ATTR void BS(left)(band_state *st, int r, int rows, int c, int cols,
                                    const double *v, double tau)
{
    if (tau == 0.0) return;
    int ld = st->ld, j = 0;
    double dots[4];
    for (; j + 4 <= cols; j += 4) {
        double *b0 = &BAND(st, r, c + j);
        BS(dot4)(b0, ld, v, rows, dots);
        for (int k = 0; k < 4; k++) BS(axpy)(-(tau * dots[k]), v, b0 + (size_t) k * ld, rows);
    }
    for (; j < cols; j++) {
        double *col = &BAND(st, r, c + j);
        BS(axpy)(-(tau * BS(dot)(col, v, rows)), v, col, rows);
    }
}

/* sqrt(alpha^2 + ss), ss = x'x (m entries), as LAPACK's
 * dlapy2(alpha, dnrm2(x)) but with one root: directly where no square
 * can overflow and none that matters underflows (ss and alpha^2 within
 * BAND_NORM_SMALL .. BAND_NORM_BIG), else again from alpha and x scaled
 * by a power of two (exact) that brings the largest of them to about 1,
 * the scaled x in scratch (m). Inf where an entry is, NaN where one is. */
static inline BS_ATTR double BS(reflector_norm)(double alpha, double ss, const double *x,
                                                int m, double *scratch)
{
    if (ss >= BAND_NORM_SMALL && ss <= BAND_NORM_BIG && fabs(alpha) <= BAND_ALPHA_BIG)
        return sqrt(BS_FMA1(alpha, alpha, ss));
    if (ss != ss) return ss;
    double big = fabs(alpha);
    for (int i = 0; i < m; i++)
        if (fabs(x[i]) > big) big = fabs(x[i]);
    if (simd_not_finite(big) || big == 0.0) return big;
    int e;
    (void) frexp(big, &e);
    if (e < -BAND_SCALE_MAX) e = -BAND_SCALE_MAX;  /* 2^-e stays finite */
    double s = ldexp(1.0, -e), a = alpha * s;
    for (int i = 0; i < m; i++) scratch[i] = x[i] * s;
    return ldexp(sqrt(BS_FMA1(a, a, BS(dot)(scratch, scratch, m))), e);
}

/* The reflector H = I - tau v v' with H (alpha, x) = (beta, 0), as
 * LAPACK's dlarfg makes it: beta = -sign(alpha) hypot(alpha, ||x||),
 * tau = (beta - alpha) / beta, v = (1, x / (alpha - beta)), the v below
 * its unit entry written over x and beta over alpha; tau = 0 (H = I)
 * where x is 0 or empty. Where |beta| is below BAND_SAFE_MIN, alpha and x
 * are first scaled up by 1 / BAND_SAFE_MIN (up to 20 times, as dlarfg)
 * and beta found again, so that 1 / (alpha - beta) is finite; beta is
 * scaled back at the end. scratch: m doubles. */
static inline BS_ATTR double BS(householder)(double *alpha, double *x, int m, double *scratch)
{
    double ss = m > 0 ? BS(dot)(x, x, m) : 0.0;
    if (ss == 0.0 && band_all_zero(x, m)) return 0.0;
    double a = *alpha, beta = -copysign(BS(reflector_norm)(a, ss, x, m, scratch), a);
    int knt = 0;
    if (fabs(beta) < BAND_SAFE_MIN) {
        do {
            knt++;
            for (int i = 0; i < m; i++) x[i] *= 1.0 / BAND_SAFE_MIN;
            beta *= 1.0 / BAND_SAFE_MIN;
            a *= 1.0 / BAND_SAFE_MIN;
        } while (fabs(beta) < BAND_SAFE_MIN && knt < 20);
        ss = BS(dot)(x, x, m);
        beta = -copysign(BS(reflector_norm)(a, ss, x, m, scratch), a);
    }
    double tau = (beta - a) / beta, scale = 1.0 / (a - beta);
    for (int i = 0; i < m; i++) x[i] *= scale;
    for (int j = 0; j < knt; j++) beta *= BAND_SAFE_MIN;
    *alpha = beta;
    return tau;
}

/* The reflector of sweep s that annihilates rows r + 1 .. r + len - 1 of
 * column c: v (len, v[0] = 1) and its tau, returned; the band keeps beta
 * at (r, c) and zeros below; v and tau are also stored in row s of A's
 * strict upper triangle, tau in place of the unit entry. */
static inline BS_ATTR double BS(reflector)(band_state *st, int s, int r, int c, int len,
                                           double *v)
{
    double *x = &BAND(st, r + 1, c), *a = st->A;
    size_t n = (size_t) st->n;
    double tau = BS(householder)(&BAND(st, r, c), x, len - 1, v + 1);
    v[0] = 1.0;
    a[s + (size_t) r * n] = tau;
    for (int i = 1; i < len; i++) {
        v[i] = x[i - 1];
        x[i - 1] = 0.0;
        a[s + (size_t) (r + i) * n] = v[i];
    }
    return tau;
}

/* Stage 1's panel (band_panel() in band_reduction.c): the m x k block P
 * (columns ld apart) factored Q R as LAPACK's dgeqr2 factors it, column
 * by column: column j's reflector from rows j .. m - 1 (BS(householder),
 * dlarfg: beta on the diagonal, v below it, its tau in tau[j]), applied
 * from the left to the columns after it (dlarf: each column -= tau
 * (v'column) v, the dot products four columns a pass over v). Reflectors
 * for the first min(m, k) columns; scratch: m doubles. */
static BS_ATTR void BS(panel_qr)(double *P, int ld, int m, int k, double *tau,
                                 double *scratch)
{
    double dots[4];
    for (int j = 0; j < k && j < m; j++) {
        double *v = P + j + (size_t) j * ld;
        int len = m - j, c = j + 1;
        tau[j] = BS(householder)(v, v + 1, len - 1, scratch);
        if (tau[j] == 0.0 || c >= k) continue;
        double beta = v[0];
        v[0] = 1.0;
        for (; c + 4 <= k; c += 4) {
            double *b0 = P + j + (size_t) c * ld;
            BS(dot4)(b0, ld, v, len, dots);
            for (int q = 0; q < 4; q++) BS(axpy)(-(tau[j] * dots[q]), v, b0 + (size_t) q * ld, len);
        }
        for (; c < k; c++) {
            double *col = P + j + (size_t) c * ld;
            BS(axpy)(-(tau[j] * BS(dot)(col, v, len)), v, col, len);
        }
        v[0] = beta;
    }
}

/* Sweep s: column s annihilated below its subdiagonal, the bulge chased
 * to the end of the band, step by step (each step's block starts b rows
 * below the last's); prev: the steps done by sweep s - 1 (NULL when it is
 * finished), mine: sweep s's (band_reduction.c's sweep_wait()). Thread id
 * of a team of team takes the id-th of team equal runs of the sweep's
 * steps: where its run starts after another thread's, it waits for that
 * run (mine) and takes the last reflector back from A
 * (band_reflector_read()). Each thread keeps
 * to the same part of every sweep, so the band's rows stay in its cache
 * (dealt whole sweeps round the team, every step's block came from the
 * other core, and two threads were no faster than one). */
static BS_ATTR void BS(sweep)(band_state *st, int s, int id, int team, double *v, double *u,
                              double *work, const int *prev, int *mine)
{
    int n = st->n, b = st->b, r = s + 1, end = s + b < n - 1 ? s + b : n - 1;
    int steps = 1 + (n - 2 - s) / b;  /* step 0, then one per block of b rows below */
    int first = (int) ((long long) steps * id / team),
        last = (int) ((long long) steps * (id + 1) / team);
    double tau = 0.0;
    if (first >= last) return;
    if (first == 0) {
        sweep_wait(prev, 2);
        tau = BS(reflector)(st, s, r, s, end - r + 1, v);
        BS(two_sided)(st, r, end - r + 1, v, tau, work);
        sweep_done(mine, 1);
    } else {
        /* step first - 1's reflector: rows s + 1 + (first - 1) b on */
        r = s + 1 + (first - 1) * b;
        end = r + b - 1 < n - 1 ? r + b - 1 : n - 1;
        sweep_wait(mine, first);
        tau = band_reflector_read(st->A, n, s, r, end - r + 1, v);
    }
    for (int step = first > 0 ? first : 1; step < last; step++) {
        sweep_wait(prev, step + 2);
        int r2 = end + 1, end2 = end + b < n - 1 ? end + b : n - 1;
        int rows = end2 - r2 + 1, cols = end - r + 1;
        BS(right)(st, r2, rows, r, cols, v, tau, work);
        double tau2 = BS(reflector)(st, s, r2, r, rows, u);
        BS(left)(st, r2, rows, r + 1, cols - 1, u, tau2);
        BS(two_sided)(st, r2, rows, u, tau2, work);
        sweep_done(mine, step + 1);
        double *t = v; v = u; u = t;
        tau = tau2;
        r = r2;
        end = end2;
    }
    if (last == steps) sweep_done(mine, SWEEP_FINISHED);
}

#undef BSV
#undef BSV_W
#undef BSV_SPLAT
#undef BSV_LOAD
#undef BSV_STORE
#undef BS_LANES
#undef BS_LANES_ADD
#undef BS_LANES_SUM
#undef BS
#undef BS_ATTR
#undef BS_VECTOR
#undef BS_FMA
#undef BS_FMA1
