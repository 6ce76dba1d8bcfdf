# Benchmark: does evaluating kernels as programs (kern(), R/kern.R and
# src/kernel.c) slow down a single named kernel? Builds the package at a
# baseline git revision (default: the last commit before kernel objects)
# and at the working tree, then times the same fits with both, alternating
# child processes so that load on the machine hits both alike.
#   Rscript bench/kernel-speed.R [BASELINE_REV] [N] [REPS]
# Prints per kernel the median wall time of kernel_cross(x, x) (the n x n
# kernel alone) and of kpca(x, features = 5) with each build, and the ratio
# new / baseline (1.00 = no change). Run from the package root.
args <- commandArgs(trailingOnly = TRUE)
baseline <- if (length(args) >= 1) args[1] else "0a87772"
n <- if (length(args) >= 2) as.integer(args[2]) else 2000L
reps <- if (length(args) >= 3) as.integer(args[3]) else 5L

root <- normalizePath(".")
stopifnot(file.exists(file.path(root, "DESCRIPTION")))
work <- tempfile("kernel-speed-")
dir.create(work)
on.exit(unlink(work, recursive = TRUE), add = TRUE)

install_version <- function(label, rev) {
  src <- file.path(work, paste0("src-", label))
  lib <- file.path(work, paste0("lib-", label))
  dir.create(src); dir.create(lib)
  if (is.null(rev)) {
    files <- system2("git", c("-C", root, "ls-files"), stdout = TRUE)
    for (f in files) {
      dir.create(dirname(file.path(src, f)), recursive = TRUE, showWarnings = FALSE)
      file.copy(file.path(root, f), file.path(src, f))
    }
  } else {
    tarball <- file.path(work, paste0(label, ".tar"))
    system2("git", c("-C", root, "archive", "-o", tarball, rev))
    utils::untar(tarball, exdir = src)
  }
  status <- system2(file.path(R.home("bin"), "R"),
                    c("CMD", "INSTALL", "--no-test-load", paste0("--library=", lib), src),
                    stdout = FALSE, stderr = FALSE)
  if (status != 0) stop("could not install the ", label, " version")
  lib
}
cat("installing the baseline (", baseline, ") and the working tree ...\n", sep = "")
libs <- c(baseline = install_version("baseline", baseline), new = install_version("new", NULL))

kernels <- list(vanilladot = list(), polydot = list(degree = 2, scale = 0.1),
                rbfdot = list(sigma = 0.05), laplacedot = list(sigma = 0.1),
                tanhdot = list(scale = 0.01), besseldot = list(sigma = 0.1),
                anovadot = list(sigma = 0.1), splinedot = list())

# One timing in a child process; the two builds call kernel_cross with the
# arguments of their own version.
child <- function(version, kernel, what) {
  out <- tempfile(fileext = ".rds")
  code <- sprintf('
    suppressPackageStartupMessages(library(fastkpca, lib.loc = %s))
    set.seed(1); x <- matrix(rnorm(%d * 10), %d, 10) / 3
    kn <- %s; kp <- %s
    new <- exists("kern", asNamespace("fastkpca"))
    cross <- function() {
      if (new) fastkpca:::kernel_cross(x, x, do.call(kern, c(list(kn), kp)), 2L)
      else fastkpca:::kernel_cross(x, x, kn, fastkpca:::resolve_kpar(kn, kp), 2L)
    }
    fit <- function() kpca(x, kernel = kn, kpar = kp, features = 5, threads = 2)
    f <- if (%s == "cross") cross else fit
    invisible(f())
    saveRDS(system.time(f())[["elapsed"]], %s)',
    deparse(libs[[version]]), n, n, deparse(kernel), deparse(kernels[[kernel]]),
    deparse(what), deparse(out))
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", script))
  readRDS(out)
}

rows <- list()
for (kn in names(kernels)) for (what in c("cross", "fit")) {
  times <- list(baseline = numeric(), new = numeric())
  for (r in seq_len(reps)) for (v in c("baseline", "new"))
    times[[v]] <- c(times[[v]], child(v, kn, what))
  rows[[length(rows) + 1L]] <- data.frame(
    kernel = kn, timed = what, baseline = median(times$baseline),
    new = median(times$new), ratio = sprintf("%.2f", median(times$new) / median(times$baseline)))
}
cat(sprintf("\nn = %d, d = 10, 2 threads, median of %d alternating runs each (seconds)\n",
            n, reps))
cat("cross: the n x n kernel by kernel_cross(); fit: kpca(x, features = 5)\n")
cat("ratio: new / baseline (below 1: faster now)\n\n")
print(do.call(rbind, rows), row.names = FALSE, digits = 3)
