/* Kernel ICA, steps 3 to 5 and the optimiser: the KGV and KCCA contrasts of
 * m estimated sources (Bach and Jordan 2002), and the Jacobi sweeps over
 * Givens rotations of pairs of sources that minimise them (R/kica.R starts
 * them from each initial rotation).
 *
 * For source i with incomplete Cholesky factor G_i (ichol.c): centre the
 * columns of G_i; G_i'G_i = A_i D_i A_i'; keep D_i > n eta;
 * U_i = G_i A_i D_i^-1/2, r_i = D_i / (D_i + n kappa / 2), and
 * Z_i = U_i diag(r_i) (n x M_i). R_kappa has identity diagonal blocks and
 * off-diagonal blocks Z_i'Z_j. KGV = -1/2 log det R_kappa and
 * KCCA = -1/2 log lambda_min(R_kappa).
 *
 * A sweep visits every pair (i, j) and searches the angle of its rotation;
 * only sources i and j change along the search, so the factors Z_k of the
 * others, and their part of R_kappa, are computed once per pair and every
 * factor is cached between pairs. */
#include "fastkpca.h"
#include <float.h>
#include <math.h>
#include <string.h>

typedef struct {
    int n, m;
    double sigma, kappa, eta;
    int contrast; /* KICA_KGV or KICA_KCCA */
} kica_setup;

/* Buffers of source_factor, allocated once per .Call and reused for every
 * factor (see ichol_work). */
typedef struct {
    ichol_work chol;
    double *gtg, *vectors, *values, *z;
} factor_work;

static void factor_work_init(factor_work *fw, int n)
{
    ichol_work_init(&fw->chol, n);
    size_t c = (size_t) (fw->chol.capacity > 0 ? fw->chol.capacity : 1);
    fw->gtg = (double *) R_alloc(c * c, sizeof(double));
    fw->vectors = (double *) R_alloc(c * c, sizeof(double));
    fw->values = (double *) R_alloc(c, sizeof(double));
    fw->z = (double *) R_alloc((size_t) (n > 0 ? n : 1) * c, sizeof(double));
}

/* The reduced, regularised factor Z = U diag(r) of one source y (length n).
 * Returns its number of columns; *Z (NULL when 0 columns) is in fw->z, or
 * R_alloc'ed when the source needs more columns than fw holds. */
static int source_factor(const double *y, const kica_setup *s, factor_work *fw,
                         double **Z)
{
    const int n = s->n;
    double *G;
    int M = ichol_gauss(y, s->sigma, n * s->eta, &fw->chol, &G);
    *Z = NULL;
    if (M == 0) return 0;
    /* centring the factor centres the approximate Gram matrix: H G G' H */
    for (int k = 0; k < M; k++) {
        double *col = G + (size_t) k * n, mean = 0.0;
        for (int a = 0; a < n; a++) mean += col[a];
        mean /= n;
        for (int a = 0; a < n; a++) col[a] -= mean;
    }
    const int big = M > fw->chol.capacity;
    double *GtG = big ? (double *) R_alloc((size_t) M * M, sizeof(double)) : fw->gtg;
    double *A = big ? (double *) R_alloc((size_t) M * M, sizeof(double)) : fw->vectors;
    double *D = big ? (double *) R_alloc((size_t) M, sizeof(double)) : fw->values;
    /* G'G in full (both triangles; top_eigen_exact reads the lower) */
    matrix_product(M, M, n, G, n, 1, G, n, 0, 0.0, GtG, M, 1);
    top_eigen_exact(GtG, M, M, D, A);
    /* keep the eigenvalues above n eta and scale the kept eigenvectors by
     * r / sqrt(D), so that Z = G B */
    const double floor = n * s->eta, shrink = n * s->kappa / 2.0;
    int kept = 0;
    for (int k = 0; k < M; k++) {
        if (!(D[k] > floor)) continue;
        double scale = (D[k] / (D[k] + shrink)) / sqrt(D[k]);
        double *dst = A + (size_t) kept * M, *src = A + (size_t) k * M;
        for (int l = 0; l < M; l++) dst[l] = src[l] * scale;
        kept++;
    }
    if (kept == 0) return 0;
    double *z = big ? (double *) R_alloc((size_t) n * kept, sizeof(double)) : fw->z;
    matrix_product(n, kept, M, G, n, 0, A, M, 0, 0.0, z, n, 1);
    *Z = z;
    return kept;
}

/* The products of the contrasts go through matrix_product() (blas.c): on
 * the reference BLAS, the register tiles; they were two thirds of kica's
 * time as dsyrk and dgemm. */

/* out (ldo) = X'Y for X n x p and Y n x q, column-major with leading dimension n. */
static void cross_block(const double *X, int p, const double *Y, int q, int n,
                        double *out, int ldo)
{
    matrix_product(p, q, n, X, n, 1, Y, n, 0, 0.0, out, ldo, 1);
}

/* out (ldo) = X'Y from Xt = X' (p x n, leading dimension ldx) and Y (n x q):
 * an 'N', 'N' product runs along columns, which an optimized BLAS (and the
 * reference one, about twice as fast as 'T', 'N') prefers. */
static void cross_block_t(const double *Xt, int p, int ldx, const double *Y, int q,
                          int n, double *out, int ldo)
{
    matrix_product(p, q, n, Xt, ldx, 0, Y, n, 0, 0.0, out, ldo, 1);
}

/* [X1 X2]' for X1 n x p1 and X2 n x p2: a (p1 + p2) x n matrix (R_alloc'ed),
 * so that both factors of a pair multiply the others' in one product. */
static double *transposed_pair(const double *X1, int p1, const double *X2, int p2,
                               int n)
{
    const int p = p1 + p2;
    double *Xt = (double *) R_alloc((size_t) n * (p > 0 ? p : 1), sizeof(double));
    for (int a = 0; a < n; a++) {
        double *row = Xt + (size_t) a * p;
        for (int c = 0; c < p1; c++) row[c] = X1[a + (size_t) c * n];
        for (int c = 0; c < p2; c++) row[p1 + c] = X2[a + (size_t) c * n];
    }
    return Xt;
}

/* The contrast from the lower triangle of R_kappa (T x T, destroyed). */
static double contrast_of_r_kappa(double *R, int T, int contrast)
{
    if (T == 0) return 0.0;
    if (contrast == KICA_KCCA) {
        /* the smallest eigenvalue of R is minus the largest of -R */
        for (int c = 0; c < T; c++)
            for (int r = c; r < T; r++) R[r + (size_t) c * T] = -R[r + (size_t) c * T];
        double *w = (double *) R_alloc((size_t) T, sizeof(double));
        double *v = (double *) R_alloc((size_t) T, sizeof(double));
        top_eigen_exact(R, T, 1, w, v);
        double lmin = -w[0] < DBL_EPSILON ? DBL_EPSILON : -w[0];
        return -0.5 * log(lmin);
    }
    /* KGV: log det through Cholesky; R_kappa is positive semidefinite, and
     * only fully dependent sources make it singular: then clamp through the
     * eigenvalues instead */
    double *copy = (double *) R_alloc((size_t) T * T, sizeof(double));
    memcpy(copy, R, (size_t) T * T * sizeof(double));
    const char uplo = 'L';
    int info = 0;
    F77_CALL(dpotrf)(&uplo, &T, R, &T, &info FCONE);
    if (info < 0) check_lapack_info(info, "dpotrf");
    double logdet = 0.0;
    if (info == 0) {
        for (int k = 0; k < T; k++) logdet += log(R[k + (size_t) k * T]);
        logdet *= 2.0;
    } else {
        double *ev = (double *) R_alloc((size_t) T, sizeof(double));
        double *vec = (double *) R_alloc((size_t) T * T, sizeof(double));
        top_eigen_exact(copy, T, T, ev, vec);
        for (int k = 0; k < T; k++) logdet += log(ev[k] > DBL_EPSILON ? ev[k] : DBL_EPSILON);
    }
    return -0.5 * logdet;
}

/* An identity T x T matrix (R_alloc'ed) whose leading T0 x T0 part is base. */
static double *r_kappa_start(int T, const double *base, int T0)
{
    double *R = (double *) R_alloc((size_t) (T > 0 ? T : 1) * (T > 0 ? T : 1),
                                   sizeof(double));
    memset(R, 0, (size_t) T * T * sizeof(double));
    for (int k = 0; k < T; k++) R[k + (size_t) k * T] = 1.0;
    for (int c = 0; c < T0; c++)
        memcpy(R + (size_t) c * T, base + (size_t) c * T0, (size_t) T0 * sizeof(double));
    return R;
}

/* The lower triangle of R_kappa for m factors Z[k] (n x M[k]), T x T. */
static double *r_kappa_of(double **Z, const int *M, int m, int n, int *T_out)
{
    int T = 0;
    for (int k = 0; k < m; k++) T += M[k];
    *T_out = T;
    double *R = r_kappa_start(T, NULL, 0);
    for (int j = 0, offj = 0; j < m; offj += M[j], j++)
        for (int i = 0, offi = 0; i < j; offi += M[i], i++)
            cross_block(Z[j], M[j], Z[i], M[i], n, R + offj + (size_t) offi * T, T);
    return R;
}

static void setup_from_R(SEXP S, SEXP par, SEXP contrast, kica_setup *s)
{
    if (!isReal(S) || !isMatrix(S)) error_argument("'S' must be a double matrix");
    if (!isReal(par) || XLENGTH(par) != 3) error_argument("'par' must be c(sigma, kappa, eta)");
    s->n = nrows(S);
    s->m = ncols(S);
    s->sigma = REAL(par)[0];
    s->kappa = REAL(par)[1];
    s->eta = REAL(par)[2];
    if (!(s->sigma > 0) || !R_FINITE(s->sigma))
        error_argument("'sigma' must be a single positive number");
    if (!(s->kappa > 0) || !R_FINITE(s->kappa))
        error_argument("'kappa' must be a single positive number");
    if (!(s->eta > 0) || !R_FINITE(s->eta))
        error_argument("'eta' must be a single positive number");
    s->contrast = as_count(contrast, "contrast", KICA_KGV, KICA_KCCA);
    if (s->n < 2) error_argument("'S' must have at least 2 rows");
}

/* kica_contrast(S, par, contrast): S the n x m sources, par = c(sigma,
 * kappa, eta), contrast 1 (KGV) or 2 (KCCA). Returns the contrast, with an
 * attribute "ranks": the number of columns kept for each source. */
SEXP kica_contrast(SEXP S, SEXP par, SEXP contrast)
{
    engine_entered(__func__);
    kica_setup s;
    setup_from_R(S, par, contrast, &s);
    double **Z = (double **) R_alloc((size_t) (s.m > 0 ? s.m : 1), sizeof(double *));
    int *M = (int *) R_alloc((size_t) (s.m > 0 ? s.m : 1), sizeof(int));
    factor_work fw;
    factor_work_init(&fw, s.n);
    for (int i = 0; i < s.m; i++) {
        double *z;
        M[i] = source_factor(REAL(S) + (size_t) i * s.n, &s, &fw, &z);
        Z[i] = (double *) R_alloc((size_t) s.n * (M[i] > 0 ? M[i] : 1), sizeof(double));
        if (M[i] > 0) memcpy(Z[i], z, (size_t) s.n * M[i] * sizeof(double));
    }
    int T;
    double *R = r_kappa_of(Z, M, s.m, s.n, &T);
    double value = contrast_of_r_kappa(R, T, s.contrast);
    SEXP ans = PROTECT(ScalarReal(value));
    SEXP ranks = PROTECT(allocVector(INTSXP, s.m));
    for (int i = 0; i < s.m; i++) INTEGER(ranks)[i] = M[i];
    setAttrib(ans, install("ranks"), ranks);
    UNPROTECT(2);
    return ans;
}

/* ---- Brent's method ---------------------------------------------------- */

typedef double (*univariate_fn)(double x, void *data);

/* Brent's minimisation of f (golden section with parabolic steps; Brent
 * 1973, as in R's optimize()) on [a, b], from x inside it, whose value fx is
 * known, until the bracket is about tol wide. Returns the best point seen,
 * its value in *fbest. */
static double brent_minimise(univariate_fn f, void *data, double a, double b,
                             double x, double fx, double tol, double *fbest)
{
    const double golden = (3.0 - sqrt(5.0)) / 2.0;
    double w = x, v = x, fw = fx, fv = fx, d = 0.0, e = 0.0;
    for (;;) {
        double xm = 0.5 * (a + b), tol1 = tol / 3.0, tol2 = 2.0 * tol1;
        if (fabs(x - xm) <= tol2 - 0.5 * (b - a)) break;
        int parabolic = 0;
        if (fabs(e) > tol1) {
            double r = (x - w) * (fx - fv), q = (x - v) * (fx - fw);
            double p = (x - v) * q - (x - w) * r;
            q = 2.0 * (q - r);
            if (q > 0.0) p = -p; else q = -q;
            double etemp = e;
            e = d;
            if (fabs(p) < fabs(0.5 * q * etemp) && p > q * (a - x) && p < q * (b - x)) {
                d = p / q;
                double u = x + d;
                if (u - a < tol2 || b - u < tol2) d = (xm >= x) ? tol1 : -tol1;
                parabolic = 1;
            }
        }
        if (!parabolic) {
            e = (x >= xm) ? a - x : b - x;
            d = golden * e;
        }
        double u = x + (fabs(d) >= tol1 ? d : (d >= 0 ? tol1 : -tol1));
        double fu = f(u, data);
        if (fu <= fx) {
            if (u >= x) a = x; else b = x;
            v = w; fv = fw; w = x; fw = fx; x = u; fx = fu;
        } else {
            if (u < x) a = u; else b = u;
            if (fu <= fw || w == x) { v = w; fv = fw; w = u; fw = fu; }
            else if (fu <= fv || v == x || v == w) { v = u; fv = fu; }
        }
    }
    *fbest = fx;
    return x;
}

/* ---- the Jacobi sweeps --------------------------------------------------- */

/* State of the sweeps. S (n x m) holds the current sources; factors (a
 * protected list) their cached factors Z_k, n x M_k matrices. During the
 * search over the rotation of pair (i, j): the others' factors side by side
 * in Zf (n x T0) and their part of R_kappa in base (T0 x T0); the best angle
 * seen, its value, and the factors of the two rotated sources there
 * (protected in 'best'; R_NilValue while the best is the angle 0). step:
 * NULL or an R function called after each sweep (progress, R/kica.R). */
typedef struct {
    kica_setup s;
    double *S, *V;
    SEXP factors, best, step;
    int i, j, T0, evaluations;
    factor_work wi, wj;
    double *Zf, *base, *yi, *yj;
    double best_theta, best_value;
} sweep_state;

static SEXP matrix_copy(const double *z, int n, int cols)
{
    SEXP out = PROTECT(allocMatrix(REALSXP, n, cols));
    if (cols > 0) memcpy(REAL(out), z, (size_t) n * cols * sizeof(double));
    UNPROTECT(1);
    return out;
}

/* Sources i and j of S rotated by theta into yi, yj. */
static void rotate_sources(const sweep_state *st, double theta, double *yi, double *yj)
{
    const int n = st->s.n;
    const double c = cos(theta), sn = sin(theta);
    const double *si = st->S + (size_t) st->i * n, *sj = st->S + (size_t) st->j * n;
    for (int a = 0; a < n; a++) {
        yi[a] = c * si[a] + sn * sj[a];
        yj[a] = -sn * si[a] + c * sj[a];
    }
}

/* The contrast after rotating the current pair by theta (the objective of
 * the pair search); a new best keeps the two factors. Scratch is released
 * before returning. */
static double pair_contrast(double theta, void *data)
{
    sweep_state *st = (sweep_state *) data;
    const void *vmax = vmaxget();
    const int n = st->s.n, T0 = st->T0;
    double *Zi, *Zj;
    rotate_sources(st, theta, st->yi, st->yj);
    int Mi = source_factor(st->yi, &st->s, &st->wi, &Zi);
    int Mj = source_factor(st->yj, &st->s, &st->wj, &Zj);
    int T = T0 + Mi + Mj;
    double *R = r_kappa_start(T, st->base, T0);
    /* rows T0.. of R: [Zi Zj]' Zf, then Zj' Zi */
    double *Zt = transposed_pair(Zi, Mi, Zj, Mj, n);
    cross_block_t(Zt, Mi + Mj, Mi + Mj, st->Zf, T0, n, R + T0, T);
    cross_block_t(Zt + Mi, Mj, Mi + Mj, Zi, Mi, n, R + T0 + Mi + (size_t) T0 * T, T);
    double value = contrast_of_r_kappa(R, T, st->s.contrast);
    st->evaluations++;
    if (value < st->best_value) {
        st->best_value = value;
        st->best_theta = theta;
        SET_VECTOR_ELT(st->best, 0, matrix_copy(Zi, n, Mi));
        SET_VECTOR_ELT(st->best, 1, matrix_copy(Zj, n, Mj));
    }
    vmaxset(vmax);
    R_CheckUserInterrupt();
    return value;
}

/* Zf and base for pair (i, j): the other sources' cached factors side by
 * side, and their part of R_kappa. R_alloc'ed for the pair's search. */
static void prepare_pair(sweep_state *st, int i, int j)
{
    const int n = st->s.n, m = st->s.m;
    st->i = i;
    st->j = j;
    int T0 = 0;
    for (int k = 0; k < m; k++)
        if (k != i && k != j) T0 += ncols(VECTOR_ELT(st->factors, k));
    st->T0 = T0;
    st->Zf = (double *) R_alloc((size_t) n * (T0 > 0 ? T0 : 1), sizeof(double));
    double **Z = (double **) R_alloc((size_t) m, sizeof(double *));
    int *M = (int *) R_alloc((size_t) m, sizeof(int));
    int others = 0, off = 0;
    for (int k = 0; k < m; k++) {
        if (k == i || k == j) continue;
        SEXP zk = VECTOR_ELT(st->factors, k);
        M[others] = ncols(zk);
        Z[others] = st->Zf + (size_t) off * n;
        if (M[others] > 0)
            memcpy(Z[others], REAL(zk), (size_t) n * M[others] * sizeof(double));
        off += M[others++];
    }
    int T;
    st->base = r_kappa_of(Z, M, others, n, &T);
}

/* Rotate pair (i, j) of V (rows) and S (columns) by theta, and cache the
 * factors kept by the search. */
static void apply_rotation(sweep_state *st, double theta)
{
    const int n = st->s.n, m = st->s.m, i = st->i, j = st->j;
    const double c = cos(theta), sn = sin(theta);
    rotate_sources(st, theta, st->yi, st->yj);
    memcpy(st->S + (size_t) i * n, st->yi, (size_t) n * sizeof(double));
    memcpy(st->S + (size_t) j * n, st->yj, (size_t) n * sizeof(double));
    for (int col = 0; col < m; col++) {
        double vi = st->V[i + (size_t) col * m], vj = st->V[j + (size_t) col * m];
        st->V[i + (size_t) col * m] = c * vi + sn * vj;
        st->V[j + (size_t) col * m] = -sn * vi + c * vj;
    }
    SET_VECTOR_ELT(st->factors, i, VECTOR_ELT(st->best, 0));
    SET_VECTOR_ELT(st->factors, j, VECTOR_ELT(st->best, 1));
}

/* The search over the rotation of pair (i, j), from the current contrast
 * (*value, at angle 0): the contrast at each of the angles (0 is not
 * evaluated again), then Brent's method within +- half of the best, to tol.
 * Rotates the pair by the best angle seen; returns it, and sets *value and
 * *at_edge (1 when the best lies within 2 tol of the refined bracket's edge). */
static double pair_search(sweep_state *st, int i, int j, const double *angles,
                          int nangles, double half, double tol, double *value,
                          int *at_edge)
{
    const void *vmax = vmaxget();
    prepare_pair(st, i, j);
    st->best_theta = 0.0;
    st->best_value = *value;
    SET_VECTOR_ELT(st->best, 0, R_NilValue);
    SET_VECTOR_ELT(st->best, 1, R_NilValue);
    for (int g = 0; g < nangles; g++)
        if (angles[g] != 0.0) pair_contrast(angles[g], st);
    double centre = st->best_theta, fbest;
    *at_edge = 0;
    if (half > 0) {
        brent_minimise(pair_contrast, st, centre - half, centre + half, centre,
                       st->best_value, tol, &fbest);
        *at_edge = fabs(st->best_theta - centre) > half - 2.0 * tol;
    }
    if (st->best_theta != 0.0) apply_rotation(st, st->best_theta);
    *value = st->best_value;
    vmaxset(vmax);
    return st->best_theta;
}

/* Factors of every source of S into the cache; returns the contrast. */
static double cache_all_factors(sweep_state *st)
{
    const void *vmax = vmaxget();
    const int n = st->s.n, m = st->s.m;
    double **Z = (double **) R_alloc((size_t) m, sizeof(double *));
    int *M = (int *) R_alloc((size_t) m, sizeof(int));
    for (int k = 0; k < m; k++) {
        double *z;
        M[k] = source_factor(st->S + (size_t) k * n, &st->s, &st->wi, &z);
        SET_VECTOR_ELT(st->factors, k, matrix_copy(z, n, M[k]));
        Z[k] = REAL(VECTOR_ELT(st->factors, k));
    }
    int T;
    double *R = r_kappa_of(Z, M, m, n, &T);
    double value = contrast_of_r_kappa(R, T, st->s.contrast);
    st->evaluations++;
    vmaxset(vmax);
    return value;
}

/* A sweep lowering the contrast by less than this ends the search. */
#define KICA_SWEEP_FTOL 1e-6

/* Sweeps over all pairs until no angle exceeds tol, the contrast falls by
 * less than KICA_SWEEP_FTOL, or maxit sweeps. The first sweep searches
 * 'angles', later ones the current angle 0 only. Returns the sweeps done. */
static int jacobi_sweeps(sweep_state *st, const double *angles, int nangles,
                         double half, double tol, int maxit, double *value)
{
    const int m = st->s.m;
    const double zero = 0.0;
    int sweeps = 0;
    for (int it = 1; it <= maxit && m > 1; it++) {
        sweeps = it;
        double before = *value, largest = 0.0;
        int edge = 0, at_edge;
        for (int i = 0; i < m - 1; i++)
            for (int j = i + 1; j < m; j++) {
                double theta = pair_search(st, i, j, angles, nangles, half, tol, value,
                                           &at_edge);
                if (fabs(theta) > largest) largest = fabs(theta);
                edge = edge || at_edge;
            }
        angles = &zero;
        nangles = 1;
        call_step(st->step);
        /* one pair: a sweep is a complete search of the only angle, unless
         * the minimum lies on the edge of the bracket */
        if (m == 2 && !edge) break;
        if (largest < tol || before - *value < KICA_SWEEP_FTOL) break;
    }
    return sweeps;
}

/* kica_sweeps(z, V, par, contrast, angles, half, tol, maxit)
 * z: the n x m whitened data; V: the m x m starting rotation (rows are the
 * unmixing directions); par = c(sigma, kappa, eta); contrast 1 (KGV) or 2
 * (KCCA); angles: the grid of the first sweep's pair searches (containing
 * 0); half: the half-width of Brent's bracket around the best grid angle;
 * tol: the tolerance of Brent's method and of the stop rule, in radians;
 * maxit: the most sweeps; step: NULL or an R function called after each
 * sweep. Returns list(V, value, sweeps, evaluations). */
SEXP kica_sweeps(SEXP z, SEXP V, SEXP par, SEXP contrast, SEXP angles, SEXP half,
                 SEXP tol, SEXP maxit, SEXP step)
{
    engine_entered(__func__);
    sweep_state st;
    setup_from_R(z, par, contrast, &st.s);
    const int n = st.s.n, m = st.s.m;
    if (!isReal(V) || !isMatrix(V) || nrows(V) != m || ncols(V) != m)
        error_argument("'V' must be a %d x %d double matrix", m, m);
    if (!isReal(angles) || XLENGTH(angles) < 1 || XLENGTH(angles) > INT_MAX)
        error_argument("'angles' must be a double vector");
    for (R_xlen_t g = 0; g < XLENGTH(angles); g++)
        if (!R_FINITE(REAL(angles)[g])) error_argument("'angles' must be finite");
    double h = as_number(half, "half"), eps = as_number(tol, "tol");
    if (h < 0) error_argument("'half' must be a single non-negative number");
    if (!(eps > 0)) error_argument("'tol' must be a single positive number");
    int sweeps_max = as_count(maxit, "maxit", 1, INT_MAX);
    check_step(step);
    st.step = step;

    SEXP ans = PROTECT(allocVector(VECSXP, 4));
    SEXP Vout = PROTECT(duplicate(V));
    SET_VECTOR_ELT(ans, 0, Vout);
    st.factors = PROTECT(allocVector(VECSXP, m));
    st.best = PROTECT(allocVector(VECSXP, 2));
    st.V = REAL(Vout);
    st.S = (double *) R_alloc((size_t) n * m, sizeof(double));
    st.yi = (double *) R_alloc((size_t) n, sizeof(double));
    st.yj = (double *) R_alloc((size_t) n, sizeof(double));
    st.evaluations = 0;
    factor_work_init(&st.wi, n);
    factor_work_init(&st.wj, n);
    matrix_product(n, m, m, REAL(z), n, 0, st.V, m, 1, 0.0, st.S, n, 1);
    double value = cache_all_factors(&st);
    int sweeps = jacobi_sweeps(&st, REAL(angles), (int) XLENGTH(angles), h, eps,
                               sweeps_max, &value);
    SET_VECTOR_ELT(ans, 1, ScalarReal(value));
    SET_VECTOR_ELT(ans, 2, ScalarInteger(sweeps));
    SET_VECTOR_ELT(ans, 3, ScalarInteger(st.evaluations));
    const char *names[] = {"V", "value", "sweeps", "evaluations"};
    set_list_names(ans, names);
    UNPROTECT(4);
    return ans;
}
