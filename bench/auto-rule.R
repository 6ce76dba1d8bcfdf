# Measures where the iterative solver overtakes the exact one, the basis of
# the rule behind solver = "auto" (fastkpca:::auto_prefers_iterative).
#   Rscript bench/auto-rule.R
# Prints, for each n and number of features, the exact time, the iterative
# time and their ratio (median of 3 runs, rbfdot sigma = 0.05, d = 10).
library(fastkpca)
grid <- expand.grid(features = c(1, 5, 20, 50, 100), n = c(100, 200, 400, 800, 1600))
grid <- grid[grid$features < grid$n / 2, ]
time_fit <- function(x, features, solver) {
  median(replicate(3, system.time(
    kpca(x, kpar = list(sigma = 0.05), features = features, solver = solver,
         threads = 1))[["elapsed"]]))
}
rows <- lapply(seq_len(nrow(grid)), function(i) {
  n <- grid$n[i]; f <- grid$features[i]
  set.seed(1)
  x <- matrix(rnorm(n * 10), n)
  ex <- time_fit(x, f, "exact")
  it <- time_fit(x, f, "iterative")
  data.frame(n = n, features = f, exact = ex, iterative = it,
             exact_over_iterative = round(ex / max(it, 1e-3), 2),
             auto = fastkpca:::choose_solver("auto", n, f))
})
print(do.call(rbind, rows), row.names = FALSE)
