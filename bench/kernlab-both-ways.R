# Benchmark: kernlab's kernelMatrix() on a fastkpca kernel expression
# (issue 26): rbfdot(0.1) + 0.5 * polydot(degree = 2), with kernlab and
# fastkpca both attached, against the same kernel written by hand as an R
# function of class "kernel" (what a kernlab user writes for a kernel
# kernlab does not have; kernlab then loops over the pairs of rows in R),
# and against kernlab's own two kernels summed in R (kernelMatrix() of
# kernlab::rbfdot() plus 0.5 times that of kernlab::polydot(): vectorized R,
# two n x n matrices and their sum). All three in this one run, on the same
# rows, checked equal.
#   Rscript bench/kernlab-both-ways.R
# Environment: KB_N rows (default 2000), KB_D columns (10), KB_REPS
# repetitions of the fast ones (median; 3; the hand-written loop runs once).
# Elapsed time; fastkpca on its default threads (kpca_threads()).
suppressPackageStartupMessages({ library(kernlab); library(fastkpca) })
n <- as.integer(Sys.getenv("KB_N", "2000"))
d <- as.integer(Sys.getenv("KB_D", "10"))
reps <- as.integer(Sys.getenv("KB_REPS", "3"))
set.seed(26)
x <- matrix(rnorm(n * d), n, d)

expression_kernel <- rbfdot(0.1) + 0.5 * polydot(degree = 2)
by_hand <- function(a, b) exp(-0.1 * sum((a - b)^2)) + 0.5 * (sum(a * b) + 1)^2
class(by_hand) <- "kernel"
kernlab_sum <- function(x) {
  kernelMatrix(kernlab::rbfdot(0.1), x) + 0.5 * kernelMatrix(kernlab::polydot(degree = 2), x)
}

time_median <- function(f, times) {
  median(vapply(seq_len(times), function(i) system.time(f())[["elapsed"]], 0))
}
k_fast <- kernelMatrix(expression_kernel, x)
k_sum <- kernlab_sum(x)
t_fast <- time_median(function() kernelMatrix(expression_kernel, x), reps)
t_sum <- time_median(function() kernlab_sum(x), reps)
t_hand <- system.time(k_hand <- kernelMatrix(by_hand, x))[["elapsed"]]
plain <- function(m) matrix(as.vector(m), nrow(m))
stopifnot(isTRUE(all.equal(plain(k_fast), plain(k_hand), tolerance = 1e-10)),
          isTRUE(all.equal(plain(k_fast), plain(k_sum), tolerance = 1e-10)))

cat(sprintf("kernelMatrix() of %s, n = %d, d = %d (%d threads); load: %s\n",
            format(expression_kernel), n, d, kpca_threads(),
            paste(round(unname(as.numeric(strsplit(sub(".*load average: ", "",
                  system("uptime", intern = TRUE)), ", ")[[1]])), 2), collapse = " ")))
res <- data.frame(
  kernel = c("fastkpca expression (C fill)", "hand-written R function (kernlab's loop)",
             "kernlab's rbfdot + polydot, summed in R"),
  seconds = c(t_fast, t_hand, t_sum))
res$fastkpca_speedup <- res$seconds / t_fast
print(res, row.names = FALSE, digits = 4)
cat(sprintf("ratio hand-written / fastkpca: %.0fx\n", t_hand / t_fast))
