/* Step 3: top eigenpairs of the centered kernel matrix with LAPACK.
 *
 * Both routines read the lower triangle of A and destroy it. Results come
 * back in decreasing order of eigenvalue, with the eigenvectors as columns. */
#include "fastkpca.h"
#include <float.h>
#include <math.h>
#include <string.h>

static void check_info(int info, const char *routine)
{
    if (info != 0) error("error code %d from LAPACK routine '%s'", info, routine);
}

/* Reverse the order of k eigenpairs (LAPACK returns ascending order). */
static void reverse_pairs(int n, int k, double *values, double *vectors)
{
    for (int a = 0, b = k - 1; a < b; a++, b--) {
        double t = values[a]; values[a] = values[b]; values[b] = t;
        double *va = vectors + (size_t) a * n, *vb = vectors + (size_t) b * n;
        for (int i = 0; i < n; i++) { t = va[i]; va[i] = vb[i]; vb[i] = t; }
    }
}

/* The f largest eigenpairs with dsyevr, RANGE = 'I' (il = n - f + 1, iu = n).
 * values: length f; vectors: n x f. */
int top_eigen_exact(double *A, int n, int f, double *values, double *vectors)
{
    const char jobz = 'V', range = 'I', uplo = 'L';
    double vl = 0.0, vu = 0.0, abstol = 0.0, work_query;
    int il = n - f + 1, iu = n, found = 0, info = 0, lwork = -1, liwork = -1,
        iwork_query;
    int *isuppz = (int *) R_alloc(2 * (size_t) (f > 0 ? f : 1), sizeof(int));
    /* dsyevr's W must hold n values (dstebz writes them all), even for RANGE = 'I' */
    double *w = (double *) R_alloc((size_t) n, sizeof(double));

    F77_CALL(dsyevr)(&jobz, &range, &uplo, &n, A, &n, &vl, &vu, &il, &iu, &abstol,
                     &found, w, vectors, &n, isuppz, &work_query, &lwork,
                     &iwork_query, &liwork, &info FCONE FCONE FCONE);
    check_info(info, "dsyevr");
    lwork = (int) work_query;
    liwork = iwork_query;
    double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
    int *iwork = (int *) R_alloc((size_t) liwork, sizeof(int));
    F77_CALL(dsyevr)(&jobz, &range, &uplo, &n, A, &n, &vl, &vu, &il, &iu, &abstol,
                     &found, w, vectors, &n, isuppz, work, &lwork, iwork,
                     &liwork, &info FCONE FCONE FCONE);
    check_info(info, "dsyevr");
    memcpy(values, w, (size_t) found * sizeof(double));
    reverse_pairs(n, found, values, vectors);
    return found;
}

/* Every eigenpair with eigenvalue > lower.
 *
 * This is dsyevr's RANGE = 'V' path taken one step at a time: dsytrd reduces
 * A to tridiagonal form, dstebz finds and counts the eigenvalues in
 * (lower, upper], dstein computes their eigenvectors and dormtr maps them back.
 * dsyevr itself would need room for n eigenvectors, a second n x n matrix,
 * because it learns the count only inside; here the count comes first, so
 * the vectors take n x count. *values and *vectors are R_alloc'ed. */
int threshold_eigen(double *A, int n, double lower, double **values,
                    double **vectors)
{
    const char uplo = 'L', side = 'L', trans = 'N', range = 'V', order = 'B';
    int info = 0, lwork = -1;
    double work_query;
    double *diag = (double *) R_alloc((size_t) n, sizeof(double));
    double *offdiag = (double *) R_alloc((size_t) n, sizeof(double));
    double *tau = (double *) R_alloc((size_t) n, sizeof(double));

    /* Scale as dsyevr does: bisection (dstebz) squares the entries, so a
     * matrix beyond about 1e77 (or below 1e-146) would overflow (underflow)
     * there; the eigenvalues are scaled back at the end. */
    double anrm = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            double v = fabs(A[i + (size_t) j * n]);
            if (v > anrm) anrm = v;
        }
    double smlnum = DBL_MIN / DBL_EPSILON, rmin = sqrt(smlnum),
        rmax = fmin(sqrt(1.0 / smlnum), 1.0 / sqrt(sqrt(DBL_MIN))), sigma = 1.0;
    if (anrm > 0.0 && anrm < rmin) sigma = rmin / anrm;
    else if (anrm > rmax) sigma = rmax / anrm;
    if (sigma != 1.0) {
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) A[i + (size_t) j * n] *= sigma;
        lower *= sigma;
    }

    F77_CALL(dsytrd)(&uplo, &n, A, &n, diag, offdiag, tau, &work_query, &lwork,
                     &info FCONE);
    check_info(info, "dsytrd");
    lwork = (int) work_query;
    double *work = (double *) R_alloc((size_t) (lwork > 5 * n ? lwork : 5 * n),
                                      sizeof(double));
    F77_CALL(dsytrd)(&uplo, &n, A, &n, diag, offdiag, tau, work, &lwork,
                     &info FCONE);
    check_info(info, "dsytrd");

    /* an upper bound of the spectrum (Gershgorin), so the interval is finite */
    double upper = 0.0;
    for (int i = 0; i < n; i++) {
        double r = fabs(diag[i]) + (i > 0 ? fabs(offdiag[i - 1]) : 0.0)
            + (i < n - 1 ? fabs(offdiag[i]) : 0.0);
        if (r > upper) upper = r;
    }
    upper = 2.0 * upper + 1.0;
    if (!(lower < upper)) return 0;

    int il = 0, iu = 0, found = 0, nsplit = 0;
    double abstol = 0.0;
    double *w = (double *) R_alloc((size_t) n, sizeof(double));
    int *iblock = (int *) R_alloc((size_t) n, sizeof(int));
    int *isplit = (int *) R_alloc((size_t) n, sizeof(int));
    int *iwork = (int *) R_alloc(3 * (size_t) n, sizeof(int));
    double *stebz_work = (double *) R_alloc(4 * (size_t) n, sizeof(double));
    F77_CALL(dstebz)(&range, &order, &n, &lower, &upper, &il, &iu, &abstol, diag,
                     offdiag, &found, &nsplit, w, iblock, isplit, stebz_work, iwork,
                     &info FCONE FCONE);
    check_info(info, "dstebz");
    if (found == 0) return 0;

    double *z = (double *) R_alloc((size_t) n * found, sizeof(double));
    int *ifail = (int *) R_alloc((size_t) found, sizeof(int));
    F77_CALL(dstein)(&n, diag, offdiag, &found, w, iblock, isplit, z, &n, work,
                     iwork, ifail, &info);
    check_info(info, "dstein");

    lwork = -1;
    F77_CALL(dormtr)(&side, &uplo, &trans, &n, &found, A, &n, tau, z, &n,
                     &work_query, &lwork, &info FCONE FCONE FCONE);
    check_info(info, "dormtr");
    lwork = (int) work_query;
    double *ormtr_work = (double *) R_alloc((size_t) (lwork > 1 ? lwork : 1),
                                            sizeof(double));
    F77_CALL(dormtr)(&side, &uplo, &trans, &n, &found, A, &n, tau, z, &n,
                     ormtr_work, &lwork, &info FCONE FCONE FCONE);
    check_info(info, "dormtr");

    /* dstebz orders by split block: sort all pairs by decreasing eigenvalue */
    int *idx = (int *) R_alloc((size_t) found, sizeof(int));
    double *key = (double *) R_alloc((size_t) found, sizeof(double));
    for (int k = 0; k < found; k++) { idx[k] = k; key[k] = -w[k]; }
    rsort_with_index(key, idx, found);
    double *vals = (double *) R_alloc((size_t) found, sizeof(double));
    double *vecs = (double *) R_alloc((size_t) n * found, sizeof(double));
    for (int k = 0; k < found; k++) {
        vals[k] = w[idx[k]] / sigma;
        memcpy(vecs + (size_t) k * n, z + (size_t) idx[k] * n, (size_t) n * sizeof(double));
    }
    *values = vals;
    *vectors = vecs;
    return found;
}

/* The fewest leading eigenpairs whose eigenvalues reach a proportion of the
 * total variance: kpca(variance = p).
 *
 * total is trace(A), the sum of all eigenvalues, which centering gives for
 * free. After dsytrd, dsterf finds every eigenvalue of the tridiagonal
 * matrix without vectors (O(n^2), on copies), the count k comes from their
 * cumulative sums from the largest, and only then are k eigenvectors
 * computed: dstebz for the k largest eigenvalues (RANGE = 'I'), dstein and
 * dormtr, as threshold_eigen() does for its count. *values and *vectors are
 * R_alloc'ed; the count is at least 1. */
int variance_eigen(double *A, int n, double proportion, double total, double **values,
                   double **vectors)
{
    const char uplo = 'L', side = 'L', trans = 'N', range = 'I', order = 'B';
    int info = 0, lwork = -1;
    double work_query;
    double *diag = (double *) R_alloc((size_t) n, sizeof(double));
    double *offdiag = (double *) R_alloc((size_t) n, sizeof(double));
    double *tau = (double *) R_alloc((size_t) n, sizeof(double));

    /* scale as dsyevr does, so that bisection cannot overflow (see
     * threshold_eigen); the eigenvalues are scaled back at the end */
    double anrm = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            double v = fabs(A[i + (size_t) j * n]);
            if (v > anrm) anrm = v;
        }
    double smlnum = DBL_MIN / DBL_EPSILON, rmin = sqrt(smlnum),
        rmax = fmin(sqrt(1.0 / smlnum), 1.0 / sqrt(sqrt(DBL_MIN))), sigma = 1.0;
    if (anrm > 0.0 && anrm < rmin) sigma = rmin / anrm;
    else if (anrm > rmax) sigma = rmax / anrm;
    if (sigma != 1.0) {
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) A[i + (size_t) j * n] *= sigma;
        total *= sigma;
    }

    F77_CALL(dsytrd)(&uplo, &n, A, &n, diag, offdiag, tau, &work_query, &lwork,
                     &info FCONE);
    check_info(info, "dsytrd");
    lwork = (int) work_query;
    double *work = (double *) R_alloc((size_t) (lwork > 5 * n ? lwork : 5 * n),
                                      sizeof(double));
    F77_CALL(dsytrd)(&uplo, &n, A, &n, diag, offdiag, tau, work, &lwork,
                     &info FCONE);
    check_info(info, "dsytrd");

    /* all eigenvalues, ascending, on copies (dsterf destroys its input) */
    double *all = (double *) R_alloc((size_t) n, sizeof(double));
    double *off_copy = (double *) R_alloc((size_t) n, sizeof(double));
    memcpy(all, diag, (size_t) n * sizeof(double));
    if (n > 1) memcpy(off_copy, offdiag, (size_t) (n - 1) * sizeof(double));
    F77_CALL(dsterf)(&n, all, off_copy, &info);
    check_info(info, "dsterf");

    /* the count: the sums are compared with a tolerance of rounding in n
     * terms, so that variance = 1 stops at the rank instead of running into
     * the eigenvalues that are zero up to rounding */
    double target = proportion * total, sum_abs = 0.0, cum = 0.0;
    for (int i = 0; i < n; i++) sum_abs += fabs(all[i]);
    double slack = 8.0 * n * DBL_EPSILON * sum_abs;
    int k = 0;
    while (k < n && all[n - 1 - k] > 0.0) {
        cum += all[n - 1 - k];
        k++;
        if (cum >= target - slack) break;
    }
    if (k == 0) k = 1; /* no positive eigenvalue: R reports it */

    int il = n - k + 1, iu = n, found = 0, nsplit = 0;
    double vl = 0.0, vu = 0.0, abstol = 0.0;
    double *w = (double *) R_alloc((size_t) n, sizeof(double));
    int *iblock = (int *) R_alloc((size_t) n, sizeof(int));
    int *isplit = (int *) R_alloc((size_t) n, sizeof(int));
    int *iwork = (int *) R_alloc(3 * (size_t) n, sizeof(int));
    double *stebz_work = (double *) R_alloc(4 * (size_t) n, sizeof(double));
    F77_CALL(dstebz)(&range, &order, &n, &vl, &vu, &il, &iu, &abstol, diag,
                     offdiag, &found, &nsplit, w, iblock, isplit, stebz_work, iwork,
                     &info FCONE FCONE);
    check_info(info, "dstebz");
    if (found < 1) error("LAPACK routine 'dstebz' found no eigenvalue");

    double *z = (double *) R_alloc((size_t) n * found, sizeof(double));
    int *ifail = (int *) R_alloc((size_t) found, sizeof(int));
    F77_CALL(dstein)(&n, diag, offdiag, &found, w, iblock, isplit, z, &n, work,
                     iwork, ifail, &info);
    check_info(info, "dstein");

    lwork = -1;
    F77_CALL(dormtr)(&side, &uplo, &trans, &n, &found, A, &n, tau, z, &n,
                     &work_query, &lwork, &info FCONE FCONE FCONE);
    check_info(info, "dormtr");
    lwork = (int) work_query;
    double *ormtr_work = (double *) R_alloc((size_t) (lwork > 1 ? lwork : 1),
                                            sizeof(double));
    F77_CALL(dormtr)(&side, &uplo, &trans, &n, &found, A, &n, tau, z, &n,
                     ormtr_work, &lwork, &info FCONE FCONE FCONE);
    check_info(info, "dormtr");

    /* decreasing order; dstebz may return more than k when eigenvalues tie
     * at the boundary: keep the k largest */
    int *idx = (int *) R_alloc((size_t) found, sizeof(int));
    double *key = (double *) R_alloc((size_t) found, sizeof(double));
    for (int j = 0; j < found; j++) { idx[j] = j; key[j] = -w[j]; }
    rsort_with_index(key, idx, found);
    if (found > k) found = k;
    double *vals = (double *) R_alloc((size_t) found, sizeof(double));
    double *vecs = (double *) R_alloc((size_t) n * found, sizeof(double));
    for (int j = 0; j < found; j++) {
        vals[j] = w[idx[j]] / sigma;
        memcpy(vecs + (size_t) j * n, z + (size_t) idx[j] * n, (size_t) n * sizeof(double));
    }
    *values = vals;
    *vectors = vecs;
    return found;
}
