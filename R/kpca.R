#' Kernel principal component analysis
#'
#' Computes kernel PCA: the data are mapped into the feature space of a
#' kernel, centered there, and the leading principal components are found
#' from the eigen-decomposition of the centered kernel matrix. The call is
#' that of `kernlab::kpca()` and the numbers are the same. The results are
#' list elements (`fit$alpha`, `fit$eig`, `fit$rotated`, ...), which
#' kernlab's accessor functions read too: `pcv()`, `eig()`, `rotated()`,
#' `kernelf()`, `kpar()`, `xmatrix()` and `kcall()` work on a fit, with or
#' without kernlab attached (see [kernlab-accessors] and
#' `vignette("fastkpca")`).
#'
#' @section Kernels:
#' With \eqn{x, y} two rows of the data (defaults in brackets):
#' \describe{
#'   \item{`"vanilladot"`}{linear, \eqn{x'y}{x'y}; kernel PCA then equals PCA.}
#'   \item{`"polydot"`}{polynomial,
#'     \eqn{(scale\, x'y + offset)^{degree}}{(scale x'y + offset)^degree}
#'     (`degree = 1`, `scale = 1`, `offset = 1`).}
#'   \item{`"rbfdot"`}{Gaussian,
#'     \eqn{\exp(-sigma \|x - y\|^2)}{exp(-sigma ||x - y||^2)} (`sigma = 1`;
#'     `kpca()`'s default `kpar` sets `sigma = 0.1`).}
#'   \item{`"laplacedot"`}{Laplace,
#'     \eqn{\exp(-sigma \|x - y\|)}{exp(-sigma ||x - y||)} (`sigma = 1`).}
#'   \item{`"tanhdot"`}{hyperbolic tangent,
#'     \eqn{\tanh(scale\, x'y + offset)}{tanh(scale x'y + offset)}
#'     (`scale = 1`, `offset = 1`); not positive semidefinite.}
#'   \item{`"besseldot"`}{Bessel, with
#'     \eqn{t = sigma \|x - y\|}{t = sigma ||x - y||}:
#'     \eqn{(J_{order}(t)\, t^{-order} / L)^{degree}}{(J_order(t) t^-order / L)^degree},
#'     \eqn{L = 1 / (\Gamma(order + 1) 2^{order})}{L = 1 / (Gamma(order + 1) 2^order)},
#'     and 1 when \eqn{t < 10^{-4}}{t < 1e-4} (`sigma = 1`, `order = 1`,
#'     `degree = 1`; `order` between 0 and 50).}
#'   \item{`"anovadot"`}{ANOVA RBF,
#'     \eqn{(\sum_j \exp(-sigma (x_j - y_j)^2))^{degree}}{(sum_j exp(-sigma (x_j - y_j)^2))^degree}
#'     (`sigma = 1`, `degree = 1`).}
#'   \item{`"splinedot"`}{spline,
#'     \eqn{\prod_j (1 + x_j y_j + x_j y_j m_j - (x_j + y_j) m_j^2 / 2 + m_j^3 / 3)}{prod_j (1 + x_j y_j + x_j y_j m_j - (x_j + y_j) m_j^2 / 2 + m_j^3 / 3)}
#'     with \eqn{m_j = \min(x_j, y_j)}{m_j = min(x_j, y_j)}; no parameters.}
#' }
#' `degree` must be a whole number of at least 1 and `sigma` positive.
#' Parameters left out of `kpar` take the kernel's defaults above, so
#' `kpca(x, kernel = "polydot")` works (in kernlab it fails), and a name the
#' kernel does not have is an error. When `kpar` is not given at all, it is
#' `list(sigma = 0.1)` for the kernels with a `sigma`, as in kernlab.
#'
#' @section Scale and signs:
#' The results are on kernlab's scale: `eig` are the eigenvalues of
#' \eqn{K_c / n}, where \eqn{K_c} is the centered kernel matrix; `alpha` are
#' the unit eigenvectors divided by `sqrt(eig)`; `rotated` is
#' \eqn{K_c \alpha}, which is `sqrt(n)` times the projections onto unit axes
#' in feature space. With `"vanilladot"`, `rotated` equals
#' `sqrt(n) * prcomp(x)$x` and `eig` equals `prcomp(x)$sdev^2 * (n - 1) / n`
#' up to the signs of the columns. scikit-learn's `KernelPCA` reports
#' `n * eig` as `eigenvalues_` and `rotated / sqrt(n)` from
#' `fit_transform()`; its `gamma` is `sigma` here.
#'
#' Eigenvectors are defined only up to sign; fastkpca makes the
#' largest-magnitude entry of each `alpha` column positive, so that results
#' are reproducible. Compare with other software after aligning signs.
#'
#' @section Components:
#' With `features = 0`, every component whose eigenvalue exceeds `th` is
#' kept; it is an error if there is none. With `features > 0`, the leading
#' `features` components are computed (`th` is then unused). With
#' `variance = p`, the fewest leading components whose eigenvalues sum to at
#' least `p` times the total variance \eqn{trace(K_c) / n} are computed. Components
#' whose eigenvalue is not safely positive (at most \eqn{10^{-12}} times the
#' largest, as happens for rank-deficient data or kernels that are not
#' positive semidefinite, such as `"tanhdot"`) are dropped with a warning
#' rather than divided by.
#'
#' @section Centering and scaling the data:
#' `center` and `scale.` have [stats::prcomp()]'s meanings and are applied
#' to the columns of `x` (after `na.action`) with [base::scale()] before the
#' kernel is computed; `predict()` applies the stored values to new rows.
#' They default to `FALSE`, as kernlab does nothing of the kind, but a
#' distance kernel such as `"rbfdot"` on columns of very different ranges is
#' dominated by the widest: `center = TRUE, scale. = TRUE` gives each
#' column mean 0 and variance 1. As in `prcomp()`, `scale. = TRUE` alone
#' (with `center = FALSE`) divides each column by its root mean square,
#' \eqn{\sqrt{\sum x^2 / (n - 1)}}{sqrt(sum(x^2) / (n - 1))}, not by its
#' standard deviation. Centering the columns changes nothing for the
#' distance kernels (they depend on differences only) nor for
#' `"vanilladot"` (kernel PCA centers in feature space anyway); it changes
#' the others. With `"vanilladot"` and
#' `center = TRUE, scale. = TRUE`, the fit equals
#' `prcomp(x, scale. = TRUE)` (see Scale and signs).
#'
#' @section Sparse data:
#' `x` may be a sparse matrix: Matrix's `dgCMatrix`, `dgRMatrix` and
#' `dgTMatrix` and their subclasses (such as quanteda's `dfm`), its other
#' sparse classes (pattern, logical, symmetric, triangular, diagonal: first
#' expanded to a general double matrix by Matrix), and slam's
#' `simple_triplet_matrix` (tm's `DocumentTermMatrix`). It is never made
#' dense: it is converted once to compressed sparse rows, which the fit
#' keeps in `xmatrix` (so a saved fit stays small), and every kernel value
#' is computed from the rows' stored values, with the values zero in both
#' rows counted in closed form (`"anovadot"`, `"splinedot"`). For the
#' inner-product kernels and `"rbfdot"`, the columns stored in at least an
#' eighth of the rows (a corpus's frequent words) are kept as a dense block
#' and the rest indexed by column, so a value costs about what the two rows
#' share, not all their stored values. Every
#' solver, Nystrom with both landmark rules, row chunks that yield sparse
#' chunks, [predict()][predict.fastkpca], [kernel_matrix()], [median_sigma()], [kpca_cv()]
#' (with `criterion = "residual"`) and [kcca()] take sparse data; the
#' results equal those of the dense data up to rounding (the sparse rows
#' are not shifted by their column means, as dense rows are for the
#' distance kernels). `predict()` takes sparse or dense `newdata` for a
#' sparse fit (dense rows are converted to sparse rows) and sparse
#' `newdata` for a dense fit (made dense, after a memory check), with
#' columns matched by name as for dense data. `NA` and `NaN` among the
#' stored values go through `na.action`; infinite values are an error.
#' `center = TRUE` is refused (it would make the data dense; kernel PCA
#' centers in feature space anyway); `scale. = TRUE` divides each column by
#' its root mean square, keeping the zeros. [preimage()] and the functions
#' without a sparse path ([kica()]) refuse sparse data with an error rather
#' than densify it; `as.matrix()` of a fit's sparse `xmatrix` makes the
#' dense copy after checking it against the memory.
#'
#' @section Memory and threads:
#' The fit holds one n x n double matrix (the kernel matrix, centered in
#' place, then decomposed there by LAPACK or multiplied by vectors by the
#' iterative solver) plus memory proportional to n times the number of
#' components (n times `ncv` for the iterative solver). Only its lower
#' triangle is ever written, and the matrix is freed as soon as the fit
#' returns (or fails, or is interrupted). A fit whose matrix would not fit in the
#' memory available is refused before anything is allocated, with an error
#' saying how much it needs. The kernel matrix and the centering run on
#' `threads` threads (OpenMP, where the compiler supports it); every sum is
#' taken in the same order whatever the thread count, so results do not
#' depend on it.
#'
#' @section Exact solver:
#' The default call, `kpca(x)` (`features = 0`), and `variance =` find
#' every eigenpair above a threshold, hundreds where n is in the
#' thousands: they take the exact solver, as does `solver = "auto"` for
#' more than n / 8 components. Its reduction to tridiagonal form takes
#' most of the time, and goes one of two ways:
#' * one stage (LAPACK's `dsytrd`, driven panel by panel): half of its work
#'   is matrix-vector products, which read the whole trailing matrix once
#'   per column and run at the rate of the memory, not of the processor;
#' * two stages, from 2000 rows on with R's reference BLAS (with an
#'   optimized BLAS, whose own `dsytrd` is the default, never; the
#'   crossover is internal tuning, not an option): the matrix is
#'   first reduced to a band of 48 subdiagonals, panel by panel, each
#'   panel's update of the rest two matrix products on the package's
#'   register tiles; then the band is reduced to tridiagonal form by
#'   chasing bulges down it, in the cache, the sweeps pipelined over the
#'   threads; the wanted vectors go back through both stages, stage 2's
#'   reflectors in blocks of 24.
#'
#' Both are exact: their eigenvalues agree with each other, with R's
#' `eigen()` and with kernlab to about `1e-13` relative, and the vectors to
#' about `1e-10`; they differ in the last bits. The fit holds one n x n
#' matrix either way, and writes its eigenvectors once, into the result.
#'
#' @section Threads and workers:
#' What runs on the `threads` threads: the kernel matrix and its centering;
#' the exact and iterative solvers' products with the n x n matrix (from n
#' of about 2000: below, a product is too short to share); the exact
#' solver's two-stage reduction (its products, and the band's sweeps,
#' pipelined), MRRR on the tridiagonal (its bisections in pieces, its
#' vectors in groups) and the back-transformation; the matrix-free
#' passes, and their steps between passes (the start's kernel values and
#' products, the Rayleigh-Ritz vectors, the orthogonalization, the
#' centering) where a step has about 10^6 multiply-adds of work or more (a
#' few regions a pass; the Gram-Schmidt block within a new block, with its
#' barriers, 3 x 10^7): they grow as n while the passes grow as n^2; Nyström's kernel
#' blocks, statistics and scores; `predict()` (panels of rows per thread)
#' and [kernel_matrix()]. What runs on one: the one-stage reduction's
#' LAPACK steps below its panel size, bisection and inverse iteration on
#' the tridiagonal (up to 10 components), and the small eigenproblems (the matrix-free fit's
#' landmarks and basis); [kcca()]'s incomplete Cholesky factors; [kica()]
#' (no `threads`: its kernels are low-rank factors).
#'
#' Measured on 2 cores (`Rscript bench/threads.R`, the Benchmarks article):
#' 2 threads run the kernel matrices and `predict()` 1.4 to 1.7 times as fast
#' as one, the iterative solver 1.8 times, the default call at n = 3000
#' (two stages) 1.4 times (2.5 s on one thread, 1.8 on two; MRRR on the
#' tridiagonal 0.42 s and 0.22), the matrix-free fit at n =
#' 20000 1.72 times (its passes 1.78
#' times; 0.47 s outside them on one thread, 8% of the fit, and 0.37 s on
#' two), which would cap 16 threads near 8 times one at that n, and near 13
#' times at n = 10^5 (a prediction from those figures: more than 2 cores were not
#' measured). Future's workers (`solver = "matrix_free"` and chunked
#' Nyström) each take a share of the work and run their own threads; the
#' matrix-free passes are shared as blocks of pairs of groups of rows, 8
#' groups (36 pairs) up to 32768 rows, growing to 64 (2080 pairs) at 258049,
#' so that at 10^6 rows every number of workers up to 128 gets shares within
#' 5% of each other.
#'
#' A fit can be interrupted (Ctrl-C, or [setTimeLimit()]) between blocks of
#' the kernel matrix and of the centering, at every step of the iterative
#' solver, and between the steps of the exact solver (the panels of either
#' reduction, every 64 sweeps a thread of the band's, the batches of
#' MRRR's pieces and groups, the blocks of the back-transformation); a
#' LAPACK routine that has started (one piece or group of MRRR's, or the
#' bisection of up to 10 components) runs to its end.
#'
#' @param x The data: a numeric matrix (integer and logical are coerced), a
#'   data frame of numeric columns, a numeric vector (one column), or a
#'   sparse matrix (see Sparse data). With
#'   `kernel = "precomputed"`, a symmetric n x n kernel matrix. For the
#'   formula method, a formula with no response, such as `~ a + b` or `~ .`.
#' @param data For the formula method, a data frame holding the variables.
#' @param kernel The kernel: one of `"rbfdot"` (the default), `"polydot"`,
#'   `"vanilladot"`, `"tanhdot"`, `"laplacedot"`, `"besseldot"`,
#'   `"anovadot"`, `"splinedot"`; a kernel object from [kern()], which may
#'   combine kernels (such as `kern("rbfdot", sigma = 0.5) +
#'   kern("polydot", degree = 2)`); a kernel object of those kinds from
#'   kernlab (such as `kernlab::rbfdot(0.5)`); or `"precomputed"`, for a
#'   kernel matrix given as `x`.
#' @param kpar A named list of kernel parameters for a kernel given by name;
#'   see the Kernels section. It is an error to give it with a kernel
#'   object, which carries its own parameters. For the kernels with a
#'   `sigma` (`"rbfdot"`, `"laplacedot"`, `"besseldot"`, `"anovadot"`),
#'   `kpar = "automatic"` chooses `sigma` from the data by the median
#'   heuristic of [median_sigma()] (the other parameters take their
#'   defaults); the fit's `kpar` and `kernel` hold the value chosen.
#' @param features The number of components to compute, or 0 (the default)
#'   for all those whose eigenvalue exceeds `th`.
#' @param th With `features = 0`, the threshold on the eigenvalues of
#'   \eqn{K_c / n} (default `1e-4`).
#' @param na.action A function handling rows with missing values, such as
#'   [stats::na.omit()] (the default) or [stats::na.fail()]. With
#'   [stats::na.exclude()], `rotated` (and `predict()` without new data)
#'   has one row per row of `x`, `NA` for the rows left out of the fit, as
#'   in [stats::prcomp()].
#' @param solver `"exact"` reduces the matrix to tridiagonal form, finds
#'   the wanted eigenpairs of the tridiagonal matrix and maps only those
#'   vectors back, which costs O(n^3) whatever the number of components
#'   (see the Exact solver section for the two reductions); the
#'   tridiagonal step is MRRR (`dstemr`'s steps, as in R's `eigen()`, on
#'   the threads) for `features = 0` and for more than 10
#'   components, and `dsyevr`'s bisection and inverse iteration for up to
#'   10, where both cost the same. `"iterative"` uses a
#'   thick-restart Lanczos method with full reorthogonalisation, which costs
#'   O(n^2) per matrix-vector product and needs `features > 0`; its
#'   eigenvalues agree with the exact ones to about `1e-10` relative.
#'   `"randomized"` (Halko, Martinsson and Tropp's randomized range finder
#'   with power iterations, as scikit-learn's `eigen_solver = "randomized"`)
#'   multiplies the matrix by `features + oversample` random columns
#'   (R's random numbers: use [set.seed()] to reproduce a fit) `power + 2`
#'   times; it needs `features > 0`. On kernels whose spectrum decays fast
#'   (smooth kernels such as `"rbfdot"` with a small `sigma`) its eigenvalues
#'   agree with the exact ones to 1e-6 or better; where the spectrum decays
#'   slowly (`"laplacedot"`, a large `sigma`, many components compared with
#'   the gap after them) they are less accurate, and the vectors more so:
#'   raise `control$power` or `control$oversample` there.
#'   `"auto"` (the default) picks `"iterative"` when `features > 0`,
#'   `n >= 200` and `features <= n / 8`, where it was measured to be faster,
#'   and `"exact"` otherwise; it does not pick `"randomized"`, which took as
#'   much CPU time as `"iterative"` or more, and was less accurate, where it
#'   was measured (n = 3000 and 10000, 5 to 100 components;
#'   `bench/randomized.R`). `"matrix_free"` computes the same eigenpairs
#'   without storing the kernel matrix, in passes that recompute it tile by
#'   tile (see the section "Exact beyond memory"); `"auto"` picks it when
#'   `features > 0` and the n x n matrix does not fit in memory.
#' @param threads Number of threads for the kernel matrix and the centering;
#'   defaults to [kpca_threads()]. Results do not depend on it.
#' @param control Settings of the iterative solver, a list with any of
#'   `tol` (convergence when every wanted Ritz pair has a residual norm
#'   below `tol` times the largest Ritz value; default `1e-10`), `maxit`
#'   (the most restarts, default 1000; a fit that has not converged then
#'   warns) and `ncv` (the Krylov basis size, default
#'   `max(20, 2 * features + 10)`, at most n); of the matrix-free solver,
#'   `tol` (default `1e-8`), `maxit` (the most passes, default 100), `block`
#'   (Ritz vectors kept, default `features + max(5, min(features, 20))`),
#'   `ncv` (the largest basis, default `4 * block`) and `landmarks` (rows of
#'   the Nyström start, default `max(300, 10 * block)`; 0 for random
#'   vectors); and of the randomized solver,
#'   `oversample` (random columns beyond `features`, default 10) and `power`
#'   (power iterations, default 7; each is one product with the kernel
#'   matrix, where scikit-learn's are two, so its default of 7 matches
#'   `power = 14`).
#' @param center,scale. As in [stats::prcomp()]: `TRUE` to center the
#'   columns of `x` on their means (`center`) or to divide them by their
#'   standard deviations (`scale.`; the root mean square when
#'   `center = FALSE`, so give both for unit variance), `FALSE` (the
#'   default) to leave them, or a numeric vector with one value per column
#'   to subtract or divide by. Applied before the kernel; not allowed with
#'   `kernel = "precomputed"`. See the section on centering and scaling.
#' @param variance `NULL` (the default), or a proportion in (0, 1]: the
#'   number of components is then the fewest whose eigenvalues reach this
#'   proportion of the total variance in feature space,
#'   \eqn{trace(K_c) / n}. All eigenvalues are found from the tridiagonal
#'   form (LAPACK `dsterf`, O(n^2) after the O(n^3) reduction), and only the
#'   eigenvectors of the components kept are computed. It replaces
#'   `features` (which must then be 0) and uses the exact solver.
#' @param ... For the formula method, arguments passed to the default
#'   method; otherwise unused (an error if given).
#'
#' @return A fit of class `c("fastkpca_exact", "fastkpca")` (the exact fit),
#'   `c("fastkpca_nystrom", "fastkpca")` (with `landmarks`; see the section
#'   on Nyström landmarks) or `c("fastkpca_precomputed", "fastkpca")` (with
#'   `kernel = "precomputed"`): a list whose fields mean the same thing in
#'   every class that has them. Every fit has
#'   \item{alpha}{the principal component vectors in the dual form: n x k
#'     for the exact and precomputed fits (kernlab's `pcv()`), m x k
#'     coefficients on the m landmarks for a Nyström fit.}
#'   \item{eig}{the k eigenvalues, named `Comp.1`, `Comp.2`, ... (kernlab's
#'     `eig()`).}
#'   \item{rotated}{n x k matrix, the data projected on the components
#'     (kernlab's `rotated()`); with `na.action = na.exclude`, one row per
#'     input row, `NA` for the rows left out.}
#'   \item{kernel}{the kernel's expression (the tree of nodes a kernel
#'     object carries, see [kern()]) with all its parameters resolved, or
#'     `"precomputed"`; `kernelf(fit)` gives it as a kernel object, which
#'     kernlab's functions take too.}
#'   \item{kpar}{the parameters of a single named kernel (all of them,
#'     defaults included); `NULL` for a combination of kernels, whose
#'     parameters are in `kernel`; an empty list for a precomputed kernel.}
#'   \item{center, scale}{as in [stats::prcomp()]: the numbers subtracted
#'     from each column (the means, for `center = TRUE`) and those it was
#'     divided by (the standard deviations or root mean squares, for
#'     `scale. = TRUE`), or `FALSE` for none; `predict()` applies them to
#'     new rows.}
#'   \item{variance_total}{\eqn{trace(K_c) / n}, the total variance in
#'     feature space (the sum of all eigenvalues).}
#'   \item{features, th, threads}{the settings used (with `variance`,
#'     `features` is the number of components it chose).}
#'   \item{call}{the matched call.}
#'   \item{na.action}{the rows removed by `na.action`, if any.}
#'   \item{terms, xlevels}{for the formula method only: the terms and
#'     factor levels, used by `predict()`.}
#'   The exact fit also has
#'   \item{xmatrix}{the training data as the kernel saw them (after
#'     `na.action`, centered and scaled if `center` or `scale.` asked for
#'     it).}
#'   \item{kernel_weights}{for a conformal kernel ([kern_conformal()]), the
#'     values of `g` on the training rows, used by `predict()`.}
#'   \item{kernel_colmeans, kernel_mean}{the column means and the mean of the
#'     uncentered kernel matrix, used by [predict.fastkpca()].}
#'   \item{solver}{the solver used (the one `"auto"` chose).}
#'   \item{iterations}{for the iterative solver, the restarts it took.}
#'   \item{eig_residuals}{the certificate of each eigenpair: with
#'     \eqn{v} the unit eigenvector (`alpha` times `sqrt(eig)`), the norm of
#'     \eqn{K_c v / n - \lambda v}{Kc v / n - eig v} relative to the largest
#'     eigenvalue, from one product with the kernel matrix after the solver
#'     (the kernel recomputed tile by tile, as the exact solver's buffer is
#'     overwritten by the reduction; for the matrix-free solver, its last
#'     pass). `summary()` shows it.}
#'   \item{eig_angles}{a bound on the sine of the angle between each unit
#'     eigenvector and the exact one: the residual (not relative) divided
#'     by the gap between its eigenvalue and every other, the other
#'     computed eigenvalues each counted within its residual and the ones
#'     not computed below the next one the solver found (or `th`; with
#'     `variance`, the last one kept, whose bound is then 1) plus its
#'     residual (Davis and Kahan's sin-theta theorem); 1 where the gap
#'     is not larger than the residuals, as for a multiple eigenvalue,
#'     whose vectors are any basis of its space. The column errors of
#'     `alpha` and `rotated` are about this (plus half the eigenvalue's
#'     relative error). `summary()` shows it.}
#'   \item{passes, residual_history}{for the matrix-free solver, the passes
#'     over the kernel matrix and the largest residual after each;
#'     `NULL` otherwise.}
#'   \item{variance}{the proportion of variance asked for, or `NULL`.}
#'   The precomputed fit has `kernel_colmeans`, `kernel_mean`, `solver`,
#'   `iterations` and `variance` too, but no `xmatrix` or `kernel_weights`.
#'   The Nyström fit has instead `landmarks`, `landmark_rule`,
#'   `landmark_rows`, `landmark_rank`, `kernel_weights` (of the landmarks)
#'   and `statistics`, described in the section on Nyström landmarks.
#'
#' @section Progress and errors:
#' A long fit reports its progress through progressr: the kernel fill, the
#' centering, the panels of the reduction and the back-transformation
#' (see [fastkpca_progress]; wrap the call in [progressr::with_progress()]
#' to see it). Its errors and warnings have classes, such as
#' `fastkpca_error_argument` and `fastkpca_error_memory`, that
#' `tryCatch()` can tell apart (see [fastkpca_conditions]).
#'
#' @seealso [predict.fastkpca()], [summary.fastkpca()], [plot.fastkpca()];
#'   [stats::prcomp()] for linear PCA.
#' @examples
#' fit <- kpca(as.matrix(iris[, 1:4]), kernel = "rbfdot",
#'             kpar = list(sigma = 0.2), features = 2)
#' fit
#' head(fit$rotated)
#'
#' # the formula interface, with a polynomial kernel
#' fit2 <- kpca(~ Sepal.Length + Petal.Width, data = iris,
#'              kernel = "polydot", kpar = list(degree = 2), features = 3)
#' summary(fit2)
#'
#' # with the linear kernel, kernel PCA is PCA (up to the column signs)
#' x <- scale(as.matrix(USArrests))
#' lin <- kpca(x, kernel = "vanilladot", features = 2)
#' pc <- prcomp(x)
#' all.equal(abs(lin$rotated), abs(sqrt(nrow(x)) * pc$x[, 1:2]),
#'           check.attributes = FALSE)
#' all.equal(unname(lin$eig), pc$sdev[1:2]^2 * (nrow(x) - 1) / nrow(x))
#'
#' # columns on very different ranges: scale them, as prcomp(scale. = TRUE)
#' aq <- kpca(~ ., data = airquality, kpar = list(sigma = 0.1), features = 2,
#'            center = TRUE, scale. = TRUE, na.action = na.exclude)
#' aq
#' dim(aq$rotated)    # one row per row of airquality, NA where incomplete
#' @export
kpca <- function(x, ...) UseMethod("kpca")

#' @rdname kpca
#' @export
kpca.formula <- function(x, data = NULL, na.action = na.omit, ...) {
  mt <- stats::terms(x, data = data)
  if (attr(mt, "response") > 0L)
    stop_argument("'x' must be a formula without a response, such as ~ a + b")
  attr(mt, "intercept") <- 0L
  mf <- with_error_kind(stats::model.frame(mt, data = data, na.action = na.action), "argument")
  mt <- attr(mf, "terms")
  attr(mt, "intercept") <- 0L
  xmat <- stats::model.matrix(mt, mf)
  attr(xmat, "assign") <- NULL
  attr(xmat, "contrasts") <- NULL
  fit <- kpca.default(xmat, na.action = na.fail, ...)
  fit$call <- match.call()
  fit$call[[1L]] <- as.name("kpca")
  fit$terms <- mt
  fit$xlevels <- stats::.getXlevels(mt, mf)
  fit$na.action <- attr(mf, "na.action")
  # na.exclude: one row per row of data, NA where dropped (as prcomp)
  fit$rotated <- stats::napredict(fit$na.action, fit$rotated)
  fit
}

#' @rdname kpca
#' @export
kpca.default <- function(x, kernel = "rbfdot", kpar = list(sigma = 0.1),
                         features = 0, th = 1e-4, na.action = na.omit,
                         solver = c("auto", "exact", "iterative", "randomized",
                                    "matrix_free"),
                         threads = kpca_threads(), control = list(),
                         center = FALSE, scale. = FALSE, variance = NULL,
                         landmarks = NULL, landmark_rule = c("uniform", "kmeans++"), ...) {
  check_no_dots(...)
  call <- match.call()
  call[[1L]] <- as.name("kpca")
  # (missing() is reliable only before the argument is changed)
  threads_given <- !missing(threads)
  if (missing(kernel) && inherits(x, "kernelMatrix")) kernel <- "precomputed"
  kernel <- kpca_kernel(kernel, kpar, missing(kpar))
  threads <- check_threads(threads)
  th <- check_th(th)
  data <- kpca_data(x, na.action, center, scale., precomputed = is_precomputed(kernel),
                    threads = threads)
  x <- data$x
  if (identical(kpar, "automatic")) kernel <- automatic_sigma_kernel(kernel, x)
  kpca_steps(x, kernel, features, th, solver, threads, control, variance, landmarks,
             landmark_rule, call, data$removed, data$scaling, threads_given = threads_given)
}

# The steps of every fit once its rows are prepared (x: a double matrix
# after na.action and scaling, the kernel matrix, or the strings of
# kpca.character()): the settings checked, then centered Nystrom (with
# landmarks) or the exact fit, and the warning about a flat kernel.
kpca_steps <- function(x, kernel, features, th, solver, threads, control, variance,
                       landmarks, landmark_rule, call, removed, scaling,
                       threads_given = TRUE) {
  features <- check_features(features, NROW(x))
  variance <- check_variance(variance, features, solver)
  if (!is.null(landmarks)) {  # centered Nystrom, R/nystrom.R
    if (!is.null(variance))
      stop_argument("'variance' needs the exact fit; with 'landmarks', give 'features'")
    return(kpca_nystrom(x, kernel, features, th, landmarks, landmark_rule, threads,
                        call, removed, scaling))
  }
  fit <- kpca_exact(x, kernel, features, th, solver, threads, control, variance, call,
                    removed, scaling, threads_given = threads_given)
  # not returned from warn_if_flat_kernel(): it returns invisibly
  warn_if_flat_kernel(fit)
  fit
}

# The data of a fit: x as a double matrix after na.action, centered and
# scaled as asked (the kernel matrix itself for a precomputed kernel);
# removed: the rows na.action removed; scaling: scale_data()'s result.
kpca_data <- function(x, na.action, center, scale., precomputed, threads = 1L) {
  if (precomputed) {
    x <- as_kernel_matrix(x)
    removed <- NULL
  } else {
    x <- as_data_rows(x)   # sparse input stays sparse (R/sparse.R)
    x <- apply_na_action(x, na.action)
    removed <- attr(x, "na.action")
    x <- drop_na_action(x)
    check_finite(x, "x", threads)
    if (ncol(x) == 0L) stop_argument("'x' must have at least one column")
  }
  if (nrow(x) < 2L)
    stop_argument("'x' must have at least 2 rows (after 'na.action')")
  # prcomp's center and scale.: the kernel sees the scaled data
  scaling <- scale_data(x, center, scale., precomputed = precomputed)
  list(x = scaling$x, removed = removed, scaling = scaling)
}

# The exact fit (and the precomputed one): the operator of the fit, the
# eigenpairs of the solver chosen (R/eigen.R; the dense ones on one n x n
# buffer in C, src/fit.c, the matrix-free one in passes, R/matrix_free.R),
# the components, and the fit.
kpca_exact <- function(x, kernel, features, th, solver, threads, control, variance, call,
                       removed, scaling, threads_given = TRUE) {
  n <- NROW(x)
  solver <- choose_solver(solver, n, features, fits = buffer_fits(n, features))
  op <- kernel_operator(x, kernel, threads, batches = solver == "matrix_free",
                        threads_given = threads_given)
  on.exit(op$close())
  sol <- solve_eigen(op, solver, features, th, control, variance)
  comp <- exact_components(sol, n, removed, row_labels(x))
  features <- if (is.null(variance)) features else length(comp$eig)
  if (op$precomputed)
    return(validate_fastkpca_precomputed(new_fastkpca_precomputed(
      alpha = comp$alpha, eig = comp$eig, rotated = comp$rotated, features = features,
      th = th, threads = op$threads, variance_total = sol$variance_total, call = call,
      na.action = removed, kernel_colmeans = sol$colmeans, kernel_mean = sol$grand_mean,
      solver = solver, iterations = sol$iterations, variance = variance,
      eig_residuals = comp$residuals, eig_angles = comp$angles)))
  validate_fastkpca_exact(new_fastkpca_exact(
    alpha = comp$alpha, eig = comp$eig, rotated = comp$rotated, kernel = kernel,
    kpar = kernel_kpar(kernel), features = features, th = th, threads = op$threads,
    variance_total = sol$variance_total, center = scaling$center, scale = scaling$scale,
    call = call, na.action = removed, xmatrix = x, kernel_weights = op$weights,
    kernel_colmeans = sol$colmeans, kernel_mean = sol$grand_mean, solver = solver,
    iterations = sol$iterations, variance = variance, eig_residuals = comp$residuals,
    eig_angles = comp$angles, passes = sol$passes, residual_history = sol$history))
}

# eig, alpha, rotated and the certificate of the components, from a
# solver's eigenpairs of Kc / n (solve_eigen()): those with safely positive
# eigenvalues (positive_components()); alpha = V / sqrt(eig); rotated =
# Kc alpha = n V sqrt(eig), from V alone. With na.exclude, rotated has one
# row per input row, NA where dropped (as prcomp).
exact_components <- function(sol, n, removed, rownames) {
  # the vectors come with their signs fixed (orient_columns in src/eigen.c)
  comp <- positive_components(sol$values, sol$vectors)
  vectors <- comp$vectors
  eig <- comp$values
  labels <- paste0("Comp.", seq_along(eig))
  names(eig) <- labels
  roots <- sqrt(unname(eig))
  # with their dimnames from C: set here, on the values engine_call()
  # passed back, they copied both n x k matrices
  alpha <- scaled_columns(vectors, roots, TRUE, list(NULL, labels))
  rotated <- scaled_columns(vectors, n * roots, FALSE, list(rownames, labels))
  list(eig = eig, alpha = alpha, rotated = stats::napredict(removed, rotated),
       residuals = stats::setNames(sol$residuals[comp$keep], labels),
       angles = stats::setNames(sol$angles[comp$keep], labels))
}

# V with each column divided by (divide) or multiplied by its number in
# scale, as sweep() would, into a new matrix with the given dimnames (NULL
# or a list of two) (src/fit.c: in C, whose pages are advised huge before
# they are written; R's arithmetic and sweep()'s transposed array of the
# numbers cost a fresh page at a time).
scaled_columns <- function(V, scale, divide, dimnames = NULL) {
  engine_call(.Call(C_scaled_columns, V, as.double(scale), divide, dimnames))
}

# The user's na.action as a function: a function, or the name of one.
na_action_function <- function(na.action) {
  if (is.character(na.action) && length(na.action) == 1L && !is.na(na.action))
    na.action <- get0(na.action, mode = "function")
  if (!is.function(na.action))
    stop_argument("'na.action' must be a function such as na.omit or na.fail")
  na.action
}

# A precomputed kernel matrix: square and numeric. It is not copied here: C
# copies it once into its buffer, checking there that it is finite and
# symmetric (within a relative 1.5e-6), without a second n x n matrix.
as_kernel_matrix <- function(K) {
  # kernlab's kernelMatrix objects are double matrices already: no copy
  if (is.object(K) && length(dim(K)) == 2L && !is.matrix(K)) K <- as.matrix(K)
  if (length(dim(K)) != 2L || !typeof(K) %in% c("double", "integer", "logical"))
    stop_argument("'x' must be a numeric kernel matrix when 'kernel' is \"precomputed\"")
  if (nrow(K) != ncol(K))
    stop_argument(sprintf("'x' must be a square kernel matrix when 'kernel' is \"precomputed\", not %d x %d",
                          nrow(K), ncol(K)))
  if (storage.mode(K) != "double") storage.mode(K) <- "double"
  K
}

# kpca(variance = p): a proportion in (0, 1], instead of features and with
# the exact solver.
check_variance <- function(variance, features, solver) {
  if (is.null(variance)) return(NULL)
  variance <- check_number(variance, "variance", lo = 0, hi = 1, lo_open = TRUE)
  if (features != 0L)
    stop_argument("give 'features' or 'variance', not both")
  if (identical(solver, "iterative"))
    stop_argument("'variance' needs the exact solver: it reads all eigenvalues")
  variance
}
