# The product rate (flops a second) of the package's tiles on this
# machine, now, on `threads` threads: fastkpca:::tile_product() of two
# 3000 x 3000 matrices, the median of three, in the calling process. The
# unit of bench/run.R's floor and of bench/two-stage.R's fractions.
product_rate <- function(threads) {
  suppressPackageStartupMessages(library(fastkpca))
  set.seed(7)
  a <- matrix(rnorm(3000^2), 3000); b <- matrix(rnorm(3000^2), 3000)
  secs <- replicate(3, system.time(fastkpca:::tile_product(a, b, threads = threads))[["elapsed"]])
  2 * 3000^3 / median(secs)
}
