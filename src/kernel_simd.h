/* The vector part of the fast kernel blocks (kernel_fast.c), written once
 * and compiled once per instruction set: kernel_fast.c includes it with
 * KF(name) naming the copy, KF_ATTR its target attribute, VD the vector
 * type of W doubles and VI the integer vector of the same size, and
 * VOP(op) naming the copy's vector helpers of simd.h (VOP(SPLAT),
 * VOP(SQRT), VOP(MIN), VOP(MAX): VD2_SQRT, VD4_SQRT, ...). Nothing here
 * calls R. */

/* exp(x) for x in [KF_EXP_LO, KF_EXP_HI] (the caller clamps): x = k ln 2 + r
 * with |r| <= ln(2) / 2 (Cody and Waite's two-part ln 2: k ln2_hi is exact
 * for |k| < 2^11), exp(r) by its Taylor polynomial of degree 13 in Horner's
 * form (truncation below 5e-18 relative), times 2^k built from k's bits. The
 * maximum relative error, measured against exp() over the whole range
 * (tests/testthat/test-kernel-fast.R), is in kernel_fast.c. */
static inline KF_ATTR VD KF(vexp)(VD x)
{
    const VD magic = VOP(SPLAT)(6755399441055744.0); /* 1.5 * 2^52: round to integer */
    VD t = x * VOP(SPLAT)(1.4426950408889634) + magic;
    VD k = t - magic;
    VD r = x - k * VOP(SPLAT)(6.93147180369123816490e-01);
    r = r - k * VOP(SPLAT)(1.90821492927058770002e-10);
    VD p = VOP(SPLAT)(1.0 / 6227020800.0);
    p = p * r + VOP(SPLAT)(1.0 / 479001600.0);
    p = p * r + VOP(SPLAT)(1.0 / 39916800.0);
    p = p * r + VOP(SPLAT)(1.0 / 3628800.0);
    p = p * r + VOP(SPLAT)(1.0 / 362880.0);
    p = p * r + VOP(SPLAT)(1.0 / 40320.0);
    p = p * r + VOP(SPLAT)(1.0 / 5040.0);
    p = p * r + VOP(SPLAT)(1.0 / 720.0);
    p = p * r + VOP(SPLAT)(1.0 / 120.0);
    p = p * r + VOP(SPLAT)(1.0 / 24.0);
    p = p * r + VOP(SPLAT)(1.0 / 6.0);
    p = p * r + VOP(SPLAT)(0.5);
    p = p * r + VOP(SPLAT)(1.0);
    p = p * r + VOP(SPLAT)(1.0);
    /* the low bits of t hold k: 2^k = (k + 1023) << 52 as a double */
    VI bits = ((VI) t - (VI) magic + 1023) << 52;
    return p * (VD) bits;
}

/* exp(v) lane by lane: the polynomial where v is in its range, exp()
 * for the lanes outside it (and NaN). */
static inline KF_ATTR VD KF(vexp_lanes)(VD v)
{
    const VD lo = VOP(SPLAT)(KF_EXP_LO), hi = VOP(SPLAT)(KF_EXP_HI);
    VI outside = ~((v >= lo) & (v <= hi));
    VD r = KF(vexp)(VOP(MIN)(VOP(MAX)(v, lo), hi));
    long long any = 0;
    for (int l = 0; l < W; l++) any |= outside[l];
    if (any)
        for (int l = 0; l < W; l++)
            if (outside[l]) r[l] = exp(v[l]);
    return r;
}

/* exp of four vectors in place, each lane exactly as KF(vexp)() (the same
 * operations, so the same bits), the four Horner chains interleaved: the
 * polynomial is a chain of dependent multiply-adds, and with two chains
 * the units waited on their latency (perf, AVX-512: exp_array was 22% of
 * kernel_matrix(k, z, x) at 1.7 ns a value). Lanes outside
 * [KF_EXP_LO, KF_EXP_HI] (and NaN) get exp(), as in KF(vexp_lanes)(). */
#define KF_HORNER4(c)                                                                     \
    do {                                                                                  \
        const VD h_ = VOP(SPLAT)(c);                                                      \
        p0 = p0 * r0 + h_; p1 = p1 * r1 + h_; p2 = p2 * r2 + h_; p3 = p3 * r3 + h_;       \
    } while (0)
static inline KF_ATTR void KF(vexp4)(VD *v0, VD *v1, VD *v2, VD *v3)
{
    const VD lo = VOP(SPLAT)(KF_EXP_LO), hi = VOP(SPLAT)(KF_EXP_HI);
    VI outside = ~((*v0 >= lo) & (*v0 <= hi)) | ~((*v1 >= lo) & (*v1 <= hi)) |
                 ~((*v2 >= lo) & (*v2 <= hi)) | ~((*v3 >= lo) & (*v3 <= hi));
    long long any = 0;
    for (int l = 0; l < W; l++) any |= outside[l];
    if (any) {
        /* rare (a far point, an overflow): lane by lane */
        *v0 = KF(vexp_lanes)(*v0);
        *v1 = KF(vexp_lanes)(*v1);
        *v2 = KF(vexp_lanes)(*v2);
        *v3 = KF(vexp_lanes)(*v3);
        return;
    }
    const VD magic = VOP(SPLAT)(6755399441055744.0);
    const VD log2e = VOP(SPLAT)(1.4426950408889634);
    const VD ln2hi = VOP(SPLAT)(6.93147180369123816490e-01);
    const VD ln2lo = VOP(SPLAT)(1.90821492927058770002e-10);
    VD x0 = *v0, x1 = *v1, x2 = *v2, x3 = *v3;
    VD t0 = x0 * log2e + magic, t1 = x1 * log2e + magic, t2 = x2 * log2e + magic,
       t3 = x3 * log2e + magic;
    VD k0 = t0 - magic, k1 = t1 - magic, k2 = t2 - magic, k3 = t3 - magic;
    VD r0 = x0 - k0 * ln2hi, r1 = x1 - k1 * ln2hi, r2 = x2 - k2 * ln2hi, r3 = x3 - k3 * ln2hi;
    r0 = r0 - k0 * ln2lo; r1 = r1 - k1 * ln2lo; r2 = r2 - k2 * ln2lo; r3 = r3 - k3 * ln2lo;
    VD p0 = VOP(SPLAT)(1.0 / 6227020800.0), p1 = p0, p2 = p0, p3 = p0;
    KF_HORNER4(1.0 / 479001600.0);
    KF_HORNER4(1.0 / 39916800.0);
    KF_HORNER4(1.0 / 3628800.0);
    KF_HORNER4(1.0 / 362880.0);
    KF_HORNER4(1.0 / 40320.0);
    KF_HORNER4(1.0 / 5040.0);
    KF_HORNER4(1.0 / 720.0);
    KF_HORNER4(1.0 / 120.0);
    KF_HORNER4(1.0 / 24.0);
    KF_HORNER4(1.0 / 6.0);
    KF_HORNER4(0.5);
    KF_HORNER4(1.0);
    KF_HORNER4(1.0);
    VI e0 = ((VI) t0 - (VI) magic + 1023) << 52, e1 = ((VI) t1 - (VI) magic + 1023) << 52,
       e2 = ((VI) t2 - (VI) magic + 1023) << 52, e3 = ((VI) t3 - (VI) magic + 1023) << 52;
    *v0 = p0 * (VD) e0;
    *v1 = p1 * (VD) e1;
    *v2 = p2 * (VD) e2;
    *v3 = p3 * (VD) e3;
}
#undef KF_HORNER4

/* y[i] = exp(scale * f(x[i])) for i < n, f the identity or sqrt (root);
 * x and y may be the same. Four vectors at a time (KF(vexp4)()), then one. */
static KF_ATTR void KF(exp_array)(const double *x, double *y, int n, double scale,
                                  int root)
{
    const VD s = VOP(SPLAT)(scale);
    int i = 0;
    for (; i + 4 * W <= n; i += 4 * W) {
        VD v0, v1, v2, v3;
        memcpy(&v0, x + i, sizeof v0);
        memcpy(&v1, x + i + W, sizeof v1);
        memcpy(&v2, x + i + 2 * W, sizeof v2);
        memcpy(&v3, x + i + 3 * W, sizeof v3);
        if (root) {
            v0 = VOP(SQRT)(v0); v1 = VOP(SQRT)(v1);
            v2 = VOP(SQRT)(v2); v3 = VOP(SQRT)(v3);
        }
        v0 = v0 * s; v1 = v1 * s; v2 = v2 * s; v3 = v3 * s;
        KF(vexp4)(&v0, &v1, &v2, &v3);
        memcpy(y + i, &v0, sizeof v0);
        memcpy(y + i + W, &v1, sizeof v1);
        memcpy(y + i + 2 * W, &v2, sizeof v2);
        memcpy(y + i + 3 * W, &v3, sizeof v3);
    }
    for (; i + W <= n; i += W) {
        VD v;
        memcpy(&v, x + i, sizeof v);
        if (root) v = VOP(SQRT)(v);
        VD r = KF(vexp_lanes)(v * s);
        memcpy(y + i, &r, sizeof r);
    }
    for (; i < n; i++) {
        double v = scale * (root ? sqrt(x[i]) : x[i]);
        if (v >= KF_EXP_LO && v <= KF_EXP_HI) {
            VD w = KF(vexp)(VOP(SPLAT)(v));
            y[i] = w[0];
        } else {
            y[i] = exp(v);
        }
    }
}

/* Whether v[0..n-1] holds an Inf or a NaN: a vector of lanes that stay all
 * ones while |v| <= DBL_MAX (false for NaN), W values at a time (at -O2
 * the scalar loop was a quarter of a block's time at d = 10). */
static inline KF_ATTR int KF(any_nonfinite)(const double *v, int n)
{
    const VI zero = (VI) VOP(SPLAT)(0.0);
    const VI absmask = zero + 0x7fffffffffffffffLL;
    const VD big = VOP(SPLAT)(DBL_MAX);
    VI ok = zero - 1;
    int i = 0;
    for (; i + W <= n; i += W) {
        VI b;
        memcpy(&b, v + i, sizeof b);
        ok &= ((VD) (b & absmask) <= big);
    }
    long long all = -1;
    for (int l = 0; l < W; l++) all &= ok[l];
    int bad = all != -1;
    for (; i < n; i++) bad |= simd_not_finite(v[i]);
    return bad;
}

/* The kernel's function of the squared distances or inner products in
 * v[0..n-1], in place. */
static KF_ATTR void KF(transform)(const fast_job *J, double *v, int n)
{
    switch (J->code) {
    case KERNEL_RBF:
        KF(exp_array)(v, v, n, -J->sigma, 0);
        break;
    case KERNEL_LAPLACE:
        KF(exp_array)(v, v, n, -J->sigma, 1);
        break;
    case KERNEL_POLY:
        for (int i = 0; i < n; i++) v[i] = J->scale * v[i] + J->offset;
        if (J->degree == 2) {
            for (int i = 0; i < n; i++) v[i] = v[i] * v[i];
        } else if (J->degree != 1) {
            /* as R_pow_di: x^e by squaring, bit by bit */
            for (int i = 0; i < n; i++) {
                double x = v[i], xn = 1.0;
                for (int e = J->degree;;) {
                    if (e & 1) xn *= x;
                    if ((e >>= 1)) x *= x; else break;
                }
                v[i] = xn;
            }
        }
        break;
    case KERNEL_TANH:
        /* an inner product that overflowed stays not finite (tanh would
         * hide it as +-1): the caller reports it */
        for (int i = 0; i < n; i++)
            v[i] = simd_not_finite(v[i]) ? NAN : tanh(J->scale * v[i] + J->offset);
        break;
    default: /* vanilladot: the inner product itself */
        break;
    }
}

/* The tile of 8 rows by KF_TC columns: acc (column-major, columns ld
 * doubles apart) = the sum over the d coordinates of a[k][r] * b_c[k]
 * (diff = 0) or of (a[k][r] - b_c[k])^2 (diff = 1); a: 8 rows packed
 * coordinate by coordinate (8 doubles per coordinate), bp[c]: the column
 * points, each contiguous. Every value is summed over k in order, one
 * multiply-add a coordinate, in any copy, so every copy of a width with
 * fused multiply-adds gives the same bits. With W < 8: 4 columns, in
 * halves of 2W rows, so that the 8 accumulators stay in registers; with
 * W = 8 (AVX-512): the 8 rows are one vector and the tile has 8 columns,
 * 8 accumulators again. acc is the block itself where the whole tile
 * belongs to it (ld its rows), so that the values are not copied. */
#if W == 8
# define KF_TC 8
static KF_ATTR void KF(tile)(int d, const double *a, const double *const *bp, int diff,
                             double *acc, size_t ld)
{
    const double *b0 = bp[0], *b1 = bp[1], *b2 = bp[2], *b3 = bp[3], *b4 = bp[4],
                 *b5 = bp[5], *b6 = bp[6], *b7 = bp[7];
    VD c0 = VOP(SPLAT)(0.0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    if (diff) {
        for (int k = 0; k < d; k++) {
            VD a0, t;
            memcpy(&a0, a + (size_t) k * 8, sizeof a0);
            t = a0 - b0[k]; c0 = VOP(FMA)(t, t, c0); t = a0 - b1[k]; c1 = VOP(FMA)(t, t, c1);
            t = a0 - b2[k]; c2 = VOP(FMA)(t, t, c2); t = a0 - b3[k]; c3 = VOP(FMA)(t, t, c3);
            t = a0 - b4[k]; c4 = VOP(FMA)(t, t, c4); t = a0 - b5[k]; c5 = VOP(FMA)(t, t, c5);
            t = a0 - b6[k]; c6 = VOP(FMA)(t, t, c6); t = a0 - b7[k]; c7 = VOP(FMA)(t, t, c7);
        }
    } else {
        for (int k = 0; k < d; k++) {
            VD a0;
            memcpy(&a0, a + (size_t) k * 8, sizeof a0);
            c0 = VOP(FMA)(a0, VOP(SPLAT)(b0[k]), c0); c1 = VOP(FMA)(a0, VOP(SPLAT)(b1[k]), c1);
            c2 = VOP(FMA)(a0, VOP(SPLAT)(b2[k]), c2); c3 = VOP(FMA)(a0, VOP(SPLAT)(b3[k]), c3);
            c4 = VOP(FMA)(a0, VOP(SPLAT)(b4[k]), c4); c5 = VOP(FMA)(a0, VOP(SPLAT)(b5[k]), c5);
            c6 = VOP(FMA)(a0, VOP(SPLAT)(b6[k]), c6); c7 = VOP(FMA)(a0, VOP(SPLAT)(b7[k]), c7);
        }
    }
    memcpy(acc, &c0, sizeof c0);          memcpy(acc + ld, &c1, sizeof c1);
    memcpy(acc + 2 * ld, &c2, sizeof c2); memcpy(acc + 3 * ld, &c3, sizeof c3);
    memcpy(acc + 4 * ld, &c4, sizeof c4); memcpy(acc + 5 * ld, &c5, sizeof c5);
    memcpy(acc + 6 * ld, &c6, sizeof c6); memcpy(acc + 7 * ld, &c7, sizeof c7);
}
#else
# define KF_TC 4
static KF_ATTR void KF(tile)(int d, const double *a, const double *const *bp, int diff,
                             double *acc, size_t ld)
{
    const double *b0 = bp[0], *b1 = bp[1], *b2 = bp[2], *b3 = bp[3];
    for (int h = 0; h < 8; h += 2 * W) {
        VD c00 = VOP(SPLAT)(0.0), c10 = c00, c01 = c00, c11 = c00, c02 = c00, c12 = c00,
           c03 = c00, c13 = c00;
        const double *ah = a + h;
        if (diff) {
            for (int k = 0; k < d; k++) {
                VD a0, a1;
                memcpy(&a0, ah + (size_t) k * 8, sizeof a0);
                memcpy(&a1, ah + (size_t) k * 8 + W, sizeof a1);
                VD t;
                t = a0 - b0[k]; c00 = VOP(FMA)(t, t, c00);
                t = a1 - b0[k]; c10 = VOP(FMA)(t, t, c10);
                t = a0 - b1[k]; c01 = VOP(FMA)(t, t, c01);
                t = a1 - b1[k]; c11 = VOP(FMA)(t, t, c11);
                t = a0 - b2[k]; c02 = VOP(FMA)(t, t, c02);
                t = a1 - b2[k]; c12 = VOP(FMA)(t, t, c12);
                t = a0 - b3[k]; c03 = VOP(FMA)(t, t, c03);
                t = a1 - b3[k]; c13 = VOP(FMA)(t, t, c13);
            }
        } else {
            for (int k = 0; k < d; k++) {
                VD a0, a1;
                memcpy(&a0, ah + (size_t) k * 8, sizeof a0);
                memcpy(&a1, ah + (size_t) k * 8 + W, sizeof a1);
                VD w0 = VOP(SPLAT)(b0[k]), w1 = VOP(SPLAT)(b1[k]), w2 = VOP(SPLAT)(b2[k]),
                   w3 = VOP(SPLAT)(b3[k]);
                c00 = VOP(FMA)(a0, w0, c00); c10 = VOP(FMA)(a1, w0, c10);
                c01 = VOP(FMA)(a0, w1, c01); c11 = VOP(FMA)(a1, w1, c11);
                c02 = VOP(FMA)(a0, w2, c02); c12 = VOP(FMA)(a1, w2, c12);
                c03 = VOP(FMA)(a0, w3, c03); c13 = VOP(FMA)(a1, w3, c13);
            }
        }
        double *o = acc + h;
        memcpy(o, &c00, sizeof c00);          memcpy(o + W, &c10, sizeof c10);
        memcpy(o + ld, &c01, sizeof c01);     memcpy(o + ld + W, &c11, sizeof c11);
        memcpy(o + 2 * ld, &c02, sizeof c02); memcpy(o + 2 * ld + W, &c12, sizeof c12);
        memcpy(o + 3 * ld, &c03, sizeof c03); memcpy(o + 3 * ld + W, &c13, sizeof c13);
    }
}
#endif

/* The kernel's function on rows r0..r1-1 of columns c0..c1-1 of the block
 * (the products or distances KF(columns) left there), the distances from
 * the norms refined where they may have lost digits (refine_values()).
 * Returns 1 if a value is not finite. */
static KF_ATTR int KF(finish_rows)(const fast_job *J, int c0, int c1, int r0, int r1)
{
    int bad = 0;
    for (int jc = c0; jc < c1; jc++) {
        int i0 = J->lower_only && jc > r0 ? jc : r0;
        if (i0 >= r1) continue;
        double *seg = J->out + (size_t) jc * J->rows + i0;
        int len = r1 - i0;
        if (J->expanded) {
            /* the distances kept for refine_values() (len <= row_block
             * <= FAST_SEGMENT) */
            double sbuf[FAST_SEGMENT];
            memcpy(sbuf, seg, (size_t) len * sizeof(double));
            KF(transform)(J, seg, len);
            refine_values(J, J->a + (size_t) i0 * J->d, J->anorms + i0,
                          J->b + (size_t) jc * J->d, J->bnorms[jc], len, sbuf, seg,
                          KF(transform));
        } else {
            KF(transform)(J, seg, len);
        }
        bad |= KF(any_nonfinite)(seg, len);
    }
    return bad;
}

/* Columns c0..c1-1 of the block (see fast_job in kernel_fast.c): row block
 * by row block, the tiles of each group of KF_TC columns, then the kernel's
 * function on each column's new segment. Returns 1 if a value is not
 * finite. */
static KF_ATTR int KF(columns)(const fast_job *J, int c0, int c1)
{
    int rows = J->rows, d = J->d, bad = 0;
    double acc[8 * KF_TC];
    for (int r0 = J->lower_only ? (c0 / 8) * 8 : 0; r0 < rows; r0 += J->row_block) {
        int r1 = r0 + J->row_block < rows ? r0 + J->row_block : rows;
        for (int j = c0; j < c1; j += KF_TC) {
            const double *bp[KF_TC];
            for (int c = 0; c < KF_TC; c++) {
                int jc = j + c < c1 ? j + c : c1 - 1;
                bp[c] = J->b + (size_t) jc * d;
            }
            int t0 = J->lower_only && j > r0 ? (j / 8) * 8 : r0;
            for (int t = t0; t < r1; t += 8) {
                const double *at = J->apack + (size_t) (t / 8) * 8 * d;
                /* a whole tile of the block, below the diagonal if only the
                 * lower triangle is asked for: straight into the block */
                if (!J->expanded && t + 8 <= r1 && j + KF_TC <= c1 &&
                    !(J->lower_only && j + KF_TC - 1 > t)) {
                    KF(tile)(d, at, bp, J->diff, J->out + (size_t) j * rows + t,
                             (size_t) rows);
                    continue;
                }
                KF(tile)(d, at, bp, J->diff, acc, 8);
                for (int c = 0; c < KF_TC && j + c < c1; c++) {
                    int jc = j + c;
                    int i0 = J->lower_only && jc > t ? jc : t;
                    int i1 = t + 8 < r1 ? t + 8 : r1;
                    double *col = J->out + (size_t) jc * rows;
                    const double *av = acc + 8 * c; /* row i is av[i - t] */
                    if (J->expanded) {
                        double bn = J->bnorms[jc];
                        for (int i = i0; i < i1; i++)
                            col[i] = sq_distance_from_norms(J->anorms[i], bn, av[i - t]);
                    } else {
                        for (int i = i0; i < i1; i++) col[i] = av[i - t];
                    }
                }
            }
        }
        bad |= KF(finish_rows)(J, c0, c1, r0, r1);
    }
    return bad;
}
#undef KF_TC
