# Benchmark: the randomized solver against the Lanczos solver and against
# scikit-learn's KernelPCA(eigen_solver = "randomized"), in one run.
#   Rscript bench/randomized.R [N ...]        # default: 3000 10000 20000
# Environment: RB_FEATURES (default "5,20,100"), RB_THREADS (default 2),
# RB_PYTHON (default /usr/bin/python3, which has scikit-learn).
# Data: n Gaussian rows, d = 10, column j with standard deviation
# 2^(-(j - 1) / 4) (as bench/nystrom.R), rbfdot with sigma = 0.05.
# For each n and number of components: the seconds of kpca() with solver =
# "iterative" (Lanczos, tol 1e-10: the reference eigenvalues) and
# "randomized" (defaults: oversample 10, power 7), the largest relative
# error of the randomized eigenvalues, and scikit-learn's time and error
# (its eigenvalues_ are those of the centered K; divided by n here). CPU
# seconds are printed beside the wall time: the machine may be shared.
args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args)) as.integer(args) else c(3000L, 10000L, 20000L)
features <- as.integer(strsplit(Sys.getenv("RB_FEATURES", "5,20,100"), ",")[[1]])
threads <- as.integer(Sys.getenv("RB_THREADS", "2"))
python <- Sys.getenv("RB_PYTHON", "/usr/bin/python3")
suppressPackageStartupMessages(library(fastkpca))
options(width = 200)
d <- 10L
sigma <- 0.05

timed <- function(expr) {
  t0 <- proc.time()
  value <- expr
  t <- proc.time() - t0
  list(value = value, wall = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]])
}

py_code <- '
import sys, time, numpy as np
from sklearn.decomposition import KernelPCA
path, n, d, gamma = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
X = np.fromfile(path).reshape(n, d)
for k in [int(v) for v in sys.argv[5].split(",")]:
    t0 = time.perf_counter(); c0 = time.process_time()
    m = KernelPCA(n_components=k, kernel="rbf", gamma=gamma, eigen_solver="randomized",
                  random_state=0).fit(X)
    print(k, time.perf_counter() - t0, time.process_time() - c0,
          " ".join(repr(v) for v in m.eigenvalues_))
'
py_script <- tempfile(fileext = ".py")
writeLines(py_code, py_script)

load_average <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3],
                                 collapse = " ")
rows <- list()
for (n in sizes) {
  set.seed(1)
  x <- sweep(matrix(rnorm(n * d), n, d), 2L, 2^(-(seq_len(d) - 1) / 4), "*")
  data_file <- tempfile(fileext = ".f64")
  writeBin(as.vector(t(x)), data_file)
  sk <- tryCatch(system2("env", c("OPENBLAS_NUM_THREADS=2", "OMP_NUM_THREADS=2", python,
                                  py_script, data_file, n, d, sigma,
                                  paste(features, collapse = ",")), stdout = TRUE),
                 error = function(e) character())
  unlink(data_file)
  for (k in features) {
    cat(sprintf("n = %d, %d components (load %s)\n", n, k, load_average()))
    lz <- timed(kpca(x, kpar = list(sigma = sigma), features = k, solver = "iterative",
                     threads = threads))
    set.seed(2)
    rd <- timed(kpca(x, kpar = list(sigma = sigma), features = k, solver = "randomized",
                     threads = threads))
    ref <- lz$value$eig
    line <- grep(paste0("^", k, " "), sk, value = TRUE)
    sk_wall <- sk_cpu <- sk_err <- NA
    if (length(line) == 1L) {
      f <- as.double(strsplit(line, " +")[[1]])
      sk_wall <- f[2]; sk_cpu <- f[3]
      sk_err <- max(abs(f[-(1:3)][seq_len(k)] / n / ref - 1))
    }
    rows[[length(rows) + 1L]] <- data.frame(
      n = n, k = k, lanczos_s = round(lz$wall, 2), lanczos_cpu = round(lz$cpu, 2),
      randomized_s = round(rd$wall, 2), randomized_cpu = round(rd$cpu, 2),
      randomized_err = signif(max(abs(rd$value$eig / ref - 1)), 2),
      sklearn_s = round(sk_wall, 2), sklearn_cpu = round(sk_cpu, 2),
      sklearn_err = signif(sk_err, 2),
      lanczos_over_randomized = round(lz$wall / rd$wall, 2),
      sklearn_over_randomized = round(sk_wall / rd$wall, 2))
    print(rows[[length(rows)]], row.names = FALSE)
  }
}
cat("\nAll cases (seconds: wall time of the whole fit, kernel included; *_err: largest\n",
    "relative error of the eigenvalues against the Lanczos solver's)\n", sep = "")
print(do.call(rbind, rows), row.names = FALSE)
