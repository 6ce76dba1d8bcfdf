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
  x <- as_data_rows(x, "x")
  check_finite(x, "x")
  n <- nrow(x)
  if (n < 2L || ncol(x) == 0L)
    stop_argument("'x' must have at least 2 rows and 1 column")
  rows <- if (n > median_sigma_rows) round(seq(1, n, length.out = median_sigma_rows))
          else seq_len(n)
  d2 <- squared_distances(x[rows, , drop = FALSE])
  med <- stats::median(d2)
  if (!(med > 0)) {
    d2 <- d2[d2 > 0]
    if (length(d2) == 0L)
      stop_data("'x' has identical rows only: the median heuristic cannot choose sigma")
    med <- stats::median(d2)
  }
  sigma <- if (kernel %in% linear_distance_kernels) 1 / sqrt(med) else 1 / med
  if (!is.finite(sigma) || !(sigma > 0))
    stop_data("the median heuristic gives no usable sigma for 'x' (distances of ",
              format(med), "); rescale the data")
  sigma
}

# The name of a kernel with a sigma, or an error naming 'kernel'.
sigma_kernel_name <- function(kernel, what = "'kernel'") {
  with_sigma <- names(Filter(function(d) "sigma" %in% names(d), kernel_defaults))
  if (!is.character(kernel) || length(kernel) != 1L || !kernel %in% with_sigma)
    stop_argument(what, " must be one of the kernels with a sigma: ",
                  paste(dQuote(with_sigma, FALSE), collapse = ", "))
  kernel
}

# kpca()'s kpar = "automatic": the kernel (resolved with its defaults)
# with sigma from the median heuristic on the data of the fit.
automatic_sigma_kernel <- function(kernel, x) {
  kernel$kpar$sigma <- median_sigma(x, kernel$name)
  kernel
}

#' Cross-validation of the kernel and the number of components
#'
#' Kernel PCA is unsupervised, so `kpca_cv()` scores each kernel and number
#' of components by how well the components describe rows they were not
#' fitted on. The rows are split into folds; for each fold, kernel PCA is
#' fitted on the other rows with [kpca()], and the held-out rows are
#' projected with [predict.fastkpca()] and scored by one of two criteria:
#' \describe{
#'   \item{`"reconstruction"`}{the pooled held-out mean squared
#'     reconstruction error in the input space,
#'     \eqn{\frac1n \sum_i \|x_i - \hat x_i\|^2}{(1/n) sum_i ||x_i - xhat_i||^2},
#'     where \eqn{\hat x_i}{xhat_i} is the pre-image ([preimage()], with
#'     `ridge`) of row \eqn{i}'s scores under the fit without its fold. It is
#'     measured in the units of the data, so it compares kernels, their
#'     parameters and numbers of components alike.}
#'   \item{`"residual"`}{the pooled held-out fraction of the feature-space
#'     variance that the components leave unexplained,
#'     \eqn{\sum_i (k_c(x_i, x_i) - \|t(x_i)\|^2) / \sum_i k_c(x_i, x_i)}{sum_i (kc(x_i, x_i) - ||t(x_i)||^2) / sum_i kc(x_i, x_i)},
#'     with \eqn{k_c}{kc} the kernel centered on the training fold,
#'     \eqn{k_c(x, x) = k(x, x) - 2\,\mathrm{mean}_j k(x, x_j) + \mathrm{mean}(K)}{kc(x, x) = k(x, x) - 2 mean_j k(x, x_j) + mean(K)},
#'     and \eqn{t(x)} the projections onto the unit axes (`predict() /
#'     sqrt(n_train)`). It needs no pre-images and is cheap, but it is
#'     comparable only within one kernel family with its parameters fixed:
#'     for `"rbfdot"` it tends to 0 for very wide kernels (small `sigma`)
#'     and to about 1 for very narrow ones, so across `sigma` it always
#'     prefers the widest kernel. Use it to choose `features`.}
#' }
#' Each fold's error is its own ratio (the mean over its rows, or its own
#' residual fraction); the standard error `se` is that of the pooled error
#' across folds, \eqn{\sqrt{\sum_v w_v (e_v - e)^2 / (\sum_v w_v\, (V - 1))}}{sqrt(sum_v w_v (e_v - e)^2 / (sum_v w_v (V - 1)))},
#' with \eqn{V} folds weighted by their rows (or their held-out variance,
#' for `"residual"`), as `glmnet::cv.glmnet()` computes it.
#'
#' Every fit of a fold computes `max(features)` components once; the
#' smaller numbers of components reuse its leading ones. For
#' `"reconstruction"`, each number of components needs its own pre-image
#' map, a linear system of the training fold's size solved in C.
#'
#' @param x A numeric matrix or data frame (rows are observations) without
#'   missing values.
#' @param kernel The name of a kernel (see [kpca()]) whose parameters
#'   `grid` lists. Unused when `grid` is a list of kernel objects.
#' @param grid Either a named list of parameter vectors, such as
#'   `list(sigma = c(0.1, 0.5, 1))`, of which every combination is tried
#'   (the names must be parameters of `kernel`; parameters left out take
#'   their defaults), or a list of kernel objects ([kern()], kernlab
#'   kernels). Missing: for a kernel with a `sigma`, the seven values
#'   `median_sigma(x, kernel) * 2^(-3:3)` around the median heuristic.
#' @param features One or more numbers of components (whole numbers of at
#'   least 1).
#' @param folds The number of folds (default 5), assigned at random with
#'   R's random number generator (`set.seed()` makes them reproducible), or
#'   a vector of fold ids with one entry per row of `x`.
#' @param criterion `"reconstruction"` (the default) or `"residual"`; see
#'   Details.
#' @param ridge The ridge of the pre-image map for `"reconstruction"`
#'   (see [preimage()]); a single positive number.
#' @param ... Further arguments of [kpca()] for every fit, such as
#'   `threads`, `solver` or `th`; not `kernel`, `kpar`, `features` or
#'   `variance`, which `kpca_cv()` sets.
#' @return An object of class `"fastkpca_cv"`, a list with
#'   \item{results}{a data frame with one row per combination of kernel
#'     parameters and `features`: the parameters (one column each; for a
#'     list of kernel objects, a column `kernel` describing each), then
#'     `features`, `error` (the pooled cross-validated error) and `se`.}
#'   \item{best}{the row with the smallest error, as a list with `kernel`
#'     (the kernel object), `kpar` (its parameters, for a named kernel) and
#'     `features`.}
#'   \item{fit}{[kpca()] with the best settings, refitted on all rows.}
#'   \item{kernels}{the kernel objects tried, in the order of the grid.}
#'   \item{criterion, ridge, folds, call}{the settings used; `folds` holds
#'     the fold id of each row.}
#' @seealso [preimage()], [median_sigma()], [plot.fastkpca_cv()].
#' @examples
#' x <- as.matrix(rings[, c("x1", "x2")])
#' set.seed(1)
#' cv <- kpca_cv(x, "rbfdot", grid = list(sigma = c(0.25, 0.5, 1, 2)),
#'               features = c(2, 4, 8), folds = 3, ridge = 0.1)
#' cv
#' cv$best
#' plot(cv)
#' @export
kpca_cv <- function(x, kernel = "rbfdot", grid, features, folds = 5,
                    criterion = c("reconstruction", "residual"), ridge = 1, ...) {
  call <- match.call()
  x <- as_data_rows(x, "x")
  check_finite(x, "x")
  n <- nrow(x)
  if (n < 3L || ncol(x) == 0L)
    stop_argument("'x' must have at least 3 rows and 1 column")
  criterion <- check_choice(criterion, c("reconstruction", "residual"), "criterion")
  if (criterion == "reconstruction" && inherits(x, "fastkpca_sparse_rows"))
    stop_argument("criterion = \"reconstruction\" needs pre-images, which sparse 'x' does not have (see ?preimage): use criterion = \"residual\"")
  ridge <- check_positive(ridge, "ridge")
  if (missing(features)) stop_argument("'features' must be given: one or more numbers of components")
  features <- check_cv_features(features)
  folds <- make_folds(folds, n, max(features))
  passed <- names(list(...))
  reserved <- intersect(passed, c("kernel", "kpar", "features", "variance"))
  if (length(reserved) > 0L)
    stop_argument("'...' must not set ", paste(sQuote(reserved, FALSE), collapse = ", "),
                  ": kpca_cv() sets them from 'kernel', 'grid' and 'features'")
  if (criterion == "residual" && "landmarks" %in% passed)
    stop_argument("criterion = \"residual\" needs exact fits; with 'landmarks', use ",
                  "criterion = \"reconstruction\"")
  spec <- cv_grid(if (missing(grid)) NULL else grid, kernel, x, missing(kernel))
  kernels <- spec$kernels
  if (criterion == "reconstruction")
    for (k in kernels) check_preimage_kernel(k)

  ids <- sort(unique(folds))
  progress <- progress_for(length(kernels) * length(ids) + 1L,
                           sprintf("kpca_cv: %d settings x %d folds", length(kernels),
                                   length(ids)))
  pooled <- cv_errors(x, kernels, features, folds, criterion, ridge, progress, ...)
  error <- pooled$error
  se <- pooled$se
  idx <- expand.grid(features = seq_len(length(features)), grid = seq_along(kernels))
  results <- cbind(spec$params[idx$grid, , drop = FALSE],
                   features = features[idx$features],
                   error = error[cbind(idx$grid, idx$features)],
                   se = se[cbind(idx$grid, idx$features)])
  rownames(results) <- NULL
  b <- which.min(results$error)
  best_kernel <- kernels[[idx$grid[b]]]
  best <- list(kernel = best_kernel, kpar = kernel_kpar(best_kernel),
               features = results$features[b])
  fit <- with_quiet_progress(kpca(x, kernel = best_kernel, features = best$features, ...))
  progress_signal(progress, "kpca_cv: the fit of the best setting")
  validate_fastkpca_cv(new_fastkpca_cv(results, best, fit, kernels, criterion, ridge,
                                       folds, call))
}

check_cv_features <- function(features) {
  if (!is.numeric(features) || length(features) == 0L || anyNA(features) ||
      any(!is.finite(features)) || any(features < 1) || any(features != round(features)))
    stop_argument("'features' must be one or more whole numbers of at least 1")
  sort(unique(as.integer(features)))
}

# Fold ids, one per row: random for a number of folds, checked for given ids.
make_folds <- function(folds, n, fmax) {
  if (!is.numeric(folds) && !is.factor(folds) && !is.character(folds))
    stop_argument("'folds' must be a number of folds or a vector of fold ids, one per row")
  if (length(folds) == 1L) {
    if (!is.numeric(folds) || !is.finite(folds) || folds != round(folds) ||
        folds < 2 || folds > n)
      stop_argument(sprintf("'folds' must be a whole number between 2 and nrow(x) (%d)", n))
    folds <- sample(rep_len(seq_len(folds), n))
  } else {
    if (length(folds) != n)
      stop_argument(sprintf("'folds' must have one fold id per row of 'x' (%d), not %d",
                            n, length(folds)))
    if (anyNA(folds)) stop_argument("'folds' must not contain missing values")
    if (is.factor(folds)) folds <- as.character(folds)
    if (length(unique(folds)) < 2L)
      stop_argument("'folds' must hold at least 2 different fold ids")
  }
  sizes <- table(folds)
  train <- n - as.vector(sizes)
  small <- which(train < max(2L, fmax))
  if (length(small) > 0L) {
    s <- small[1L]
    stop_argument(sprintf("fold %s leaves %d training row%s, fewer than %s", names(sizes)[s],
                          train[s], if (train[s] == 1L) "" else "s",
                          if (train[s] < 2L) "2" else sprintf("max(features) (%d)", fmax)))
  }
  folds
}

# The kernels of the grid, and a data frame describing each.
cv_grid <- function(grid, kernel, x, kernel_missing) {
  if (is.null(grid)) {
    name <- tryCatch(sigma_kernel_name(kernel), error = function(e)
      stop_argument("'grid' must be given for a kernel without a sigma"))
    grid <- list(sigma = median_sigma(x, name) * 2^(-3:3))
  }
  if (!is.list(grid) || length(grid) == 0L)
    stop_argument("'grid' must be a named list of parameter vectors or a list of kernel objects")
  objects <- vapply(grid, is_kernel_spec_object, logical(1))
  if (all(objects)) {
    if (!kernel_missing)
      stop_argument("'kernel' must not be given with a grid of kernel objects")
    kernels <- lapply(grid, as_kernel)
    labels <- vapply(kernels, format, "")
    if (!is.null(names(grid)) && all(nzchar(names(grid)))) labels <- names(grid)
    return(list(kernels = unname(kernels),
                params = data.frame(kernel = labels, stringsAsFactors = FALSE)))
  }
  if (any(objects))
    stop_argument("'grid' must be either all kernel objects or a named list of parameter vectors")
  if (!is.character(kernel) || length(kernel) != 1L || !kernel %in% kernel_names)
    stop_argument("'kernel' must be a kernel name when 'grid' lists parameter values")
  if (is.null(names(grid)) || any(!nzchar(names(grid))) || anyDuplicated(names(grid)))
    stop_argument("'grid' must be a named list of parameter vectors, such as list(sigma = c(0.1, 1))")
  known <- names(kernel_defaults[[kernel]])
  unknown <- setdiff(names(grid), known)
  if (length(unknown) > 0L)
    stop_argument("'grid' has unknown parameter", if (length(unknown) > 1L) "s " else " ",
                  paste(dQuote(unknown, FALSE), collapse = ", "), " for kernel ",
                  dQuote(kernel, FALSE), " (its parameters: ",
                  if (length(known)) paste(known, collapse = ", ") else "none", ")")
  for (p in names(grid))
    if (!is.numeric(grid[[p]]) || length(grid[[p]]) == 0L)
      stop_argument(sprintf("'grid$%s' must be a non-empty numeric vector", p))
  params <- expand.grid(grid, KEEP.OUT.ATTRS = FALSE, stringsAsFactors = FALSE)
  kernels <- lapply(seq_len(nrow(params)), function(i) {
    kpar <- as.list(params[i, , drop = FALSE])
    as_kernel(kernel, kpar, kpar_arg = "grid")
  })
  list(kernels = kernels, params = params)
}

# The pooled cross-validated error and its standard error for each kernel
# (rows) and number of components (columns): one fit per kernel and fold,
# each a step of progress (a progressor from progress_for(), or NULL).
cv_errors <- function(x, kernels, features, folds, criterion, ridge, progress, ...) {
  ids <- sort(unique(folds))
  nf <- length(features)
  num <- den <- array(0, c(length(kernels), nf, length(ids)))
  for (g in seq_along(kernels)) {
    for (v in seq_along(ids)) {
      held <- folds == ids[v]
      scores <- with_quiet_progress(
        cv_fold_scores(x[!held, , drop = FALSE], x[held, , drop = FALSE],
                       kernels[[g]], features, criterion, ridge, ...))
      num[g, , v] <- scores$num
      den[g, , v] <- scores$den
      progress_signal(progress, sprintf("kpca_cv: setting %d of %d, fold %d of %d", g,
                                        length(kernels), v, length(ids)))
    }
  }
  error <- apply(num, c(1L, 2L), sum) / apply(den, c(1L, 2L), sum)
  se <- matrix(0, length(kernels), nf)
  for (g in seq_along(kernels)) for (j in seq_len(nf))
    se[g, j] <- pooled_se(num[g, j, ] / den[g, j, ], den[g, j, ], error[g, j])
  list(error = error, se = se)
}

# One fold: fit on train, score the held-out rows for each number of
# components. Returns the numerators and denominators of the pooled error.
cv_fold_scores <- function(train, test, kernel, features, criterion, ridge, ...) {
  # a flat setting is scored as such; one warning per fold would only repeat it
  fit <- withCallingHandlers(
    kpca(train, kernel = kernel, features = max(features), ...),
    fastkpca_flat_kernel = function(w) invokeRestart("muffleWarning"))
  ntr <- nrow(train)
  z <- predict_data_matrix(fit, test)
  s <- project_rows(fit, z)
  kept <- ncol(s)
  num <- den <- numeric(length(features))
  if (criterion == "residual") {
    # kc(x, x) = k(x, x) - 2 mean_j k(x, x_j) + mean(K), with the kernel
    # centered on the training fold; the row means come with the scores
    kcxx <- kernel_self(z, fit$kernel) - 2 * attr(s, "row_means") + fit$kernel_mean
    t2 <- s^2 / ntr
    for (j in seq_along(features)) {
      f <- min(features[j], kept)
      num[j] <- sum(kcxx - rowSums(t2[, seq_len(f), drop = FALSE]))
      den[j] <- sum(kcxx)
    }
  } else {
    for (j in seq_along(features)) {
      f <- min(features[j], kept)
      sub <- fit
      sub$rotated <- fit$rotated[, seq_len(f), drop = FALSE]
      sub$alpha <- fit$alpha[, seq_len(f), drop = FALSE]
      xhat <- unscale_rows(preimage_map(sub, s[, seq_len(f), drop = FALSE], ridge),
                           fit[["center"]], fit[["scale"]])
      num[j] <- sum((test - xhat)^2)
      den[j] <- nrow(test)
    }
  }
  list(num = num, den = den)
}

# Standard error of a pooled ratio from its per-fold values e (weights w).
pooled_se <- function(e, w, pooled) {
  V <- length(e)
  sqrt(sum(w * (e - pooled)^2) / sum(w) / (V - 1))
}

#' @rdname kpca_cv
#' @param digits Number of significant digits to print.
#' @export
print.fastkpca_cv <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_line("", sprintf("Cross-validated kernel PCA (fastkpca): %d folds, criterion \"%s\"%s",
                       length(unique(x$folds)), x$criterion,
                       if (x$criterion == "reconstruction") sprintf(", ridge = %g", x$ridge)
                       else ""))
  res <- x$results
  # a few more than 20 are shown whole ("best 20 of 21" hides one row only)
  if (nrow(res) > 25L) {
    cat_line("", "The 20 best of ", nrow(res), " settings (all in $results):")
    res <- utils::head(res[order(res$error), , drop = FALSE], 20L)
  }
  # a kernel expression longer than a line is cut (the best one is shown
  # whole below)
  if (is.character(res$kernel)) res$kernel <- shorten_text(res$kernel, getOption("width") - 1L)
  print(res, digits = digits, row.names = FALSE)
  cat_line("Best: ", format(x$best$kernel), ", features = ", x$best$features)
  invisible(x)
}

#' Plot a cross-validation curve
#'
#' Draws the cross-validated error of [kpca_cv()] against the kernel
#' parameter, one line per number of components, with bars of one standard
#' error. With one numeric parameter in the grid, it is the horizontal axis
#' (on a log scale when its values span a factor of 10 or more); otherwise
#' the settings are numbered along it. The best setting is circled.
#'
#' @param x A `"fastkpca_cv"` object from [kpca_cv()].
#' @param log Passed to [graphics::plot()]; by default `"x"` when the
#'   parameter values are positive and span a factor of 10 or more. `"xy"`
#'   (or `"y"`) shows errors that span several orders of magnitude.
#' @param col,lty Colours and line types, one per number of components.
#' @param legend Where the legend goes (see [graphics::legend()]), or
#'   `NULL` for none.
#' @param ... Further arguments of [graphics::plot()], such as `main`.
#' @return `x`, invisibly.
#' @seealso [kpca_cv()]
#' @examples
#' x <- as.matrix(rings[, c("x1", "x2")])
#' set.seed(1)
#' cv <- kpca_cv(x, "rbfdot", grid = list(sigma = c(0.25, 0.5, 1, 2)),
#'               features = c(2, 8), folds = 3, ridge = 0.1)
#' plot(cv)
#' @export
plot.fastkpca_cv <- function(x, log = NULL, col = NULL, lty = 1, legend = "topright",
                             ...) {
  res <- x$results
  feats <- sort(unique(res$features))
  params <- setdiff(names(res), c("features", "error", "se"))
  setting <- match(do.call(paste, res[params]), unique(do.call(paste, res[params])))
  numeric_axis <- length(params) == 1L && is.numeric(res[[params]])
  xs <- if (numeric_axis) res[[params]] else setting
  if (is.null(log))
    log <- if (numeric_axis && all(xs > 0) && max(xs) >= 10 * min(xs)) "x" else ""
  if (!is.character(log) || length(log) != 1L)
    stop_argument("'log' must be \"\", \"x\", \"y\" or \"xy\"")
  if (is.null(col)) col <- seq_along(feats)
  col <- rep_len(col, length(feats))
  lty <- rep_len(lty, length(feats))
  lo <- res$error - res$se
  hi <- res$error + res$se
  log_y <- grepl("y", log, fixed = TRUE)
  if (log_y) lo[lo <= 0] <- res$error[lo <= 0]  # no lower bar below 0 on a log axis
  ylab <- if (x$criterion == "reconstruction") "held-out reconstruction error"
          else "held-out unexplained fraction"
  dots <- list(...)
  # room above the curves for the legend
  yr <- range(lo, hi)
  room <- if (is.null(legend)) 0.02 else 0.08 * (length(feats) + 1)
  yr[2L] <- if (log_y) yr[2L] * (yr[2L] / yr[1L])^room else yr[2L] + room * diff(yr)
  args <- c(list(x = range(xs), y = yr, type = "n", log = log,
                 xlab = if (numeric_axis) params else "setting", ylab = ylab,
                 xaxt = if (numeric_axis) "s" else "n"), dots)
  if (is.null(args$main)) args$main <- "Cross-validation"
  do.call(graphics::plot, args)
  if (!numeric_axis) {
    labels <- unique(do.call(paste, c(lapply(params, function(p)
      paste0(if (p != "kernel") paste0(p, "=") else "", format(res[[p]]))), sep = ", ")))
    graphics::axis(1L, at = seq_along(labels), labels = labels)
  }
  for (j in seq_along(feats)) {
    r <- res$features == feats[j]
    o <- order(xs[r])
    graphics::lines(xs[r][o], res$error[r][o], col = col[j], lty = lty[j], type = "b",
                    pch = 20)
    # bars shorter than about 1/100 inch are left out: arrows() would warn
    inches <- abs(graphics::grconvertY(hi[r], "user", "inches") -
                  graphics::grconvertY(lo[r], "user", "inches"))
    ok <- inches > 0.01
    if (any(ok))
      graphics::arrows(xs[r][ok], lo[r][ok], xs[r][ok], hi[r][ok], angle = 90,
                       code = 3, length = 0.03, col = col[j])
  }
  b <- which.min(res$error)
  graphics::points(xs[b], res$error[b], cex = 2.2, lwd = 1.5)
  if (!is.null(legend))
    graphics::legend(legend, legend = paste("features =", feats), col = col,
                     lty = lty, pch = 20, bty = "n")
  invisible(x)
}
