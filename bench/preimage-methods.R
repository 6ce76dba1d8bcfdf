# The ridge pre-image against the fixed-point one (method = "fixed-point")
# on held-out rows: the pooled mean squared reconstruction error of 5-fold
# cross-validation on the rings data, Gaussian kernels, ridge = 0.1.
#   Rscript bench/preimage-methods.R
library(fastkpca)
x <- as.matrix(rings[, c("x1", "x2")])
set.seed(1)
folds <- sample(rep_len(1:5, nrow(x)))
cat(sprintf("%7s %9s %10s %12s\n", "sigma", "features", "ridge_mse", "fixed_mse"))
for (s in c(0.134, 0.27, 0.5, 1)) for (f in c(8, 16)) {
  e <- c(ridge = 0, fixed = 0)
  for (v in 1:5) {
    tr <- x[folds != v, ]
    te <- x[folds == v, ]
    fit <- kpca(tr, kpar = list(sigma = s), features = f)
    sc <- predict(fit, te)
    e[["ridge"]] <- e[["ridge"]] + sum((te - preimage(fit, sc, ridge = 0.1))^2)
    fixed <- suppressWarnings(preimage(fit, sc, ridge = 0.1, method = "fixed-point"))
    e[["fixed"]] <- e[["fixed"]] + sum((te - fixed)^2)
  }
  cat(sprintf("%7.3f %9d %10.4f %12.4f\n", s, f, e[["ridge"]] / nrow(x), e[["fixed"]] / nrow(x)))
}
