/* Kernel ICA, steps 3 to 5: the KGV and KCCA contrasts of m estimated
 * sources (Bach and Jordan 2002), and the one-dimensional search over a
 * Givens rotation of two of them that R's optimiser (R/kica.R) sweeps over.
 *
 * For source i with incomplete Cholesky factor G_i (ichol.c): centre the
 * columns of G_i; G_i'G_i = A_i D_i A_i'; keep D_i > n eta;
 * U_i = G_i A_i D_i^-1/2, r_i = D_i / (D_i + n kappa / 2), and
 * Z_i = U_i diag(r_i) (n x M_i). R_kappa has identity diagonal blocks and
 * off-diagonal blocks Z_i'Z_j. KGV = -1/2 log det R_kappa and
 * KCCA = -1/2 log lambda_min(R_kappa). */
#include "fastkpca.h"
#include <float.h>
#include <math.h>
#include <string.h>

typedef struct {
    int n, m;
    double sigma, kappa, eta;
    int contrast; /* KICA_KGV or KICA_KCCA */
} kica_setup;

/* Eigen-decomposition of the symmetric M x M matrix A (lower triangle, destroyed)
 * with dsyevr: all pairs (vectors != NULL) or the il-th smallest value only. */
static int sym_eigen(double *A, int M, int il, int iu, double *values, double *vectors)
{
    const char jobz = vectors ? 'V' : 'N', range = (il > 0) ? 'I' : 'A', uplo = 'L';
    double vl = 0.0, vu = 0.0, abstol = 0.0, work_query, dummy = 0.0;
    int found = 0, info = 0, lwork = -1, liwork = -1, iwork_query, ldz = M;
    int *isuppz = (int *) R_alloc(2 * (size_t) M, sizeof(int));
    double *z = vectors ? vectors : &dummy;
    if (!vectors) ldz = 1;
    F77_CALL(dsyevr)(&jobz, &range, &uplo, &M, A, &M, &vl, &vu, &il, &iu, &abstol,
                     &found, values, z, &ldz, isuppz, &work_query, &lwork,
                     &iwork_query, &liwork, &info FCONE FCONE FCONE);
    check_lapack_info(info, "dsyevr");
    lwork = (int) work_query;
    liwork = iwork_query;
    double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
    int *iwork = (int *) R_alloc((size_t) liwork, sizeof(int));
    F77_CALL(dsyevr)(&jobz, &range, &uplo, &M, A, &M, &vl, &vu, &il, &iu, &abstol,
                     &found, values, z, &ldz, isuppz, work, &lwork, iwork, &liwork,
                     &info FCONE FCONE FCONE);
    check_lapack_info(info, "dsyevr");
    return found;
}

/* The reduced, regularised factor Z = U diag(r) of one source y (length n).
 * Returns its number of columns; *Z is R_alloc'ed (NULL when 0 columns). */
static int source_factor(const double *y, const kica_setup *s, double **Z)
{
    const int n = s->n;
    double *G, resid;
    int M = ichol_gauss(y, n, s->sigma, n * s->eta, &G, NULL, &resid);
    *Z = NULL;
    if (M == 0) return 0;
    /* centring the factor centres the approximate Gram matrix: H G G' H */
    for (int k = 0; k < M; k++) {
        double *col = G + (size_t) k * n, mean = 0.0;
        for (int a = 0; a < n; a++) mean += col[a];
        mean /= n;
        for (int a = 0; a < n; a++) col[a] -= mean;
    }
    const char uplo = 'L', tr = 'T', nt = 'N';
    const double one = 1.0, zero = 0.0;
    double *GtG = (double *) R_alloc((size_t) M * M, sizeof(double));
    F77_CALL(dsyrk)(&uplo, &tr, &M, &n, &one, G, &n, &zero, GtG, &M FCONE FCONE);
    double *D = (double *) R_alloc((size_t) M, sizeof(double));
    double *A = (double *) R_alloc((size_t) M * M, sizeof(double));
    sym_eigen(GtG, M, 0, 0, D, A);
    /* keep the eigenvalues above n eta (ascending order from LAPACK) and scale
     * the kept eigenvectors by r / sqrt(D), so that Z = G B */
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
    double *z = (double *) R_alloc((size_t) n * kept, sizeof(double));
    F77_CALL(dgemm)(&nt, &nt, &n, &kept, &M, &one, G, &n, A, &M, &zero, z, &n
                    FCONE FCONE);
    *Z = z;
    return kept;
}

/* The contrast from the m reduced factors. */
/* The lower triangle of R_kappa (T x T) for the first m factors: identity
 * diagonal blocks and blocks (j, i) = Z_j' Z_i for i < j. When base is given,
 * it already holds the T0 x T0 leading part for the first 'fixed' factors
 * (unchanged sources), and only blocks involving a later factor are computed. */
static double *fill_r_kappa(double **Z, const int *M, int m, int n, int fixed,
                            const double *base, int T0, int *T_out)
{
    int T = 0;
    int *off = (int *) R_alloc((size_t) (m > 0 ? m : 1), sizeof(int));
    for (int i = 0; i < m; i++) { off[i] = T; T += M[i]; }
    *T_out = T;
    if (T == 0) return NULL;
    double *R = (double *) R_alloc((size_t) T * T, sizeof(double));
    memset(R, 0, (size_t) T * T * sizeof(double));
    for (int k = 0; k < T; k++) R[k + (size_t) k * T] = 1.0;
    if (base)
        for (int c = 0; c < T0; c++)
            memcpy(R + (size_t) c * T, base + (size_t) c * T0, (size_t) T0 * sizeof(double));
    const char tr = 'T', nt = 'N';
    const double one = 1.0, zero = 0.0;
    for (int j = (base ? fixed : 1); j < m; j++)
        for (int i = 0; i < j; i++) {
            if (M[i] == 0 || M[j] == 0) continue;
            F77_CALL(dgemm)(&tr, &nt, &M[j], &M[i], &n, &one, Z[j], &n, Z[i], &n,
                            &zero, R + off[j] + (size_t) off[i] * T, &T FCONE FCONE);
        }
    return R;
}

/* The contrast from the factors of the m sources (see fill_r_kappa for
 * base, fixed and T0; base = NULL computes every block). */
static double contrast_from_factors(double **Z, const int *M, int fixed,
                                    const double *base, int T0, const kica_setup *s)
{
    int T;
    double *R = fill_r_kappa(Z, M, s->m, s->n, fixed, base, T0, &T);
    if (T == 0) return 0.0;
    if (s->contrast == KICA_KCCA) {
        /* dsyevr's W must hold T values even when one is asked for */
        double *w = (double *) R_alloc((size_t) T, sizeof(double));
        sym_eigen(R, T, 1, 1, w, NULL);
        double lmin = w[0] < DBL_EPSILON ? DBL_EPSILON : w[0];
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
        sym_eigen(copy, T, 0, 0, ev, NULL);
        for (int k = 0; k < T; k++) logdet += log(ev[k] > DBL_EPSILON ? ev[k] : DBL_EPSILON);
    }
    return -0.5 * logdet;
}

static void setup_from_R(SEXP S, SEXP par, SEXP contrast, kica_setup *s)
{
    if (!isReal(S) || !isMatrix(S)) error("'S' must be a double matrix");
    if (!isReal(par) || XLENGTH(par) != 3) error("'par' must be c(sigma, kappa, eta)");
    s->n = nrows(S);
    s->m = ncols(S);
    s->sigma = REAL(par)[0];
    s->kappa = REAL(par)[1];
    s->eta = REAL(par)[2];
    if (!(s->sigma > 0) || !R_FINITE(s->sigma))
        error("'sigma' must be a single positive number");
    if (!(s->kappa > 0) || !R_FINITE(s->kappa))
        error("'kappa' must be a single positive number");
    if (!(s->eta > 0) || !R_FINITE(s->eta))
        error("'eta' must be a single positive number");
    s->contrast = as_count(contrast, "contrast", KICA_KGV, KICA_KCCA);
    if (s->n < 2) error("'S' must have at least 2 rows");
}

/* kica_contrast(S, par, contrast): S the n x m sources, par = c(sigma,
 * kappa, eta), contrast 1 (KGV) or 2 (KCCA). Returns the contrast, with an
 * attribute "ranks": the number of columns kept for each source. */
SEXP kica_contrast(SEXP S, SEXP par, SEXP contrast)
{
    kica_setup s;
    setup_from_R(S, par, contrast, &s);
    double **Z = (double **) R_alloc((size_t) (s.m > 0 ? s.m : 1), sizeof(double *));
    int *M = (int *) R_alloc((size_t) (s.m > 0 ? s.m : 1), sizeof(int));
    for (int i = 0; i < s.m; i++)
        M[i] = source_factor(REAL(S) + (size_t) i * s.n, &s, &Z[i]);
    double value = contrast_from_factors(Z, M, 0, NULL, 0, &s);
    SEXP ans = PROTECT(ScalarReal(value));
    SEXP ranks = PROTECT(allocVector(INTSXP, s.m));
    for (int i = 0; i < s.m; i++) INTEGER(ranks)[i] = M[i];
    setAttrib(ans, install("ranks"), ranks);
    UNPROTECT(2);
    return ans;
}

/* Contrast after rotating sources i and j by theta:
 * y_i = cos(theta) s_i + sin(theta) s_j, y_j = -sin(theta) s_i + cos(theta) s_j.
 * Z and M hold the factors of the other m - 2 sources first; the two rotated
 * ones go into the last two slots. base is their precomputed T0 x T0 part of
 * R_kappa. Scratch is released before returning. */
static double rotated_contrast(const double *S, int i, int j, double theta,
                               double **Z, int *M, const double *base, int T0,
                               double *yi, double *yj, const kica_setup *s)
{
    const void *vmax = vmaxget();
    const int n = s->n, m = s->m;
    const double c = cos(theta), sn = sin(theta);
    const double *si = S + (size_t) i * n, *sj = S + (size_t) j * n;
    for (int a = 0; a < n; a++) {
        yi[a] = c * si[a] + sn * sj[a];
        yj[a] = -sn * si[a] + c * sj[a];
    }
    M[m - 2] = source_factor(yi, s, &Z[m - 2]);
    M[m - 1] = source_factor(yj, s, &Z[m - 1]);
    double value = contrast_from_factors(Z, M, m - 2, base, T0, s);
    Z[m - 2] = Z[m - 1] = NULL;
    vmaxset(vmax);
    return value;
}

/* kica_pair_search(S, pair, angles, half, tol, par, contrast)
 * Minimises the contrast over the rotation of sources pair[1], pair[2]
 * (1-based): evaluates it at each of 'angles', then refines around the best
 * by Brent's method on [best - half, best + half] down to a bracket of
 * width about tol. Returns c(theta, value, evaluations, at_edge); theta is the best
 * angle seen (an angle of 0 among 'angles' guarantees no increase), at_edge
 * is 1 when it lies within 2 tol of the edge of the refined bracket. */
SEXP kica_pair_search(SEXP S, SEXP pair, SEXP angles, SEXP half, SEXP tol,
                      SEXP par, SEXP contrast)
{
    kica_setup s;
    setup_from_R(S, par, contrast, &s);
    if (!isInteger(pair) || XLENGTH(pair) != 2) error("'pair' must be two integers");
    int i = INTEGER(pair)[0] - 1, j = INTEGER(pair)[1] - 1;
    if (i < 0 || j < 0 || i >= s.m || j >= s.m || i == j)
        error("'pair' must be two different columns of 'S'");
    if (!isReal(angles) || XLENGTH(angles) < 1) error("'angles' must be a double vector");
    if (!isReal(half) || XLENGTH(half) != 1 || !(REAL(half)[0] >= 0))
        error("'half' must be a single non-negative number");
    if (!isReal(tol) || XLENGTH(tol) != 1 || !(REAL(tol)[0] > 0))
        error("'tol' must be a single positive number");
    const int n = s.n, m = s.m;
    const double *x = REAL(S);
    double **Z = (double **) R_alloc((size_t) m, sizeof(double *));
    int *M = (int *) R_alloc((size_t) m, sizeof(int));
    /* the sources that do not rotate come first, with their part of R_kappa
     * computed once */
    int slot = 0;
    for (int k = 0; k < m; k++) {
        if (k == i || k == j) continue;
        M[slot] = source_factor(x + (size_t) k * n, &s, &Z[slot]);
        slot++;
    }
    Z[m - 2] = Z[m - 1] = NULL;
    M[m - 2] = M[m - 1] = 0;
    int T0 = 0;
    double *base = fill_r_kappa(Z, M, m - 2, n, 0, NULL, 0, &T0);
    double *yi = (double *) R_alloc((size_t) n, sizeof(double));
    double *yj = (double *) R_alloc((size_t) n, sizeof(double));

    int evals = 0;
    double best_theta = 0.0, best = R_PosInf;
    for (R_xlen_t g = 0; g < XLENGTH(angles); g++) {
        double t = REAL(angles)[g];
        if (!R_FINITE(t)) error("'angles' must be finite");
        double v = rotated_contrast(x, i, j, t, Z, M, base, T0, yi, yj, &s);
        evals++;
        if (v < best) { best = v; best_theta = t; }
        R_CheckUserInterrupt();
    }
    double h = REAL(half)[0], eps = REAL(tol)[0], centre = best_theta;
    int at_edge = 0;
    if (h > 0) {
        /* Brent's minimisation (golden section with parabolic steps) on
         * [best - h, best + h], from the best angle seen, whose value is known */
        const double golden = (3.0 - sqrt(5.0)) / 2.0;
        double a = best_theta - h, b = best_theta + h;
        double x0 = best_theta, w = x0, v = x0, fx = best, fw = best, fv = best;
        double d = 0.0, e = 0.0;
        for (;;) {
            double xm = 0.5 * (a + b), tol1 = eps / 3.0, tol2 = 2.0 * tol1;
            if (fabs(x0 - xm) <= tol2 - 0.5 * (b - a)) break;
            int parabolic = 0;
            if (fabs(e) > tol1) {
                double r = (x0 - w) * (fx - fv), q = (x0 - v) * (fx - fw);
                double p = (x0 - v) * q - (x0 - w) * r;
                q = 2.0 * (q - r);
                if (q > 0.0) p = -p; else q = -q;
                double etemp = e;
                e = d;
                if (fabs(p) < fabs(0.5 * q * etemp) && p > q * (a - x0) &&
                    p < q * (b - x0)) {
                    d = p / q;
                    double u = x0 + d;
                    if (u - a < tol2 || b - u < tol2) d = (xm >= x0) ? tol1 : -tol1;
                    parabolic = 1;
                }
            }
            if (!parabolic) {
                e = (x0 >= xm) ? a - x0 : b - x0;
                d = golden * e;
            }
            double u = x0 + (fabs(d) >= tol1 ? d : (d >= 0 ? tol1 : -tol1));
            double fu = rotated_contrast(x, i, j, u, Z, M, base, T0, yi, yj, &s);
            evals++;
            R_CheckUserInterrupt();
            if (fu <= fx) {
                if (u >= x0) a = x0; else b = x0;
                v = w; fv = fw; w = x0; fw = fx; x0 = u; fx = fu;
            } else {
                if (u < x0) a = u; else b = u;
                if (fu <= fw || w == x0) { v = w; fv = fw; w = u; fw = fu; }
                else if (fu <= fv || v == x0 || v == w) { v = u; fv = fu; }
            }
        }
        if (fx < best) { best = fx; best_theta = x0; }
        at_edge = fabs(best_theta - centre) > h - 2.0 * eps;
    }
    SEXP ans = PROTECT(allocVector(REALSXP, 4));
    REAL(ans)[0] = best_theta;
    REAL(ans)[1] = best;
    REAL(ans)[2] = evals;
    REAL(ans)[3] = at_edge;
    UNPROTECT(1);
    return ans;
}
