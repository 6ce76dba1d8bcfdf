# preimage() against scikit-learn's KernelPCA(fit_inverse_transform = TRUE):
# agreement of the pre-images and time, side by side in the same run.
#   Rscript bench/preimage.R [n ...]        (default n = 500 1000 2000)
# Both fit 8 components of a Gaussian kernel (sigma = gamma = 0.1, ridge =
# alpha = 0.5, each with its default eigensolver: Lanczos / ARPACK from 200
# rows) on n x 5 data and map the training scores and 200 new points back.
# fastkpca's time is split into the fit and the pre-images. Needs a python3 (or python) on the PATH that
# imports sklearn; each one on the PATH is tried.
library(fastkpca)
args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.integer(args) else c(500L, 1000L, 2000L)

find_python <- function() {
  dirs <- unique(strsplit(Sys.getenv("PATH"), .Platform$path.sep, fixed = TRUE)[[1L]])
  for (py in file.path(rep(dirs[nzchar(dirs)], each = 2L), c("python3", "python"))) {
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
  "t0 = time.perf_counter()",
  "kp = KernelPCA(n_components=8, kernel='rbf', gamma=0.1,",
  "               fit_inverse_transform=True, alpha=0.5).fit(X)",
  "a = kp.inverse_transform(kp.transform(X)); b = kp.inverse_transform(kp.transform(Y))",
  "t1 = time.perf_counter()",
  "np.savetxt(sys.argv[3], np.vstack([a, b]), delimiter=',')",
  "print(t1 - t0)"), script)

cat(sprintf("python: %s; machine shared with other jobs: read the ratios\n", py))
cat(sprintf("%6s %8s %11s %12s %12s %8s %14s\n", "n", "fit_s", "preimage_s", "fastkpca_s",
            "sklearn_s", "ratio", "max_abs_diff"))
set.seed(1)
for (n in sizes) {
  x <- matrix(rnorm(n * 5), n, 5)
  y <- matrix(rnorm(200 * 5), 200, 5)
  fx <- file.path(dir, "x.csv"); fy <- file.path(dir, "y.csv"); fo <- file.path(dir, "o.csv")
  write.table(format(x, digits = 17), fx, sep = ",", row.names = FALSE, col.names = FALSE, quote = FALSE)
  write.table(format(y, digits = 17), fy, sep = ",", row.names = FALSE, col.names = FALSE, quote = FALSE)
  sk_time <- as.numeric(system2(py, shQuote(c(script, fx, fy, fo)), stdout = TRUE))
  sk <- as.matrix(read.csv(fo, header = FALSE))
  t0 <- proc.time()[["elapsed"]]
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = 8)
  t1 <- proc.time()[["elapsed"]]
  a <- preimage(fit, ridge = 0.5)
  b <- preimage(fit, predict(fit, y), ridge = 0.5)
  fk_time <- proc.time()[["elapsed"]] - t0
  diff <- max(abs(rbind(a, b) - sk))
  cat(sprintf("%6d %8.3f %11.3f %12.3f %12.3f %8.2f %14.3g\n", n, t1 - t0, fk_time - (t1 - t0),
              fk_time, sk_time, sk_time / fk_time, diff))
}
unlink(dir, recursive = TRUE)
