# Pre-images: mapping kernel principal component scores back to the input
# space by kernel ridge regression (the linear system is solved in C,
# src/preimage.c).

#' Pre-images: from component scores back to the input space
#'
#' Maps scores on the kernel principal components back to points of the
#' input space, by the kernel ridge regression of Bakır, Weston and Schölkopf
#' (2004) that scikit-learn's `KernelPCA(fit_inverse_transform = TRUE)`
#' uses. Reconstructing noisy points from a few components removes the part
#' of them that the components do not describe (denoising), and the
#' reconstruction error on held-out rows is the criterion of [kpca_cv()].
#'
#' With \eqn{Z} the projections of the n training rows onto the unit axes in
#' feature space (`object$rotated / sqrt(n)`, scikit-learn's
#' `fit_transform()`) and \eqn{X} the training rows, the map is learnt from
#' \eqn{Z} to \eqn{X} with the fit's own kernel:
#' \deqn{B = (k(Z, Z) + ridge\, I)^{-1} X, \qquad
#'       \hat x(s) = k(s / \sqrt{n}, Z)\, B}{B = (k(Z, Z) + ridge I)^-1 X,
#'       xhat(s) = k(s / sqrt(n), Z) B}
#' for scores \eqn{s} on kernlab's scale (as [predict.fastkpca()] returns
#' them). The n x n system is solved in C by a Cholesky factorisation
#' (LAPACK `dposv`; `dsysv` when a kernel that is not positive semidefinite
#' makes the matrix indefinite), in one n x n buffer freed on return, so a
#' pre-image needs the same memory as the fit did. The signs of the
#' components do not matter: the kernel of the projections depends on their
#' distances and inner products only. The result agrees with scikit-learn's
#' `inverse_transform()` with `alpha = ridge` and `gamma = sigma` (rbfdot;
#' polydot with `gamma = scale`, `coef0 = offset`), as the package's tests
#' check when a Python with scikit-learn is available.
#'
#' The pre-image of a point is in the span of the training rows weighted by
#' the kernel: it lies within the cloud of the training data, and a larger
#' `ridge` pulls pre-images towards the origin (the map shrinks). For data
#' far from the origin, center them before the fit.
#'
#' @param object A `"fastkpca"` fit from [kpca()], with a kernel on the
#'   data (not `"precomputed"`, which has no input space to map back to, nor
#'   a conformal kernel, whose weight function applies to input rows).
#' @param scores A matrix of scores with one column per component of the
#'   fit, on kernlab's scale: `predict(object, newdata)`. Missing: the
#'   training scores, `object$rotated`.
#' @param ridge The ridge (regularisation) of the kernel ridge regression,
#'   a single positive number; scikit-learn's `alpha`.
#' @param ... Unused (an error if given).
#' @return A matrix with one row per row of `scores` and the columns of the
#'   training data (`object$xmatrix`; for a formula fit, the columns of its
#'   model matrix).
#' @references Bakır G. H., Weston J. and Schölkopf B. (2004). Learning to
#'   find pre-images. *Advances in Neural Information Processing Systems 16*,
#'   449-456.
#' @seealso [kpca_cv()], which chooses the kernel and the number of
#'   components by the reconstruction error of held-out rows.
#' @examples
#' # noisy points on two rings: a few components and their pre-images pull
#' # the points back towards the rings
#' set.seed(1)
#' x <- as.matrix(rings[, c("x1", "x2")])
#' noisy <- x + matrix(rnorm(length(x), sd = 0.25), ncol = 2)
#' fit <- kpca(noisy, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 8)
#' clean <- preimage(fit, ridge = 0.1)
#' # mean distance to the nearer ring (radii 1 and 3), before and after
#' radius <- function(p) sqrt(rowSums(p^2))
#' ring_gap <- function(p) pmin(abs(radius(p) - 1), abs(radius(p) - 3))
#' c(noisy = mean(ring_gap(noisy)), denoised = mean(ring_gap(clean)))
#' # the pre-images of new points, from their scores
#' preimage(fit, predict(fit, x[1:3, ]), ridge = 0.1)
#' @export
preimage <- function(object, ...) UseMethod("preimage")

#' @rdname preimage
#' @export
preimage.fastkpca <- function(object, scores, ridge = 1, ...) {
  check_no_dots(...)
  check_fit(object)
  check_preimage_kernel(object$kernel)
  ridge <- check_ridge(ridge)
  k <- length(object$eig)
  if (missing(scores) || is.null(scores)) {
    scores <- object$rotated
  } else {
    one_row <- is.atomic(scores) && is.null(dim(scores)) && length(scores) == k
    scores <- as_data_matrix(scores, "scores")
    if (one_row && k > 1L) scores <- matrix(scores, nrow = 1L)
    if (ncol(scores) != k)
      stop(sprintf("'scores' must have %d column%s, one per component of the fit, not %d",
                   k, if (k == 1L) "" else "s", ncol(scores)), call. = FALSE)
    check_finite(scores, "scores")
  }
  n <- nrow(object$alpha)
  z <- unit_projections(object$rotated)
  B <- preimage_coefficients(z, object$xmatrix, object$kernel, ridge, object$threads)
  out <- preimage_apply(scores / sqrt(n), z, B, object$kernel, object$threads)
  dimnames(out) <- list(rownames(scores), colnames(object$xmatrix))
  out
}

# Projections of the training rows onto unit axes in feature space: the
# inputs of the pre-image map (scikit-learn's fit_transform()).
unit_projections <- function(rotated) {
  z <- rotated / sqrt(nrow(rotated))
  dimnames(z) <- NULL
  z
}

check_preimage_kernel <- function(kernel) {
  if (is_precomputed(kernel))
    stop("pre-images need a kernel on the data: a fit with kernel = \"precomputed\" ",
         "has no input space to map back to", call. = FALSE)
  if (length(kernel_conformals(kernel)) > 0L)
    stop("pre-images are not available for conformal kernels: the pre-image map ",
         "applies the kernel to projections, where 'g' (a function of input rows) ",
         "is not defined", call. = FALSE)
  invisible(kernel)
}

check_ridge <- function(ridge) {
  if (!is.numeric(ridge) || length(ridge) != 1L || !is.finite(ridge) || ridge <= 0)
    stop("'ridge' must be a single positive number", call. = FALSE)
  as.double(ridge)
}

# B = (k(Z, Z) + ridge I)^-1 X, solved in C in one n x n buffer.
preimage_coefficients <- function(z, x, kernel, ridge, threads) {
  storage.mode(z) <- "double"
  .Call(C_preimage_solve, z, kernel_program(kernel), list(), x, ridge,
        as.integer(threads))
}

# k(s, Z) B, in blocks of rows (s: unit-axis projections of new points).
preimage_apply <- function(s, z, B, kernel, threads) {
  out <- matrix(0, nrow(s), ncol(B))
  for (rows in row_blocks(nrow(s), nrow(z))) {
    ks <- kernel_cross(s[rows, , drop = FALSE], z, kernel, threads, list())
    out[rows, ] <- ks %*% B
  }
  out
}
