# One sparse-data benchmark case, in its own R process (bench/builds.R runs
# it under each build). Usage:
#   Rscript bench/sparse-case.R CASE OUT.rds
# CASE:
#   sparse_predict: predict() of 4000 new rows on an exact fit of 2000
#                   sparse rows (20000 columns, 30 values a row), rbfdot;
#                   the panels of new rows against the training rows;
#   sparse_nystrom: kpca(x, features = 5, landmarks = 400) on 20000 sparse
#                   rows (20000 columns, 30 values a row), rbfdot: the
#                   statistics' blocks of rows against the landmarks;
#   dense_kernel:   kernel_matrix(rbfdot(0.05), x) of 3000 x 50 dense rows;
#   dense_predict:  predict() of 2000 new dense rows on a fit of 8000
#                   (d = 10, rbfdot, 5 features, one thread; issue 52):
#                   the median of 5 calls.
# Writes list(seconds) to OUT.rds: the case's own step only.
args <- commandArgs(trailingOnly = TRUE)
case <- args[1]; out <- args[2]
suppressPackageStartupMessages(library(fastkpca))
sparse_rows_of <- function(n, d, per_row, seed) {
  set.seed(seed)
  Matrix::sparseMatrix(i = rep(seq_len(n), each = per_row),
                       j = as.vector(replicate(n, sample.int(d, per_row))),
                       x = rexp(n * per_row), dims = c(n, d))
}
seconds <- switch(case,
  sparse_predict = {
    x <- sparse_rows_of(2000, 20000, 30, 1)
    z <- sparse_rows_of(4000, 20000, 30, 2)
    fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.01), features = 5)
    system.time(predict(fit, z))[["elapsed"]]
  },
  sparse_nystrom = {
    x <- sparse_rows_of(20000, 20000, 30, 3)
    system.time(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.01), features = 5,
                     landmarks = 400))[["elapsed"]]
  },
  dense_kernel = {
    set.seed(4)
    x <- matrix(rnorm(3000 * 50), 3000, 50)
    system.time(kernel_matrix(rbfdot(0.05), x))[["elapsed"]]
  },
  dense_predict = {
    set.seed(5)
    x <- matrix(rnorm(8000 * 10), 8000)
    z <- matrix(rnorm(2000 * 10), 2000)
    fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = 5,
                solver = "iterative", threads = 1)
    invisible(predict(fit, z))
    stats::median(replicate(5, system.time(predict(fit, z))[["elapsed"]]))
  },
  stop("unknown case ", case))
saveRDS(list(seconds = seconds), out)
