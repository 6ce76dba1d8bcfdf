# kpca(variance = p) against the two ways of getting the same components
# without it: all n eigenpairs (then keep the first k), and k eigenpairs when
# k is already known (which needs a first fit to learn it). Side by side in
# one run; the machine may be shared, so read the ratios.
#   Rscript bench/variance.R [n] [p]        (default n = 1500, p = 0.9)
library(fastkpca)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) > 0L) as.integer(args[1L]) else 1500L
p <- if (length(args) > 1L) as.numeric(args[2L]) else 0.9
set.seed(1)
x <- matrix(rnorm(n * 10), n, 10)
kp <- list(sigma = 0.05)
elapsed <- function(expr) { t0 <- proc.time()[["elapsed"]]; force(expr); proc.time()[["elapsed"]] - t0 }
t_var <- elapsed(fv <- kpca(x, kpar = kp, variance = p))
k <- length(fv$eig)
# centering leaves rank n - 1: the last component is dropped with a warning
t_all <- elapsed(fa <- suppressWarnings(kpca(x, kpar = kp, features = n, solver = "exact")))
t_k <- elapsed(fk <- kpca(x, kpar = kp, features = k, solver = "exact"))
share <- cumsum(fa$eig) / fa$variance_total
cat(sprintf("n = %d, variance = %g: %d components (from all eigenvalues: %d)\n", n, p, k,
            which(share >= p)[1]))
cat(sprintf("max |rotated| difference to features = k: %.3g\n",
            max(abs(fv$rotated - fk$rotated))))
cat(sprintf("%-28s %8s %8s\n", "", "seconds", "ratio"))
cat(sprintf("%-28s %8.2f %8.2f\n", "variance = p", t_var, 1))
cat(sprintf("%-28s %8.2f %8.2f\n", "features = n (all pairs)", t_all, t_all / t_var))
cat(sprintf("%-28s %8.2f %8.2f\n", "features = k (k known)", t_k, t_k / t_var))
