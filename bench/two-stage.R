# Benchmark: the exact solver's reductions, one stage (dsytrd's steps) and
# two (dense to band to tridiagonal, src/band_reduction.c), on the default
# call kpca(x) (rbfdot, sigma 0.1, features = 0, th = 1e-4; x Gaussian,
# d = 10), where the crossover (the tuning setting band_min_rows) is chosen; and, with
# an optimized BLAS, its own dsyevr.
#   Rscript bench/two-stage.R                      # n = 1000 ... 6000, 1 and 2 threads
#   Rscript bench/two-stage.R n=600,3000 threads=2 rounds=3
#   Rscript bench/two-stage.R n=3000 openblas      # with OpenBLAS's dsyevr too
# Each fit runs in its own R process ("child"), so that its peak memory
# (VmHWM, less what the process held before the fit) is its own; the cases
# alternate within each round, and each row is the median of its rounds.
# Printed: seconds, components, the peak rise as a multiple of 8 n^2 bytes
# (and less the returned alpha and rotated), and the two-stage time as a
# fraction of the one-stage time at the same n and threads. With
# "openblas", R's eigen(Kc, symmetric = TRUE) (dsyevr, all pairs) on the
# same centered kernel matrix under OpenBLAS (LD_PRELOAD, bench/blas.R),
# and fastkpca's fits on that BLAS (one stage: LAPACK's own dsytrd and
# dormtr on OpenBLAS; two: the same two stages on the tiles), in the same
# run.
# Then each step's wall seconds (the stage clock of dense_eigen(),
# fastkpca:::stage_seconds(), the median of the rounds) and, for the steps
# made of products, the fraction of the product rate it ran at: its
# minimal flops / its seconds / the rate, the rate measured in this run as
# bench/run.R measures it (bench/product-rate.R on each thread count).
# The flops counted
# (k the components kept, b the band width, 48):
#   stage1       4/3 n^3: the two-sided update of the trailing matrix per
#                panel (a symmetric product and a rank-2b update), the
#                count of dsytrd (LAWN 41) and of dense-to-band alike; for
#                the one-stage fit, its whole reduction (dsytrd's steps)
#   stage2       6 b n^2: n^2 / (2b) bulge-chasing steps of about 12 b^2
#                flops each (two-sided on a b x b block, from the right on
#                the block below, a new reflector from the left: 6 b^2
#                multiply-adds, band_chase() in src/band_reduction.c);
#                Haidar, Ltaief and Dongarra (SC'11) count 6 n^2 b
#   back_stage2  2 n^2 k: n^2 / (2b) reflectors of length b, 4 b k flops
#                each on k vectors (the blocks of g sweeps do (b + g) / b
#                times that, zeros included)
#   back_stage1  2 n^2 k: dormqr's 2 k m (2 n - m) flops (LAWN 41) with
#                m = n reflectors of an n-row Q
#   certificate  2 n^2 k: K (H V), the kernel values recomputed besides
#   tridiagonal  (MRRR) O(n k), not products: seconds only, as fill and
#                center (O(n^2 d) kernel values, O(n^2) passes)
args <- commandArgs(trailingOnly = TRUE)
script <- tryCatch(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE))), error = function(e) "bench/two-stage.R")

vm_hwm <- function() {
  as.double(gsub("[^0-9]", "", grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE))) * 1024
}
load_average <- function() paste(scan("/proc/loadavg", what = "", n = 3, quiet = TRUE), collapse = " ")

# ---- a child: one fit ----
if (length(args) >= 1L && args[1L] == "child") {
  what <- args[2L]; n <- as.integer(args[3L]); threads <- as.integer(args[4L]); out <- args[5L]
  suppressPackageStartupMessages(library(fastkpca))
  set.seed(42)
  x <- matrix(rnorm(n * 10), n, 10)
  fastkpca:::set_tuning(band_min_rows = switch(what, one = 1e9, 0))
  invisible(kpca(x[1:100, ], threads = threads))
  invisible(gc())
  before <- vm_hwm()
  if (what == "dsyevr") {
    # kernlab's computation on this BLAS: the centered kernel matrix, then
    # every eigenpair (R's eigen(): dsyevr)
    K <- kernel_matrix(rbfdot(sigma = 0.1), x, threads = threads)
    K <- K - rowMeans(K)
    K <- t(t(K) - colMeans(K))
    t0 <- proc.time()[["elapsed"]]
    e <- eigen(K / n, symmetric = TRUE)
    secs <- proc.time()[["elapsed"]] - t0
    res <- list(seconds = secs, comps = sum(e$values > 1e-4), outputs = 0)
  } else {
    t0 <- proc.time()[["elapsed"]]
    fit <- kpca(x, threads = threads)
    secs <- proc.time()[["elapsed"]] - t0
    res <- list(seconds = secs, comps = length(fit$eig),
                outputs = as.double(object.size(fit$alpha) + object.size(fit$rotated)),
                stages = fastkpca:::stage_seconds())
  }
  res$rise <- vm_hwm() - before
  res$blas <- extSoftVersion()[["BLAS"]]
  saveRDS(res, out)
  quit(save = "no")
}

# ---- the runner ----
arg_list <- function(name, default) {
  hit <- grep(sprintf("^%s=", name), args, value = TRUE)
  if (length(hit)) as.integer(strsplit(sub(".*=", "", hit[1]), ",")[[1]]) else default
}
ns <- arg_list("n", c(1000L, 2000L, 3000L, 4000L, 6000L))
threads_list <- arg_list("threads", c(1L, 2L))
rounds <- arg_list("rounds", 1L)
openblas <- "openblas" %in% args
if (openblas) {
  source(file.path(dirname(script), "blas.R"))
  openblas_env <- blas_env("openblas")
}

run_child <- function(what, n, threads, env = character()) {
  out <- tempfile(fileext = ".rds")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    shQuote(c(script, "child", what, n, threads, out)), env = env)
  if (status != 0L || !file.exists(out)) return(NULL)
  readRDS(out)
}

# the product rate on each thread count: the unit of the fractions
source(file.path(dirname(script), "product-rate.R"))
band <- 48
stage_flops <- function(n, k) c(stage1 = 4 / 3 * n^3, stage2 = 6 * band * n^2,
                                 back_stage2 = 2 * n^2 * k, back_stage1 = 2 * n^2 * k,
                                 certificate = 2 * n^2 * k)

cat(sprintf("load before: %s\n", load_average()))
rates <- vapply(threads_list, product_rate, 0)
names(rates) <- threads_list
cat(sprintf("product rate: %s GFLOP/s (tile_product, 3000 x 3000, on %s threads)\n",
            paste(sprintf("%.1f", rates / 1e9), collapse = ", "),
            paste(threads_list, collapse = ", ")))
stage_rows <- list()
whats <- c("one", "two", if (openblas) c("openblas_one", "openblas_two", "dsyevr"))
rows <- list()
for (round in seq_len(rounds)) for (n in ns) for (th in threads_list) for (what in whats) {
  env <- if (grepl("openblas|dsyevr", what)) openblas_env else character()
  r <- run_child(sub("openblas_", "", what), n, th, env)
  if (is.null(r)) next
  rows[[length(rows) + 1L]] <- data.frame(what = what, n = n, threads = th,
    seconds = r$seconds, comps = r$comps, rise_n2 = r$rise / (8 * n^2),
    rise_less_outputs_n2 = (r$rise - r$outputs) / (8 * n^2), blas = r$blas)
  if (!is.null(r$stages))
    stage_rows[[length(stage_rows) + 1L]] <- data.frame(what = what, n = n, threads = th,
      comps = r$comps, stage = names(r$stages), seconds = unname(r$stages))
}
table <- do.call(rbind, rows)
table <- aggregate(cbind(seconds, comps, rise_n2, rise_less_outputs_n2) ~ what + n + threads + blas,
                   data = table, FUN = median)
one <- table$seconds[match(paste(table$n, table$threads, "one"),
                           paste(table$n, table$threads, table$what))]
table$of_one_stage <- table$seconds / one
table <- table[order(table$n, table$threads, table$what), ]
num <- vapply(table, is.numeric, TRUE)
table[num] <- lapply(table[num], function(v) signif(v, 3))
options(width = 200)
print(table, row.names = FALSE)
cat(sprintf("load after: %s\n", load_average()))
cat("one: one-stage reduction (band_min_rows = 1e9); two: two stages (0);\n",
    "openblas_one, openblas_two: the same under OpenBLAS; dsyevr: eigen() of the centered kernel\n",
    "matrix under OpenBLAS (every pair; not the kernel fill);\n",
    "rise_n2: peak resident rise / (8 n^2 bytes); of_one_stage: seconds / the one-stage fit's\n")

# ---- the stages ----
if (length(stage_rows)) {
  st <- aggregate(seconds ~ what + n + threads + comps + stage, do.call(rbind, stage_rows),
                  FUN = median)
  order_of <- c("fill", "center", "stage1", "stage2", "tridiagonal", "back_stage2",
                "back_stage1", "certificate", "other")
  cases <- unique(st[c("what", "n", "threads", "comps")])
  cases <- cases[order(cases$n, cases$threads, cases$what), ]
  secs_table <- do.call(rbind, lapply(seq_len(nrow(cases)), function(i) {
    c_i <- cases[i, ]
    s <- st[st$what == c_i$what & st$n == c_i$n & st$threads == c_i$threads, ]
    v <- setNames(s$seconds, s$stage)[order_of]
    flops <- stage_flops(c_i$n, c_i$comps)
    rate <- rates[[as.character(c_i$threads)]]
    of_rate <- flops / v[names(flops)] / rate
    of_rate[v[names(flops)] == 0] <- NA  # a step this fit does not run
    cbind(c_i, as.data.frame(as.list(round(v, 3))), total = round(sum(v), 3),
          setNames(as.data.frame(as.list(round(of_rate, 2))), paste0(names(flops), "_rate")))
  }))
  cat("\nstage seconds (the stage clock, median of the rounds), then the fraction of the\n",
      "product rate each product step ran at (its minimal flops / seconds / rate):\n", sep = "")
  print(secs_table, row.names = FALSE)
  cat("stage1 = 4/3 n^3, stage2 = 6 b n^2 (b = 48), back_stage2 = back_stage1 = certificate\n",
      "= 2 n^2 k flops; for \"one\", stage1 is dsytrd's whole reduction (4/3 n^3)\n", sep = "")
}
