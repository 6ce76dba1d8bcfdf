# Measures the exact solver's two tridiagonal methods against each other,
# the basis of the rule behind fastkpca:::exact_method (R/eigen.R).
#   Rscript bench/exact-rule.R [N]          # default n = 1000
# Both methods run dsytrd and dormtr; they differ in the tridiagonal step:
# "bisection" is dsyevr (features > 0) or dstebz + dstein (features = 0),
# "mrrr" is dstemr for the wanted pairs only. Prints, for each number of
# features (0: the default threshold, th = 1e-4, which keeps about half the
# components here), the median of 3 fits with each method, interleaved, and
# their ratio (rbfdot sigma = 0.1, d = 10). Runs on the BLAS R loads; for
# another, run it in a process switched as bench/blas.R describes.
library(fastkpca)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args)) as.integer(args[1]) else 1000L
set.seed(1)
x <- matrix(rnorm(n * 10), n)
cat("BLAS:", extSoftVersion()[["BLAS"]], "\nLAPACK:", La_library(), "\n\n")
fit_time <- function(features, method) {
  old <- fastkpca:::set_tuning(exact_method = method)
  on.exit(options(old))
  t <- system.time(fit <- kpca(x, features = features, solver = "exact"))[["elapsed"]]
  c(time = t, k = length(fit$eig))
}
rows <- lapply(c(5, 10, 20, 50, 100, 200, 0), function(f) {
  runs <- replicate(3, c(fit_time(f, "bisection"), fit_time(f, "mrrr")))
  b <- median(runs[1, ]); m <- median(runs[3, ])
  data.frame(n = n, features = f, components = runs[2, 1], bisection = b, mrrr = m,
             bisection_over_mrrr = round(b / m, 2),
             rule = fastkpca:::exact_method(n, as.integer(f)))
})
print(do.call(rbind, rows), row.names = FALSE)
