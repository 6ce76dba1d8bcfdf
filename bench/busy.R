# Benchmark: threads on a busy machine (issue 50). Beside BUSY processes
# that keep the cores busy (shell loops; default 2), the default call (no
# `threads`: kpca_threads()) against threads = 1, for
#   kpca:   the default kpca(x) at n = 2000 (d = 10; the exact solver's
#           two-stage reduction from 2000 rows with the reference BLAS);
#   km:     kernel_matrix(rbfdot(0.1), x) at n = 6000 (after one call, the
#           median of 3 in the process).
# Each run is its own R process (this script, "child CASE THREADS OUT"),
# the two settings alternated, ROUNDS runs each (default 3); the table
# gives the medians and their ratio (default over threads = 1: under 1 is
# faster). Then the same without the busy processes, for reference.
#   R_LIBS=... Rscript bench/busy.R [BUSY] [ROUNDS]
#   R_LIBS=... Rscript bench/threads.R busy       # the same, from there
args <- commandArgs(trailingOnly = TRUE)
script <- tryCatch(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE))), error = function(e) "bench/busy.R")
suppressPackageStartupMessages(library(fastkpca))

if (length(args) >= 1L && args[1L] == "child") {
  case <- args[2L]
  threads <- if (args[3L] == "default") kpca_threads() else as.integer(args[3L])
  set.seed(1)
  n <- if (case == "kpca") 2000L else 6000L
  x <- matrix(rnorm(n * 10), n)
  # R's code loaded and byte-compiled first
  invisible(kpca(x[1:100, ], threads = threads))
  seconds <- if (case == "kpca") {
    system.time(if (args[3L] == "default") kpca(x) else kpca(x, threads = threads))[["elapsed"]]
  } else {
    # one call first (the result's pages are the system's first time round),
    # then the median of 3
    k <- rbfdot(0.1)
    km <- function() if (args[3L] == "default") kernel_matrix(k, x)
                     else kernel_matrix(k, x, threads = threads)
    invisible(km())
    median(vapply(1:3, function(i) system.time(km())[["elapsed"]], 0))
  }
  saveRDS(list(seconds = seconds, threads = threads), args[4L])
  quit(save = "no")
}

busy <- if (length(args) >= 1L) as.integer(args[1L]) else 2L
rounds <- if (length(args) >= 2L) as.integer(args[2L]) else 3L
load_average <- function() paste(scan("/proc/loadavg", what = "", n = 3, quiet = TRUE),
                                 collapse = " ")
run_child <- function(case, threads) {
  out <- tempfile(fileext = ".rds")
  on.exit(unlink(out))
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    shQuote(c(script, "child", case, threads, out)))
  if (status != 0L || !file.exists(out)) stop("the child of ", case, " failed")
  readRDS(out)
}

# Starts k shell loops; returns their process ids.
start_busy <- function(k) {
  vapply(seq_len(k), function(i) {
    pid_file <- tempfile()
    system(sprintf("sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $! > %s", pid_file))
    as.integer(readLines(pid_file))
  }, 0L)
}

measure <- function(label) {
  rows <- lapply(c("kpca", "km"), function(case) {
    one <- default <- numeric()
    used <- NA_integer_
    for (r in seq_len(rounds)) {
      one <- c(one, run_child(case, "1")$seconds)
      d <- run_child(case, "default")
      default <- c(default, d$seconds)
      used <- d$threads
    }
    data.frame(setting = label, case = case, default_threads = used,
               one_thread_s = median(one), default_s = median(default),
               ratio = median(default) / median(one))
  })
  do.call(rbind, rows)
}

cat(sprintf("load before: %s; %d cores; kpca_threads() %d\n", load_average(),
            parallel::detectCores(), kpca_threads()))
pids <- start_busy(busy)
busy_rows <- tryCatch(measure(sprintf("beside %d busy", busy)),
                      finally = tools::pskill(pids))
Sys.sleep(5)
cat(sprintf("load after the busy part: %s\n", load_average()))
idle_rows <- measure("idle")
tab <- rbind(busy_rows, idle_rows)
tab[, c("one_thread_s", "default_s", "ratio")] <- round(tab[, c("one_thread_s", "default_s", "ratio")], 3)
print(tab, row.names = FALSE)
