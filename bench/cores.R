# Benchmark: what a second thread can give on this machine at all, the
# ceiling of every "2 threads vs 1" goal. The same product on 1 and on 2
# threads in one process, and the same product on one thread in two
# processes at once against one process alone. Two cores of their own
# give about 2x in both; two threads of one core (SMT), or a host that
# runs the two virtual CPUs on fewer cores than two, give less, for the
# package's code and any other.
#   Rscript bench/cores.R            # both cases, 3 rounds
#   Rscript bench/cores.R rounds=5   # more rounds
# Cases:
#   product  the product rate of bench/product-rate.R (the register
#            tiles, bound by multiply-adds: the unit of bench/run.R's
#            floor), GFLOP/s;
#   wide     kernel_matrix(vanilladot(), x), x 500 x 200000 (the wide
#            products, tile_points()), GFLOP/s of its n^2 d
#            multiply-adds and adds (the lower triangle's).
# Printed: each case's rate on 1 thread, on 2 threads, and the sum of two
# one-thread processes running at once, with the ratios to one thread
# alone; the median of the rounds. Load average before and after.
args <- commandArgs(trailingOnly = TRUE)
rounds <- 3L
for (a in args) if (startsWith(a, "rounds=")) rounds <- as.integer(sub("rounds=", "", a))
script <- tryCatch(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE))), error = function(e) "bench/cores.R")
load_average <- function() paste(scan("/proc/loadavg", what = "", n = 3, quiet = TRUE), collapse = " ")
source(file.path(dirname(script), "product-rate.R"))

# one case in this process: its rate (units a second) on `threads` threads
rate_of <- function(case, threads) {
  suppressPackageStartupMessages(library(fastkpca))
  set.seed(7)
  switch(case,
    product = product_rate(threads) / 1e9,
    wide = {
      x <- matrix(rnorm(500 * 200000), 500)
      s <- system.time(kernel_matrix(vanilladot(), x, threads = threads))[["elapsed"]]
      500^2 * 200000 / s / 1e9
    })
}

if (length(args) >= 1L && args[1L] == "child") {
  # a child: one case on one thread, its rate to a file, started when the
  # file `go` exists (so that two children start together)
  case <- args[2L]; out <- args[3L]; go <- args[4L]
  suppressPackageStartupMessages(library(fastkpca))
  while (!file.exists(go)) Sys.sleep(0.01)
  writeLines(format(rate_of(case, 1L), digits = 17), out)
  quit(save = "no")
}

# two one-thread children at once: the sum of their rates
two_processes <- function(case) {
  dir <- tempfile("cores"); dir.create(dir)
  go <- file.path(dir, "go")
  outs <- file.path(dir, c("a", "b"))
  for (o in outs)
    system2(file.path(R.home("bin"), "Rscript"), c(shQuote(script), "child", case, o, go),
            wait = FALSE)
  Sys.sleep(3)  # both children loaded and waiting
  file.create(go)
  while (!all(file.exists(outs))) Sys.sleep(0.05)
  Sys.sleep(0.1)
  sum(vapply(outs, function(o) as.double(readLines(o)), 0))
}

cat("load before:", load_average(), "\n")
rows <- list()
for (case in c("product", "wide")) {
  one <- two <- pair <- numeric(rounds)
  for (r in seq_len(rounds)) {
    one[r] <- rate_of(case, 1L)
    two[r] <- rate_of(case, 2L)
    pair[r] <- two_processes(case)
  }
  rows[[case]] <- data.frame(case = case, unit = "GFLOP/s",
                             one_thread = median(one), two_threads = median(two),
                             two_processes = median(pair),
                             threads_ratio = median(two) / median(one),
                             processes_ratio = median(pair) / median(one))
}
out <- do.call(rbind, rows)
rownames(out) <- NULL
print(format(out, digits = 3), row.names = FALSE)
cat("load after:", load_average(), "\n")
