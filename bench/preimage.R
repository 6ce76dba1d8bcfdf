# preimage() against scikit-learn's KernelPCA(fit_inverse_transform = TRUE):
# agreement of the pre-images and time, side by side in the same run.
#   Rscript bench/preimage.R [n ...]        (default n = 500 1000 2000)
# Both fit 8 components of a Gaussian kernel (sigma = gamma = 0.1, ridge =
# alpha = 0.5, each with its default eigensolver: Lanczos / ARPACK from 200
# rows) on n x 5 data and map the training scores and 200 new points back.
# fastkpca's time is split into the fit and the pre-images. Needs a python3
# (or python) on the PATH that imports sklearn; each one on the PATH is tried,
# after /usr/bin/python3.
# Times are elapsed seconds and, in brackets, CPU seconds of the process
# (R: user + system; Python: time.process_time()): on a machine shared with
# other jobs the CPU times are the steadier comparison (both sides run their
# BLAS on one thread here). The floor is one Cholesky solve of an n x n
# positive definite system with R's LAPACK (chol() and two triangular
# solves), the one step neither side can skip: floor_ratio is fastkpca's
# pre-image time over it, CPU seconds.
library(fastkpca)
args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.integer(args) else c(500L, 1000L, 2000L)

find_python <- function() {
  dirs <- unique(strsplit(Sys.getenv("PATH"), .Platform$path.sep, fixed = TRUE)[[1L]])
  for (py in c("/usr/bin/python3",
              file.path(rep(dirs[nzchar(dirs)], each = 2L), c("python3", "python")))) {
    if (!file.exists(py) || dir.exists(py)) next
    ok <- suppressWarnings(system2(py, c("-c", shQuote("import sklearn")),
                                   stdout = FALSE, stderr = FALSE))
    if (identical(as.integer(ok), 0L)) return(py)
  }
  stop("no python with scikit-learn on the PATH")
}
py <- find_python()
dir <- tempfile("bench-preimage")
dir.create(dir)
script <- file.path(dir, "sk.py")
writeLines(c(
  "import sys, time, numpy as np",
  "from sklearn.decomposition import KernelPCA",
  "X = np.loadtxt(sys.argv[1], delimiter=','); Y = np.loadtxt(sys.argv[2], delimiter=',')",
  "t0 = time.perf_counter(); c0 = time.process_time()",
  "kp = KernelPCA(n_components=8, kernel='rbf', gamma=0.1,",
  "               fit_inverse_transform=True, alpha=0.5).fit(X)",
  "a = kp.inverse_transform(kp.transform(X)); b = kp.inverse_transform(kp.transform(Y))",
  "t1 = time.perf_counter(); c1 = time.process_time()",
  "np.savetxt(sys.argv[3], np.vstack([a, b]), delimiter=',')",
  "print(t1 - t0); print(c1 - c0)"), script)

cpu <- function() { p <- proc.time(); p[["user.self"]] + p[["sys.self"]] }
# one Cholesky solve of an n x n positive definite system with 5 right-hand
# sides, in CPU seconds
cholesky_floor <- function(n) {
  K <- exp(-0.1 * as.matrix(stats::dist(matrix(rnorm(n * 8), n)))^2) + diag(0.5, n)
  X <- matrix(rnorm(n * 5), n)
  c0 <- cpu()
  R <- chol(K)
  B <- backsolve(R, backsolve(R, X, transpose = TRUE))
  cpu() - c0
}

cat(sprintf("python: %s; machine shared with other jobs: read the ratios\n", py))
cat(sprintf("%6s %14s %14s %14s %14s %12s %9s %10s %12s\n", "n", "fit_s", "preimage_s",
            "fastkpca_s", "sklearn_s", "ratio(cpu)", "floor_s", "floor_ratio",
            "max_abs_diff"))
both <- function(e, c) sprintf("%6.2f [%5.2f]", e, c)
set.seed(1)
for (n in sizes) {
  x <- matrix(rnorm(n * 5), n, 5)
  y <- matrix(rnorm(200 * 5), 200, 5)
  fx <- file.path(dir, "x.csv"); fy <- file.path(dir, "y.csv"); fo <- file.path(dir, "o.csv")
  write.table(format(x, digits = 17), fx, sep = ",", row.names = FALSE, col.names = FALSE, quote = FALSE)
  write.table(format(y, digits = 17), fy, sep = ",", row.names = FALSE, col.names = FALSE, quote = FALSE)
  sk <- as.numeric(system2(py, shQuote(c(script, fx, fy, fo)), stdout = TRUE))
  sk_out <- as.matrix(read.csv(fo, header = FALSE))
  t0 <- proc.time()[["elapsed"]]; c0 <- cpu()
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = 8)
  t1 <- proc.time()[["elapsed"]]; c1 <- cpu()
  a <- preimage(fit, ridge = 0.5)
  b <- preimage(fit, predict(fit, y), ridge = 0.5)
  t2 <- proc.time()[["elapsed"]]; c2 <- cpu()
  floor_s <- cholesky_floor(n)
  diff <- max(abs(rbind(a, b) - sk_out))
  cat(sprintf("%6d %14s %14s %14s %14s %5.2f [%4.2f] %9.2f %10.2f %12.3g\n", n,
              both(t1 - t0, c1 - c0), both(t2 - t1, c2 - c1), both(t2 - t0, c2 - c0),
              both(sk[1L], sk[2L]), sk[1L] / (t2 - t0), sk[2L] / (c2 - c0), floor_s,
              (c2 - c1) / floor_s, diff))
}
unlink(dir, recursive = TRUE)

# Memory of the fixed-point pre-images (method = "fixed-point", 20
# iterations at most) of all n training scores, for the largest size: the
# peak of R's heap above what it held before, from gc() (R_alloc'ed scratch
# of the C code counts, as R's own matrices do), against one n x n matrix.
n <- max(sizes)
set.seed(2)
x <- matrix(rnorm(n * 5), n, 5)
fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = 8)
start <- preimage(fit, ridge = 0.5)
invisible(gc(reset = TRUE))
before <- sum(gc()[, 2L])
fp <- suppressWarnings(preimage(fit, ridge = 0.5, method = "fixed-point",
                                control = list(maxit = 20)))
peak <- sum(gc()[, 6L]) - before
cat(sprintf("\nfixed-point pre-images of %d training rows: peak heap growth %.0f MB (one n x n matrix: %.0f MB)\n",
            n, peak, 8 * n^2 / 2^20))
