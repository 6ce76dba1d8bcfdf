/* The matrix-vector products of tiles_vector.c (the symmetric one's
 * columns, the general one and its transpose, the randomized solver's
 * symmetric product), written once and compiled once per copy:
 * tiles_vector.c includes it with TV(name) naming the copy, TV_ATTR its
 * target attribute, TV_VECTOR 1 where the copy keeps four lanes in a vd4
 * (0: the plain loops, which keep them in arrays, in the same order),
 * TV_FMA(x, y, acc) the copy's multiply-add of vd4 lanes and TV_FMA1
 * that of one double (simd.h's helpers: fused in the copies whose
 * instruction set fuses, a product then a sum in the others). A sum of products is written as its first product,
 * then a multiply-add per further term, then added to what it updates: the
 * order of the plain loops of before, so that the copies without fused
 * multiply-adds keep their bits. Nothing here calls R. */

/* Columns j .. j + 3 of the lower triangle: t (rows from j; t[0] is row j)
 * += their part A(i, c) x(c), dots[c - j] = sum over i > c of A(i, c) x(i). */
static TV_ATTR void TV(symv_quad)(int n, const double *A, int lda, const double *x, int j,
                                  double *t, double *dots)
{
    const double *a0 = A + (size_t) j * lda, *a1 = a0 + lda, *a2 = a1 + lda,
        *a3 = a2 + lda;
    double x0 = x[j], x1 = x[j + 1], x2 = x[j + 2], x3 = x[j + 3];
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, s;
    /* the 4 x 4 diagonal block, lower triangle */
    t[0] = TV_FMA1(a0[j], x0, t[0]);
    s = TV_FMA1(a1[j + 1], x1, a0[j + 1] * x0);
    t[1] += s;
    s = TV_FMA1(a2[j + 2], x2, TV_FMA1(a1[j + 2], x1, a0[j + 2] * x0));
    t[2] += s;
    s = TV_FMA1(a3[j + 3], x3, TV_FMA1(a2[j + 3], x2, TV_FMA1(a1[j + 3], x1, a0[j + 3] * x0)));
    t[3] += s;
    s = TV_FMA1(a0[j + 3], x[j + 3], TV_FMA1(a0[j + 2], x[j + 2], a0[j + 1] * x[j + 1]));
    d0 += s;
    s = TV_FMA1(a1[j + 3], x[j + 3], a1[j + 2] * x[j + 2]);
    d1 += s;
    d2 = TV_FMA1(a2[j + 3], x[j + 3], d2);
    int i = j + 4;
#if TV_VECTOR
    vd4 v0 = VD4_SPLAT(0.0), v1 = v0, v2 = v0, v3 = v0;
    vd4 y0 = VD4_SPLAT(x0), y1 = VD4_SPLAT(x1), y2 = VD4_SPLAT(x2), y3 = VD4_SPLAT(x3);
    for (; i + 4 <= n; i += 4) {
        vd4 b0 = *(const vd4u *) (a0 + i), b1 = *(const vd4u *) (a1 + i),
            b2 = *(const vd4u *) (a2 + i), b3 = *(const vd4u *) (a3 + i),
            xi = *(const vd4u *) (x + i), ti = *(const vd4u *) (t + i - j);
        vd4 sv = TV_FMA(b3, y3, TV_FMA(b2, y2, TV_FMA(b1, y1, b0 * y0)));
        *(vd4u *) (t + i - j) = ti + sv;
        v0 = TV_FMA(b0, xi, v0); v1 = TV_FMA(b1, xi, v1);
        v2 = TV_FMA(b2, xi, v2); v3 = TV_FMA(b3, xi, v3);
    }
#else
    double v0[4] = {0, 0, 0, 0}, v1[4] = {0, 0, 0, 0}, v2[4] = {0, 0, 0, 0},
        v3[4] = {0, 0, 0, 0};
    for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; l++) {
            double b0 = a0[i + l], b1 = a1[i + l], b2 = a2[i + l], b3 = a3[i + l],
                xi = x[i + l];
            s = TV_FMA1(b3, x3, TV_FMA1(b2, x2, TV_FMA1(b1, x1, b0 * x0)));
            t[i + l - j] += s;
            v0[l] = TV_FMA1(b0, xi, v0[l]); v1[l] = TV_FMA1(b1, xi, v1[l]);
            v2[l] = TV_FMA1(b2, xi, v2[l]); v3[l] = TV_FMA1(b3, xi, v3[l]);
        }
#endif
    d0 += VD4_SUM(v0);
    d1 += VD4_SUM(v1);
    d2 += VD4_SUM(v2);
    d3 += VD4_SUM(v3);
    for (; i < n; i++) {
        double b0 = a0[i], b1 = a1[i], b2 = a2[i], b3 = a3[i], xi = x[i];
        s = TV_FMA1(b3, x3, TV_FMA1(b2, x2, TV_FMA1(b1, x1, b0 * x0)));
        t[i - j] += s;
        d0 = TV_FMA1(b0, xi, d0); d1 = TV_FMA1(b1, xi, d1);
        d2 = TV_FMA1(b2, xi, d2); d3 = TV_FMA1(b3, xi, d3);
    }
    dots[0] = d0; dots[1] = d1; dots[2] = d2; dots[3] = d3;
}

/* One column j alone (the last columns of an order not divisible by 4). */
static TV_ATTR void TV(symv_single)(int n, const double *A, int lda, const double *x, int j,
                                    double *t, double *dots)
{
    const double *a = A + (size_t) j * lda;
    double xj = x[j], d = 0.0;
    t[0] = TV_FMA1(a[j], xj, t[0]);
    for (int i = j + 1; i < n; i++) {
        t[i - j] = TV_FMA1(a[i], xj, t[i - j]);
        d = TV_FMA1(a[i], x[i], d);
    }
    dots[0] = d;
}

/* y (n) += sign A x, A n x k (leading dimension lda): four columns per pass
 * over y; each y(i) summed over the columns in order. */
static TV_ATTR void TV(gemv)(int n, int k, const double *A, int lda, const double *x,
                             double sign, double *y)
{
    int l = 0;
    for (; l + 4 <= k; l += 4) {
        const double *a0 = A + (size_t) l * lda, *a1 = a0 + lda, *a2 = a1 + lda,
            *a3 = a2 + lda;
        double x0 = sign * x[l], x1 = sign * x[l + 1], x2 = sign * x[l + 2],
            x3 = sign * x[l + 3];
        int i = 0;
#if TV_VECTOR
        vd4 y0 = VD4_SPLAT(x0), y1 = VD4_SPLAT(x1), y2 = VD4_SPLAT(x2), y3 = VD4_SPLAT(x3);
        for (; i + 4 <= n; i += 4) {
            vd4 t = *(const vd4u *) (y + i);
            t = TV_FMA(*(const vd4u *) (a0 + i), y0, t);
            t = TV_FMA(*(const vd4u *) (a1 + i), y1, t);
            t = TV_FMA(*(const vd4u *) (a2 + i), y2, t);
            t = TV_FMA(*(const vd4u *) (a3 + i), y3, t);
            *(vd4u *) (y + i) = t;
        }
#endif
        for (; i < n; i++)
            y[i] = TV_FMA1(a3[i], x3, TV_FMA1(a2[i], x2, TV_FMA1(a1[i], x1,
                                                                  TV_FMA1(a0[i], x0, y[i]))));
    }
    for (; l < k; l++) {
        const double *a = A + (size_t) l * lda;
        double xl = sign * x[l];
        for (int i = 0; i < n; i++) y[i] = TV_FMA1(a[i], xl, y[i]);
    }
}

/* y (k) = A' x, A n x k: four columns' dot products per pass over x, each
 * in four lanes; the order of each sum fixed by n. */
static TV_ATTR void TV(gemv_t)(int n, int k, const double *A, int lda, const double *x,
                               double *y)
{
    int l = 0;
    for (; l + 4 <= k; l += 4) {
        const double *a0 = A + (size_t) l * lda, *a1 = a0 + lda, *a2 = a1 + lda,
            *a3 = a2 + lda;
        int i = 0;
#if TV_VECTOR
        vd4 v0 = VD4_SPLAT(0.0), v1 = v0, v2 = v0, v3 = v0;
        for (; i + 4 <= n; i += 4) {
            vd4 xi = *(const vd4u *) (x + i);
            v0 = TV_FMA(*(const vd4u *) (a0 + i), xi, v0);
            v1 = TV_FMA(*(const vd4u *) (a1 + i), xi, v1);
            v2 = TV_FMA(*(const vd4u *) (a2 + i), xi, v2);
            v3 = TV_FMA(*(const vd4u *) (a3 + i), xi, v3);
        }
#else
        double v0[4] = {0, 0, 0, 0}, v1[4] = {0, 0, 0, 0}, v2[4] = {0, 0, 0, 0},
            v3[4] = {0, 0, 0, 0};
        for (; i + 4 <= n; i += 4)
            for (int c = 0; c < 4; c++) {
                double xi = x[i + c];
                v0[c] = TV_FMA1(a0[i + c], xi, v0[c]); v1[c] = TV_FMA1(a1[i + c], xi, v1[c]);
                v2[c] = TV_FMA1(a2[i + c], xi, v2[c]); v3[c] = TV_FMA1(a3[i + c], xi, v3[c]);
            }
#endif
        double d0 = VD4_SUM(v0), d1 = VD4_SUM(v1), d2 = VD4_SUM(v2), d3 = VD4_SUM(v3);
        for (; i < n; i++) {
            d0 = TV_FMA1(a0[i], x[i], d0); d1 = TV_FMA1(a1[i], x[i], d1);
            d2 = TV_FMA1(a2[i], x[i], d2); d3 = TV_FMA1(a3[i], x[i], d3);
        }
        y[l] = d0; y[l + 1] = d1; y[l + 2] = d2; y[l + 3] = d3;
    }
    for (; l < k; l++) {
        const double *a = A + (size_t) l * lda;
        double d = 0.0;
        for (int i = 0; i < n; i++) d = TV_FMA1(a[i], x[i], d);
        y[l] = d;
    }
}

/* y[r0..r1-1] += a[r0..r1-1] xk, and the dot product of a and x over those
 * rows, returned: in four lanes (row r0 + 4m + l in lane l; two vectors of
 * two in the two-double copy, TV_FMA2), summed ((l0 + l1) + (l2 + l3)),
 * then the rows left over in order. The split is written here, not left to
 * the compiler: an "omp simd" reduction split the sum as gcc chose, clang
 * left the AVX2 copy's loop scalar, and neither split it without OpenMP,
 * so the bits depended on the compiler. */
static TV_ATTR double TV(symm_chunk)(const double *a, const double *x, double *y, double xk,
                                     int r0, int r1)
{
    int i = r0;
#if TV_VECTOR && defined(TV_FMA2)
    vd2 lo = {0.0, 0.0}, hi = lo, xkv = {xk, xk};
    for (; i + 4 <= r1; i += 4) {
        vd2 a0 = *(const vd2u *) (a + i), a1 = *(const vd2u *) (a + i + 2);
        *(vd2u *) (y + i) = TV_FMA2(a0, xkv, *(const vd2u *) (y + i));
        *(vd2u *) (y + i + 2) = TV_FMA2(a1, xkv, *(const vd2u *) (y + i + 2));
        lo = TV_FMA2(a0, *(const vd2u *) (x + i), lo);
        hi = TV_FMA2(a1, *(const vd2u *) (x + i + 2), hi);
    }
    double s = (lo[0] + lo[1]) + (hi[0] + hi[1]);
#elif TV_VECTOR
    vd4 acc = VD4_SPLAT(0.0), xkv = VD4_SPLAT(xk);
    for (; i + 4 <= r1; i += 4) {
        vd4 ai = *(const vd4u *) (a + i);
        *(vd4u *) (y + i) = TV_FMA(ai, xkv, *(const vd4u *) (y + i));
        acc = TV_FMA(ai, *(const vd4u *) (x + i), acc);
    }
    double s = VD4_SUM(acc);
#else
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (; i + 4 <= r1; i += 4) {
        y[i] = TV_FMA1(a[i], xk, y[i]);
        y[i + 1] = TV_FMA1(a[i + 1], xk, y[i + 1]);
        y[i + 2] = TV_FMA1(a[i + 2], xk, y[i + 2]);
        y[i + 3] = TV_FMA1(a[i + 3], xk, y[i + 3]);
        s0 = TV_FMA1(a[i], x[i], s0);
        s1 = TV_FMA1(a[i + 1], x[i + 1], s1);
        s2 = TV_FMA1(a[i + 2], x[i + 2], s2);
        s3 = TV_FMA1(a[i + 3], x[i + 3], s3);
    }
    double s = (s0 + s1) + (s2 + s3);
#endif
    for (; i < r1; i++) {
        y[i] = TV_FMA1(a[i], xk, y[i]);
        s = TV_FMA1(a[i], x[i], s);
    }
    return s;
}

/* Y[, c0..c1-1] = A X[, c0..c1-1], A symmetric in its lower triangle (n x
 * n), X and Y n x l: each entry of A below the diagonal serves twice, in
 * one pass over A, panel by panel, the rows below the diagonal block by
 * TV(symm_chunk). */
static TV_ATTR void TV(symm)(const double *A, int n, const double *X, double *Y, int c0,
                             int c1)
{
    for (int c = c0; c < c1; c++) memset(Y + (size_t) c * n, 0, (size_t) n * sizeof(double));
    for (int j0 = 0; j0 < n; j0 += SYM_PANEL) {
        int j1 = j0 + SYM_PANEL < n ? j0 + SYM_PANEL : n;
        for (int c = c0; c < c1; c++) {       /* the diagonal block */
            const double *x = X + (size_t) c * n;
            double *y = Y + (size_t) c * n;
            for (int k = j0; k < j1; k++) {
                const double *a = A + (size_t) k * n;
                double s = a[k] * x[k];
                for (int i = k + 1; i < j1; i++) {
                    y[i] = TV_FMA1(a[i], x[k], y[i]);
                    s = TV_FMA1(a[i], x[i], s);
                }
                y[k] += s;
            }
        }
        for (int r0 = j1; r0 < n; r0 += SYM_CHUNK) {
            int r1 = r0 + SYM_CHUNK < n ? r0 + SYM_CHUNK : n;
            for (int c = c0; c < c1; c++) {
                const double *x = X + (size_t) c * n;
                double *y = Y + (size_t) c * n;
                for (int k = j0; k < j1; k++) {
                    const double *a = A + (size_t) k * n;
                    y[k] += TV(symm_chunk)(a, x, y, x[k], r0, r1);
                }
            }
        }
    }
}
