# String kernels: fastkpca's kernel_matrix() against kernlab's kernelMatrix()
# on the same strings, in the same run, with the ratio of the times and the
# largest difference of the values.
#
# Data: random DNA strings (a, c, g, t) of 200 to 1000 characters. The
# headline is issue 19's case: 2000 strings with kernlab's default
# stringdot() (spectrum, length 4, normalized). The other types are timed
# on fewer strings, as kernlab takes minutes on 2000 (and "string",
# "fullstring", "sequence" are O(length |x| |y|) per pair there).
#
# Run from the package root with the package installed:
#   Rscript bench/strings.R            # all cases (about 10 minutes)
#   Rscript bench/strings.R quick      # smaller n, a minute
suppressPackageStartupMessages({
  library(fastkpca)
  library(kernlab)
})

args <- commandArgs(trailingOnly = TRUE)
quick <- length(args) > 0L && args[1L] == "quick"

random_dna <- function(n, lo = 200L, hi = 1000L) {
  vapply(seq_len(n), function(i)
    paste(sample(c("a", "c", "g", "t"), sample(lo:hi, 1L), TRUE), collapse = ""), "")
}

set.seed(19)
strings <- random_dna(if (quick) 300L else 2000L)

# (type, kernlab n, kpar)
cases <- list(
  list(type = "spectrum", n = if (quick) 300L else 2000L, length = 4, lambda = 1.1),
  list(type = "boundrange", n = if (quick) 150L else 400L, length = 4, lambda = 1.1),
  list(type = "constant", n = if (quick) 150L else 400L, length = 4, lambda = 1.1),
  list(type = "exponential", n = if (quick) 150L else 400L, length = 4, lambda = 1.1),
  list(type = "string", n = if (quick) 40L else 100L, length = 4, lambda = 0.5),
  list(type = "fullstring", n = if (quick) 40L else 100L, length = 4, lambda = 0.5),
  list(type = "sequence", n = if (quick) 10L else 20L, length = 3, lambda = 0.5)
)

# elapsed seconds, and the process's CPU seconds (user + system) as the
# attribute "cpu": on a loaded machine the CPU time of a one-thread run is
# the steadier measure
elapsed <- function(expr) {
  gc(FALSE)
  t <- system.time(expr)
  structure(t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
}
cpu <- function(t) attr(t, "cpu")

threads <- kpca_threads()
rows <- lapply(cases, function(cs) {
  x <- strings[seq_len(cs$n)]
  kl <- kernlab::stringdot(length = cs$length, lambda = cs$lambda, type = cs$type)
  fk <- fastkpca::stringdot(length = cs$length, lambda = cs$lambda, type = cs$type)
  t_kl <- elapsed(K_kl <- kernlab::kernelMatrix(kl, as.list(x)))
  t_1 <- elapsed(K_1 <- kernel_matrix(fk, x, threads = 1L))
  t_t <- if (threads > 1L) elapsed(kernel_matrix(fk, x, threads = threads)) else t_1
  row <- data.frame(type = cs$type, n = cs$n, kernlab_s = c(t_kl), fastkpca_1thread_s = c(t_1),
                    fastkpca_threads_s = c(t_t), ratio_1thread = c(t_kl / t_1),
                    ratio_threads = c(t_kl / t_t),
                    kernlab_cpu_s = cpu(t_kl), fastkpca_1thread_cpu_s = cpu(t_1),
                    ratio_cpu_1thread = cpu(t_kl) / cpu(t_1),
                    max_abs_diff = max(abs(unclass(K_kl) - K_1)))
  print(row, digits = 3, row.names = FALSE)
  row
})
table <- do.call(rbind, rows)
cat(sprintf(paste0("\nkernel_matrix() on DNA strings of 200 to 1000 characters ",
                   "(stringdot, length 4; sequence: length 3); threads = %d\n"), threads))
print(table, digits = 3, row.names = FALSE)

# kernel PCA on the same strings: the exact fit (one n x n buffer) and a
# Nystrom fit on 200 landmarks (no n x n matrix)
n <- length(strings)
t_exact <- elapsed(fit <- fastkpca::kpca(strings, kpar = list(length = 4), features = 5))
t_nys <- elapsed(fitn <- fastkpca::kpca(strings, kpar = list(length = 4), features = 5, landmarks = 200))
cat(sprintf("\nkpca() on %d strings, spectrum length 4, 5 components: exact %.2f s, Nystrom (200 landmarks) %.2f s\n",
            n, c(t_exact), c(t_nys)))
cat("leading eigenvalues, exact:   ", format(fit$eig, digits = 4), "\n")
cat("leading eigenvalues, Nystrom: ", format(fitn$eig, digits = 4), "\n")
