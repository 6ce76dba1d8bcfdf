# kcca() against kernlab::kcca(), measured side by side in one run, and
# kcca() alone up to 10^5 rows.
#   OPENBLAS_NUM_THREADS=1 Rscript bench/kcca.R [largest_n]
# Two views sharing a nonlinear signal (y depends on x through cos(pi t)),
# rbfdot with sigma = 0.5 for both. kernlab's kcca solves a dense 2n x 2n
# generalized eigenproblem (and forms several such matrices): it is timed
# up to n = 800. fastkpca runs both formulations; "kernlab" is compared with
# kernlab's kcor (each of kernlab's values, +rho or -rho, against ours).
# kernlab is loaded here, so kcca()'s default, kernlab's formulation, is
# solved by kernlab::kcca() itself (see ?kcca): its time is kernlab's.
# Memory: the peak of R's heap (gc(reset = TRUE) before, gc() after), which
# counts R objects, not C scratch (R_alloc is on R's heap too).
# Needs: fastkpca, kernlab.
args <- as.numeric(commandArgs(trailingOnly = TRUE))
largest <- if (length(args) >= 1L && !is.na(args[1L])) args[1L] else 1e5
for (p in c("fastkpca", "kernlab"))
  if (!requireNamespace(p, quietly = TRUE)) stop("bench/kcca.R needs the package ", p)
library(fastkpca)

views <- function(n) {
  t <- runif(n, -1, 1)
  list(x = cbind(t, rnorm(n)), y = cbind(cos(pi * t) + rnorm(n, sd = 0.1), rnorm(n)))
}

# Elapsed and CPU seconds (user + system: on a shared, loaded machine the
# elapsed time says more about the load than about the code) and peak heap
# (MB) of one call.
measure <- function(expr) {
  gc(reset = TRUE)
  t <- system.time(value <- force(expr))
  peak <- sum(gc()[, 6L])
  list(value = value, seconds = t[["elapsed"]],
       cpu = t[["user.self"]] + t[["sys.self"]], mb = peak)
}

rows <- list()
set.seed(1)
for (n in c(200, 400, 800)) {
  v <- views(n)
  k <- measure(kernlab::kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 2))
  f <- measure(kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 2, formulation = "kernlab"))
  c0 <- measure(kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 2, formulation = "centered"))
  gap <- max(vapply(abs(kernlab::kcor(k$value)),
                    function(r) min(abs(r - kcor(f$value))), numeric(1)))
  rows[[length(rows) + 1L]] <- data.frame(
    n = n, kernlab_s = k$seconds, kernlab_cpu = k$cpu, kernlab_mb = k$mb,
    fastkpca_kernlab_s = f$seconds, fastkpca_kernlab_cpu = f$cpu,
    fastkpca_centered_s = c0$seconds, fastkpca_mb = c0$mb,
    cpu_ratio = round(k$cpu / max(f$cpu, 1e-3)),
    rank = c0$value$xfactor$rank, kcor_gap = signif(gap, 2))
}
cat("kernlab::kcca and kcca() on the same data (time in seconds, peak heap in MB):\n")
print(do.call(rbind, rows), row.names = FALSE)

big <- list()
for (n in c(1e4, 3e4, 1e5)) {
  if (n > largest) break
  v <- views(n)
  f <- measure(kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 2, max_rank = 300,
                     formulation = "centered"))
  big[[length(big) + 1L]] <- data.frame(
    n = n, seconds = f$seconds, cpu = f$cpu, peak_mb = f$mb, n_by_n_mb = 8 * n^2 / 2^20,
    rank_x = f$value$xfactor$rank, rank_y = f$value$yfactor$rank,
    residual_x = signif(f$value$xfactor$residual, 2), kcor1 = round(kcor(f$value)[1], 4))
}
cat("\nkcca() alone (the n x n column is what one kernel matrix would take):\n")
print(do.call(rbind, big), row.names = FALSE)
