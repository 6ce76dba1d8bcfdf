#' fastkpca: fast and lean kernel principal component analysis
#'
#' Kernel principal component analysis (kernel PCA) with a native C engine,
#' as a drop-in replacement for `kernlab::kpca()`. [kpca()] takes the same
#' arguments (kernel names or kernlab kernel objects, `kpar`, `features`,
#' `th`, `na.action`, a formula interface) and returns the same numbers on
#' the same scale, while the kernel matrix is built and centered in feature
#' space in one n x n buffer and only the leading eigenpairs are computed
#' (by LAPACK, or by a Lanczos method when a few components of a large
#' matrix are wanted, or on request by a randomized method; see `solver` in
#' [kpca()]).
#'
#' @section Getting started:
#' * [kpca()] fits the model; its help page lists the kernels and their
#'   parameters.
#' * [predict.fastkpca()] projects new data onto the components.
#' * [summary.fastkpca()] reports the proportion of variance of each
#'   component; [plot.fastkpca()] draws a scree plot and the scores.
#' * [rings] is a small data set on which linear PCA fails and kernel PCA
#'   succeeds.
#' * [kpca_threads()] gives the default number of threads.
#' * [kern()] makes kernel objects, which combine with `+`, `*`, `^`,
#'   `exp()` and [kern_conformal()]; [kernel_matrix()] evaluates them.
#' * `kpca(x, landmarks = ...)` fits centered Nyström kernel PCA, for data
#'   far beyond one n x n buffer. [row_chunks()] describes rows that never
#'   come together in one matrix (files, a list of matrices, a database
#'   query, a function of the chunk number): `kpca()` fits Nyström on them
#'   chunk by chunk, on the workers of a `future::plan()` if one is set,
#'   `predict()` scores them chunk by chunk and [update()][update.fastkpca_nystrom]
#'   adds new rows to a Nyström fit.
#' * [stringdot()] makes kernlab's string kernels; `kpca()` takes a
#'   character vector (or a list of them, as kernlab does) and
#'   `predict()` and [kernel_matrix()] take strings.
#' * [kcca()] is kernel canonical correlation analysis, with kernlab's
#'   [kcor()], [xcoef()] and [ycoef()].
#' * kernlab's accessors ([pcv()], [eig()], [rotated()], [kernelf()],
#'   [kpar()], [xmatrix()], [kcall()]; see [kernlab-accessors]) and kernel
#'   generators ([rbfdot()], [polydot()], ...; see [kernlab-kernels]) are
#'   fastkpca functions too, so kernlab code runs unchanged, with or without
#'   kernlab attached.
#' * prcomp's generics answer for fits: [screeplot()][prcomp-methods],
#'   `biplot()`, `nobs()` and `fitted()` (see [prcomp-methods]).
#' * `kpar = "automatic"` ([median_sigma()]), [preimage()], [kpca_cv()] and
#'   `kpca(x, variance = p)` help choose the kernel's parameters and the
#'   number of components. `kpca()` warns when the centered kernel matrix
#'   is nearly diagonal or nearly constant (a kernel width far off the
#'   data's scale), and a kernel parameter given as an argument of its own
#'   (`kpca(x, sigma = 1)`) is an error that shows the `kpar = list(...)`
#'   meant.
#' * [kica()] is kernel independent component analysis;
#'   [amari_distance()] compares unmixing matrices.
#' * [step_fastkpca()] and its variants are recipes steps; [tidy.fastkpca()]
#'   and [autoplot.fastkpca()] serve tidyverse users.
#' * The vignette, `vignette("fastkpca", package = "fastkpca")`, derives
#'   kernel PCA from PCA, works through examples and has migration tables
#'   from kernlab and scikit-learn; `vignette("kica", package = "fastkpca")`
#'   covers kernel ICA.
#'
#' @section Scale:
#' fastkpca follows kernlab. With \eqn{K_c = HKH} the kernel matrix centered
#' in feature space (\eqn{H = I - 11'/n}) and \eqn{K_c / n = V \Lambda V'}
#' its eigen-decomposition, `eig` holds the leading eigenvalues
#' \eqn{\lambda}, `alpha` the eigenvectors divided by the square root of
#' their eigenvalue, \eqn{V \Lambda^{-1/2}} (kernlab's `pcv()`), and
#' `rotated` the projections \eqn{K_c \alpha = n V \Lambda^{1/2}}. These are
#' `sqrt(n)` times the projections onto unit-norm axes in feature space.
#'
#' With the linear kernel (`"vanilladot"`), `rotated` is `sqrt(n)` times the
#' scores of [stats::prcomp()] and `eig` is `prcomp()$sdev^2 * (n - 1) / n`,
#' up to the signs of the columns. scikit-learn's `KernelPCA` reports
#' `eigenvalues_ = n * eig` and `fit_transform() = rotated / sqrt(n)`, and
#' its `gamma` is kernlab's `sigma`.
#'
#' @section Signs:
#' Eigenvectors are defined only up to sign, and different LAPACK builds or
#' runs may return either. fastkpca fixes the sign of each component so that
#' the largest-magnitude entry of its `alpha` column is positive, so the same
#' input always gives the same output. Results of other software (kernlab,
#' [stats::prcomp()], scikit-learn) agree with fastkpca's up to the sign of
#' each column: align the signs before comparing.
#'
#' @section Platforms:
#' The engine's hot loops (kernel values, matrix products) have a copy per
#' vector instruction set: SSE2, AVX2 and AVX-512 on x86-64 (the widest
#' the CPU has, found at run time), NEON on 64-bit ARM (aarch64), and
#' plain loops, which every system runs. [simd_path()] says which one the
#' session uses, and `options(fastkpca.simd = "plain")` (or the
#' environment variable `FASTKPCA_SIMD` set before the package loads)
#' switches the vector code off. Every value is summed in the same order
#' on every path and for any number of threads (but for the randomized
#' solver's products, whose sums the compiler splits between the lanes of
#' each instruction set); the paths differ only in rounding (fused
#' multiply-adds, and the vector exponential of the kernels), in the last
#' bits.
#'
#' @section Differences from kernlab:
#' The numbers are the same. The differences:
#' * missing entries of `kpar` take the kernel's defaults, so
#'   `kpca(x, kernel = "polydot")` works (kernlab passes its default
#'   `kpar = list(sigma = 0.1)` to kernels without a `sigma` and fails);
#' * unknown names in `kpar` are an error that lists the kernel's parameters
#'   (kernlab accepts abbreviations);
#' * `predict()` works for `"tanhdot"` fits;
#' * components whose eigenvalue is not positive (kernels that are not
#'   positive semidefinite, rank-deficient data) are dropped with a warning
#'   instead of being returned as `NaN`;
#' * the results are S3 objects, lists (`fit$alpha`, `fit$eig`,
#'   `fit$rotated`, ...) rather than S4 objects; kernlab's accessor
#'   functions (`pcv()`, `eig()`, ...) read them all the same (see
#'   [kernlab-accessors]).
#'
#' @references
#' Schölkopf B, Smola A, Müller K-R (1998). Nonlinear component analysis as
#' a kernel eigenvalue problem. *Neural Computation*, 10(5), 1299--1319.
#' \doi{10.1162/089976698300017467}
#'
#' Karatzoglou A, Smola A, Hornik K, Zeileis A (2004). kernlab -- An S4
#' package for kernel methods in R. *Journal of Statistical Software*,
#' 11(9), 1--20. \doi{10.18637/jss.v011.i09}
#'
#' @seealso [kpca()], [predict.fastkpca()], [summary.fastkpca()],
#'   [plot.fastkpca()], [kcca()], [row_chunks()], [stringdot()],
#'   [kernlab-accessors], [rings].
#' @examples
#' fit <- kpca(~ x1 + x2, data = rings, kernel = "rbfdot",
#'             kpar = list(sigma = 0.5), features = 2)
#' summary(fit)
#' # the first component separates the two rings
#' tapply(fit$rotated[, 1], rings$ring, range)
#' @importFrom stats na.omit na.fail predict
#' @useDynLib fastkpca, .registration = TRUE, .fixes = "C_"
"_PACKAGE"
