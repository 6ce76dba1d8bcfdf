# Tidiers for "fastkpca" fits, on the generics package's tidy(), augment()
# and glance() (broom's generics, without broom), and a ggplot2 autoplot()
# method registered lazily (ggplot2 is only suggested).

#' @importFrom generics tidy augment glance tunable required_pkgs
#' @export
generics::tidy

#' @export
generics::augment

#' @export
generics::glance

#' Tidy a kernel PCA fit
#'
#' `tidy()`, `augment()` and `glance()` turn a [kpca()] fit into data frames
#' in the manner of broom's tidiers for [stats::prcomp()]: `tidy()` gives the
#' scores, the eigenvalues or the component vectors in long form,
#' `augment()` adds the scores to the data as columns `.fittedPC1`,
#' `.fittedPC2`, ..., and `glance()` summarizes the fit in one row.
#'
#' Scores are on kernlab's scale (`fit$rotated`, `sqrt(n)` times the
#' projections onto unit axes in feature space) and their signs follow the
#' convention described in [kpca()]. The proportions of variance are those
#' of [summary.fastkpca()]: each eigenvalue divided by the total variance in
#' feature space, so they are exact even when only a few components were
#' computed.
#'
#' The results are tibbles when the tibble package is installed, and data
#' frames otherwise.
#'
#' @param x A `"fastkpca"` fit from [kpca()].
#' @param matrix Which part of the fit to tidy: `"scores"` (the projections
#'   of the training rows, `fit$rotated`), `"eigenvalues"` or `"alpha"` (the
#'   component vectors in the dual form, one value per training row and
#'   component).
#' @param data The data the fit was computed on, to which `augment()` adds
#'   the training scores; `NULL` (the default) returns the scores alone. If
#'   the fit dropped rows with missing values, `data` may hold them: their
#'   scores are then `NA`.
#' @param newdata New data to project with [predict.fastkpca()]; the scores
#'   are added to it. Columns that the fit does not use are kept and
#'   ignored.
#' @param ... Unused.
#' @return
#' * `tidy(matrix = "scores")` and `tidy(matrix = "alpha")`: columns `row`
#'   (the row names of the training data, or the row numbers), `PC` (the
#'   component number) and `value`, one row per training row and component.
#' * `tidy(matrix = "eigenvalues")`: columns `PC`, `eigenvalue`, `percent`
#'   (the proportion of variance, between 0 and 1, as in
#'   [summary.fastkpca()] and broom's `tidy.prcomp()`) and `cumulative`.
#' * `augment()`: the data (or `newdata`), with a first column `.rownames`
#'   when they have row names of their own, and the columns `.fittedPC1`,
#'   `.fittedPC2`, ..., one per component.
#' * `glance()`: one row with columns `n` (training rows), `kernel` (the
#'   kernel and its parameters, as text), `features` (the number of
#'   components computed), `variance_total` (the total variance in feature
#'   space) and `proportion_explained` (the part of it the computed
#'   components hold).
#' @seealso [summary.fastkpca()], [autoplot.fastkpca()]; the recipes steps
#'   [step_fastkpca()].
#' @examples
#' fit <- kpca(as.matrix(iris[, 1:4]), kpar = list(sigma = 0.2), features = 3)
#' head(tidy(fit))
#' tidy(fit, matrix = "eigenvalues")
#' glance(fit)
#' head(augment(fit, data = iris))
#' augment(fit, newdata = iris[c(1, 51, 101), ])
#' @export
tidy.fastkpca <- function(x, matrix = c("scores", "eigenvalues", "alpha"), ...) {
  matrix <- check_choice(matrix, c("scores", "eigenvalues", "alpha"), "matrix")
  if (matrix == "eigenvalues") {
    prop <- unname(x$eig) / x$variance_total
    return(as_tidy_frame(data.frame(
      PC = seq_along(x$eig), eigenvalue = unname(x$eig), percent = prop,
      cumulative = cumsum(prop))))
  }
  # scores: one row per training row; alpha: one per row the fit keeps
  # (the training rows of an exact fit, the landmarks of a Nystrom fit)
  m <- if (matrix == "scores") x$rotated else x$alpha
  rows <- rownames(if (matrix == "scores") x$rotated else fit_columns(x))
  if (is.null(rows)) rows <- seq_len(nrow(m))
  k <- ncol(m)
  # row by row, then component by component (t() reads m row-wise)
  as_tidy_frame(data.frame(row = rep(rows, each = k), PC = rep(seq_len(k), nrow(m)),
                           value = as.vector(t(m)), stringsAsFactors = FALSE))
}

#' @rdname tidy.fastkpca
#' @export
augment.fastkpca <- function(x, data = NULL, newdata = NULL, ...) {
  if (!is.null(newdata)) {
    scores <- predict(x, select_fit_columns(x, newdata))
    return(bind_scores(newdata, scores))
  }
  scores <- x$rotated
  if (is.null(data)) return(bind_scores(NULL, scores))
  data <- as.data.frame(data)
  n <- nrow(scores)
  omitted <- x$na.action
  if (nrow(data) == n) return(bind_scores(data, scores))
  if (length(omitted) > 0L && nrow(data) == n + length(omitted)) {
    full <- matrix(NA_real_, nrow(data), ncol(scores),
                   dimnames = list(NULL, colnames(scores)))
    full[-as.integer(omitted), ] <- scores
    return(bind_scores(data, full))
  }
  stop_argument(sprintf("'data' must have the %d rows the fit was computed on%s, not %d", n,
                        if (length(omitted)) sprintf(" (or %d with the rows dropped for missing values)",
                                                     n + length(omitted)) else "",
                        nrow(data)))
}

#' @rdname tidy.fastkpca
#' @export
glance.fastkpca <- function(x, ...) {
  as_tidy_frame(data.frame(
    n = fit_nobs(x), kernel = tidy_kernel_label(x), features = length(x$eig),
    variance_total = x$variance_total,
    proportion_explained = sum(x$eig) / x$variance_total,
    stringsAsFactors = FALSE))
}

# The text that names a fit's kernel and its parameters, e.g.
# "rbfdot (sigma = 0.2)". The one place that reads how a fit stores its
# kernel, for the tidiers and the plots.
tidy_kernel_label <- function(fit) format(fit$kernel)

# A data frame as a tibble when tibble is installed.
as_tidy_frame <- function(df) {
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

# For a fit on a matrix with column names, newdata may be a data frame with
# further (non-numeric) columns: keep those of the fit, so that predict()
# sees only them. (Formula fits select their variables themselves.)
select_fit_columns <- function(fit, newdata) {
  used <- colnames(fit_columns(fit))
  if (is.null(fit$terms) && is.data.frame(newdata) &&
      !is.null(used) && all(used %in% names(newdata)))
    newdata <- newdata[used]
  newdata
}

# Data with the scores appended as .fittedPC1, .fittedPC2, ...; with a
# .rownames column first when the data have row names of their own.
bind_scores <- function(data, scores) {
  fitted <- as.data.frame(unname(scores))
  names(fitted) <- paste0(".fittedPC", seq_len(ncol(scores)))
  if (is.null(data)) {
    out <- fitted
    rn <- rownames(scores)
  } else {
    data <- as.data.frame(data)
    rn <- if (.row_names_info(data) > 0L) rownames(data)
    out <- cbind(data, fitted)
  }
  rownames(out) <- NULL
  if (!is.null(rn)) out <- cbind(data.frame(.rownames = rn, stringsAsFactors = FALSE), out)
  as_tidy_frame(out)
}

#' Plot a kernel PCA fit with ggplot2
#'
#' `autoplot()` draws the scores of the training rows on two components, or
#' a scree plot of the proportions of variance, as ggplot2 plots that can be
#' extended with further layers. The axis titles of the scores plot carry
#' each component's proportion of the total variance in feature space, as in
#' "Comp.1 (23.4%)". For base graphics, see [plot.fastkpca()].
#'
#' @param object A `"fastkpca"` fit from [kpca()].
#' @param type `"scores"` (the default) or `"scree"`.
#' @param data A data frame with one row per training row, from which
#'   `colour` is taken (such as the data the fit was computed on).
#' @param colour The name of a column of `data` that colours the points.
#' @param components The two components on the axes of the scores plot.
#' @param ... Further arguments to [ggplot2::geom_point()] (for example
#'   `size` or `alpha`), in both plots.
#' @return A ggplot object.
#' @seealso [plot.fastkpca()], [tidy.fastkpca()].
#' @examplesIf requireNamespace("ggplot2", quietly = TRUE)
#' library(ggplot2)
#' fit <- kpca(~ x1 + x2, data = rings, kpar = list(sigma = 0.5), features = 5)
#' autoplot(fit, data = rings, colour = "ring")
#' autoplot(fit, type = "scree")
#' @exportS3Method ggplot2::autoplot
autoplot.fastkpca <- function(object, type = c("scores", "scree"), data = NULL,
                              colour = NULL, components = c(1L, 2L), ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE))
    stop_dependency("autoplot() needs the ggplot2 package: install.packages(\"ggplot2\")")
  type <- check_choice(type, c("scores", "scree"), "type")
  eig <- tidy.fastkpca(object, matrix = "eigenvalues")
  if (type == "scree") {
    return(ggplot2::ggplot(as.data.frame(eig),
                           ggplot2::aes(x = .data$PC, y = .data$percent)) +
      ggplot2::geom_line() + ggplot2::geom_point(...) +
      ggplot2::scale_x_continuous(breaks = eig$PC) +
      ggplot2::labs(x = "Component", y = "Proportion of variance",
                    title = paste("Kernel PCA,", tidy_kernel_label(object))))
  }
  k <- ncol(object$rotated)
  if (!is.numeric(components) || length(components) != 2L || anyNA(components) ||
      any(components != round(components)) || any(components < 1) ||
      any(components > k))
    stop_argument(sprintf("'components' must be two component numbers between 1 and %d", k))
  components <- as.integer(components)
  label <- sprintf("Comp.%d (%.1f%%)", components, 100 * eig$percent[components])
  points <- data.frame(x = object$rotated[, components[1L]],
                       y = object$rotated[, components[2L]])
  mapping <- ggplot2::aes(x = .data$x, y = .data$y)
  if (!is.null(colour)) {
    if (!is.character(colour) || length(colour) != 1L)
      stop_argument("'colour' must be the name of a column of 'data'")
    if (is.null(data) || !colour %in% names(data))
      stop_argument(sprintf("'colour' names \"%s\", which is not a column of 'data'", colour))
    if (nrow(data) != nrow(points))
      stop_argument(sprintf("'data' must have one row per training row (%d), not %d",
                            nrow(points), nrow(data)))
    points$colour <- data[[colour]]
    mapping <- ggplot2::aes(x = .data$x, y = .data$y, colour = .data$colour)
  }
  p <- ggplot2::ggplot(points, mapping) + ggplot2::geom_point(...) +
    ggplot2::labs(x = label[1L], y = label[2L],
                  title = paste("Kernel PCA,", tidy_kernel_label(object)))
  if (!is.null(colour)) p <- p + ggplot2::labs(colour = colour)
  p
}

#' Plot the sources of a kernel ICA fit with ggplot2
#'
#' Draws each estimated source of a [kica()] fit against the observation
#' index, one panel per source (the ggplot2 counterpart of
#' [plot.kica()]'s pairs plot). Sources are defined up to order, sign and
#' scale; [kica()] returns them with unit variance.
#'
#' @param object A `"kica"` fit from [kica()].
#' @param sources Which sources to draw (default all).
#' @param ... Further arguments to [ggplot2::geom_line()].
#' @return A ggplot object.
#' @seealso [kica()], [autoplot.fastkpca()].
#' @examplesIf requireNamespace("ggplot2", quietly = TRUE)
#' set.seed(1)
#' s <- cbind(sin((1:400) / 12), ((1:400) %% 47) / 47 - 0.5)
#' fit <- kica(s %*% matrix(c(1, 0.6, -0.4, 1), 2))
#' ggplot2::autoplot(fit)
#' @exportS3Method ggplot2::autoplot
autoplot.kica <- function(object, sources = seq_len(ncol(object$S)), ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE))
    stop_dependency("autoplot() needs the ggplot2 package: install.packages(\"ggplot2\")")
  S <- object$S
  if (!is.numeric(sources) || length(sources) == 0L || anyNA(sources) ||
      any(sources != round(sources)) || any(sources < 1) || any(sources > ncol(S)))
    stop_argument(sprintf("'sources' must be source numbers between 1 and %d", ncol(S)))
  sources <- as.integer(sources)
  long <- data.frame(index = rep(seq_len(nrow(S)), length(sources)),
                     source = factor(rep(paste0("S", sources), each = nrow(S)),
                                     levels = paste0("S", sources)),
                     value = as.vector(S[, sources, drop = FALSE]))
  ggplot2::ggplot(long, ggplot2::aes(x = .data$index, y = .data$value)) +
    ggplot2::geom_line(...) +
    ggplot2::facet_wrap(~ source, ncol = 1L, scales = "free_y") +
    ggplot2::labs(x = "observation", y = NULL,
                  title = sprintf("Kernel ICA (%s), %d sources",
                                  toupper(object$contrast), ncol(S)))
}

# .data is the pronoun of ggplot2's tidy evaluation inside aes()
utils::globalVariables(".data")
