# The generics prcomp fits answer, for kernel PCA fits: screeplot(),
# biplot(), nobs() and fitted(), with prcomp's conventions.

#' prcomp's generics for kernel PCA fits
#'
#' `screeplot()`, `biplot()`, `nobs()` and `fitted()` answer for a [kpca()]
#' fit what they answer for a [stats::prcomp()] fit.
#'
#' * `screeplot()` draws the eigenvalues `eig` (the variances of the
#'   components in feature space, with divisor n) as [stats::screeplot()]
#'   draws a prcomp fit's variances: the first `npcs` components, as bars
#'   or lines.
#' * `biplot()` draws the scores of two components, as
#'   [stats::biplot.prcomp()] does, with its `scale` and `pc.biplot`. The
#'   scores are those of prcomp's scale, `rotated / sqrt(n)`, and the
#'   standard deviations `sqrt(eig * n / (n - 1))`. For the linear kernel
#'   (`"vanilladot"`), the variables are drawn too, as arrows: the loadings
#'   \eqn{X'\alpha / \sqrt{n}}{X' alpha / sqrt(n)} (the landmarks' for a
#'   Nyström fit), which are prcomp's `rotation`, so that the biplot is that
#'   of `prcomp(x)` up to the signs of the components. Other kernels have
#'   no loadings in the input space: only the scores are drawn, labelled by
#'   the row names (or numbers).
#' * `nobs()` is the number of rows the fit used (after `na.action`).
#' * `fitted()` is the scores of the training rows, `rotated` (on kernlab's
#'   scale; see [kpca()]), with `NA` rows for rows left out by
#'   `na.action = na.exclude`.
#'
#' @param x,object A fit from [kpca()].
#' @param npcs The number of components to draw.
#' @param type `"barplot"` or `"lines"`.
#' @param main The title.
#' @param choices The two components to draw.
#' @param scale,pc.biplot As in [stats::biplot.prcomp()]: the scores are
#'   divided by \eqn{\lambda^{scale}}{lambda^scale} and the loadings
#'   multiplied by it, \eqn{\lambda} the standard deviations times
#'   \eqn{\sqrt{n}}{sqrt(n)}; `pc.biplot = TRUE` divides \eqn{\lambda} by
#'   \eqn{\sqrt{n}}{sqrt(n)} again (Gabriel's principal component biplot).
#' @param ... Further graphical parameters (for `nobs()` and `fitted()`,
#'   unused).
#' @return `screeplot()` and `biplot()` return nothing (invisibly), as
#'   prcomp's; `nobs()` a whole number; `fitted()` a matrix.
#' @seealso [plot.fastkpca()], [kpca()], [stats::prcomp()].
#' @examples
#' x <- scale(as.matrix(USArrests))
#' fit <- kpca(x, kernel = "vanilladot", features = 4)
#' screeplot(fit)
#' biplot(fit)              # as biplot(prcomp(x)), up to the signs
#' nobs(fit)
#' head(fitted(fit), 3)
#' rb <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 4)
#' biplot(rb, cex = 0.7)    # scores only: no loadings for a nonlinear kernel
#' @name prcomp-methods
NULL

#' @rdname prcomp-methods
#' @importFrom stats screeplot
#' @export
screeplot.fastkpca <- function(x, npcs = min(10L, length(x$eig)),
                               type = c("barplot", "lines"),
                               main = deparse(substitute(x))[1L], ...) {
  main
  type <- check_choice(type, c("barplot", "lines"), "type")
  npcs <- check_whole(npcs, "npcs", 1, length(x$eig))
  stats::screeplot(structure(list(sdev = sqrt(x$eig)), class = "prcomp"),
                   npcs = npcs, type = type, main = main, ...)
}

#' @rdname prcomp-methods
#' @importFrom stats biplot
#' @export
biplot.fastkpca <- function(x, choices = 1L:2L, scale = 1, pc.biplot = FALSE, ...) {
  if (!is.numeric(choices) || length(choices) != 2L || anyNA(choices) ||
      any(choices < 1 | choices > length(x$eig) | choices != round(choices)))
    stop_argument(sprintf("'choices' must be two component numbers between 1 and %d",
                          length(x$eig)))
  pc <- prcomp_view(x)
  if (!is.null(pc$rotation))
    return(stats::biplot(pc, choices = choices, scale = scale, pc.biplot = pc.biplot, ...))
  # no loadings: the scores, scaled as biplot.prcomp scales them
  lam <- pc$sdev[choices] * sqrt(nrow(pc$x))
  lam <- if (scale != 0) lam^scale else 1
  if (pc.biplot) lam <- lam / sqrt(nrow(pc$x))
  scores <- sweep(pc$x[, choices, drop = FALSE], 2L, lam, "/")
  labels <- rownames(scores)
  if (is.null(labels)) labels <- seq_len(nrow(scores))
  graphics::plot(scores, type = "n", xlab = colnames(scores)[1L],
                 ylab = colnames(scores)[2L], ...)
  graphics::text(scores, labels = labels, ...)
  invisible()
}

# A kpca fit seen as prcomp sees its fits: x (scores, rotated / sqrt(n)),
# sdev and, for the linear kernel, rotation (the loadings X'alpha / sqrt(n)).
prcomp_view <- function(fit) {
  scores <- fit$rotated
  if (is.null(scores))
    stop_argument("'x' keeps no scores of its training rows: a biplot needs them")
  scores <- scores[stats::complete.cases(scores), , drop = FALSE]
  n <- fit_nobs(fit)
  out <- list(sdev = sqrt(fit$eig * n / (n - 1)), x = scores / sqrt(n))
  kernel <- fit$kernel
  if (is_kernel(kernel) && kernel$op == "base" && kernel$name == "vanilladot") {
    # the training rows, or a Nystrom fit's landmarks
    out$rotation <- crossprod(fit_columns(fit), fit$alpha) / sqrt(n)
    colnames(out$rotation) <- colnames(scores)
    if (is.null(rownames(out$rotation)))
      rownames(out$rotation) <- paste0("V", seq_len(nrow(out$rotation)))
  }
  structure(out, class = "prcomp")
}

#' @rdname prcomp-methods
#' @importFrom stats nobs
#' @export
nobs.fastkpca <- function(object, ...) {
  check_no_dots(...)
  as.integer(fit_nobs(object))
}

#' @rdname prcomp-methods
#' @importFrom stats fitted
#' @export
fitted.fastkpca <- function(object, ...) {
  check_no_dots(...)
  if (is.null(object$rotated))
    stop_argument("'object' keeps no scores of its training rows; use predict(object, newdata)")
  object$rotated
}
