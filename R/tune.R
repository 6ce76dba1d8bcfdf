# Choosing the kernel's parameters and the number of components: the median
# heuristic behind kpar = "automatic", and cross-validation (kpca_cv).

# Rows over which the median heuristic takes all pairs; beyond, an evenly
# spaced subsample of this many rows.
median_sigma_rows <- 2000L

# Kernels whose distance enters linearly (t = sigma ||x - y||) rather than
# squared.
linear_distance_kernels <- c("laplacedot", "besseldot")

#' The median heuristic for a kernel's sigma
#'
#' `median_sigma()` is what `kpca(x, kernel, kpar = "automatic")` uses to
#' choose `sigma` from the data: the inverse of the median of the squared
#' Euclidean distances between the rows,
#' \deqn{\sigma = 1 / \mathrm{median}_{i < j} \|x_i - x_j\|^2}{sigma = 1 / median over i < j of ||x_i - x_j||^2}
#' for `"rbfdot"` and `"anovadot"`, so that \eqn{\sigma \|x - y\|^2} is 1 for
#' a typical pair of rows. For `"laplacedot"` and `"besseldot"`, whose
#' kernels take \eqn{\sigma \|x - y\|} (not squared), it is the inverse of
#' the median distance, \eqn{1 / \sqrt{\mathrm{median} \|x_i - x_j\|^2}}, so
#' that again \eqn{\sigma \|x - y\|} is 1 for a typical pair.
#'
#' The median is over all pairs of rows when there are at most 2000 rows.
#' Beyond that it is over all pairs of 2000 evenly spaced rows
#' (`round(seq(1, n, length.out = 2000))`): the result does not depend on
#' the random number generator, and the cost stays at about two million
#' distances. Pairs of identical rows are left out when they are half or more
#' of all pairs (the median would be 0); it is an error if all rows are
#' identical.
#'
#' kernlab's `sigest()` estimates the same quantity differently: it returns
#' the 0.9, 0.5 and 0.1 quantiles of \eqn{\|x_i - x_j\|^2}, inverted, over
#' `frac * n` random pairs drawn with replacement (so it needs a seed), after
#' scaling each column to unit variance by default (`scaled = TRUE`).
#' `median_sigma(x)` therefore estimates the middle value of
#' `kernlab::sigest(x, scaled = FALSE)`, without sampling; for the middle
#' value of the default `sigest(x)`, use `median_sigma(scale(x))` (and fit on
#' `scale(x)`).
#'
#' @param x A numeric matrix or data frame, rows are observations.
#' @param kernel The name of a kernel with a `sigma`: `"rbfdot"` (the
#'   default), `"laplacedot"`, `"besseldot"` or `"anovadot"`.
#' @return A single positive number, the `sigma`.
#' @seealso [kpca()] with `kpar = "automatic"`; [kpca_cv()] to choose
#'   `sigma` by cross-validation, for example on a grid around this value.
#' @examples
#' x <- as.matrix(iris[, 1:4])
#' median_sigma(x)
#' # the same value by brute force
#' 1 / median(dist(x)^2)
#' fit <- kpca(x, kpar = "automatic", features = 2)
#' fit$kpar
#' @export
median_sigma <- function(x, kernel = "rbfdot") {
  kernel <- sigma_kernel_name(kernel)
  x <- as_data_matrix(x, "x")
  check_finite(x, "x")
  n <- nrow(x)
  if (n < 2L || ncol(x) == 0L)
    stop("'x' must have at least 2 rows and 1 column", call. = FALSE)
  rows <- if (n > median_sigma_rows) round(seq(1, n, length.out = median_sigma_rows))
          else seq_len(n)
  d2 <- as.vector(stats::dist(x[rows, , drop = FALSE]))^2
  med <- stats::median(d2)
  if (!(med > 0)) {
    d2 <- d2[d2 > 0]
    if (length(d2) == 0L)
      stop("'x' has identical rows only: the median heuristic cannot choose sigma",
           call. = FALSE)
    med <- stats::median(d2)
  }
  sigma <- if (kernel %in% linear_distance_kernels) 1 / sqrt(med) else 1 / med
  if (!is.finite(sigma) || !(sigma > 0))
    stop("the median heuristic gives no usable sigma for 'x' (distances of ",
         format(med), "); rescale the data", call. = FALSE)
  sigma
}

# The name of a kernel with a sigma, or an error naming 'kernel'.
sigma_kernel_name <- function(kernel, what = "'kernel'") {
  with_sigma <- names(Filter(function(d) "sigma" %in% names(d), kernel_defaults))
  if (!is.character(kernel) || length(kernel) != 1L || !kernel %in% with_sigma)
    stop(what, " must be one of the kernels with a sigma: ",
         paste(dQuote(with_sigma, FALSE), collapse = ", "), call. = FALSE)
  kernel
}

# kpca()'s kpar = "automatic": the kernel (resolved with its defaults)
# with sigma from the median heuristic on the data of the fit.
automatic_sigma_kernel <- function(kernel, x) {
  kernel$kpar$sigma <- median_sigma(x, kernel$name)
  kernel
}
