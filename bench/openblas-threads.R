# fastkpca's OpenMP threads against the BLAS's own threads, on OpenBLAS.
#   Rscript bench/openblas-threads.R [N] [REPEATS]     # default n = 2000, 2 repeats
# Runs the default call kpca(x) (and kernlab::kpca(x) for scale) in child
# processes (bench/case.R) on OpenBLAS (bench/blas.R), for every pairing of
# OPENBLAS_NUM_THREADS (1, 2) and fastkpca's threads (1, 2), the pairings
# interleaved and repeated. Prints the median wall time of each. The
# OpenMP region (kernel matrix and centering) ends before LAPACK starts, so
# the two pools never run at once; what can differ is the BLAS's speed, its
# threads' spinning between calls, and contention with other processes.
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.integer(args[1]) else 2000L
repeats <- if (length(args) >= 2) as.integer(args[2]) else 2L
here <- tryCatch(dirname(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE)))), error = function(e) "bench")
source(file.path(here, "blas.R"))

grid <- rbind(expand.grid(impl = "auto", blas_threads = 1:2, threads = 1:2,
                          stringsAsFactors = FALSE),
              data.frame(impl = "kernlab", blas_threads = 1:2, threads = NA))
times <- matrix(NA_real_, nrow(grid), repeats)
for (r in seq_len(repeats)) for (i in seq_len(nrow(grid))) {
  env <- blas_env("openblas", c(sprintf("OPENBLAS_NUM_THREADS=%d", grid$blas_threads[i]),
                                if (!is.na(grid$threads[i]))
                                  sprintf("FASTKPCA_BENCH_THREADS=%d", grid$threads[i])))
  out <- tempfile(fileext = ".rds")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c(file.path(here, "case.R"), grid$impl[i], n, 10, "default", 0, out),
                    env = env)
  if (status == 0 && file.exists(out)) times[i, r] <- readRDS(out)$time
}
grid$impl[grid$impl == "auto"] <- "fastkpca"
grid$median_seconds <- round(apply(times, 1, median), 2)
grid$runs <- apply(round(times, 2), 1, paste, collapse = " ")
cat(sprintf("kpca(x), n = %d, OpenBLAS; threads = fastkpca's OpenMP threads\n\n", n))
print(grid, row.names = FALSE)
