# One benchmark case, run in its own R process so that its peak memory
# (VmHWM) is its own. Usage:
#   Rscript bench/case.R IMPL N D FEATURES SIGMA OUT.rds
# IMPL: kernlab, exact, auto or iterative, or matrix (no fit: R's
# matrix(0, n, n), to calibrate the memory measure). Writes list(time,
# added_bytes, eig, solver) to OUT.rds.
args <- commandArgs(trailingOnly = TRUE)
impl <- args[1]; n <- as.integer(args[2]); d <- as.integer(args[3])
features <- as.integer(args[4]); sigma <- as.double(args[5]); out <- args[6]

vm_hwm <- function() {
  line <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
  as.double(gsub("[^0-9]", "", line)) * 1024
}

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
    kernlab::kpca(x, kernel = "rbfdot", kpar = list(sigma = sigma), features = features)
  } else {
    fastkpca::kpca(x, kernel = "rbfdot", kpar = list(sigma = sigma),
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
saveRDS(list(time = time, added_bytes = after - before, eig = eig, solver = solver), out)
