# kcca() against kernlab::kcca(), and kcca() alone up to 10^5 rows.
#   OPENBLAS_NUM_THREADS=1 Rscript bench/kcca.R [largest_n] [kernlab_sizes]
# e.g. Rscript bench/kcca.R 1e5 400,1000,2000 (the defaults).
# Two views sharing a nonlinear signal (y depends on x through cos(pi t)),
# rbfdot with sigma = 0.5 for both, ncomps = 4 (two +-rho pairs).
#
# Part 1, kernlab's formulation: kcca(formulation = "kernlab") against
# kernlab::kcca() on the same data, at each size of kernlab_sizes. kernlab
# forms 2n x 2n matrices and calls a non-symmetric eigensolver on one;
# fastkpca solves the same problem from one symmetric eigendecomposition
# per view and the SVD of an n x n core, and never calls kernlab (kernlab's
# namespace is loaded in fastkpca's child too: it changes nothing). The
# targets of issue 39: fastkpca at least 5 times faster (CPU seconds) and
# at most a third of kernlab's peak memory. The centered formulation is
# timed beside them.
# Each call runs alone in a fresh child R process (callr), after a small
# warm-up call of the same function (so that loading and byte-compiling
# code is not counted), on data the child draws from a fixed seed (the same
# in every child). Measured there:
#   - cpu: user + system seconds (the machine may be shared: the elapsed
#     seconds measure the load as much as the code; the load average is
#     printed before each run);
#   - peak_mb: the peak resident memory of the child during the call above
#     its resident memory before it (Linux: VmHWM reset through
#     /proc/self/clear_refs, then read from /proc/self/status). It counts
#     everything the process holds, R's heap, LAPACK's workspace and the
#     garbage R's collector has not yet reclaimed, under R's default
#     collector settings, as a user's session would. NA elsewhere.
#   - kcor_gap: the largest difference between the two kcor() vectors
#     taken as pairs (kernlab orders the two members of a pair as its
#     rounding falls; fastkpca puts +rho first).
# kernlab at n = 2000 takes about ten minutes of CPU on R's reference BLAS.
#
# Part 2: kcca(formulation = "centered") alone on 10^4 to 10^5 rows, in
# this process; its memory is the peak of R's heap (gc()), which counts R
# objects and R_alloc scratch.
# Needs: fastkpca, kernlab, callr.
args <- commandArgs(trailingOnly = TRUE)
largest <- if (length(args) >= 1L && !is.na(as.numeric(args[1L]))) as.numeric(args[1L]) else 1e5
kernlab_sizes <- if (length(args) >= 2L) as.numeric(strsplit(args[2L], ",")[[1]]) else
  c(400, 1000, 2000)
for (p in c("fastkpca", "kernlab", "callr"))
  if (!requireNamespace(p, quietly = TRUE)) stop("bench/kcca.R needs the package ", p)
library(fastkpca)

views <- function(n) {
  t <- runif(n, -1, 1)
  list(x = cbind(t, rnorm(n)), y = cbind(cos(pi * t) + rnorm(n, sd = 0.1), rnorm(n)))
}

# One call of kcca (`what`: "kernlab" for kernlab::kcca(), "fastkpca" or
# "centered" for the two formulations of fastkpca's) on n rows, in a fresh
# child process; see the header for what is measured.
measure_in_child <- function(n, what) {
  callr::r(function(n, what, views) {
    suppressPackageStartupMessages(library(fastkpca))
    loadNamespace("kernlab")
    call <- function(v) switch(what,
      kernlab = kernlab::kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 4),
      fastkpca = kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 4, formulation = "kernlab"),
      centered = kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 4, formulation = "centered"))
    set.seed(2)
    invisible(call(views(30)))  # warm-up
    set.seed(1)
    v <- views(n)
    status_mb <- function(field) {
      if (!file.exists("/proc/self/status")) return(NA_real_)
      line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
      as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", line)) / 1024
    }
    invisible(gc())
    reset <- tryCatch({ cat("5", file = "/proc/self/clear_refs"); TRUE },
                      error = function(e) FALSE, warning = function(w) FALSE)
    before <- status_mb("VmRSS")
    t <- system.time(fit <- call(v))
    peak <- if (reset) status_mb("VmHWM") - before else NA_real_
    kcor <- if (what == "kernlab") kernlab::kcor(fit) else kcor(fit)
    list(cpu = t[["user.self"]] + t[["sys.self"]], seconds = t[["elapsed"]], peak_mb = peak,
         kcor = kcor)
  }, args = list(n, what, views), libpath = .libPaths())
}

# The largest difference between two kcor vectors of +-rho pairs, each
# pair put +rho first.
pair_gap <- function(a, b) {
  plus_first <- function(k) {
    for (j in seq(1L, length(k) - 1L, by = 2L))
      if (k[j] < k[j + 1L]) k[c(j, j + 1L)] <- k[c(j + 1L, j)]
    k
  }
  max(abs(plus_first(a) - plus_first(b)))
}

load_average <- function() {
  if (file.exists("/proc/loadavg")) as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1])
  else NA_real_
}

rows <- list()
for (n in kernlab_sizes) {
  load <- load_average()
  k <- measure_in_child(n, "kernlab")
  f <- measure_in_child(n, "fastkpca")
  c0 <- measure_in_child(n, "centered")
  rows[[length(rows) + 1L]] <- data.frame(
    n = n, load = load,
    kernlab_cpu = round(k$cpu, 2), kernlab_s = round(k$seconds, 2), kernlab_mb = round(k$peak_mb, 1),
    fastkpca_cpu = round(f$cpu, 2), fastkpca_s = round(f$seconds, 2), fastkpca_mb = round(f$peak_mb, 1),
    speedup = round(k$cpu / max(f$cpu, 1e-3), 1),
    memory_share = round(f$peak_mb / k$peak_mb, 3),
    centered_cpu = round(c0$cpu, 3), centered_mb = round(c0$peak_mb, 1),
    kcor_gap = signif(pair_gap(k$kcor, f$kcor), 2))
  print(rows[[length(rows)]], row.names = FALSE)  # as each size finishes
}
table <- do.call(rbind, rows)
cat("\nkernlab::kcca() and kcca(formulation = \"kernlab\") on the same data",
    "(CPU and elapsed seconds, peak resident MB above the start; load: the load average before):\n")
print(table, row.names = FALSE)
cat(sprintf("\ntargets: speedup >= 5 (%s), memory_share <= 1/3 (%s)\n",
            if (all(table$speedup >= 5)) "met at every n" else "NOT met at every n",
            if (all(table$memory_share <= 1 / 3, na.rm = TRUE)) "met at every n" else
              "NOT met at every n"))

# Elapsed and CPU seconds and peak heap (MB) of one call in this process.
measure <- function(expr) {
  gc(reset = TRUE)
  t <- system.time(value <- force(expr))
  peak <- sum(gc()[, 6L])
  list(value = value, seconds = t[["elapsed"]],
       cpu = t[["user.self"]] + t[["sys.self"]], mb = peak)
}

big <- list()
set.seed(1)
for (n in c(1e4, 3e4, 1e5)) {
  if (n > largest) break
  v <- views(n)
  f <- measure(kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 2, max_rank = 300,
                     formulation = "centered"))
  big[[length(big) + 1L]] <- data.frame(
    n = n, seconds = f$seconds, cpu = f$cpu, peak_mb = f$mb, n_by_n_mb = 8 * n^2 / 2^20,
    rank_x = f$value$xfactor$rank, rank_y = f$value$yfactor$rank,
    residual_x = signif(f$value$xfactor$residual, 2), kcor1 = round(kcor(f$value)[1], 4))
}
if (length(big)) {
  cat("\nkcca(formulation = \"centered\") alone (the n x n column is what one kernel matrix would take):\n")
  print(do.call(rbind, big), row.names = FALSE)
}
