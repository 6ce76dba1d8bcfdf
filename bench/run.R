# Benchmark: kernlab::kpca against fastkpca, all in one run.
#   Rscript bench/run.R          # the full set of cases
#   Rscript bench/run.R quick    # n = 1000 and 3000 only
# Each case runs in its own child process (bench/case.R) so that its peak
# memory (VmHWM) is measured alone. Printed per case: wall time, speed
# relative to kernlab at the same n, the peak memory added by the fit as a
# multiple of 8 n^2 bytes (one n x n double matrix), and the largest
# relative difference of the eigenvalues from fastkpca's exact solver
# (n/a where the exact solver is not run: it costs O(n^3)).
args <- commandArgs(trailingOnly = TRUE)
quick <- length(args) > 0 && args[1] == "quick"
here <- tryCatch(dirname(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE)))), error = function(e) "bench")
case_script <- file.path(here, "case.R")

# "matrix" is no fit: R's matrix(0, n, n), the memory of one n x n matrix as
# this measure sees it (a calibration row)
cases <- rbind(
  data.frame(impl = c("matrix", "kernlab", "exact", "auto"), n = 1000L, features = 5L),
  data.frame(impl = c("matrix", "kernlab", "exact", "auto"), n = 3000L, features = 5L)
)
if (!quick)
  cases <- rbind(cases, data.frame(impl = "auto", n = c(10000L, 20000L, 40000L),
                                   features = 10L))
d <- 10L
sigma <- 0.05

run_case <- function(impl, n, features) {
  out <- tempfile(fileext = ".rds")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c(case_script, impl, n, d, features, sigma, out))
  if (status != 0 || !file.exists(out)) return(NULL)
  readRDS(out)
}

results <- vector("list", nrow(cases))
for (i in seq_len(nrow(cases))) {
  cat(sprintf("running %s at n = %d ...\n", cases$impl[i], cases$n[i]))
  results[[i]] <- run_case(cases$impl[i], cases$n[i], cases$features[i])
}

fmt_ratio <- function(x) if (is.na(x)) "n/a" else sprintf("%.1fx", x)
table <- do.call(rbind, lapply(seq_len(nrow(cases)), function(i) {
  r <- results[[i]]
  n <- cases$n[i]
  if (is.null(r)) return(data.frame(case = cases$impl[i], n = n, solver = "failed",
                                    seconds = NA, speedup = "n/a", memory = "n/a",
                                    eig_vs_exact = "n/a"))
  same_n <- which(cases$n == n)
  kl <- results[[same_n[cases$impl[same_n] == "kernlab"][1]]]
  ex <- results[[same_n[cases$impl[same_n] == "exact"][1]]]
  speed <- if (!is.null(kl) && cases$impl[i] != "matrix") kl$time / r$time else NA
  agree <- if (!is.null(ex) && length(r$eig) && length(ex$eig) == length(r$eig))
    sprintf("%.1e", max(abs(r$eig - ex$eig) / abs(ex$eig))) else "n/a"
  data.frame(case = cases$impl[i], n = n, solver = r$solver,
             seconds = round(r$time, 2), speedup = fmt_ratio(speed),
             memory = sprintf("%.2f", r$added_bytes / (8 * n^2)),
             eig_vs_exact = agree)
}))
cat("\nrbfdot, sigma = 0.05, d = 10; features 5 (n <= 3000) or 10 (n >= 10000)\n")
cat("speedup: kernlab's time / this case's time at the same n\n")
cat("memory: peak resident memory added by the fit / (8 n^2 bytes);\n")
cat("        the 'matrix' rows measure R's matrix(0, n, n) the same way\n\n")
print(table, row.names = FALSE)
