# Benchmark: every export at 1, 2, 4, 8 and 16 threads or workers, as far
# as the machine has cores (issue 40), with ns per kernel value and the
# share of the time outside the parallel part.
#   R_LIBS=... Rscript bench/threads.R                 # every part
#   R_LIBS=... Rscript bench/threads.R kernels fits   # chosen parts
#   R_LIBS=... Rscript bench/threads.R default        # the default call alone
#   FASTKPCA_BENCH_THREADS=1,2,4 FASTKPCA_BENCH_ROUNDS=3 Rscript bench/threads.R ...
# Every case runs in its own R process (this script, "child CASE THREADS
# OUT"), the median of 3 repeats inside it for the cases under a second;
# the grid of cases and threads is run FASTKPCA_BENCH_ROUNDS times (default
# 1), the rounds one after the other, and each row gives the median of its
# rounds.
# Parts:
#   kernels: kernel_matrix(k, x) (n = 8000, d = 10, rbfdot sigma 0.05:
#            ns per entry of the n x n result), the cross matrix
#            kernel_matrix(k, z, x) (8000 x 8000: ns per value) and
#            predict() of 8000 rows on an 8000-row fit with 5 components
#            (ns per kernel value); kernlab's kernelMatrix() square and cross
#            in the same run (one thread: it has none of its own), and
#            the floor of any n x n result on this machine: R's
#            numeric(n^2), which allocates the memory and writes it once;
#   fits:    the default call kpca(x) at n = 3000 (the exact solver, its
#            two-stage reduction, about 620 components; n from the
#            environment variable FASTKPCA_BENCH_DEFAULT_N),
#            kpca(x, features = 5) at n = 3000 (solver "auto", the
#            iterative one), the exact solver at n = 3000, Nystrom with
#            1000 landmarks at n = 10^5, kcca() (centered formulation) at
#            n = 5000 and kica() at n = 2000 (one thread: it has no
#            threads), in seconds;
#   mf:      the matrix-free fit at n = 20000 (10 features): seconds, passes,
#            CPU ns per kernel value in the passes (their wall time x threads
#            over passes x n^2 / 2), and its serial part measured directly: the
#            passes timed inside the fit, and the fit's time outside them;
#   workers: the same fit under plan(multisession) with k workers of one
#            thread each;
#   busy:    the default threads against one beside two busy processes
#            (bench/busy.R, run from here: its own table).
# Each table row gives the speed-up over 1 thread and the serial fraction
# e that the speed-up s on p threads implies (Karp and Flatt: e = (1/s -
# 1/p) / (1 - 1/p)); from the most threads measured, the speed-up that
# fraction predicts on 16 (1 / (e + (1 - e) / 16)): a prediction, where
# the machine has fewer than 16 cores.
args <- commandArgs(trailingOnly = TRUE)
script <- tryCatch(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE))), error = function(e) "bench/threads.R")
suppressPackageStartupMessages(library(fastkpca))
sigma <- 0.05
d <- 10L

`%||%` <- function(a, b) if (is.null(a)) b else a
load_average <- function() {
  paste(scan("/proc/loadavg", what = "", n = 3, quiet = TRUE), collapse = " ")
}
median_time <- function(f, repeats = 3L) {
  median(vapply(seq_len(repeats), function(i) system.time(f())[["elapsed"]], 0))
}
rows <- function(n, seed) {
  set.seed(seed)
  matrix(rnorm(n * d), n, d)
}

# ---- a child: one case at one number of threads ----
if (length(args) >= 1L && args[1L] == "child") {
  case <- args[2L]
  threads <- as.integer(args[3L])
  out <- list(case = case, threads = threads, load = load_average())
  k <- rbfdot(sigma = sigma)
  n <- switch(case, km = , cross = , predict = , kernlab_km = , kernlab_cross = ,
              floor = 8000L, auto5 = , exact5 = 3000L, nystrom = 1e5L, kcca = 5000L,
              default = as.integer(Sys.getenv("FASTKPCA_BENCH_DEFAULT_N", "3000")),
              kica = 2000L, mf = , workers = 20000L)
  x <- rows(n, 1)
  values <- NA_real_
  if (case == "km") {
    kernel_matrix(k, x[1:100, ], threads = threads)
    out$seconds <- median_time(function() kernel_matrix(k, x, threads = threads))
    values <- as.double(n)^2
  } else if (case == "cross") {
    z <- rows(n, 2)
    out$seconds <- median_time(function() kernel_matrix(k, z, x, threads = threads))
    values <- as.double(n)^2
  } else if (case == "predict") {
    fit <- kpca(x, kernel = k, features = 5, threads = threads)
    z <- rows(n, 2)
    out$seconds <- median_time(function() predict(fit, z))
    values <- as.double(n)^2
  } else if (case == "floor") {
    out$seconds <- median_time(function() numeric(as.double(n)^2))
    values <- as.double(n)^2
  } else if (case %in% c("kernlab_km", "kernlab_cross")) {
    suppressPackageStartupMessages(library(kernlab))
    kk <- kernlab::rbfdot(sigma = sigma)
    z <- rows(n, 2)
    out$seconds <- median_time(function()
      if (case == "kernlab_km") kernlab::kernelMatrix(kk, x) else kernlab::kernelMatrix(kk, z, x),
      repeats = 1L)
    values <- as.double(n)^2
  } else if (case == "default") {
    # kpca(x) itself, but for the threads; x has d = 10 (sigma 0.1: kernlab's
    # default); a fit on 100 rows first, so that loading and byte-compiling
    # the R code is not counted
    invisible(kpca(x[1:100, ], threads = threads))
    out$seconds <- median_time(function() kpca(x, threads = threads), repeats = 1L)
  } else if (case == "auto5") {
    out$seconds <- median_time(function() kpca(x, kernel = k, features = 5, threads = threads))
  } else if (case == "exact5") {
    out$seconds <- median_time(function()
      kpca(x, kernel = k, features = 5, solver = "exact", threads = threads), repeats = 1L)
  } else if (case == "nystrom") {
    out$seconds <- median_time(function() {
      set.seed(3)
      kpca(x, kernel = k, features = 10, landmarks = 1000L, threads = threads)
    }, repeats = 1L)
  } else if (case == "kcca") {
    y <- cbind(x[, 1:5] + 0.1 * rows(n, 4)[, 1:5])
    out$seconds <- median_time(function()
      kcca(x, y, kernel = k, formulation = "centered", threads = threads), repeats = 1L)
  } else if (case == "kica") {
    # kica() has no threads (its kernels are n x 3 factors): one run
    set.seed(5)
    s <- cbind(runif(n, -1, 1), rexp(n) - 1, rnorm(n)^3)
    mixed <- s %*% matrix(c(1, 0.5, 0.2, 0.3, 1, 0.4, 0.1, 0.6, 1), 3)
    out$seconds <- median_time(function() {
      set.seed(6)
      kica(mixed)
    }, repeats = 1L)
  } else if (case %in% c("mf", "workers")) {
    if (case == "workers") {
      future::plan(future::multisession, workers = threads)
      invisible(future::value(lapply(seq_len(threads), function(i) future::future(i))))
    }
    # the passes timed inside the fit: the fit's operator (kernel_operator(),
    # R/eigen.R) with its product and its centered product wrapped, so the
    # time outside the passes is the fit's less theirs (the centering of a
    # centered pass is inside it, in C, in builds whose pass centers)
    pass_time <- 0
    ns <- asNamespace("fastkpca")
    operator <- get("kernel_operator", ns)
    timed <- function(f) {
      force(f)
      function(V) {
        t0 <- proc.time()[["elapsed"]]
        on.exit(pass_time <<- pass_time + proc.time()[["elapsed"]] - t0)
        f(V)
      }
    }
    timed_operator <- function(...) {
      op <- operator(...)
      op$product <- timed(op$product)
      op$apply <- timed(op$apply)
      op
    }
    unlockBinding("kernel_operator", ns)
    assign("kernel_operator", timed_operator, envir = ns)
    t0 <- proc.time()
    set.seed(2)
    fit <- kpca(x, kernel = k, features = 10, solver = "matrix_free",
                threads = if (case == "workers") 1L else threads)
    t1 <- proc.time() - t0
    out$seconds <- t1[["elapsed"]]
    out$passes <- fit$passes
    out$pass_seconds <- pass_time
    out$outside <- out$seconds - pass_time
    values <- fit$passes * as.double(n)^2 / 2
  }
  out$values <- values
  saveRDS(out, args[4L])
  quit(save = "no")
}

# ---- the runner ----
threads_list <- as.integer(strsplit(Sys.getenv("FASTKPCA_BENCH_THREADS", ""), ",")[[1]])
if (!length(threads_list)) {
  cores <- parallel::detectCores()
  threads_list <- c(1L, 2L, 4L, 8L, 16L)
  threads_list <- threads_list[threads_list <= cores]
}
parts <- if (length(args)) args else c("kernels", "fits", "mf", "workers")
if ("busy" %in% parts) {
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    shQuote(file.path(dirname(script), "busy.R")))
  parts <- setdiff(parts, "busy")
  if (!length(parts)) quit(save = "no", status = status)
}
cases <- unique(c(if ("kernels" %in% parts) c("km", "cross", "predict"),
           if ("fits" %in% parts) c("default", "auto5", "exact5", "nystrom", "kcca", "kica"),
           if ("default" %in% parts) "default",
           if ("mf" %in% parts) "mf", if ("workers" %in% parts) "workers"))
run_child <- function(case, threads) {
  out <- tempfile(fileext = ".rds")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    shQuote(c(script, "child", case, threads, out)))
  if (status != 0L || !file.exists(out)) return(NULL)
  readRDS(out)
}

cat(sprintf("load before: %s; threads %s; %d cores\n", load_average(),
            paste(threads_list, collapse = ", "), parallel::detectCores()))
rounds <- as.integer(Sys.getenv("FASTKPCA_BENCH_ROUNDS", "1"))
results <- list()
for (round in seq_len(rounds)) {
  for (case in cases) for (th in if (case == "kica") 1L else threads_list) {
    r <- run_child(case, th)
    if (!is.null(r)) results[[length(results) + 1L]] <- r
  }
  if ("kernels" %in% parts) for (case in c("floor", "kernlab_km", "kernlab_cross")) {
    r <- run_child(case, 1L)
    if (!is.null(r)) results[[length(results) + 1L]] <- r
  }
  cat(sprintf("round %d done, load %s\n", round, load_average()))
}
# the median of each case's rounds (their pass times with it)
keys <- vapply(results, function(r) paste(r$case, r$threads), "")
results <- lapply(split(results, factor(keys, unique(keys))), function(rs) {
  r <- rs[[order(vapply(rs, function(x) x$seconds, 0))[ceiling(length(rs) / 2)]]]
  r$rounds <- paste(sprintf("%.3g", vapply(rs, function(x) x$seconds, 0)), collapse = " ")
  r
})
table <- do.call(rbind, lapply(results, function(r) data.frame(
  case = r$case, threads = r$threads, seconds = r$seconds,
  # per kernel value: wall time for the kernels; CPU (wall x threads or
  # workers) per value per pass for the matrix-free fit
  ns_per_value = (if (r$case %in% c("mf", "workers")) r$pass_seconds else r$seconds) *
    1e9 / r$values *
    (if (r$case %in% c("mf", "workers")) r$threads else 1),
  passes = r$passes %||% NA, pass_seconds = r$pass_seconds %||% NA,
  outside_passes = r$outside %||% NA, rounds = r$rounds, load = r$load)))
one <- table$seconds[match(paste(table$case, 1L), paste(table$case, table$threads))]
table$speedup <- one / table$seconds
p <- table$threads
table$serial <- ifelse(p > 1, (1 / table$speedup - 1 / p) / (1 - 1 / p), NA)
table$predicted_16 <- ifelse(p > 1, 1 / (table$serial + (1 - table$serial) / 16), NA)
num <- vapply(table, is.numeric, TRUE)
table[num] <- lapply(table[num], function(v) signif(v, 3))
print(table, row.names = FALSE)
base <- table[table$threads == 1L, ]
ratio <- function(a, b) base$seconds[base$case == a] / base$seconds[base$case == b]
if (all(c("km", "kernlab_km", "cross", "kernlab_cross") %in% base$case)) {
  cat(sprintf(paste0("\nkernlab's kernelMatrix() against fastkpca on 1 thread: square %.1fx, ",
                     "cross %.1fx; numeric(n^2) takes %.2f of kernel_matrix(k, x)'s time\n"),
              ratio("kernlab_km", "km"), ratio("kernlab_cross", "cross"),
              ratio("floor", "km")))
}
cat(sprintf("load after: %s\n", load_average()))
cat("serial: the serial fraction the speed-up implies (Karp-Flatt); predicted_16:",
    "the speed-up it gives on 16 threads (a prediction where fewer were measured)\n")
