# Benchmark of issue 45, item 3: the kernels of an inner product or a
# distance on wide data (many more columns than rows), where their blocks
# are matrix products (src/kernel_fast.c, from the tuning setting
# wide_min_d's columns on), against the machine's product rate and kernlab.
#   Rscript bench/wide.R                                      # the fastkpca library() finds
#   Rscript bench/wide.R base=LIB new=LIB                    # each build in turn
#   FASTKPCA_BENCH_SHAPES=500x200000,2000x20000 FASTKPCA_BENCH_REPEATS=3 \
#     FASTKPCA_BENCH_KERNLAB=1 FASTKPCA_BENCH_THREADS=2 Rscript bench/wide.R ...
# For each shape n x d (default 500 x 200000 and 2000 x 20000; rows of 5
# strong directions plus N(0, 1) noise, wide_rows()) and each build, one child process (R_LIBS set to the
# build's library) measures, on FASTKPCA_BENCH_THREADS threads (default 2):
#   km_rbf, km_vanilla, km_poly, km_laplace: kernel_matrix(k, x), square
#     (rbfdot sigma = 1/d, vanilladot, polydot degree 2 scale 1/d,
#     laplacedot sigma = 1/sqrt(d));
#   cross: kernel_matrix(rbfdot, z, x), z 200 new rows;
#   predict: predict() of z on kpca(x, rbfdot, features = 5);
#   kpca5: kpca(x, rbfdot, features = 5);
# and, first, the product rate: fastkpca:::tile_product() of a 400 x
# 60000 by a 60000 x 400 matrix into a preallocated result on the same
# threads (bench/product-rate.R's product; the 3000 x 3000 one timed its
# result's allocation and copy, most of its time here). A further child times kernlab's
# kernelMatrix() square and cross and kpca(features = 5) (one thread: it has
# none of its own; FASTKPCA_BENCH_KERNLAB=0 skips it; they run a minute or
# more each at these shapes).
# Printed per case: seconds (the median of FASTKPCA_BENCH_REPEATS runs,
# default 3; kernlab's one run), GFLOP/s and the share of the product rate
# ("of rate": the first measured; "near": the mean of those measured just
# before and after the case, as the load of a shared machine moves; "cpu":
# the same per CPU-second, user + system time of all threads, which the
# load moves least),
# with a multiply-add counted as 2 flops throughout: the product 2 x 400^2 x 60000,
# the square kernel n^2 d (its lower triangle's n^2 / 2 inner products),
# the cross matrix and predict() 2 n m d (m = 200 rows); kpca5 and the
# kernlab columns as seconds and kernlab's time over the build's; and the
# R heap kernel_matrix() took beyond its result (its scratch is R_alloc's),
# as a share of the data's size. The load average is printed before each
# child.
args <- commandArgs(trailingOnly = TRUE)
script <- tryCatch(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE))), error = function(e) "bench/wide.R")
load_average <- function()
  paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
env_number <- function(name, default) {
  v <- Sys.getenv(name)
  if (nzchar(v)) as.numeric(v) else default
}
repeats <- env_number("FASTKPCA_BENCH_REPEATS", 3)
threads <- as.integer(env_number("FASTKPCA_BENCH_THREADS", 2))
m_new <- 200L
# the median of r runs: elapsed seconds, with attribute "cpu" the median CPU
# seconds (user + system, all threads), which a busy machine changes less
median_time <- function(f, r = repeats) {
  t <- vapply(seq_len(r), function(i) {
    s <- system.time(f())
    c(s[["elapsed"]], s[["user.self"]] + s[["sys.self"]])
  }, c(0, 0))
  structure(median(t[1L, ]), cpu = median(t[2L, ]))
}
# rows of 5 strong directions and N(0, 1) noise (on noise alone the
# centered kernel is nearly diagonal: kpca() warns, and its eigenvalues have
# no gap for the solver to find)
wide_rows <- function(n, d, seed) {
  set.seed(seed)
  # (each coordinate of variance 1: 5 x 9 + 1, scaled back)
  (matrix(rnorm(n * 5, sd = 3), n, 5) %*% matrix(rnorm(5 * d), 5, d) + rnorm(n * d)) / sqrt(46)
}
gaussian_rows <- function(n, d, seed) {
  set.seed(seed)
  matrix(rnorm(n * d), n, d)
}

# ---- a child: one build (or kernlab) at one shape ----
if (length(args) >= 1L && args[1L] == "child") {
  what <- args[2L]
  n <- as.integer(args[3L])
  d <- as.integer(args[4L])
  out <- list()
  x <- wide_rows(n, d, 1)
  z <- wide_rows(m_new, d, 2)
  if (what == "kernlab") {
    suppressPackageStartupMessages(library(kernlab))
    k <- rbfdot(sigma = 1 / d)
    out$kernlab_km <- system.time(kernelMatrix(k, x))[["elapsed"]]
    out$kernlab_cross <- system.time(kernelMatrix(k, z, x))[["elapsed"]]
    out$kernlab_kpca5 <- system.time(kpca(x, kernel = "rbfdot", kpar = list(sigma = 1 / d),
                                          features = 5))[["elapsed"]]
  } else {
    suppressPackageStartupMessages(library(fastkpca))
    a <- gaussian_rows(400, 60000, 3)
    b <- gaussian_rows(60000, 400, 4)
    c0 <- matrix(0, 400, 400)
    fastkpca:::tile_product(a, b, c = c0, threads = threads)
    out$product <- median_time(function() fastkpca:::tile_product(a, b, c = c0, threads = threads))
    kernels <- list(km_rbf = rbfdot(sigma = 1 / d), km_vanilla = vanilladot(),
                    km_poly = polydot(degree = 2, scale = 1 / d),
                    km_laplace = laplacedot(sigma = 1 / sqrt(d)))
    # the product rate again before each case: the load of a shared machine
    # moves within a run (the rate of a case is the mean of the two around it)
    rate <- function() median_time(function() fastkpca:::tile_product(a, b, c = c0,
                                                                      threads = threads), 1)
    out$rates <- list(rate())
    for (name in names(kernels)) {
      out[[name]] <- median_time(function() kernel_matrix(kernels[[name]], x, threads = threads))
      out$rates <- c(out$rates, list(rate()))
    }
    k <- kernels$km_rbf
    out$cross <- median_time(function() kernel_matrix(k, z, x, threads = threads))
    out$rates <- c(out$rates, list(rate()))
    fit <- kpca(x, kernel = k, features = 5, threads = threads)
    out$predict <- median_time(function() predict(fit, z))
    out$rates <- c(out$rates, list(rate()))
    out$kpca5 <- median_time(function() kpca(x, kernel = k, features = 5, threads = threads))
    # the R heap that kernel_matrix() takes beyond its result (R_alloc's
    # scratch is on it), as a share of the data: a copy of the points is 1
    gc(reset = TRUE)
    base <- gc()["Vcells", "used"]
    km <- kernel_matrix(k, x, threads = threads)
    out$km_peak <- ((gc()["Vcells", "max used"] - base) * 8 - 8 * length(km)) / (8 * length(x))
  }
  saveRDS(out, args[5L])
  quit(save = "no")
}

# ---- the parent: the children, then the table ----
builds <- if (length(args)) args else "default="
labels <- sub("=.*", "", builds)
libs <- sub("^[^=]*=", "", builds)
shapes <- strsplit(Sys.getenv("FASTKPCA_BENCH_SHAPES", "500x200000,2000x20000"), ",")[[1]]
run_child <- function(what, lib, n, d) {
  out <- tempfile(fileext = ".rds")
  env <- if (nzchar(lib)) sprintf("R_LIBS=%s", paste(c(normalizePath(lib), .libPaths()),
                                                     collapse = ":")) else character()
  cat(sprintf("  [%s, %d x %d: load %s]\n", what, n, d, load_average()))
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c(shQuote(script), "child", what, n, d, out), env = env)
  if (status != 0) stop("the child for ", what, " failed", call. = FALSE)
  readRDS(out)
}
flops <- function(case, n, d) switch(case,
  km_rbf = , km_vanilla = , km_poly = , km_laplace = as.double(n)^2 * d,
  cross = , predict = 2 * as.double(n) * m_new * d, NA_real_)
cat(sprintf("bench/wide.R: %d threads, median of %d; load average %s\n", threads, repeats,
            load_average()))
for (shape in shapes) {
  nd <- as.integer(strsplit(shape, "x")[[1]])
  n <- nd[1L]
  d <- nd[2L]
  cat(sprintf("\n== %d x %d ==\n", n, d))
  res <- lapply(seq_along(libs), function(i) run_child(labels[i], libs[i], n, d))
  names(res) <- labels
  kl <- if (env_number("FASTKPCA_BENCH_KERNLAB", 1) != 0)
    run_child("kernlab", "", n, d) else list()
  cases <- c("km_rbf", "km_vanilla", "km_poly", "km_laplace", "cross", "predict", "kpca5")
  kernlab_of <- c(km_rbf = "kernlab_km", cross = "kernlab_cross", kpca5 = "kernlab_kpca5")
  product_flops <- 2 * 400^2 * 60000
  for (b in labels) {
    r <- res[[b]]
    rate <- product_flops / r$product / 1e9
    cat(sprintf("%s: product rate %.1f GFLOP/s (tile_product 400 x 60000 x 400, %.2f s; %.1f per CPU-second)\n",
                b, rate, r$product, product_flops / attr(r$product, "cpu") / 1e9))
    cat(sprintf("  %-11s %8s %8s %8s %8s %8s %10s %9s\n", "case", "seconds", "GFLOP/s",
                "of rate", "near", "cpu", "kernlab s", "kernlab/x"))
    for (i in seq_along(cases)) {
      case <- cases[i]
      s <- r[[case]]
      g <- flops(case, n, d) / s / 1e9
      # the rate measured on either side of the case, wall and CPU
      around <- r$rates[c(i, min(i + 1L, length(r$rates)))]
      near <- mean(vapply(around, function(t) product_flops / t / 1e9, 0))
      near_cpu <- mean(vapply(around, function(t) product_flops / attr(t, "cpu") / 1e9, 0))
      g_cpu <- flops(case, n, d) / attr(s, "cpu") / 1e9
      ks <- if (case %in% names(kernlab_of)) kl[[kernlab_of[[case]]]] else NULL
      pct <- function(v) if (is.na(v)) "" else sprintf("%.0f%%", 100 * v)
      cat(sprintf("  %-11s %8.3f %8s %8s %8s %8s %10s %9s\n", case, s,
                  if (is.na(g)) "" else sprintf("%.1f", g), pct(g / rate), pct(g / near),
                  pct(g_cpu / near_cpu),
                  if (is.null(ks)) "" else sprintf("%.2f", ks),
                  if (is.null(ks)) "" else sprintf("%.1fx", ks / s)))
    }
  }
  for (b in labels)
    cat(sprintf("%s: kernel_matrix()'s peak memory beyond its result: %.3f of the data\n", b,
                res[[b]]$km_peak))
  if (length(labels) > 1L) {
    cat(sprintf("  %s time over %s's:", labels[1L], labels[length(labels)]))
    for (case in cases)
      cat(sprintf(" %s %.2fx", case, res[[1L]][[case]] / res[[length(labels)]][[case]]))
    cat("\n")
  }
}
