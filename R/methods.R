# print, summary and plot methods for "fastkpca" fits, and cat_line(), the
# one way every print() of the package writes a line of text.

# A line of a print() method: label, then text (pasted as cat() would), cut
# at the console's width: the text wraps at its spaces (not those around
# "=", so that "sigma = 0.2" stays whole), continuation lines
# indented under it (under the label's start when the label takes half the
# width), and a word longer than a line (a long deparsed function) is
# shortened with "...". Kernel expressions thus wrap between their terms and
# arguments, and no line runs past getOption("width").
cat_line <- function(label, ..., width = getOption("width")) {
  text <- paste0(...)
  # (a placeholder of display width 1 that the text does not hold)
  glue <- if (grepl("\u00a7", text, fixed = TRUE)) " " else "\u00a7"
  text <- gsub(" = ", paste0(glue, "=", glue), text, fixed = TRUE)
  indent <- if (nchar(label) <= width %/% 2L) nchar(label) else 2L
  room <- max(10L, width - indent)
  # strwrap() makes lines shorter than its width; the first line has the
  # label instead of the indent in front
  lines <- strwrap(text, width = room + 1L, initial = strrep(" ", nchar(label) - indent))
  if (!length(lines)) lines <- ""
  lines <- paste0(c(label, rep(strrep(" ", indent), length(lines) - 1L)),
                  sub(paste0("^", strrep(" ", nchar(label) - indent)), "", lines))
  lines <- gsub(glue, " ", lines, fixed = TRUE)
  writeLines(shorten_text(lines, width))
}

# Strings longer than width characters, cut to width with "...".
shorten_text <- function(s, width) {
  long <- nchar(s) > width
  s[long] <- paste0(substr(s[long], 1L, max(1L, width - 3L)), "...")
  s
}

#' Print a kernel PCA fit
#'
#' Prints what was fitted (the data's dimensions, or the size of a
#' precomputed kernel matrix), whether the data were centered or scaled
#' before the kernel (`center`, `scale.`), the kernel with all its
#' parameters, the number of components with the rule that chose it, and
#' the first ten eigenvalues.
#'
#' @param x A `"fastkpca"` fit from [kpca()].
#' @param digits Number of significant digits for the eigenvalues.
#' @param ... Unused.
#' @return `x`, invisibly.
#' @seealso [summary.fastkpca()] for the proportions of variance.
#' @examples
#' kpca(~ x1 + x2, data = rings, kpar = list(sigma = 0.5), features = 3)
#' # the scaling of the data, when asked for, is shown too
#' kpca(~ ., data = airquality, kpar = list(sigma = 0.1), features = 2,
#'      center = TRUE, scale. = TRUE)
#' @export
print.fastkpca <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_line("", fit_description(x))
  cat_line("Kernel:     ", format(x$kernel))
  scaling <- describe_scaling(x[["center"]], x[["scale"]])
  if (!is.null(scaling)) cat_line("Data:       ", scaling)
  print_fit_details(x)
  k <- length(x$eig)
  cat_line("Components: ", k, " (", component_rule(x), ")")
  cat("Eigenvalues", if (k > 10L) " (first 10)", ":\n", sep = "")
  print(utils::head(x$eig, 10L), digits = digits)
  invisible(x)
}

# The first line of print(): what was fitted, on what.
fit_description <- function(x) UseMethod("fit_description")
#' @exportS3Method
fit_description.fastkpca_exact <- function(x) {
  d <- ncol(x$xmatrix)
  sprintf("Kernel PCA (fastkpca) on %d observations of %d variable%s", fit_nobs(x), d,
          if (d == 1L) "" else "s")
}
#' @exportS3Method
fit_description.fastkpca_precomputed <- function(x) {
  sprintf("Kernel PCA (fastkpca) on %d x %d kernel matrix", fit_nobs(x), fit_nobs(x))
}
#' @exportS3Method
fit_description.fastkpca_nystrom <- function(x) {
  d <- ncol(x$landmarks)
  sprintf("Kernel PCA (fastkpca, centered Nystr\u00f6m) on %d observations of %d variable%s",
          fit_nobs(x), d, if (d == 1L) "" else "s")
}

# Lines of print() that only some classes have.
print_fit_details <- function(x) UseMethod("print_fit_details")
#' @exportS3Method
print_fit_details.fastkpca <- function(x) invisible(NULL)
#' @exportS3Method
print_fit_details.fastkpca_nystrom <- function(x) {
  cat_line("Landmarks:  ", sprintf("%d (%s; rank %d)", nrow(x$landmarks), x$landmark_rule,
                                   x$landmark_rank))
}

# How the number of components was chosen (and, for the exact fits, by
# which solver).
component_rule <- function(x) UseMethod("component_rule")
#' @exportS3Method
component_rule.fastkpca <- function(x) {
  if (x$features == 0L) sprintf("eigenvalues above th = %g", x$th)
  else sprintf("features = %d", x$features)
}
#' @exportS3Method
component_rule.fastkpca_exact <- function(x) {
  rule <- if (!is.null(x$variance)) sprintf("variance = %g", x$variance) else NextMethod()
  paste0(rule, "; ", x$solver, " solver")
}
#' @exportS3Method
component_rule.fastkpca_precomputed <- component_rule.fastkpca_exact

# How the data were prepared before the kernel, or NULL if they were not.
describe_scaling <- function(center, scale) {
  centered <- is.numeric(center)
  scaled <- is.numeric(scale)
  if (!centered && !scaled) return(NULL)
  what <- c(if (centered) "centered (center)", if (scaled) "scaled (scale.)")
  paste("columns", paste(what, collapse = " and "), "before the kernel")
}

#' Summarize a kernel PCA fit
#'
#' Reports, for each component, its eigenvalue, its proportion of the total
#' variance in feature space and the cumulative proportion, in the manner of
#' `summary(prcomp(...))`. The total variance is \eqn{trace(K_c) / n}, the
#' sum of all eigenvalues, computed from the centered kernel matrix without
#' the full spectrum, so the proportions are exact even when only a few
#' components were computed. For kernels that are not positive semidefinite
#' the total includes negative eigenvalues, so the proportions may sum to
#' more than 1.
#'
#' With the linear kernel (`"vanilladot"`) the proportions equal those of
#' `summary(prcomp(x))`: the eigenvalues differ from `prcomp()`'s variances
#' by the factor \eqn{(n - 1) / n}, which cancels.
#'
#' @param object A `"fastkpca"` fit from [kpca()].
#' @param x A `"summary.fastkpca"` object.
#' @param digits Number of significant digits to print.
#' @param ... Unused.
#' @return `summary()` returns an object of class `"summary.fastkpca"`, a
#'   list with `kernel` (a description of the kernel and its parameters),
#'   `n` (the number of observations), `variance_total` and `importance`, a
#'   3-row matrix (rows `"Eigenvalue"`, `"Proportion of Variance"` and
#'   `"Cumulative Proportion"`) with one column per component; for exact and
#'   precomputed fits also `eig_residuals` and `eig_angles` (the
#'   certificate of each eigenpair, see [kpca()]), `solver` and `passes`
#'   (matrix-free fits), which print() shows as the rows "Residual" and
#'   "Angle". Its print method returns its argument invisibly.
#' @seealso [kpca()], [plot.fastkpca()] for a scree plot.
#' @examples
#' fit <- kpca(as.matrix(iris[, 1:4]), kpar = list(sigma = 0.2), features = 10)
#' summary(fit)
#' # the number of components that explain 80% of the variance (NA if the
#' # computed components explain less)
#' imp <- summary(fit)$importance
#' which(imp["Cumulative Proportion", ] >= 0.8)[1]
#' @export
summary.fastkpca <- function(object, ...) {
  prop <- object$eig / object$variance_total
  importance <- rbind(Eigenvalue = object$eig,
                      "Proportion of Variance" = prop,
                      "Cumulative Proportion" = cumsum(prop))
  structure(list(kernel = format(object$kernel),
                 n = fit_nobs(object), variance_total = object$variance_total,
                 importance = importance, method = "Kernel PCA", landmarks = NULL,
                 eig_residuals = if (length(object$eig_residuals) == length(object$eig))
                   object$eig_residuals,
                 eig_angles = if (length(object$eig_angles) == length(object$eig))
                   object$eig_angles,
                 solver = object$solver,
                 passes = object$passes),
            class = "summary.fastkpca")
}

#' @rdname summary.fastkpca
#' @export
print.summary.fastkpca <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  method <- if (is.null(x$method)) "Kernel PCA" else x$method
  cat_line("", method, " (fastkpca), ", x$n, " observations")
  cat_line("Kernel: ", x$kernel)
  if (!is.null(x$landmarks)) cat_line("Landmarks: ", x$landmarks)
  cat_line("", "Total variance in feature space: ", format(x$variance_total, digits = digits))
  cat("\nImportance of components:\n")
  # one number format per row (print() of the matrix picks one per column,
  # so that a row showed 0.1005, 0.09262 and 0.0826)
  shown <- t(apply(x$importance, 1L, format, digits = digits))
  dimnames(shown) <- dimnames(x$importance)
  # the certificate of each eigenpair, where the fit has one
  if (!is.null(x$eig_residuals))
    shown <- rbind(shown, Residual = formatC(x$eig_residuals, digits = 1L, format = "e"))
  if (!is.null(x$eig_angles))
    shown <- rbind(shown, Angle = formatC(x$eig_angles, digits = 1L, format = "e"))
  print(noquote(shown), right = TRUE)
  if (!is.null(x$eig_residuals))
    cat_line("Residual: ", sprintf(
      "solver \"%s\"%s; ||Kc v / n - eig v|| / max(eig) of each eigenpair",
      x$solver, if (is.null(x$passes)) "" else sprintf(", %d passes", x$passes)))
  if (!is.null(x$eig_angles))
    cat_line("Angle:    ", paste(
      "a bound on the sine of the angle between each eigenvector and the exact one",
      "(the residual over the gap to the other eigenvalues; 1: not pinned down)"))
  invisible(x)
}

#' Plot a kernel PCA fit
#'
#' Draws a scree plot of the eigenvalues and a scatter plot of the data on
#' the first two components (base graphics). The scores are `x$rotated`, on
#' kernlab's scale (`sqrt(n)` times the projections onto unit axes in
#' feature space); their signs follow the convention described in [kpca()].
#'
#' @param x A `"fastkpca"` fit from [kpca()].
#' @param which Which plots to draw: 1 for the scree plot, 2 for the scores
#'   of the first two components (one component: against the row index).
#' @param col,pch Colors and symbols of the points in the scores plot, for
#'   example a factor of groups turned into colors.
#' @param main Titles of the plots, one per plot in `which`.
#' @param ... Further graphical parameters passed to the scores plot.
#' @return `x`, invisibly.
#' @seealso [kpca()], [summary.fastkpca()].
#' @examples
#' fit <- kpca(as.matrix(iris[, 1:4]), kpar = list(sigma = 0.2), features = 6)
#' plot(fit, col = as.integer(iris$Species))
#' # the rings data: scores only, colored by ring
#' fit2 <- kpca(~ x1 + x2, data = rings, kpar = list(sigma = 0.5), features = 2)
#' plot(fit2, which = 2, col = as.integer(rings$ring), pch = 20)
#' @export
plot.fastkpca <- function(x, which = c(1L, 2L), col = 1, pch = 1,
                          main = c("Eigenvalues", "Kernel principal components")[which],
                          ...) {
  if (!is.numeric(which) || length(which) == 0L || !all(which %in% 1:2))
    stop_argument("'which' must be 1, 2 or both")
  if (length(main) != length(which))
    stop_argument("'main' must have one title per plot in 'which'")
  if (length(which) > 1L) {
    old <- graphics::par(mfrow = c(1L, length(which)))
    on.exit(graphics::par(old))
  }
  for (k in seq_along(which)) {
    if (which[k] == 1L) {
      graphics::barplot(x$eig, main = main[k], ylab = "eigenvalue of Kc / n",
                        names.arg = seq_along(x$eig), xlab = "component")
    } else if (ncol(x$rotated) >= 2L) {
      graphics::plot(x$rotated[, 1L], x$rotated[, 2L], col = col, pch = pch,
                     xlab = "Comp.1", ylab = "Comp.2", main = main[k], ...)
    } else {
      graphics::plot(x$rotated[, 1L], col = col, pch = pch, xlab = "index",
                     ylab = "Comp.1", main = main[k], ...)
    }
  }
  invisible(x)
}
