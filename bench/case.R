# One benchmark case, run in its own R process so that its peak memory
# (VmHWM) is its own, and on the BLAS its environment (LD_PRELOAD, see
# bench/blas.R) selects. Usage:
#   Rscript bench/case.R IMPL N D FEATURES SIGMA OUT.rds
# IMPL: kernlab, exact, auto or iterative, or matrix (no fit: R's
# matrix(0, n, n), to calibrate the memory measure). FEATURES "default"
# runs the default call, kpca(x) (features = 0, th = 1e-4, sigma = 0.1,
# kernlab's defaults; for fastkpca IMPL is then ignored, the call picks its
# solver), with SIGMA unused; otherwise rbfdot with SIGMA and that many
# features. Writes list(time, added_bytes, eig, solver, blas,
# lapack, stages) to OUT.rds; stages: a fit on the n x n buffer's wall
# seconds by step (fastkpca:::stage_seconds(), the stage clock of
# src/args.c), NULL for the other cases.
args <- commandArgs(trailingOnly = TRUE)
impl <- args[1]; n <- as.integer(args[2]); d <- as.integer(args[3])
default_call <- args[4] == "default"
features <- if (default_call) 0L else as.integer(args[4])
sigma <- as.double(args[5]); out <- args[6]

vm_hwm <- function() {
  line <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
  as.double(gsub("[^0-9]", "", line)) * 1024
}

# fastkpca's OpenMP threads (kpca_threads()), when bench/openblas-threads.R sets them
threads <- Sys.getenv("FASTKPCA_BENCH_THREADS")
if (nzchar(threads)) options(fastkpca.threads = as.integer(threads))

set.seed(42)
x <- matrix(rnorm(n * d), n, d)
if (impl == "kernlab") {
  suppressPackageStartupMessages(library(kernlab))
} else {
  library(fastkpca)
}
fit_once <- function(x) {
  if (impl == "matrix") return(matrix(0, nrow(x), nrow(x)))
  if (impl == "kernlab") {
    if (default_call) kernlab::kpca(x)
    else kernlab::kpca(x, kernel = "rbfdot", kpar = list(sigma = sigma),
                       features = features)
  } else {
    # the default call is literally kpca(x): solver = "auto", which is exact
    if (default_call) fastkpca::kpca(x)
    else fastkpca::kpca(x, kernel = "rbfdot", kpar = list(sigma = sigma),
                        features = features, solver = impl)
  }
}
# a warm-up fit on 50 rows, so that loading and byte-compiling the code on
# first use is not counted as memory of the fit
invisible(fit_once(x[1:50, , drop = FALSE]))
invisible(gc())
before <- vm_hwm()
time <- system.time({
  fit <- fit_once(x)
  if (impl == "matrix") {
    eig <- numeric()
    solver <- "none"
  } else if (impl == "kernlab") {
    eig <- unname(kernlab::eig(fit))
    solver <- "kernlab"
  } else {
    eig <- unname(fit$eig)
    solver <- fit$solver
  }
})[["elapsed"]]
after <- vm_hwm()
# the clock of the last fit on the buffer: this one's, for the solvers
# that run there (the warm-up's otherwise)
# (builds before the stage clock have none)
stages <- if (solver %in% c("exact", "iterative", "randomized") &&
              exists("stage_seconds", asNamespace("fastkpca"), inherits = FALSE))
  fastkpca:::stage_seconds()
saveRDS(list(time = time, added_bytes = after - before, eig = eig, solver = solver,
             blas = unname(extSoftVersion()["BLAS"]), lapack = La_library(),
             stages = stages), out)
