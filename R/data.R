#' Two concentric rings
#'
#' 300 points in the plane on two noisy concentric circles (radius 1 and 3),
#' 150 on each. No linear projection separates the rings; kernel PCA with a
#' Gaussian kernel (`"rbfdot"`) does, on its first component.
#'
#' @format A data frame with 300 rows and 3 columns:
#' \describe{
#'   \item{x1, x2}{coordinates.}
#'   \item{ring}{factor, `"inner"` or `"outer"`.}
#' }
#' @source Simulated by `data-raw/rings.R` in the package sources (seeded).
#' @examples
#' fit <- kpca(~ x1 + x2, data = rings, kpar = list(sigma = 0.5), features = 2)
#' plot(fit, which = 2, col = as.integer(rings$ring))
#' # linear PCA only rotates the plane: the rings stay nested
#' plot(prcomp(rings[, 1:2])$x, col = as.integer(rings$ring))
"rings"
