# The fit classes of kernel PCA: one constructor (new_*(), which only
# assembles the list and sets the class; callers name every field) and one
# validator (validate_*(), which checks the invariants that predict() and
# the other methods rely on) per class, in the manner of Advanced R's S3
# chapter. Nothing else sets the class of a fit. The classes (see ?kpca for
# their fields), here and beside their methods:
#   c("fastkpca_exact", "fastkpca")        kpca(x, ...)
#   c("fastkpca_nystrom", "fastkpca")      kpca(x, landmarks = ...)
#   c("fastkpca_precomputed", "fastkpca")  kpca(K, kernel = "precomputed")
#   "fastkpca_cv"                          kpca_cv()
#   c("fastkpca_nystrom_chunked", "fastkpca_nystrom", "fastkpca")
#                                          kpca(row_chunks(...), landmarks = ),
#                                          update() (R/chunked_nystrom.R)
#   "fastkpca_string" before an exact or Nystrom fit's classes
#                                          kpca(strings) (R/string_kernels.R)
#   "fastkpca_kcca"                        kcca() (R/kcca.R)
# The exact and Nystrom fits hold their training rows or landmarks as a
# double matrix, or as strings for a string kernel. Methods on the parent
# class "fastkpca" handle what all kernel PCA fits share; a child overrides
# what differs.

# The fields every kernel PCA fit has, in this order, then those of its class.
fit_fields_common <- function(alpha, eig, rotated, kernel, kpar, features, th, threads,
                              variance_total, center, scale, call, na.action) {
  list(alpha = alpha, eig = eig, rotated = rotated, kernel = kernel, kpar = kpar,
       features = features, th = th, threads = threads,
       variance_total = variance_total, center = center, scale = scale,
       call = call, na.action = na.action)
}

new_fastkpca_exact <- function(alpha, eig, rotated, kernel, kpar, features, th, threads,
                               variance_total, center, scale, call, na.action, xmatrix,
                               kernel_weights, kernel_colmeans, kernel_mean, solver,
                               iterations, variance, eig_residuals = NULL,
                               eig_angles = NULL, passes = NULL, residual_history = NULL) {
  fields <- c(fit_fields_common(alpha, eig, rotated, kernel, kpar, features, th, threads,
                                variance_total, center, scale, call, na.action),
              list(xmatrix = xmatrix, kernel_weights = kernel_weights,
                   kernel_colmeans = kernel_colmeans, kernel_mean = kernel_mean,
                   solver = solver, iterations = iterations, variance = variance,
                   eig_residuals = eig_residuals, eig_angles = eig_angles,
                   passes = passes, residual_history = residual_history))
  structure(fields, class = c("fastkpca_exact", "fastkpca"))
}

new_fastkpca_precomputed <- function(alpha, eig, rotated, features, th, threads,
                                     variance_total, call, na.action, kernel_colmeans,
                                     kernel_mean, solver, iterations, variance,
                                     eig_residuals = NULL, eig_angles = NULL) {
  fields <- c(fit_fields_common(alpha, eig, rotated, "precomputed", list(), features, th,
                                threads, variance_total, FALSE, FALSE, call, na.action),
              list(kernel_colmeans = kernel_colmeans, kernel_mean = kernel_mean,
                   solver = solver, iterations = iterations, variance = variance,
                   eig_residuals = eig_residuals, eig_angles = eig_angles))
  structure(fields, class = c("fastkpca_precomputed", "fastkpca"))
}

# statistics: the sufficient statistics of the rows (nystrom_statistics(),
# R/nystrom.R), small and independent of n.
new_fastkpca_nystrom <- function(alpha, eig, rotated, kernel, kpar, features, th, threads,
                                 variance_total, center, scale, call, na.action,
                                 landmarks, landmark_rule, landmark_rows, landmark_rank,
                                 kernel_weights, statistics) {
  fields <- c(fit_fields_common(alpha, eig, rotated, kernel, kpar, features, th, threads,
                                variance_total, center, scale, call, na.action),
              list(landmarks = landmarks, landmark_rule = landmark_rule,
                   landmark_rows = landmark_rows, landmark_rank = landmark_rank,
                   kernel_weights = kernel_weights, statistics = statistics))
  structure(fields, class = c("fastkpca_nystrom", "fastkpca"))
}

new_fastkpca_cv <- function(results, best, fit, kernels, criterion, ridge, folds, call) {
  structure(list(results = results, best = best, fit = fit, kernels = kernels,
                 criterion = criterion, ridge = ridge, folds = folds, call = call),
            class = "fastkpca_cv")
}

# ---- validators: each returns its fit invisibly or stops with an error
# naming what is wrong, worded for a fit handed to a method ('object') ----

invalid_fit <- function(what)
  stop_object("'object' is not a valid fastkpca fit: ", what)

# What every kernel PCA fit has: alpha (m x k, m the rows it is defined
# on) and k eigenvalues.
validate_fastkpca_common <- function(x) {
  if (!is.list(x)) invalid_fit("it must be a list")
  alpha <- x$alpha
  if (!is.matrix(alpha) || !is.double(alpha)) invalid_fit("'alpha' must be a double matrix")
  if (!is.double(x$eig) || length(x$eig) != ncol(alpha))
    invalid_fit(sprintf("'eig' must hold %d eigenvalues, one per column of 'alpha'",
                        ncol(alpha)))
  invisible(x)
}

# The centering terms of the training kernel matrix, for m training rows.
validate_kernel_means <- function(x, m) {
  if (!is.double(x$kernel_colmeans) || length(x$kernel_colmeans) != m)
    invalid_fit(sprintf("'kernel_colmeans' must be a double vector of length %d", m))
  if (!is.double(x$kernel_mean) || length(x$kernel_mean) != 1L ||
      !is.finite(x$kernel_mean))
    invalid_fit("'kernel_mean' must be a single finite number")
}

# A kernel object and the conformal weights of the m rows it is kept with.
validate_fit_kernel <- function(x, m) {
  kernel <- x$kernel
  if (!is_kernel(kernel)) invalid_fit("'kernel' must be a kernel object")
  tryCatch(check_kernel_tree(kernel), error = function(e) invalid_fit(conditionMessage(e)))
  nweights <- length(kernel_conformals(kernel))
  w <- x$kernel_weights
  if (length(w) != nweights ||
      !all(vapply(w, function(v) is.double(v) && length(v) == m, logical(1))))
    invalid_fit(sprintf("'kernel_weights' must hold %d double vector%s of length %d",
                        nweights, if (nweights == 1L) "" else "s", m))
}

# A fit's rows (training data, landmarks) checked by fit_rows_ok()
# (R/rows.R), whatever their kind.
validate_fit_rows <- function(rows, m, field) {
  if (!fit_rows_ok(rows, m))
    invalid_fit(sprintf("'%s' must be a double matrix (or sparse rows) with %d rows", field, m))
}

# The certificate of the eigenpairs, where the fit has one: residuals,
# finite and not negative, and bounds on the sines of the vectors' angles,
# between 0 and 1 (one per component as the fit was made; a fit whose
# components were subset by hand, as kpca_cv() does, keeps them all, and
# summary() then leaves them out).
validate_eig_residuals <- function(x) {
  r <- x$eig_residuals
  if (!is.null(r) && (!is.double(r) || anyNA(r) || any(r < 0)))
    invalid_fit("'eig_residuals' must hold residuals: numbers, none negative or missing")
  a <- x$eig_angles
  if (!is.null(a) && (!is.double(a) || anyNA(a) || any(a < 0) || any(a > 1)))
    invalid_fit("'eig_angles' must hold bounds on sines: numbers between 0 and 1")
}

validate_fastkpca_exact <- function(x) {
  validate_fastkpca_common(x)
  validate_eig_residuals(x)
  m <- nrow(x$alpha)
  validate_kernel_means(x, m)
  validate_fit_rows(x$xmatrix, m, "xmatrix")
  check_fit_scaling(x, ncol(x$xmatrix), invalid_fit)
  validate_fit_kernel(x, m)
  invisible(x)
}

validate_fastkpca_precomputed <- function(x) {
  validate_fastkpca_common(x)
  validate_eig_residuals(x)
  validate_kernel_means(x, nrow(x$alpha))
  if (!is_precomputed(x$kernel)) invalid_fit("'kernel' must be \"precomputed\"")
  invisible(x)
}

validate_fastkpca_nystrom <- function(x) {
  validate_fastkpca_common(x)
  m <- nrow(x$alpha)
  if (!fit_rows_ok(x$landmarks, m)) invalid_fit("its landmarks and 'alpha' do not match")
  check_fit_scaling(x, ncol(x$landmarks), invalid_fit)
  validate_fit_kernel(x, m)
  s <- x$statistics
  if (!is.list(s) || !is.double(s$shift) || length(s$shift) != m || !is.double(s$sums) ||
      length(s$sums) != m || !is.numeric(s$n) || length(s$n) != 1L || !(s$n >= 1))
    invalid_fit(sprintf("'statistics' must hold the row count and the sums over %d landmarks", m))
  invisible(x)
}

validate_fastkpca_cv <- function(x) {
  if (!is.data.frame(x$results) || !inherits(x$fit, "fastkpca"))
    stop_object("'x' is not a valid kpca_cv() result")
  invisible(x)
}

# The check a method runs on the fit it is given: the validator of its
# class, so that a damaged or hand-made object gives a clear R error rather
# than a C-level one.
check_fit <- function(object) {
  if (!inherits(object, "fastkpca")) invalid_fit("it must be a kpca() fit")
  UseMethod("check_fit")
}
#' @exportS3Method
check_fit.fastkpca_exact <- function(object) validate_fastkpca_exact(object)
#' @exportS3Method
check_fit.fastkpca_precomputed <- function(object) validate_fastkpca_precomputed(object)
#' @exportS3Method
check_fit.fastkpca_nystrom <- function(object) validate_fastkpca_nystrom(object)
#' @exportS3Method
check_fit.default <- function(object)
  invalid_fit("its class must be one of \"fastkpca_exact\", \"fastkpca_nystrom\", \"fastkpca_precomputed\"")

# The number of rows a fit was computed on (after na.action).
fit_nobs <- function(fit) UseMethod("fit_nobs")
#' @exportS3Method
fit_nobs.fastkpca <- function(fit) nrow(fit$alpha)
#' @exportS3Method
fit_nobs.fastkpca_nystrom <- function(fit) fit$statistics$n

# The rows whose columns new data must have: the training data, or the
# landmarks (NULL for a precomputed fit, which has no columns).
fit_columns <- function(fit) UseMethod("fit_columns")
#' @exportS3Method
fit_columns.fastkpca_exact <- function(fit) fit$xmatrix
#' @exportS3Method
fit_columns.fastkpca_nystrom <- function(fit) fit$landmarks
#' @exportS3Method
fit_columns.fastkpca_precomputed <- function(fit) NULL
