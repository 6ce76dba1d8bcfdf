/* fastkpca: declarations shared by the C engine.
 *
 * One C file per step of the algorithm:
 *   kernel.c  kernel matrix (lower triangle of the fit buffer) and cross-kernels
 *   center.c  double centering of the fit buffer in place
 *   eigen.c   top eigenpairs with LAPACK (dsytrd, then dstemr or dstebz/dstein,
 *             then dormtr; dsyevr for small problems)
 *   lanczos.c top eigenpairs by thick-restart Lanczos (the iterative solver)
 *   fit.c     the .Call entry point that runs the steps on one n x n buffer
 *   init.c    registration
 */
#ifndef FASTKPCA_H
#define FASTKPCA_H

#define USE_FC_LEN_T
#include <R.h>
#include <Rinternals.h>
#include <Rconfig.h>
#include <R_ext/Lapack.h>
#include <R_ext/BLAS.h>
#include <R_ext/Utils.h>
#ifndef FCONE
# define FCONE
#endif
#include <stddef.h>

/* Kernel codes. The order matches fastkpca:::kernel_names in R/kernels.R,
 * where the code of a name is its position; 0 is a precomputed kernel matrix. */
typedef enum {
    KERNEL_PRECOMPUTED = 0,
    KERNEL_VANILLA = 1,
    KERNEL_POLY,
    KERNEL_RBF,
    KERNEL_LAPLACE,
    KERNEL_TANH,
    KERNEL_BESSEL,
    KERNEL_ANOVA,
    KERNEL_SPLINE,
    KERNEL_COUNT
} kernel_code;

/* Kernel parameters, passed from R as one double vector in this order
 * (fastkpca:::kpar_slots). Unused slots are ignored. */
enum { KPAR_SIGMA = 0, KPAR_DEGREE, KPAR_SCALE, KPAR_OFFSET, KPAR_ORDER, KPAR_COUNT };

typedef struct {
    kernel_code code;
    double sigma, degree, scale, offset, order;
    double bessel_lim; /* 1 / (Gamma(order + 1) 2^order), besseldot only */
} kernel_spec;

/* Solver codes: the order matches fastkpca:::solver_codes in R/eigen.R.
 * Solver settings come as one double vector in this order. */
enum { CONTROL_TOL = 0, CONTROL_MAXIT, CONTROL_NCV, CONTROL_EXACT_METHOD, CONTROL_COUNT };
typedef enum { SOLVER_EXACT = 1, SOLVER_ITERATIVE = 2 } solver_code;
/* The tridiagonal method of the exact solver (fastkpca:::exact_method_codes
 * in R/eigen.R), passed as control[CONTROL_EXACT_METHOD]. */
typedef enum { EXACT_BISECTION = 1, EXACT_MRRR = 2 } exact_method_code;

/* kernel.c */
void kernel_spec_from_R(SEXP kernel, SEXP kpar, kernel_spec *spec);
void kernel_fill_lower(const kernel_spec *spec, const double *x, int n, int d,
                       double *K, int threads);

/* center.c */
void center_in_place(double *K, int n, double *colmeans, double *grand_mean,
                     double *trace, int threads);

/* eigen.c: results in decreasing order; return the number of pairs found */
int top_eigen_exact(double *A, int n, int f, double *values, double *vectors);
int exact_eigen(double *A, int n, int f, double lower, int method, double **values,
                double **vectors);

/* lanczos.c */
int top_eigen_lanczos(const double *A, int n, int k, int ncv, double tol, int maxit,
                      double *values, double *vectors, int *restarts,
                      double *residual);

/* helpers shared by the entry points (fit.c) */
int as_count(SEXP s, const char *what, int lo, int hi);
int as_threads(SEXP s);

/* .Call entry points */
SEXP kpca_fit(SEXP x, SEXP kernel, SEXP kpar, SEXP features, SEXP th,
                SEXP solver, SEXP threads, SEXP control);
SEXP kernel_cross(SEXP z, SEXP x, SEXP kernel, SEXP kpar, SEXP threads);

#endif
