#' Two concentric rings
#'
#' 300 simulated points in the plane on two noisy concentric circles centered
#' at the origin: 150 on a circle of radius 1 and 150 on a circle of radius
#' 3. The two groups differ only in their distance from the origin, so no
#' linear projection separates them, and linear PCA only rotates the plane;
#' kernel PCA with a Gaussian kernel (`"rbfdot"`, for example with
#' `sigma = 0.5`) separates them on its first component.
#'
#' Each point has an angle drawn uniformly on \eqn{[0, 2\pi)} and a radius
#' drawn from a normal distribution with mean 1 and standard deviation 0.1
#' (inner ring) or mean 3 and standard deviation 0.15 (outer ring). The
#' coordinates are rounded to 4 decimal places. The inner ring comes first
#' (rows 1 to 150), then the outer ring (rows 151 to 300).
#'
#' @format A data frame with 300 rows and 3 columns:
#' \describe{
#'   \item{x1, x2}{numeric, the coordinates.}
#'   \item{ring}{factor with levels `"inner"` and `"outer"`, the circle the
#'     point was drawn from.}
#' }
#' @source Simulated by the script `data-raw/rings.R` of the package
#'   sources, with `set.seed(20261121)`.
#' @seealso [kpca()]; the vignette, `vignette("fastkpca", package =
#'   "fastkpca")`, works through this example.
#' @examples
#' str(rings)
#' col <- as.integer(rings$ring)
#' # linear PCA only rotates the plane: the rings stay nested
#' plot(prcomp(rings[, c("x1", "x2")])$x, col = col, asp = 1)
#' # a Gaussian kernel separates them on the first component
#' fit <- kpca(~ x1 + x2, data = rings, kpar = list(sigma = 0.5), features = 2)
#' plot(fit, which = 2, col = col)
#' tapply(fit$rotated[, 1], rings$ring, range)
"rings"
