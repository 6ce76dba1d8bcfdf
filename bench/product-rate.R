# The product rate (flops a second) of the package's tiles on this
# machine, now, on `threads` threads: fastkpca:::tile_product() of a
# 400 x 60000 by a 60000 x 400 matrix into a preallocated result, the
# median of three after one unmeasured call, in the calling process. The
# unit of bench/run.R's floor and of bench/two-stage.R's fractions.
# (Until issue 52's third session it was the product of two 3000 x 3000
# matrices, timed with its result: R's zero matrix and the C entry's copy
# of it, 72 MB each, first touched a 4 KB page at a time, were 40 to 60%
# of that time on the project machine, whose pages cost about 12 us each,
# and they ran on one thread. That rate, 33 to 44 GFLOP/s on 2 threads,
# was a third to a quarter of the tiles' own; every floor and fraction
# measured against it was that much too kind.)
product_rate <- function(threads) {
  suppressPackageStartupMessages(library(fastkpca))
  set.seed(7)
  m <- 400; k <- 60000
  a <- matrix(rnorm(m * k), m); b <- matrix(rnorm(k * m), k); c0 <- matrix(0, m, m)
  invisible(fastkpca:::tile_product(a, b, c = c0, threads = threads))
  secs <- replicate(3, system.time(fastkpca:::tile_product(a, b, c = c0,
                                                           threads = threads))[["elapsed"]])
  2 * m * m * k / median(secs)
}
