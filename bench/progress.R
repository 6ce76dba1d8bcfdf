# The overhead of progress reports (R/progress.R) on exact fits, kpca_cv()
# and preimage().
#   Rscript bench/progress.R [SIZES] [REPEATS]   # default "300,1000,2500", 5
# For each size, the same exact fit (rbfdot, 5 features, solver = "exact")
# with progress off (options(fastkpca.progress = FALSE): no callback at
# all), on with progressr enabled but no handler, and on under a handler
# that receives every signal (progressr's "void" handler inside
# with_progress()), interleaved and repeated; prints the median times and
# their ratios to "off", and the number of signals of one fit.
args <- commandArgs(trailingOnly = TRUE)
sizes <- if (length(args) >= 1) as.integer(strsplit(args[1], ",")[[1]]) else c(300L, 1000L, 2500L)
repeats <- if (length(args) >= 2) as.integer(args[2]) else 5L
suppressPackageStartupMessages({ library(fastkpca); library(progressr) })
options(progressr.enable = TRUE)
handlers("void")

fit_with <- function(mode, x) {
  fit <- function() kpca(x, kpar = list(sigma = 0.05), features = 5, solver = "exact")
  switch(mode,
    off = { old <- options(fastkpca.progress = FALSE); on.exit(options(old)); fit() },
    unhandled = fit(),
    handled = with_progress(fit()))
}
signals <- function(x) {
  n <- 0L
  withCallingHandlers(fit_with("unhandled", x), progression = function(c) n <<- n + 1L)
  n
}
modes <- c("off", "unhandled", "handled")
cat(sprintf("load: %s\n", paste(readLines("/proc/loadavg"), collapse = "")))
for (n in sizes) {
  set.seed(n)
  x <- matrix(rnorm(n * 5), n)
  fit_with("off", x)  # warm up
  times <- matrix(NA_real_, length(modes), repeats, dimnames = list(modes, NULL))
  for (r in seq_len(repeats)) for (m in sample(modes))
    times[m, r] <- system.time(fit_with(m, x))[["elapsed"]]
  med <- apply(times, 1L, stats::median)
  cat(sprintf("n = %5d: off %.4f s, unhandled %.4f s (x%.3f), handled %.4f s (x%.3f); %d signals per fit\n",
              n, med[["off"]], med[["unhandled"]], med[["unhandled"]] / med[["off"]],
              med[["handled"]], med[["handled"]] / med[["off"]], signals(x)))
}
# The cost of one signal, which bounds the overhead whatever the noise of
# the timings above: signals per fit x this, against the fit's time.
p_cost <- function() {
  p <- progressor(steps = 10000L)
  system.time(for (i in 1:10000) p(amount = 1))[["elapsed"]] / 10000
}
cat(sprintf("one signal: %.1f us unhandled, %.1f us handled\n", 1e6 * p_cost(),
            1e6 * with_progress(p_cost())))
