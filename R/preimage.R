# Pre-images: mapping kernel principal component scores back to the input
# space by kernel ridge regression, and the fixed-point iteration of Mika et
# al. (the linear system and the iteration run in C, src/preimage.c).

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
#' pre-image needs the same memory as the fit did. The solution \eqn{B}
#' (n x d) of the last fit and `ridge` is kept, so that pre-images of new
#' scores from the same fit and `ridge` do not solve the system again (a fit
#' saved and loaded again solves it once more); the pre-images of the
#' training scores need no further kernel matrix, since
#' \eqn{k(Z, Z) B = X - ridge\, B}{k(Z, Z) B = X - ridge B}. The signs of the
#' components do not matter: the kernel of the projections depends on their
#' distances and inner products only. The result agrees with scikit-learn's
#' `inverse_transform()` with `alpha = ridge` and `gamma = sigma` (rbfdot;
#' polydot with `gamma = scale`, `coef0 = offset`), as the package's tests
#' check when a Python with scikit-learn is available.
#'
#' With `method = "fixed-point"` and the Gaussian kernel, the projection of
#' a point onto the components is \eqn{P\phi = \sum_i g_i \phi(x_i)} with
#' \eqn{g = A t + (1 - 1'A t) / n} (\eqn{A = } `alpha / sqrt(n)`, \eqn{t = }
#' `scores / sqrt(n)`), and the pre-image \eqn{z} minimising
#' \eqn{\|\phi(z) - P\phi\|} satisfies
#' \eqn{z = \sum_i g_i k(z, x_i) x_i / \sum_i g_i k(z, x_i)}{z = sum_i g_i k(z, x_i) x_i / sum_i g_i k(z, x_i)},
#' iterated from the ridge pre-image until it settles (in C, in blocks of
#' rows, so that its memory grows as n times the block, not n x n). It is a
#' local search
#' that may stop at a local optimum; rows whose denominator vanishes keep
#' their last iterate, with a warning. Whether it beats the ridge map
#' depends on the fit: reconstructing held-out rows of the `rings` data
#' (5 folds, `ridge = 0.1`), its mean squared error was 0.0004 against
#' 0.0096 with 16 components and `sigma = 0.134`, but 0.08 against 0.022
#' with 8 components and `sigma = 0.27` (`bench/preimage-methods.R` in the
#' package's sources); for denoising, see the vignette.
#' Compare both on held-out rows before relying on either.
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
#' @param method `"ridge"` (the default): the kernel ridge regression above.
#'   `"fixed-point"`, for the `"rbfdot"` kernel only: the iteration of Mika
#'   et al. (1999), started from the ridge pre-image, which looks for the
#'   point whose image in feature space is nearest the projection onto the
#'   components; see Details.
#' @param control For `method = "fixed-point"`, a list with `maxit` (the
#'   most iterations, default 500) and `tol` (a row stops when its step is
#'   below `tol` times its size plus 1; default `1e-9`).
#' @param ... Unused (an error if given).
#' @return A matrix with one row per row of `scores` and the columns of the
#'   training data (`object$xmatrix`; for a formula fit, the columns of its
#'   model matrix).
#' @references Bakır G. H., Weston J. and Schölkopf B. (2004). Learning to
#'   find pre-images. *Advances in Neural Information Processing Systems 16*,
#'   449-456.
#'
#'   Mika S., Schölkopf B., Smola A., Müller K.-R., Scholz M. and Rätsch G.
#'   (1999). Kernel PCA and de-noising in feature spaces. *Advances in Neural
#'   Information Processing Systems 11*, 536-542.
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
preimage.fastkpca <- function(object, scores, ridge = 1,
                              method = c("ridge", "fixed-point"),
                              control = list(), ...) {
  check_no_dots(...)
  check_fit(object)
  if (inherits(fit_columns(object), "fastkpca_sparse_rows"))
    stop_argument("'object' is a fit of sparse data, which has no pre-images: a pre-image is a dense row of every column of the data")
  check_preimage_kernel(object$kernel)
  ridge <- check_positive(ridge, "ridge")
  method <- check_preimage_method(method, object$kernel)
  settings <- fixed_point_control(control)
  training <- missing(scores) || is.null(scores)
  scores <- if (training) object$rotated else preimage_scores(scores, length(object$eig))
  basis <- preimage_basis(object)
  if (method == "fixed-point" && !basis$training)
    stop_argument("method = \"fixed-point\" needs an exact fit (it sums over the training rows)")
  fixed <- method == "fixed-point"
  progress <- progress_for(2L + fixed, sprintf("preimage: %d rows", nrow(scores)))
  out <- if (training && basis$training) {
    preimage_of_training(object, basis, ridge, progress)
  } else {
    preimage_map(object, scores, ridge, basis, progress)
  }
  if (fixed) out <- preimage_fixed_point(object, basis, scores, out, settings, progress)
  out <- unscale_rows(out, object[["center"]], object[["scale"]])
  dimnames(out) <- list(rownames(scores), colnames(basis$rows))
  out
}

# Scores given by the user as a matrix of k columns (a vector of k is one row).
preimage_scores <- function(scores, k) {
  one_row <- is.atomic(scores) && is.null(dim(scores)) && length(scores) == k
  scores <- as_data_matrix(scores, "scores")
  if (one_row && k > 1L) scores <- matrix(scores, nrow = 1L)
  if (ncol(scores) != k)
    stop_argument(sprintf("'scores' must have %d column%s, one per component of the fit, not %d",
                          k, if (k == 1L) "" else "s", ncol(scores)))
  check_finite(scores, "scores")
  scores
}

# What the pre-image map of a fit is learnt on: `rows`, points of the space
# the kernel saw, and `z`, their unit-axis projections; `n`, the number of
# rows fitted (the scale of the scores); `training`, whether `rows` are the
# fitted rows themselves (exact fits), so that the map of the training scores
# needs no kernel (see preimage_of_training()); `key`, the fields B depends
# on, for the cache.
preimage_basis <- function(object) UseMethod("preimage_basis")

# Exact fits learn the map on the training rows that were fitted (those kept
# by na.action).
preimage_basis.fastkpca <- function(object) {
  n <- fit_nobs(object)
  list(rows = object$xmatrix, z = unit_projections(fitted_rotated(object), n), n = n,
       training = TRUE, key = list(object$xmatrix, object$rotated, object$na.action))
}

# A Nystrom fit learns the map on its landmarks and their projections, so
# that no n x n system is ever formed.
preimage_basis.fastkpca_nystrom <- function(object) {
  n <- fit_nobs(object)
  rows <- object$landmarks
  list(rows = rows, z = unit_projections(nystrom_project_rows(object, rows), n), n = n,
       training = FALSE,
       key = list(rows, object$alpha, object$kernel_weights, object$statistics, n))
}

# The scores of the rows that were fitted: without the rows that
# na.action = na.exclude pads with NA.
fitted_rotated <- function(object) {
  rotated <- object$rotated
  if (inherits(object$na.action, "exclude")) rotated <- rotated[-object$na.action, , drop = FALSE]
  rotated
}

# The pre-image map of a fit applied to scores (kernlab's scale), in the
# space the kernel saw (scaled data).
preimage_map <- function(object, scores, ridge, basis = preimage_basis(object),
                         progress = NULL) {
  B <- preimage_map_coefficients(object, basis, ridge)
  progress_signal(progress, "preimage: the map's coefficients")
  out <- preimage_apply(scores / sqrt(basis$n), basis$z, B, object$kernel, object$threads,
                        progress)
  progress_signal(progress, "preimage: the map applied")
  out
}

# The pre-images of the training scores of an exact fit: with
# K = k(Z, Z) and B = (K + ridge I)^-1 X, they are K B = X - ridge B, so no
# second n x n kernel matrix is formed. Rows that na.exclude padded stay NA.
preimage_of_training <- function(object, basis, ridge, progress = NULL) {
  B <- preimage_map_coefficients(object, basis, ridge)
  progress_signal(progress, "preimage: the map's coefficients")
  fitted <- matrix(as.vector(basis$rows) - ridge * as.vector(B), nrow(B), ncol(B))
  progress_signal(progress, "preimage: the training rows mapped")
  if (!inherits(object$na.action, "exclude")) return(fitted)
  out <- matrix(NA_real_, nrow(object$rotated), ncol(fitted))
  out[-object$na.action, ] <- fitted
  out
}

# B for a fit and a ridge, solved once: the last fit's B is kept, and found
# again when the same fit (the same fields, identical()) asks for the same
# ridge. A fit saved and loaded again solves anew. The cache holds no n x n
# matrix: B is n x d, and the fields are the fit's own (not copies).
preimage_cache <- new.env(parent = emptyenv())

preimage_map_coefficients <- function(object, basis, ridge) {
  key <- list(basis$key, object$kernel, ridge)
  if (identical(preimage_cache$key, key)) return(preimage_cache$B)
  B <- preimage_coefficients(basis$z, basis$rows, object$kernel, ridge, object$threads)
  preimage_cache$key <- key
  preimage_cache$B <- B
  B
}

# Rows of the scaled space back in the data's units: the inverse of
# apply_scaling() (R/scaling.R).
unscale_rows <- function(z, center, scale) {
  if (is.numeric(scale)) z <- sweep(z, 2L, scale, "*", check.margin = FALSE)
  if (is.numeric(center)) z <- sweep(z, 2L, center, "+", check.margin = FALSE)
  z
}

check_preimage_method <- function(method, kernel) {
  choices <- c("ridge", "fixed-point")
  if (identical(method, choices)) return("ridge")
  if (!is.character(method) || length(method) != 1L || !method %in% choices)
    stop_argument("'method' must be \"ridge\" or \"fixed-point\"")
  if (method == "fixed-point" && !(kernel$op == "base" && kernel$name == "rbfdot"))
    stop_argument("method = \"fixed-point\" needs the \"rbfdot\" kernel")
  method
}

# Settings of the fixed-point iteration: control$maxit (default 500) and
# control$tol (default 1e-9, relative).
fixed_point_control <- function(control) {
  if (is.null(control)) control <- list()
  if (!is.list(control) || (length(control) > 0L &&
                            (is.null(names(control)) || any(!nzchar(names(control))))))
    stop_argument("'control' must be a named list with entries maxit, tol")
  unknown <- setdiff(names(control), c("maxit", "tol"))
  if (length(unknown) > 0L)
    stop_argument("'control' has unknown entr", if (length(unknown) > 1L) "ies " else "y ",
                  paste(dQuote(unknown, FALSE), collapse = ", "), " (known: maxit, tol)")
  maxit <- if (is.null(control$maxit)) 500 else control$maxit
  tol <- if (is.null(control$tol)) 1e-9 else control$tol
  if (!is.numeric(maxit) || length(maxit) != 1L || !is.finite(maxit) || maxit < 1 ||
      maxit != round(maxit))
    stop_argument("'control$maxit' must be a whole number of at least 1")
  if (!is.numeric(tol) || length(tol) != 1L || !is.finite(tol) || tol <= 0 || tol >= 1)
    stop_argument("'control$tol' must be a single number between 0 and 1")
  list(maxit = as.integer(maxit), tol = as.double(tol))
}

# Mika et al. (1999) for the Gaussian kernel: the point z whose image is
# nearest the projection P phi in feature space satisfies
#   z = sum_i g_i k(z, x_i) x_i / sum_i g_i k(z, x_i),
# where P phi = sum_i g_i phi(x_i): g = A t + (1 - 1'A t) / n with A the
# unit-scale component vectors (alpha / sqrt(n)) and t the unit-axis
# projections (scores / sqrt(n)); the last term puts back the mean that
# centering took out. Iterated in C from the ridge pre-image, in blocks of
# rows (O(block x n) memory), each row until its step is below tol times its
# size. Rows whose denominator vanishes (far from every training row, or
# weights cancelling) keep their last iterate. Rows of NA scores stay NA.
preimage_fixed_point <- function(object, basis, scores, start, settings, progress = NULL) {
  x <- basis$rows
  n <- basis$n
  rows <- which(stats::complete.cases(scores))
  t <- scores[rows, , drop = FALSE] / sqrt(n)
  dimnames(t) <- NULL
  r <- engine_call(.Call(C_preimage_fixed_point, start[rows, , drop = FALSE], t,
                         object$alpha / sqrt(n), x, kernel_program(object$kernel),
                         settings$maxit, settings$tol, as.integer(object$threads),
                         fixed_point_step(progress)))
  progress_signal(progress, "preimage: the fixed-point iteration")
  if (r$broke > 0L)
    warn_convergence(sprintf("the fixed-point iteration broke down for %d row%s (far from the training data); they keep their last iterate",
                             r$broke, if (r$broke == 1L) "" else "s"))
  if (r$unconverged > 0L)
    warn_convergence(sprintf("the fixed-point iteration did not converge in %d iterations for %d row%s; increase control$maxit",
                             settings$maxit, r$unconverged, if (r$unconverged == 1L) "" else "s"))
  start[rows, ] <- r$z
  start
}

# Projections onto unit axes in feature space of rows whose scores (on
# kernlab's scale, sqrt(n) times larger) are `rotated`, for a fit on n
# rows: the inputs of the pre-image map (scikit-learn's fit_transform()).
unit_projections <- function(rotated, n = nrow(rotated)) {
  z <- rotated / sqrt(n)
  dimnames(z) <- NULL
  z
}

check_preimage_kernel <- function(kernel) {
  if (is_precomputed(kernel))
    stop_argument("pre-images need a kernel on the data: a fit with kernel = \"precomputed\" ",
                  "has no input space to map back to")
  if (length(kernel_conformals(kernel)) > 0L)
    stop_argument("pre-images are not available for conformal kernels: the pre-image map ",
                  "applies the kernel to projections, where 'g' (a function of input rows) ",
                  "is not defined")
  invisible(kernel)
}

# B = (k(Z, Z) + ridge I)^-1 X, solved in C in one n x n buffer.
preimage_coefficients <- function(z, x, kernel, ridge, threads) {
  storage.mode(z) <- "double"
  engine_call(.Call(C_preimage_coefficients, z, kernel_program(kernel), list(), x, ridge,
                    as.integer(threads)))
}

# k(s, Z) B, in blocks of rows (s: unit-axis projections of new points),
# each block a message of progress.
preimage_apply <- function(s, z, B, kernel, threads, progress = NULL) {
  out <- matrix(0, nrow(s), ncol(B))
  blocks <- row_blocks(nrow(s), nrow(z))
  for (b in seq_along(blocks)) {
    rows <- blocks[[b]]
    ks <- kernel_cross(s[rows, , drop = FALSE], z, kernel, threads, list())
    out[rows, ] <- ks %*% B
    progress_signal(progress, sprintf("preimage: block %d of %d", b, length(blocks)),
                    amount = 0)
  }
  out
}

# The function the fixed-point iteration calls after each iteration (a
# message of progress), or NULL.
fixed_point_step <- function(progress) {
  if (is.null(progress)) return(NULL)
  iterations <- 0L
  function() {
    iterations <<- iterations + 1L
    progress(message = sprintf("preimage: fixed-point iteration %d", iterations), amount = 0)
  }
}
