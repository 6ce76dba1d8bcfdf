#' fastkpca: fast kernel principal component analysis
#'
#' Kernel principal component analysis (kernel PCA) with a native C engine.
#' [kpca()] speaks the language of `kernlab::kpca()` (kernel names, `kpar`,
#' `features`, `th`, `na.action`, a formula interface) and returns the same
#' numbers on the same scale, while the kernel matrix is built, centered and
#' decomposed in one n x n buffer with LAPACK.
#'
#' @section Scale:
#' fastkpca follows kernlab. `eig` holds the eigenvalues of the centered
#' kernel matrix divided by n, `alpha` the eigenvectors divided by the square
#' root of their eigenvalue, and `rotated` the centered kernel matrix times
#' `alpha`, which is `sqrt(n)` times the projections onto unit-norm axes in
#' feature space. With the linear kernel (`"vanilladot"`), `rotated` is
#' `sqrt(n)` times the scores of [stats::prcomp()] and `eig` is
#' `prcomp()$sdev^2 * (n - 1) / n`. scikit-learn's `KernelPCA` reports
#' `eigenvalues_ = n * eig` and `fit_transform() = rotated / sqrt(n)`, and its
#' `gamma` is kernlab's `sigma`.
#'
#' @section Signs:
#' Eigenvectors are defined up to sign. fastkpca fixes the sign of each
#' component so that the largest-magnitude entry of its `alpha` column is
#' positive, so the same input always gives the same output.
#'
#' @keywords internal
#' @importFrom stats na.omit na.fail predict
#' @useDynLib fastkpca, .registration = TRUE, .fixes = "C_"
"_PACKAGE"
