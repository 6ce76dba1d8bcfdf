/* fastkpca: declarations shared by the C engine.
 *
 * One C file per step of the algorithm:
 *   kernel.c  the kernel matrix's entry points (kernel_matrix, kernel_cross,
 *             kernel_self)
 *   kernel_program.c the kernel of a call read once: the program R makes,
 *             checked, and its base kernels' parameters
 *   kernel_points.c the points of a call read once (dense rows, sparse rows or
 *             strings): kernel_call_read(), every evaluating entry's prologue
 *   kernel_plan.c the one choice of an evaluator (kernel_plan()), and the
 *             hand-over to its block loop (kernel_block()) or its tiles
 *             (kernel_tile())
 *   kernel_generic.c the generic evaluator: any program on any points, one
 *             column segment at a time
 *   kernel_values.c the base kernels' values, below every evaluator
 *   kernel_fast.c (with kernel_simd.h) the fast blocks of the kernels of an
 *             inner product or a squared distance, a copy per vector path
 *             (plain, SSE2, AVX2, AVX-512, NEON) chosen by simd.h's switch
 *   string_kernel.c the values of the string base kernels (kernlab's stringdot
 *             types): the strings of a call indexed once (a generalized suffix
 *             array, then profiles or the suffix tree's nodes as a dense matrix
 *             and an inverted index), the value function behind KERNEL_STRING
 *   center.c  double centering of the fit buffer in place, and of blocks
 *             of columns (H V)
 *   eigen.c   top eigenpairs with LAPACK (dsytrd's steps or the two
 *             stages, the tridiagonal's method, then dormtr's; dsyevr for
 *             small problems)
 *   tridiagonal.c the tridiagonal's eigenpairs: MRRR (dstemr's steps, its
 *             bisections and vectors on the threads) or dstebz/dstein
 *   band_reduction.c the two-stage reduction (dense to band to tridiagonal)
 *             and its back-transformation for the wanted vectors only
 *   band_sweep.h stage 2's sweep and its kernels (the band's reflectors,
 *             applied from either side), compiled per copy of
 *             band_reduction.c (plain, two-double, AVX2)
 *   lanczos.c top eigenpairs by thick-restart Lanczos (the iterative solver)
 *   matrix_free.c the kernel's rows times a block of vectors, tile by tile,
 *             never stored (the matrix-free solver's passes, the exact
 *             fit's certificate)
 *   krylov.c  the matrix-free solver's dense steps between its passes: the
 *             basis's cross products, the Ritz vectors and residuals, each
 *             new block made orthonormal against the basis, the centering
 *             of its products, the Nystrom start's products and pairs
 *   fit.c     the .Call entry point that runs the steps on one n x n buffer,
 *             the certificate's residuals included
 *   project.c rows projected onto a fit's components, block by block
 *             (predict(), and the scores of a Nystrom fit)
 *   args.c    argument checks shared by the entry points, the exact fit's
 *             progress and its stage clock
 *   threads.c how many threads a call may have (one in a forked child, at
 *             most OpenMP's thread limit) and how a thread waits on another
 *   nystrom.c centered Nystrom kernel PCA: the sufficient statistics over
 *             row blocks, the landmark coefficients, k-means++ landmarks
 *   randomized.c the randomized solver (Halko, Martinsson and Tropp)
 *   preimage.c the linear system of the pre-image map (kernel ridge regression)
 *             and the fixed-point pre-images, in blocks of rows
 *   ichol.c   kernel ICA: incomplete Cholesky of one source's Gaussian Gram matrix
 *   kica.c    kernel ICA: the KGV and KCCA contrasts and the Jacobi sweeps over
 *             pairwise rotations (Brent's method), on cached factors
 *   kcca.c    kernel canonical correlation: incomplete Cholesky for any kernel
 *   sparse.c  sparse rows (CSR) from R's sparse matrices, read once per
 *             call, and their norms
 *   sparse_columns.c the kernel values of sparse points (scatter and
 *             gather, or a merge), and the evaluator of a single kernel on
 *             sparse rows 8 columns at a time (its loop and its tiles)
 *   sparse_tiles.c the tiles of a gathered-product kernel on sparse rows (a
 *             dense head of the frequent columns, sorted tails), and their
 *             block loop
 *   simd.h    the arithmetic layer: the vector types (GCC and clang vector
 *             extensions: SSE2, AVX2, AVX-512, NEON) and the one switch,
 *             the session's vector path, that every vector kernel honours
 *   simd.c    the CPU's features and the path R asks for (options(
 *             fastkpca.simd))
 *   engine_settings.c the engine's settings from R: the path to simd.c, the
 *             tuning (ENGINE_TUNING) into the one struct every file reads;
 *             the tuning's table and the engine's limits for R
 *   entry_record.c the path each entry point ran on, recorded at its entry
 *             (for the tests)
 *   tiles.c   the register-tile products of matrices: general, rank-k
 *             (the Nystrom statistics), the string kernels' dense products
 *             (through the general one); the thread-work setting
 *   tiles_vector.c the register-tile matrix-vector products (symmetric and
 *             general) and the randomized solver's symmetric product
 *   tiles_vector.h their bodies, compiled per copy by tiles_vector.c
 *             (plain, two-double, AVX2)
 *   tile_product.c the tests' entry point to the tiles, through the copy
 *             of a named path (tiles.h)
 *   blas.c    which BLAS is loaded, and which products go to it (a rule
 *             on their shapes, the only one): the BLAS's side of each
 *             choice
 *   reflector_tiles.c LAPACK's blocked steps of the exact solver on the
 *             tiles (dlatrd, dlarft and dlarfb, dsyr2k), below blas.c
 *   memory.c  the memory the system can still give, from the OS's own calls;
 *             huge pages for the large results
 *   errors.c  the engine's errors, raised as classed R conditions
 *   init.c    registration
 */
#ifndef FASTKPCA_H
#define FASTKPCA_H

/* omp.h before R's headers: Rinternals.h defines match as Rf_match, which
 * breaks the "omp declare variant ... match(...)" lines of clang's omp.h */
#ifdef _OPENMP
# include <omp.h>
#endif
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

/* errors.c: every error of the engine has a kind, raised as the R condition
 * of class fastkpca_error_<kind> (stop_kind() in R/conditions.R), so that R
 * never classes an error by its text (R's own errors inside C, which have
 * no kind, are classed by engine_call()). */
typedef enum {
    KIND_ARGUMENT = 1, /* an argument is invalid */
    KIND_DATA,         /* the data do not allow the computation */
    KIND_MEMORY,       /* an allocation failed or would be too large */
    KIND_NUMERICAL,    /* LAPACK failed, or a system is singular */
    KIND_COUNT
} error_kind;
#if defined(__GNUC__)
# define FASTKPCA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
# define FASTKPCA_PRINTF(f, a)
#endif
void NORET fastkpca_error(error_kind kind, const char *format, ...) FASTKPCA_PRINTF(2, 3);
#define error_argument(...) fastkpca_error(KIND_ARGUMENT, __VA_ARGS__)
#define error_data(...) fastkpca_error(KIND_DATA, __VA_ARGS__)
#define error_memory(...) fastkpca_error(KIND_MEMORY, __VA_ARGS__)
#define error_numerical(...) fastkpca_error(KIND_NUMERICAL, __VA_ARGS__)

/* Kernel codes. The order matches fastkpca:::engine_kernels in R/kernel_spec.R,
 * where the code of a name is its position; 0 is a precomputed kernel matrix.
 * Every base kernel but KERNEL_STRING takes rows of numbers; KERNEL_STRING
 * (stringdot, any of its types) takes strings. */
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
    KERNEL_STRING,
    KERNEL_COUNT
} kernel_code;

/* The limits of the engine, the one place they are written: R reads them
 * (fastkpca:::engine_limits(), through engine_limits() in engine_settings.c) to check
 * the user's arguments, and C re-checks them where a value out of range
 * would crash or overflow. */
#define MAX_THREADS 1024          /* 'threads' */
#define BESSEL_MAX_ORDER 50.0     /* besseldot's 'order': beyond about 52,
                                   * J_order(t) underflows for small t */
#define KERNEL_MAX_POWER 1e6      /* k^p */
#define SOLVER_MAX_ITERATIONS 1e6 /* control$maxit of the iterative solver */

/* The engine's tuning: the crossovers, block sizes and work bounds that
 * the tests and benchmarks move and users never need, one row each here,
 * the one place a setting is declared: X(kind, name, default, lower,
 * upper), kind WHOLE (an int) or NUMBER (a double), the bounds inclusive.
 * Each name is a field of the struct engine_tuning, read anywhere (on any
 * thread, no R API) as tuning.name; engine_settings() (engine_settings.c)
 * sets every field on the main thread before each call into the engine:
 * its default, or the value R's internal option fastkpca.tuning gives
 * (R/tuning.R, which checks it against this table, read through
 * engine_defaults()). A new setting is a row here and its use. Why a
 * default is what it is is said where the setting is used (or here). */
#define ENGINE_TUNING(X)                                                     \
    /* tiles.c: the fewest multiply-adds a parallel region of the products  \
     * gets (tile_thread_work() below; krylov.c, blas.c, band_reduction.c   \
     * share it out) */                                                      \
    X(NUMBER, tile_thread_work, 3e7, 0, INFINITY)                            \
    /* string_kernel.c: the share of the strings a node must be in to be a  \
     * column of the dense matrix */                                         \
    X(NUMBER, string_dense_share, 0.5, 0, INFINITY)                          \
    /* kernel_fast.c: the fewest coordinates whose blocks are products */   \
    X(WHOLE, wide_min_d, 256, 1, INT_MAX)                                    \
    /* kernel_fast.c: the coordinates of each group of a wide inner         \
     * product, summed from zero, the groups' sums then added in order      \
     * (1024: a group of 500 rows stays in the caches for its tasks;        \
     * 500 x 200000 on 2 threads took 0.88 of 4096's CPU time, 512 0.97) */ \
    X(WHOLE, wide_group, 1024, 1, INT_MAX)                                   \
    /* eigen.c: the smallest n the two-stage reduction takes (2000 with R's \
     * reference BLAS, none with an optimized one: blas.c), its band width */ \
    X(NUMBER, band_min_rows, two_stage_min_rows(2000), 0, INFINITY)         \
    X(WHOLE, band_width, 48, 2, 1024)                                        \
    /* band_reduction.c: eigenvector columns per unit of work of stage 2's  \
     * back-transformation, and the sweeps per group of its reflectors */   \
    X(WHOLE, band_chunk, 64, 1, 1048576)                                     \
    X(WHOLE, band_group, 24, 1, 1024)                                        \
    /* tridiagonal.c: the fewest vectors a group of MRRR's gets (at least \
     * k / 16; the groups go to the threads) */                              \
    X(WHOLE, mrrr_group_min, 32, 1, INT_MAX)                                 \
    /* tridiagonal.c: the fewest eigenvalues a piece of MRRR's bisections   \
     * gets (at least k / 64; the pieces go to the threads) */               \
    X(WHOLE, mrrr_bisection_min, 32, 1, INT_MAX)                             \
    /* eigen.c, blas.c, band_reduction.c: the most multiply-adds done       \
     * between two interrupt checks in the exact solver's reduction and     \
     * back-transformation: about 0.6 s on the reference BLAS at its        \
     * slowest (the matrix-vector products of dlatrd at n = 8000), far less \
     * on OpenBLAS; below it (n up to about 5800) the one-stage steps are   \
     * LAPACK's own, and with a small value (say 4096) the blocked paths    \
     * run on small problems */                                              \
    X(NUMBER, eigen_check_work, 1073741824.0, 1, INFINITY)
#define TUNING_TYPE_WHOLE int
#define TUNING_TYPE_NUMBER double
#define TUNING_FIELD(kind, name, value, lower, upper) TUNING_TYPE_##kind name;
typedef struct {
    ENGINE_TUNING(TUNING_FIELD)
} engine_tuning;
#undef TUNING_FIELD
extern engine_tuning tuning;   /* engine_settings.c */
/* the thread-work setting in force, for the loops that follow the tiles' rule */
#define tile_thread_work() (tuning.tile_thread_work)

/* Kernel parameters, passed from R as one double vector in this order
 * (fastkpca:::kpar_slots). Unused slots are ignored. A string kernel's
 * type is its code in fastkpca:::string_types, normalized 0 or 1. */
enum { KPAR_SIGMA = 0, KPAR_DEGREE, KPAR_SCALE, KPAR_OFFSET, KPAR_ORDER, KPAR_LENGTH,
       KPAR_LAMBDA, KPAR_TYPE, KPAR_NORMALIZED, KPAR_COUNT };

/* The string kernel types (KPAR_TYPE); the order matches fastkpca:::string_types. */
enum {
    STRING_SPECTRUM = 1, STRING_BOUNDRANGE, STRING_CONSTANT, STRING_EXPONENTIAL,
    STRING_STRING, STRING_FULLSTRING, STRING_SEQUENCE, STRING_TYPE_COUNT
};

/* A string kernel's index of the strings of a call (string_kernel.c). */
typedef struct string_base string_base;

typedef struct {
    kernel_code code;
    double sigma, degree, scale, offset, order;
    double bessel_lim; /* 1 / (Gamma(order + 1) 2^order), besseldot only */
    /* KERNEL_STRING only: stringdot's parameters, and the index of the
     * call's strings (string_kernels_prepare()) */
    int string_type, length, normalized;
    double lambda;
    string_base *strings;
} kernel_spec;

/* A kernel expression compiled to a postfix program (fastkpca:::kernel_program
 * in R/kernel_spec.R): each op takes its operands from a stack of kernel values.
 * The codes match kernel_ops there. */
typedef enum {
    OP_BASE = 1,    /* push base kernel number arg */
    OP_ADD,         /* pop two, push their sum */
    OP_MUL,         /* pop two, push their product */
    OP_SCALE,       /* top times arg (> 0) */
    OP_POWER,       /* top to the whole power arg (>= 1) */
    OP_EXP,         /* exp(top) */
    OP_CONFORMAL,   /* top times g(a) g(b), with the weights number arg */
    OP_COUNT
} kernel_op;

/* Rows of a sparse matrix, compressed (CSR, 0-based): row r's values are
 * x[p[r] .. p[r + 1] - 1], in the columns j[...], increasing (sparse.c). */
typedef struct {
    int n, d;
    const int *p, *j;
    const double *x;
} sparse_csr;

typedef struct {
    int nops;
    const int *ops;
    const double *args;
    int nbase;
    kernel_spec *bases;
    int nweights;    /* conformal weight vectors per point set */
    int depth;       /* stack depth the program needs */
    int any_distance, any_inner, any_bessel, any_string;
    double bessel_order;  /* the largest besseldot order */
    int strings_indexed;  /* string kernels: the call's strings are indexed */
    int fixed_first;      /* string kernels: the number of the fixed set's first string */
    int sparse, sparse_d; /* sparse rows, of sparse_d columns (those used, when fewer) */
    int prep_threads;     /* threads that prepare dense points (kernel_point_sets()) */
    /* the call's point sets (kernel_point_sets()): their numbers of points
     * (n_moving 0 without a moving set) and of columns (0 for strings), and for sparse rows the sets as R
     * gave them with their CSR, read once */
    int n_fixed, n_moving, d;
    SEXP fixed_set, moving_set;
    const sparse_csr *fixed_rows, *moving_rows;
    const char *fixed_what; /* the fixed set's name in errors (its R argument) */
} kernel_eval;

/* A set of points prepared for a kernel: each point contiguous (d x n),
 * with its squared norm; shifted by the training column means for the
 * distance kernels, as they are for the inner-product ones; and one
 * conformal weight per point for each OP_CONFORMAL. For a string kernel,
 * d is 0 and the points are the strings first .. first + n - 1 of the
 * call's strings. For sparse rows, the points are the rows first ..
 * first + n - 1 of sparse, unshifted, with their squared norms. */
typedef struct {
    int n, d, first;
    const double *inner, *inner_norms;       /* NULL if no inner-product kernel */
    const double *shifted, *shifted_norms;   /* NULL if no distance kernel */
    /* wide data (kernel_points_in_place()): the points are rows of the
     * caller's column-major matrix, read in place (inner and shifted NULL,
     * their norms set), each coordinate less in_place_shift (NULL: none) */
    const double *in_place, *in_place_shift;
    int in_place_ld;
    const sparse_csr *sparse;               /* NULL for dense rows and strings */
    const double *sparse_norms;
    const double **weights;                  /* nweights arrays of length n */
} kernel_points;

/* Solver codes: the order matches fastkpca:::solver_codes in R/eigen.R.
 * Solver settings come as one double vector in this order. */
enum { CONTROL_TOL = 0, CONTROL_MAXIT, CONTROL_NCV, CONTROL_EXACT_METHOD,
       CONTROL_OVERSAMPLE, CONTROL_POWER, CONTROL_COUNT };
typedef enum { SOLVER_EXACT = 1, SOLVER_ITERATIVE = 2, SOLVER_RANDOMIZED = 3 } solver_code;
/* The tridiagonal method of the exact solver (fastkpca:::exact_method_codes
 * in R/eigen.R), passed as control[CONTROL_EXACT_METHOD]. */
typedef enum { EXACT_BISECTION = 1, EXACT_MRRR = 2, EXACT_DSTEMR = 3 } exact_method_code;

/* kernel_values.c: the base kernels' values, below every evaluator */
int kernel_is_distance(kernel_code code);
double kernel_dot(const double *a, const double *b, int d);
double kernel_sq_distance(const double *a, const double *b, int d, double aa, double bb);
double kernel_diff_distance(const double *a, const double *b, int d);
void kernel_fast_refine(const kernel_spec *spec, const double *ra, const double *an,
                        const double *bj, double bn, int d, int n, double *v);
double kernel_of_product(const kernel_spec *k, double s, double *work);
double kernel_value(const kernel_spec *k, const double *a, const double *b, int d,
                    double aa, double bb, double *work);
size_t kernel_value_work(const kernel_spec *k);
double kernel_value_cost(const kernel_spec *k, int d);

/* kernel_program.c: the kernel of a call, read once */
void kernel_eval_from_R(SEXP program, kernel_eval *k);
void kernel_nonfinite_error(const kernel_eval *k, const char *what);

/* kernel_points.c: the points of a call, read once */
int kernel_call_read(SEXP kernel, SEXP threads, SEXP moving, const char *mwhat,
                     SEXP fixed, const char *fwhat, kernel_eval *k);
int kernel_point_sets(kernel_eval *k, SEXP moving, const char *mwhat, SEXP fixed,
                      const char *fwhat, int threads);
const double *kernel_shift(const kernel_eval *k, const double *x, int ldx, int n, int d,
                           const double **norms);
void kernel_points_prepare(const kernel_eval *k, const double *x, int ldx, int row0,
                           int n, int d, const double *shift, SEXP weights,
                           kernel_points *p);
const double *kernel_points_fixed(const kernel_eval *k, SEXP rows, SEXP weights,
                                  kernel_points *p);
void check_weights(const kernel_eval *k, SEXP weights, const char *what);
void kernel_points_rows(const kernel_eval *k, SEXP z, int row0, int n,
                        const double *shift, SEXP weights, kernel_points *p);
kernel_points kernel_points_view(const kernel_eval *k, const kernel_points *p, int i0,
                                 int len, const double **wbuf);

/* kernel_block()'s lower_only: 0, every row of each column; 1, the lower
 * triangle with the diagonal; KERNEL_SYMMETRIC, the lower triangle
 * computed and copied into the upper one, block by block
 * (mirror_lower_columns(), tiles.c) */
#define KERNEL_SYMMETRIC 2

/* kernel_generic.c: the generic evaluator (any program, any points) */
size_t kernel_work_length(const kernel_eval *k);
double *kernel_work(const kernel_eval *k, int threads);
double kernel_program_cost(const kernel_eval *k, int d);
void generic_block(const kernel_eval *k, const kernel_points *a, const kernel_points *b,
                   int lower_only, double *out, int threads, const char *what,
                   double block_work, int min_columns);
void kernel_diagonal(const kernel_eval *k, const kernel_points *p, double *out);

/* kernel_plan.c: which evaluator computes a kernel, and the hand-over to
 * its block loop or its tiles */
typedef enum {
    EVAL_FAST,           /* kernel_fast.c's tiles */
    EVAL_SPARSE_TILES,   /* sparse_tiles.c's tiles */
    EVAL_SPARSE_COLUMNS, /* sparse_columns.c's 8-column products */
    EVAL_GENERIC         /* kernel_generic.c's interpreter */
} kernel_evaluator;
typedef enum {
    KERNEL_USE_BLOCK,    /* kernel_block(): blocks of columns, once or on parts */
    KERNEL_USE_TILES     /* kernel_tile(): many tiles of one preparation */
} kernel_use;
kernel_evaluator kernel_plan(const kernel_eval *k, const kernel_points *a,
                             const kernel_points *b, kernel_use use);
void kernel_block(const kernel_eval *k, const kernel_points *a, const kernel_points *b,
                  int lower_only, double *out, int threads, const char *what);
int kernel_fast_points(const kernel_eval *k);
int kernel_tiles_shared(const kernel_eval *k);
typedef struct kernel_tiles kernel_tiles;
kernel_tiles *kernel_tiles_prepare(const kernel_eval *k, const kernel_points *a,
                                   const kernel_points *b, int threads);
int kernel_tile(const kernel_tiles *P, int r0, int nr, int c0, int nc, double *out);

/* sparse.c: sparse rows, read from R once per call, and their norms */
int is_sparse_rows(SEXP x);
void sparse_rows_from_R(SEXP x, const char *what, sparse_csr *s);
const double *sparse_row_norms(const sparse_csr *s, int row0, int n);
SEXP sparse_rows(SEXP index, SEXP second, SEXP values, SEXP dim, SEXP layout);

/* sparse_columns.c: the kernel values of sparse rows (sparse_segment(),
 * one column, with the first SPARSE_COLUMNS x d doubles of its scratch
 * zero) and the evaluator of a single kernel on sparse rows by
 * SPARSE_COLUMNS columns at a time, whose rows scattered side by side
 * need SPARSE_COLUMNS x d doubles of scratch: its block loop (1 if a
 * value is not finite) and its tiles (sparse_columns_prepare() on the
 * main thread, sparse_columns_tile() on any of its threads, no R API) */
#define SPARSE_COLUMNS 8
void sparse_segment(const kernel_spec *spec, const kernel_points *a, const kernel_points *b,
                    int j, int i0, int i1, double *dst, double *work);
double sparse_rbf_distance(double sigma, double an, double bn, double ab,
                           const sparse_csr *A, int ra, const sparse_csr *B, int rb);
int sparse_columns_block(const kernel_spec *spec, const kernel_points *a,
                         const kernel_points *b, int lower_only, double *out, int threads,
                         double block_work, int min_columns);
typedef struct sparse_columns_plan sparse_columns_plan;
sparse_columns_plan *sparse_columns_prepare(const kernel_spec *spec, const kernel_points *a,
                                            const kernel_points *b, int threads);
int sparse_columns_tile(const sparse_columns_plan *P, int r0, int nr, int c0, int nc,
                        double *out);

/* sparse_tiles.c: tiles of a gathered-product kernel on sparse rows, the
 * frequent columns as a dense head (one tiled product), the rest indexed
 * by column per tile. sparse_tiles_prepare() on the main thread;
 * sparse_tile() on any of its threads, no R API, 1 if a value is not
 * finite; sparse_tiles_block(), the block loop (1 if a value is not
 * finite). */
typedef struct sparse_tiles sparse_tiles;
int sparse_tiles_supported(const kernel_spec *spec);
sparse_tiles *sparse_tiles_prepare(const kernel_spec *spec, const kernel_points *a,
                                   const kernel_points *b, int threads);
int sparse_tile(const sparse_tiles *P, int r0, int nr, int c0, int nc, double *out,
                size_t ldo);
int sparse_tiles_block(const kernel_spec *spec, const kernel_points *a,
                       const kernel_points *b, int lower_only, double *out, int threads,
                       double block_work);

/* kernel_fast.c: the kernels of an inner product or a squared distance */
int kernel_fast_supported(const kernel_spec *spec);
int kernel_expanded_form(const kernel_spec *spec, int d);
/* from tuning.wide_min_d coordinates on, blocks and tiles are a matrix
 * product of the points read in place (tile_points()) and the kernel's
 * function after it */
int kernel_wide_form(const kernel_spec *spec, int d);
void wide_group_span(int d, int g, int *k0, int *kc);
int wide_group_count(int d);
void kernel_fast_in_place(const kernel_spec *spec, const kernel_points *a,
                          const kernel_points *b, int j, int i0, int i1, double *dst);
int kernel_fast_block(const kernel_spec *spec, const kernel_points *a,
                      const kernel_points *b, int lower_only, double *out, int threads,
                      double block_work);
void kernel_fast_transform(const kernel_spec *spec, double *v, int n);
typedef struct kernel_fast_plan kernel_fast_plan;
kernel_fast_plan *kernel_fast_prepare(const kernel_spec *spec, const kernel_points *a,
                                      const kernel_points *b);
int kernel_fast_tile(const kernel_fast_plan *P, int r0, int nr, int c0, int nc,
                     double *out);

/* string_kernel.c: the values of the string base kernels. The strings of a
 * call are indexed once (string_kernels_prepare(), by kernel_point_sets());
 * string_segment() is KERNEL_STRING's value function on a column segment,
 * with string_work_length() doubles of scratch per thread, reading the
 * dense part of the block's tile, which string_tiles() computes before
 * the threads' loop over a block of columns. */
void string_kernels_prepare(kernel_eval *k, SEXP strings, int threads);
size_t string_work_length(const kernel_eval *k);
double string_value_cost(const kernel_spec *spec);
void string_segment(const kernel_spec *spec, int x0, int i0, int i1, int y, double *dst,
                    double *work);
void string_tiles(const kernel_eval *k, const kernel_points *a, const kernel_points *b,
                  int row0, int j0, int j1, int threads);
void string_tiles_release(const kernel_eval *k);

/* center.c */
void center_in_place(double *K, int n, double *colmeans, double *grand_mean,
                     double *trace, double *centered_max, int threads);
void center_in_columns(int n, int b, const double *src, double *dst, double scale, int nt);

/* eigen.c: results in decreasing order; return the number of pairs found.
 * orient_columns: the sign rule (largest-magnitude entry of each column
 * positive) of every fit. */
void orient_columns(int n, int k, double *vectors);
int top_eigen_exact(double *A, int n, int f, double *values, double *vectors);
/* Where the exact solvers put their eigenvectors: n x k doubles that the
 * caller owns (fit.c: the R matrix it returns), so that they are written
 * once and never copied. */
typedef struct {
    double *(*take)(void *ctx, int n, int k);
    void *ctx;
} vector_store;
/* largest: max |A| over its lower triangle (center_in_place() finds it) */
int exact_eigen(double *A, int n, double largest, int f, double lower, int method,
                double **values, double **vectors, vector_store store, int threads);
int variance_eigen(double *A, int n, double largest, double proportion, double total,
                   int method, double **values, double **vectors, vector_store store,
                   int threads);
/* tridiagonal.c: the wanted eigenpairs of the tridiagonal (diag, offdiag;
 * kept): those in (lower, upper] (range 'V') or the il-th to iu-th
 * smallest (range 'I'), ascending, the values in w, the vectors (n x
 * found) in the store's space (*Z); return the number found, MRRR -1
 * where it fails (the caller falls back to bisection, as dsyevr) */
int tridiagonal_mrrr(const double *diag, const double *offdiag, int n, char range,
                     double lower, double upper, int il, int iu, double *w, double **Z,
                     vector_store store, int threads);
int tridiagonal_bisection(const double *diag, const double *offdiag, int n, char range,
                          double lower, double upper, int il, int iu, double *w,
                          double **Z, vector_store store);
int tridiagonal_dstemr(const double *diag, const double *offdiag, int n, char range,
                       double lower, double upper, int il, int iu, double *w, double **Z,
                       vector_store store);
/* band_reduction.c: the two-stage reduction (dense to band, band to
 * tridiagonal) and its back-transformation */
void band_reduce(double *A, int n, int b, double *tau1, int threads);
void band_chase(double *A, int n, int b, double *diag, double *offdiag, int threads);
void band_back_transform(const double *A, int n, int b, const double *tau1, double *Z,
                         int k, int threads);
/* Columns per strip of the trailing matrix's products: a strip's
 * symmetric diagonal block goes through a square of this size. */
#define BAND_STRIP 256
/* The fewest multiply-adds a parallel region of the two stages' products
 * gets (panel_gemm(), reflector_tiles.c): the thread-work setting
 * (tile_thread_work(), the tuning) over BAND_THREAD_SHARE, 2 x 10^6 by
 * default. Stage 1 makes some 40 regions a panel, most of them products of
 * a panel (n x b) with a strip or a b x b factor; under the setting itself
 * they ran on one thread, and stage 1 at n = 3000 took 1.12 s on 2 threads
 * against 1.20 on one (idle). */
#define BAND_THREAD_SHARE 16.0
/* reflector_tiles.c: LAPACK's blocked steps on the tiles (dlatrd, dlarft
 * and dlarfb, dsyr2k), shared by both reductions and eigen.c's
 * back-transformation (through blas.c's choice), with the panels' product */
void tridiagonal_panel_tiles(int m, int nb, double *A, int lda, double *offdiag,
                             double *tau, double *W, int ldw, double *work, int threads);
void panel_gemm(int m, int n, int k, const double *A, int lda, int transa,
                const double *B, int ldb, int transb, double sign, double *C, int ldc,
                int threads);
void explicit_reflectors(const double *V, int ldv, int rows, int k, double *Vb);
void triangular_factor(const double *Vb, int rows, int k, const double *tau, double *T,
                       int ldt, double *gram, int threads);
/* C (lower, m x m) -= V W' + W V' on the tiles, with a square of
 * rank2k_square_size() doubles; products on the threads from min_work */
size_t rank2k_square_size(void);
void rank2k_update_tiles(int m, int k, const double *V, const double *W, int ld,
                         double *C, int ldc, double *square, int threads, double min_work);
void apply_block_reflector(const double *V, int ldv, int rows, int ib, const double *tau,
                           double *T, int ldt, double *C, int ldc, int k, int cols,
                           double *Vb, double *gram, double *work, int threads);

/* randomized.c */
void top_eigen_randomized(const double *A, int n, int k, int oversample, int power,
                          int threads, double *values, double *vectors);

/* lanczos.c */
int top_eigen_lanczos(const double *A, int n, int k, int ncv, double tol, int maxit,
                      double *values, double *vectors, int *restarts,
                      double *residual, int threads);

/* threads.c: how many threads a call may have, and how a thread waits on
 * another (the bottom, with errors.c and simd.c) */
void threads_record_process(void);
int threads_forked(void);
int thread_cap(void);
int threads_usable(int requested);
int threads_unless_busy(int threads);
SEXP thread_limits(SEXP look);
void wait_for_count(const int *count, int at_least);
void count_publish(int *count, int value);
int count_take(int *count);
/* Inside a parallel region, this thread's number and the size of the team
 * OpenMP gave (0 and 1 without OpenMP): what a region that deals its work
 * by thread deals it by, never the count it asked for, which OMP_DYNAMIC
 * or a thread limit may cut (tests/testthat/test-thread-regions.R). */
static inline void thread_team(int *id, int *team)
{
#ifdef _OPENMP
    *id = omp_get_thread_num();
    *team = omp_get_num_threads();
#else
    *id = 0;
    *team = 1;
#endif
}

/* args.c: checks shared by the entry points */
int as_count(SEXP s, const char *what, int lo, int hi);
int as_threads(SEXP s);
void scan_values(const double *v, R_xlen_t n, int threads, int *missing, int *infinite);
double as_number(SEXP s, const char *what);
void check_double_matrix(SEXP x, const char *what);
void check_lapack_info(int info, const char *routine);
void set_list_names(SEXP ans, const char **names);
int column_block_end(int j0, int cols, int rows, int lower_only, int diag,
                     double value_cost, double column_cost, double budget, int min_cols);
void check_step(SEXP step);   /* NULL or an R function ... */
void call_step(SEXP step);    /* ... called between blocks (a progress bar) */

/* args.c: progress of an exact fit (dense_eigen), reported at the interrupt
 * checkpoints of its steps; every step may report a fraction of itself
 * done, and a step the solver does not run has no share. */
typedef enum {
    PROGRESS_FILL = 0,    /* the kernel matrix (the evaluators' loops:
                           * kernel_fast.c, sparse_tiles.c,
                           * sparse_columns.c, kernel_generic.c) */
    PROGRESS_CENTER,      /* its centering (center.c) */
    PROGRESS_REDUCE,      /* the tridiagonal reduction's panels (eigen.c,
                           * band_reduction.c) */
    PROGRESS_SOLVE,       /* the tridiagonal problem, or the iterative solver */
    PROGRESS_BACK,        /* the back-transformation's blocks (eigen.c,
                           * band_reduction.c) */
    PROGRESS_STEPS
} progress_step;
void progress_begin(SEXP step, const double *work);
void progress_at(progress_step s, double fraction);
void progress_fill_columns(int done, int cols, int lower_only);
void progress_end(void);
/* args.c: the stage clock of an exact fit (dense_eigen): the wall seconds
 * of each step, given to the stage marked at its end; the solvers' steps
 * that are no stage of the exact solver (the iterative and randomized
 * solvers, the scaling, the signs) are other. The one-stage reduction
 * (dsytrd's steps) is stage1, its back-transformation back_stage1. The
 * order matches the names stage_clock_seconds() gives. */
typedef enum {
    STAGE_FILL = 0,     /* the kernel matrix (or the user's, copied) */
    STAGE_CENTER,       /* its centering */
    STAGE_1,            /* dense to band (band_reduce()), or to tridiagonal */
    STAGE_2,            /* band to tridiagonal (band_chase()) */
    STAGE_TRIDIAGONAL,  /* the tridiagonal's eigenpairs (dstemr, dstebz) */
    STAGE_BACK_2,       /* the vectors through stage 2's reflectors */
    STAGE_BACK_1,       /* the vectors through stage 1's reflectors */
    STAGE_CERTIFICATE,  /* the residual norms (certificate_norms(), fit.c) */
    STAGE_OTHER,
    STAGE_COUNT
} fit_stage;
void stage_clock_start(void);
void stage_clock_mark(fit_stage s);
SEXP stage_clock_seconds(void);
/* memory.c: the exact fit's one n x n buffer */
SEXP with_square_buffer(int n, SEXP (*body)(void *data, double *buffer), void *data);

/* .Call entry points */
SEXP dense_eigen(SEXP x, SEXP kernel, SEXP weights, SEXP features, SEXP th,
              SEXP solver, SEXP threads, SEXP control, SEXP variance, SEXP step);
SEXP scaled_columns(SEXP V, SEXP scale, SEXP divide, SEXP dimnames);
SEXP value_flags(SEXP v, SEXP threads);
SEXP kernel_cross(SEXP z, SEXP x, SEXP kernel, SEXP zweights, SEXP xweights,
                  SEXP threads);
SEXP kernel_matrix(SEXP x, SEXP kernel, SEXP weights, SEXP threads);
SEXP kernel_self(SEXP x, SEXP kernel, SEXP weights);
SEXP preimage_coefficients(SEXP z, SEXP kernel, SEXP weights, SEXP x, SEXP ridge,
                           SEXP threads);
SEXP preimage_fixed_point(SEXP start, SEXP t, SEXP A, SEXP x, SEXP kernel, SEXP maxit,
                          SEXP tol, SEXP threads, SEXP step);

/* matrix_free.c: the kernel's rows times a block of vectors, never stored
 * (the matrix-free exact solver's pass, R/matrix_free.R) */
SEXP kernel_block_product(SEXP x, SEXP row0, SEXP nrow, SEXP kernel, SEXP weights, SEXP V,
                          SEXP threads, SEXP tile, SEXP center, SEXP step);
SEXP kernel_pair_products(SEXP x, SEXP blocks, SEXP kernel, SEXP weights, SEXP V,
                          SEXP threads, SEXP tile);
SEXP matrix_free_groups(SEXP n);
SEXP matrix_free_fold(SEXP n, SEXP b, SEXP blocks, SEXP sums);
SEXP kernel_shares_tiles(SEXP kernel, SEXP x);
SEXP oriented_columns(SEXP V);
/* K V for the n points a caller read (the exact fit's certificate), with
 * kernel_times_scratch(threads) doubles of scratch */
size_t kernel_times_scratch(int threads);
void kernel_times_vectors(const kernel_eval *k, const kernel_points *xp, const double *V,
                          int n, int b, double *Y, int threads, double *T);

/* krylov.c: the matrix-free solver's dense steps beside its passes (the
 * basis's cross products, the Ritz vectors, each new block made
 * orthonormal, the centering, the start's products and leading pairs), the
 * basis read in place, on the threads with the bits of one */
SEXP orthonormal_columns(SEXP W, SEXP columns, SEXP center, SEXP Q, SEXP used,
                         SEXP threads);
SEXP center_columns(SEXP V, SEXP scale, SEXP threads);
SEXP dense_product(SEXP A, SEXP B, SEXP trans_a, SEXP threads);
SEXP top_eigen_pairs(SEXP A, SEXP f);
SEXP rayleigh_ritz_vectors(SEXP Q, SEXP AQ, SEXP used, SEXP Y, SEXP values, SEXP threads);
SEXP basis_cross_product(SEXP A, SEXP B, SEXP ka, SEXP kb, SEXP threads);
SEXP basis_matrix(SEXP X, SEXP ncv, SEXP threads);

/* nystrom.c: centered Nystrom kernel PCA */
SEXP nystrom_statistics(SEXP x, SEXP landmarks, SEXP kernel, SEXP xweights,
                        SEXP lweights, SEXP shift, SEXP block_rows, SEXP threads,
                        SEXP step);
SEXP nystrom_alpha(SEXP basis, SEXP vectors, SEXP n);
SEXP nystrom_kmeanspp(SEXP x, SEXP m, SEXP kernel, SEXP weights, SEXP step);

/* project.c: rows projected onto a fit's components (predict(), and the
 * scores of a Nystrom fit) */
SEXP kernel_project_rows(SEXP z, SEXP x, SEXP kernel, SEXP zweights, SEXP xweights,
                         SEXP alpha, SEXP offset, SEXP alpha_sums, SEXP block_rows,
                         SEXP threads, SEXP step);

/* Kernel ICA contrasts: the order matches fastkpca:::kica_contrasts in R/kica.R. */
enum { KICA_KGV = 1, KICA_KCCA = 2 };

/* ichol.c */
typedef struct {
    int n, capacity;
    double *g, *diag, *prow;
    char *used;
} ichol_work;
void ichol_work_init(ichol_work *w, int n);
int ichol_gauss(const double *y, double sigma, double tol, ichol_work *w, double **G);

/* kica.c: kernel ICA .Call entry points */
SEXP kica_contrast(SEXP S, SEXP par, SEXP contrast);
SEXP kica_sweeps(SEXP z, SEXP V, SEXP par, SEXP contrast, SEXP angles, SEXP half,
                 SEXP tol, SEXP maxit, SEXP step);


/* tiles.c: the register-tile products of matrices (for the reference
 * BLAS), each with a copy per path of the arithmetic layer (simd.h), the
 * session's path choosing. tile_gemm_add: C (m x n) += A (m x k) B (k x n),
 * column-major, one thread, each entry summed over k in increasing order
 * (so a row's result depends on nothing but its own row of A and on B).
 * tile_gemm: C += sign op(A) op(B), op(X) = X' when trans is set, sign +1
 * or -1, with threads threads; the same sums in the same order.
 * tile_kernels_ready: the CPU's features found on the main thread, before
 * tile_gemm_add() runs inside a parallel region. */
void tile_gemm_add(int m, int n, int k, const double *A, int lda, const double *B,
                   int ldb, double *C, int ldc);
/* tile_gemm_transposed_add: C (n x m) += B' A, A k x m, B k x n, one
 * thread, the bits of tile_gemm(n, m, k, B, ldb, 1, A, lda, 0, 1.0, C,
 * ldc, 1), with A' packed and B read in place: for a thin A and a wide B. */
void tile_gemm_transposed_add(int m, int n, int k, const double *A, int lda, const double *B,
                              int ldb, double *C, int ldc);
void tile_kernels_ready(void);
void tile_gemm(int m, int n, int k, const double *A, int lda, int transa,
               const double *B, int ldb, int transb, double sign, double *C, int ldc,
               int threads);
void tile_gemm_floor(int m, int n, int k, const double *A, int lda, int transa,
                     const double *B, int ldb, int transb, double sign, double *C, int ldc,
                     int threads, double min_work);
/* tile_points: C += the inner products of points read in place (rows of
 * column-major matrices), each coordinate less a shift as it is packed,
 * over coordinates k0 .. k0 + k - 1, tiles above the diagonal (row i <
 * column j + diag) skipped unless diag is TILE_ALL_ROWS; one thread, no R,
 * scratch of TILE_POINTS_SCRATCH(n) doubles (wide data, kernel_fast.c) */
#define TILE_ALL_ROWS INT_MIN
#define TILE_POINTS_KC 128
#define TILE_POINTS_SCRATCH(n) ((size_t) TILE_POINTS_KC * (((n) + 7) / 8) * 8)
void tile_points(int m, int n, int k, int k0, const double *A, int lda, const double *sa,
                 const double *B, int ldb, const double *sb, double *C, int ldc, int diag,
                 double *scratch);
/* syrk_lower_add: G (m x m, lower triangle) += (B - 1 c')' (B - 1 c') and
 * colsum += (B - 1 c')' 1 for the nb x m block B given by its rows (Bt,
 * m x nb), in slices of SYRK_KC rows; each entry summed in one order
 * whatever the thread count. Main thread. */
#define SYRK_KC 128
void syrk_lower_add(const double *Bt, int nb, int m, const double *c, double *G,
                    double *colsum, int threads);
/* mirror_lower_columns: the upper triangle of columns j0..j1-1 of the
 * n x n matrix K copied from its lower one, in tiles on the threads */
void mirror_lower_columns(double *K, int n, int j0, int j1, int threads);
/* tiles_vector.c: the register-tile matrix-vector products, a copy per
 * path as tiles.c's. symv_lower: y = A x, A symmetric n x n from its
 * lower triangle, with scratch of symv_lower_work(n) doubles; each y(i)
 * summed in one order whatever the thread count. symm_lower: Y (n x l) =
 * A X, the same A, the columns split between the threads (main thread).
 * gemv_add: y (n) += sign A x, A n x k; each y(i) summed over the columns
 * in order. gemv_t: y (k) = A' x, the dot products in vector lanes. */
size_t symv_lower_work(int n);
void symv_lower(int n, const double *A, int lda, const double *x, double *y,
                double *work, int threads);
void symm_lower(const double *A, int n, const double *X, int l, double *Y, int threads);
void gemv_add(int n, int k, const double *A, int lda, const double *x, double sign,
              double *y);
void gemv_t(int n, int k, const double *A, int lda, const double *x, double *y);
/* tile_product.c: the tests' entry point to the tiles */
SEXP tile_product(SEXP a, SEXP b, SEXP c, SEXP trans_a, SEXP trans_b, SEXP threads,
                  SEXP path, SEXP op);

/* blas.c: blas_is_optimized: OpenBLAS, MKL or BLIS is loaded.
 * tiles_at_every_size: every product goes to the tiles (the reference
 * BLAS). tiles_preferred: whether a product of work multiply-adds goes to
 * the tiles rather than the BLAS, by its size alone. matrix_product: C (+)=
 * op(A) op(B) (beta 1 or 0) by whichever tiles_preferred() names.
 * matrix_vector_add: y += sign A x; matrix_transpose_vector: y = A' x;
 * symmetric_vector_product: y = A x, A from its lower triangle, with
 * symmetric_vector_work(n) doubles of scratch; each by the tiles or the
 * BLAS as tiles_at_every_size() says, as are the exact solver's blocked
 * steps (eigen.c), each with its scratch size: tridiagonal_panel (dlatrd),
 * symmetric_rank2k_update (C -= V W' + W V', lower), block_reflector_apply
 * (dlarft and dlarfb), back_transform_at_once (dormtr when LAPACK's and
 * small; returns whether it ran); their tile copies in reflector_tiles.c.
 * The only callers of the level-2 and level-3 BLAS. */
int blas_is_optimized(void);
int tiles_at_every_size(void);
double two_stage_min_rows(double with_tiles);
int tiles_preferred(double work);
void matrix_product(int m, int n, int k, const double *A, int lda, int transa,
                    const double *B, int ldb, int transb, double beta, double *C, int ldc,
                    int threads);
void matrix_product_floor(int m, int n, int k, const double *A, int lda, int transa,
                          const double *B, int ldb, int transb, double beta, double *C,
                          int ldc, int threads, double min_work);
void matrix_vector_add(int n, int k, const double *A, int lda, const double *x,
                       double sign, double *y);
size_t symmetric_vector_work(int n);
void symmetric_vector_product(int n, const double *A, int lda, const double *x, double *y,
                              double *work, int threads);
void matrix_transpose_vector(int n, int k, const double *A, int lda, const double *x,
                             double *y);
size_t tridiagonal_panel_work(int n, int nb);
void tridiagonal_panel(int m, int nb, double *A, int lda, double *offdiag, double *tau,
                       double *W, int ldw, double *work, int threads);
size_t rank2k_update_work(void);
void symmetric_rank2k_update(int m, int k, const double *V, const double *W, int ld,
                             double *C, int ldc, double *work, int threads);
int back_transform_at_once(const double *A, int n, const double *tau, double *Z, int k);
size_t block_reflector_work(int rows, int nb);
void block_reflector_apply(double *V, int ldv, int rows, int ib, const double *tau,
                           double *T, int ldt, double *C, int ldc, int k, int cols,
                           double *scratch, double *work, int threads);

/* engine_settings.c: the engine's settings from R (the vector path and the
 * tuning, ENGINE_TUNING above), the tuning's table for R, and the name of
 * the path a request gives on this CPU; tuning_reset() puts every tuning
 * setting at its default (R_init_fastkpca(), and each engine_settings()) */
SEXP engine_settings(SEXP path, SEXP settings);
SEXP engine_defaults(void);
void tuning_reset(void);
SEXP engine_limits(void);     /* the limits above, for R */
SEXP simd_path_resolve(SEXP path);
/* the path each entry point ran on, recorded at its entry (every .Call
 * entry point but engine_settings(), engine_defaults() and this reader
 * calls engine_entered(__func__) first), and read back by the tests
 * (entry_record.c) */
void engine_entered(const char *name);
SEXP engine_entry_paths(void);

/* kcca.c: kernel canonical correlation */
SEXP kcca_ichol(SEXP x, SEXP kernel, SEXP weights, SEXP tol, SEXP max_rank);

/* memory.c: the memory the system can still give; huge pages for a large
 * result */
SEXP available_bytes(SEXP readers);
void advise_huge_pages(void *p, size_t bytes);

#endif
