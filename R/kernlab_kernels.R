# kernlab's kernel constructors, returning fastkpca kernel objects (R/kernel_algebra.R),
# so that kernlab code such as `kpca(x, kernel = rbfdot(0.5))` runs with
# fastkpca alone. Defaults are kernlab's.

#' kernlab's kernel constructors
#'
#' The kernel generators of kernlab, with kernlab's arguments and defaults,
#' returning fastkpca kernel objects (see [kern()]): `rbfdot(0.5)` is
#' `kern("rbfdot", sigma = 0.5)`. [kpca()], [predict.fastkpca()],
#' [kernel_matrix()], [kcca()] and the kernel algebra take them, so kernlab
#' code such as `kpca(x, kernel = vanilladot())` runs with fastkpca alone.
#' The formulas are in the Kernels section of [kpca()].
#'
#' With kernlab attached after fastkpca, these names give kernlab's kernels
#' instead; fastkpca takes those too. kernlab's own functions do not take
#' fastkpca's kernel objects.
#'
#' @param sigma The inverse width of `rbfdot`, `laplacedot`, `besseldot` and
#'   `anovadot`, a positive number.
#' @param degree A whole number of at least 1.
#' @param scale,offset The scale and offset of the inner product in
#'   `polydot` and `tanhdot`.
#' @param order The order of the Bessel function, between 0 and 50.
#' @return A kernel object of class `"fastkpca_kernel"`.
#' @seealso [kern()], [kernel_matrix()], [kpca()].
#' @examples
#' k <- rbfdot(sigma = 0.5)
#' k
#' kpar(k)
#' x <- as.matrix(iris[1:5, 1:4])
#' all.equal(kernel_matrix(k, x), kernel_matrix("rbfdot", x, kpar = list(sigma = 0.5)))
#' fit <- kpca(as.matrix(iris[, 1:4]), kernel = polydot(degree = 2), features = 2)
#' kernelf(fit)
#' # the algebra takes them
#' 2 * vanilladot() + rbfdot(0.1)
#' @name kernlab-kernels
NULL

#' @rdname kernlab-kernels
#' @export
rbfdot <- function(sigma = 1) kern("rbfdot", sigma = sigma)

#' @rdname kernlab-kernels
#' @export
polydot <- function(degree = 1, scale = 1, offset = 1)
  kern("polydot", degree = degree, scale = scale, offset = offset)

#' @rdname kernlab-kernels
#' @export
vanilladot <- function() kern("vanilladot")

#' @rdname kernlab-kernels
#' @export
tanhdot <- function(scale = 1, offset = 1)
  kern("tanhdot", scale = scale, offset = offset)

#' @rdname kernlab-kernels
#' @export
laplacedot <- function(sigma = 1) kern("laplacedot", sigma = sigma)

#' @rdname kernlab-kernels
#' @export
besseldot <- function(sigma = 1, order = 1, degree = 1)
  kern("besseldot", sigma = sigma, order = order, degree = degree)

#' @rdname kernlab-kernels
#' @export
anovadot <- function(sigma = 1, degree = 1)
  kern("anovadot", sigma = sigma, degree = degree)

#' @rdname kernlab-kernels
#' @export
splinedot <- function() kern("splinedot")
