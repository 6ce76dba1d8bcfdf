# Benchmark: nanoseconds per kernel value, fastkpca against scikit-learn's
# pairwise_kernels and kernlab's kernelMatrix, on the same rows, in one run.
#   Rscript bench/kernel-speed.R [LIB ...]
# Each LIB is a library holding a build of fastkpca (say, one built from
# main before a change and one from the working tree): every build is timed
# in its own child process, so the table shows them side by side. Without
# LIB, the fastkpca found by library() is timed.
# Environment: KS_N rows (default 2000), KS_REPS repetitions (median; 3),
# KS_PERF=1 adds a perf profile (perf record) of the rbf d = 10 case of the
# last LIB, KS_PYTHON the python with scikit-learn (/usr/bin/python3).
# Cases: rbfdot (sigma = 1 / d), laplacedot (sigma = 1 / d), polydot
# (degree 3, scale 1 / d, offset 1); d = 2, 10, 100, 784; 1 and 2 threads
# (kernlab has one). One thread: CPU time (user + system) of the process,
# which other load on a shared machine disturbs least; two threads: wall
# time. scikit-learn's "laplacian" is exp(-gamma ||x - y||_1), the L1
# distance, where laplacedot's is the L2 one: the same work per value. Timed: the n x n cross kernel K(x, x) (n^2 values):
# kernel_matrix(k, x, x), pairwise_kernels(X, X, metric, n_jobs = 1) with
# OPENBLAS/OMP threads set, kernelMatrix(k, x, x).
# Run from the package root.
args <- commandArgs(trailingOnly = TRUE)
options(width = 200)
n <- as.integer(Sys.getenv("KS_N", "2000"))
reps <- as.integer(Sys.getenv("KS_REPS", "3"))
python <- Sys.getenv("KS_PYTHON", "/usr/bin/python3")
libs <- if (length(args)) normalizePath(args) else NA_character_
labels <- if (length(args)) basename(args) else "fastkpca"
dims <- c(2L, 10L, 100L, 784L)
kernels <- c("rbf", "laplace", "poly")
work <- tempfile("kernel-speed-")
dir.create(work)
on.exit(unlink(work, recursive = TRUE), add = TRUE)

data_file <- function(d) file.path(work, sprintf("x-%d.f64", d))
for (d in dims) {
  set.seed(d)
  x <- matrix(rnorm(n * d), n, d)
  writeBin(as.vector(t(x)), data_file(d))   # row-major, as numpy reads it
}
read_x <- function(d) matrix(readBin(data_file(d), "double", n * d), n, d, byrow = TRUE)

load_average <- function() {
  l <- tryCatch(readLines("/proc/loadavg", warn = FALSE), error = function(e) "")
  paste(strsplit(l, " ")[[1]][1:3], collapse = " ")
}

# fastkpca: one child process per build, all cases; median seconds
child_code <- '
  args <- commandArgs(trailingOnly = TRUE)
  lib <- args[1]; n <- as.integer(args[2]); reps <- as.integer(args[3]); work <- args[4]
  out <- args[5]; only <- if (length(args) >= 6) args[6] else ""
  if (!is.na(lib) && lib != "NA") .libPaths(c(lib, .libPaths()))
  suppressPackageStartupMessages(library(fastkpca))
  rows <- list()
  for (d in c(2L, 10L, 100L, 784L)) {
    x <- matrix(readBin(file.path(work, sprintf("x-%d.f64", d)), "double", n * d), n, d,
                byrow = TRUE)
    for (kn in c("rbf", "laplace", "poly")) for (th in 1:2) {
      if (nzchar(only) && !(kn == "rbf" && d == 10L && th == 1L)) next
      k <- switch(kn, rbf = kern("rbfdot", sigma = 1 / d),
                  laplace = kern("laplacedot", sigma = 1 / d),
                  poly = kern("polydot", degree = 3, scale = 1 / d, offset = 1))
      invisible(kernel_matrix(k, x, x, threads = th))
      r <- if (nzchar(only)) as.integer(only) else reps
      # one thread: CPU time, which load on a shared machine disturbs least;
      # two threads: wall time
      t <- replicate(r, {
        s <- system.time(kernel_matrix(k, x, x, threads = th))
        if (th == 1L) s[["user.self"]] + s[["sys.self"]] else s[["elapsed"]]
      })
      rows[[length(rows) + 1]] <- data.frame(kernel = kn, d = d, threads = th,
                                             seconds = median(t))
    }
  }
  saveRDS(do.call(rbind, rows), out)'
child_script <- file.path(work, "child.R")
writeLines(child_code, child_script)
run_fastkpca <- function(lib, label) {
  out <- file.path(work, paste0("fk-", label, ".rds"))
  system2(file.path(R.home("bin"), "Rscript"),
          c("--vanilla", child_script, lib, n, reps, work, out))
  r <- readRDS(out)
  names(r)[4] <- label
  r
}

# scikit-learn: one python process per thread count
py_code <- '
import sys, time, os
import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels
import sklearn
n, reps, work, threads = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
for d in (2, 10, 100, 784):
    X = np.fromfile(os.path.join(work, "x-%d.f64" % d)).reshape(n, d)
    for kn in ("rbf", "laplacian", "poly"):
        kw = dict(gamma=1.0 / d)
        if kn == "poly": kw.update(degree=3, coef0=1)
        pairwise_kernels(X, X, metric=kn, n_jobs=1, **kw)
        ts = []
        for r in range(reps):
            clock = time.process_time if threads == 1 else time.perf_counter
            t0 = clock(); pairwise_kernels(X, X, metric=kn, n_jobs=1, **kw)
            ts.append(clock() - t0)
        print(kn, d, sorted(ts)[len(ts) // 2])
'
py_script <- file.path(work, "sk.py")
writeLines(py_code, py_script)
run_sklearn <- function(threads) {
  env <- c(sprintf("OPENBLAS_NUM_THREADS=%d", threads), sprintf("OMP_NUM_THREADS=%d", threads))
  out <- tryCatch(system2("env", c(env, python, py_script, n, reps, work, threads),
                                  stdout = TRUE),
                  error = function(e) character())
  if (!length(out)) return(NULL)
  f <- read.table(text = out, col.names = c("kernel", "d", "sklearn"))
  f$kernel <- sub("laplacian", "laplace", f$kernel)
  f$threads <- threads
  f
}

run_kernlab <- function() {
  if (!requireNamespace("kernlab", quietly = TRUE)) return(NULL)
  rows <- list()
  for (d in dims) {
    x <- read_x(d)
    for (kn in kernels) {
      k <- switch(kn, rbf = kernlab::rbfdot(sigma = 1 / d),
                  laplace = kernlab::laplacedot(sigma = 1 / d),
                  poly = kernlab::polydot(degree = 3, scale = 1 / d, offset = 1))
      t <- replicate(reps, {
        s <- system.time(kernlab::kernelMatrix(k, x, x))
        s[["user.self"]] + s[["sys.self"]]
      })
      rows[[length(rows) + 1]] <- data.frame(kernel = kn, d = d, threads = 1L,
                                             kernlab = median(t))
    }
  }
  do.call(rbind, rows)
}

cat(sprintf("kernel-speed: n = %d rows, %d x %d values per case, median of %d; load %s\n",
            n, n, n, reps, load_average()))
tab <- NULL
for (i in seq_along(libs)) {
  r <- run_fastkpca(libs[i], labels[i])
  tab <- if (is.null(tab)) r else merge(tab, r)
}
sk <- rbind(run_sklearn(1L), run_sklearn(2L))
if (!is.null(sk)) tab <- merge(tab, sk, all.x = TRUE)
kl <- run_kernlab()
if (!is.null(kl)) tab <- merge(tab, kl, all.x = TRUE)
timed <- setdiff(names(tab), c("kernel", "d", "threads"))
ns <- tab
for (v in timed) ns[[v]] <- round(tab[[v]] / n^2 * 1e9, 2)
last <- labels[length(labels)]
if ("sklearn" %in% timed) ns$sklearn_over_fk <- round(tab$sklearn / tab[[last]], 2)
if ("kernlab" %in% timed) ns$kernlab_over_fk <- round(tab$kernlab / tab[[last]], 2)
if (length(labels) > 1)
  ns$before_over_after <- round(tab[[labels[1]]] / tab[[last]], 2)
ns <- ns[order(match(ns$kernel, kernels), ns$d, ns$threads), ]
cat("ns per kernel value (columns: builds, then peers); *_over_fk: the peer's time /",
    last, "(above 1: fastkpca faster)\n")
print(ns, row.names = FALSE)
cat(sprintf("load after: %s\n", load_average()))

if (Sys.getenv("KS_PERF") == "1") {
  # a profile of the fastkpca rbf d = 10 case, one thread, 20 repetitions
  data <- file.path(work, "perf.data")
  out <- file.path(work, "perf.rds")
  st <- system2("perf", c("record", "-q", "-e", "cpu-clock", "-o", data, "--",
                          file.path(R.home("bin"), "Rscript"), "--vanilla", child_script,
                          libs[length(libs)], n, reps, work, out, "20"),
                stdout = FALSE, stderr = FALSE)
  if (st == 0) {
    rep <- system2("perf", c("report", "-i", data, "--stdio", "--sort", "dso,symbol",
                             "--percent-limit", "2"), stdout = TRUE, stderr = FALSE)
    cat("\nperf report (cpu-clock samples, rbf d = 10, 1 thread, kernel_matrix x 20):\n")
    cat(grep("^ +[0-9.]+%", rep, value = TRUE), sep = "\n")
  } else cat("perf record failed\n")
}
