# Long fits can be interrupted: the kernel build and the centering check for
# interrupts (and R's time limits) every few tens of milliseconds, and the
# exact solver between panels of its tridiagonal reduction and blocks of its
# back-transformation (src/eigen.c), so a fit stops soon after Ctrl-C or a
# time limit, frees its buffer and leaves R usable.
#
# No bound here is a fixed number of seconds: a loaded machine (CI at load 8
# on 2 cores) slows everything. Each bound is a share of work, turned into
# seconds by timing comparable work in the same process just before, under
# the same load.

# Timings mean nothing under valgrind or the sanitizers (scripts/*.sh set
# FASTKPCA_MEMCHECK).
skip_under_memcheck <- function() {
  skip_if(nzchar(Sys.getenv("FASTKPCA_MEMCHECK")), "timing under a memory checker")
}

elapsed_of <- function(expr) {
  start <- proc.time()[["elapsed"]]
  force(expr)
  proc.time()[["elapsed"]] - start
}

# A quiet, fast machine gets more rows, not a skip: the rows of a fit whose
# estimated time (16 times that of a quarter of the rows: the kernel work
# grows as n^2) is at least 4 s, doubling n from n0 up to n_max.
rows_for_time_limit <- function(fit_of, n0, n_max) {
  n <- n0
  repeat {
    full <- 16 * elapsed_of(fit_of(seq_len(n / 4)))
    if (full >= 4 || n >= n_max) return(list(n = n, full = full))
    n <- min(n_max, 2L * n)
  }
}

# Run expr under an elapsed-time limit; the error message (or "finished")
# and the time taken.
run_with_time_limit <- function(expr, limit) {
  start <- proc.time()[["elapsed"]]
  msg <- tryCatch({
    setTimeLimit(elapsed = limit, transient = TRUE)
    force(expr)
    "finished"
  }, error = function(e) conditionMessage(e),
  finally = setTimeLimit(cpu = Inf, elapsed = Inf, transient = FALSE))
  list(message = msg, elapsed = proc.time()[["elapsed"]] - start)
}

# A job of estimated duration `full` (measured on a share of its work just
# before) either finished, or stopped at the limit having done at most a
# quarter of the work left after it (or a second, whichever is more):
# without interrupt checks it would run to the end, `full` seconds.
expect_stopped_early <- function(res, limit, full) {
  if (res$message == "finished") {
    expect_lt(res$elapsed, full * 2 + 1)
    return(invisible())
  }
  expect_match(res$message, "reached elapsed time limit")
  expect_lt(res$elapsed - limit, max(1, full / 4))
}

test_that("a long anovadot fit stops at a time limit and R stays usable", {
  skip_on_cran()
  skip_under_memcheck()
  set.seed(1)
  n_max <- 16000L
  x <- matrix(rnorm(n_max * 200), n_max, 200)
  fit_of <- function(rows) {
    kpca(x[rows, ], kernel = "anovadot", kpar = list(sigma = 0.01), features = 2,
         solver = "exact", threads = 1)
  }
  sized <- rows_for_time_limit(fit_of, 4000L, n_max)
  skip_if(sized$full < 4, "the machine builds this kernel too fast to time a limit")
  res <- run_with_time_limit(fit_of(seq_len(sized$n)), limit = 1)
  expect_match(res$message, "reached elapsed time limit")
  expect_stopped_early(res, 1, sized$full)
  # a small fit works afterwards, and gives what it gave before
  small <- kpca(x[1:60, 1:5], kernel = "anovadot", kpar = list(sigma = 0.01), features = 2)
  expect_true(all(is.finite(small$rotated)))
  expect_identical(small$eig, kpca(x[1:60, 1:5], kernel = "anovadot",
                                   kpar = list(sigma = 0.01), features = 2)$eig)
})

test_that("splinedot with several threads stops at a time limit too", {
  skip_on_cran()
  skip_under_memcheck()
  set.seed(2)
  n_max <- 16000L
  x <- matrix(runif(n_max * 200, 0, 0.1), n_max, 200)
  fit_of <- function(rows) {
    kpca(x[rows, ], kernel = "splinedot", features = 2, solver = "exact", threads = 2)
  }
  sized <- rows_for_time_limit(fit_of, 4000L, n_max)
  skip_if(sized$full < 4, "the machine builds this kernel too fast to time a limit")
  res <- run_with_time_limit(fit_of(seq_len(sized$n)), limit = 1)
  expect_match(res$message, "reached elapsed time limit")
  expect_stopped_early(res, 1, sized$full)
  expect_equal(length(kpca(x[1:50, 1:3], kernel = "splinedot", features = 2,
                           threads = 2)$eig), 2L)
})

test_that("predict on many new rows stops at a time limit", {
  skip_on_cran()
  skip_under_memcheck()
  set.seed(3)
  x <- matrix(rnorm(2000 * 200), 2000, 200)
  fit <- kpca(x[1:200, ], kernel = "anovadot", kpar = list(sigma = 0.01), features = 2,
              threads = 1)
  # New rows times 200 training rows, 200 coordinates each, in blocks of
  # new rows: the cross-kernel checks for interrupts between its column
  # blocks. 2000 rows first, for the time of the whole.
  # as many copies as make about 6 s of work (at least 40, at most 200), so
  # that a fast machine gets more rows, not a skip
  once <- elapsed_of(predict(fit, x))
  copies <- as.integer(min(200, max(40, ceiling(6 / max(once, 1e-3)))))
  big <- x[rep(seq_len(2000), copies), ]
  full <- copies * once
  skip_if(full < 4, "the machine predicts these rows too fast to time a limit")
  res <- run_with_time_limit(predict(fit, big), limit = 1)
  expect_stopped_early(res, 1, full)
  expect_true(all(is.finite(predict(fit, x[1:5, ]))))
})

# The child process of the SIGINT test: times the default exact fit on
# half the rows (an eighth of the reduction's work, which dominates), then
# runs it on all rows and records when an interrupt reached R, and its
# memory before the fit and after the interrupt.
# mode "matrix_free": the matrix-free solver, told to make every one of 20
# passes (a tolerance it cannot reach), whose time grows as n^2.
sigint_child <- c(
  'args <- commandArgs(TRUE); n <- as.integer(args[1]); out <- args[2]; mode <- args[3]',
  'suppressPackageStartupMessages(library(fastkpca))',
  'fit <- if (mode == "exact") function(x) kpca(x) else function(x)',
  '  suppressWarnings(kpca(x, features = 3, solver = "matrix_free", threads = 1,',
  '                       control = list(tol = 1e-15, maxit = 20, landmarks = 0)))',
  'rss <- function() {',
  '  s <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)',
  '  as.numeric(gsub("[^0-9]", "", s)) * 1024',
  '}',
  'publish <- function(lines, path) {  # whole, or not at all',
  '  writeLines(lines, paste0(path, ".tmp")); file.rename(paste0(path, ".tmp"), path)',
  '}',
  'set.seed(1); x <- matrix(rnorm(n * 10), n, 10)',
  'half <- system.time(fit(x[seq_len(n / 2), ]))[["elapsed"]]',
  'invisible(gc()); before <- rss()',
  'publish(as.character(c(Sys.getpid(), half)), paste0(out, ".ready"))',
  'status <- tryCatch({ fit(x); "finished" }, interrupt = function(e) "interrupted")',
  'caught <- as.numeric(Sys.time())',
  'after <- rss()',
  'small <- kpca(x[1:50, ], features = 2)',
  'publish(c(status, format(caught, digits = 17), format(c(before, after)),',
  '          length(small$eig)), paste0(out, ".done"))'
)

wait_for_file <- function(path, seconds) {
  deadline <- proc.time()[["elapsed"]] + seconds
  while (!file.exists(path) && proc.time()[["elapsed"]] < deadline) Sys.sleep(0.05)
  file.exists(path)
}

# Start the child on n rows, send SIGINT at `share` of the fit's estimated
# time; the child's report, with the estimated time of the whole fit.
interrupt_child_fit <- function(n, share, mode = "exact") {
  script <- tempfile(fileext = ".R")
  out <- tempfile()
  writeLines(sigint_child, script)
  old <- Sys.getenv("R_LIBS", unset = NA)
  Sys.setenv(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
  on.exit(if (is.na(old)) Sys.unsetenv("R_LIBS") else Sys.setenv(R_LIBS = old))
  system2(file.path(R.home("bin"), "Rscript"), c(script, n, out, mode), wait = FALSE,
          stdout = FALSE, stderr = FALSE)
  if (!wait_for_file(paste0(out, ".ready"), 600)) stop("the child did not start")
  ready <- readLines(paste0(out, ".ready"))
  pid <- as.integer(ready[1])
  # the exact fit's work grows as n^3, the matrix-free one's as n^2
  full <- (if (mode == "exact") 8 else 4) * as.numeric(ready[2])
  Sys.sleep(share * full)
  sent <- as.numeric(Sys.time())
  invisible(tools::pskill(pid, tools::SIGINT))
  if (!wait_for_file(paste0(out, ".done"), 600)) {
    invisible(tools::pskill(pid, tools::SIGKILL))
    stop("the child did not report")
  }
  done <- readLines(paste0(out, ".done"))
  list(status = done[1], latency = as.numeric(done[2]) - sent, full = full,
       memory = as.numeric(done[4]) - as.numeric(done[3]), after = done[5])
}

test_that("SIGINT stops a large exact fit within a panel of work, buffer freed", {
  skip_on_cran()
  skip_under_memcheck()
  skip_on_os("windows")  # SIGINT and /proc
  skip_if_not(file.exists("/proc/self/status"), "no /proc/self/status")
  n <- 3000
  # a quarter of the way in: in the tridiagonal reduction, which takes most
  # of the time (the kernel and the centering cost O(n^2), it O(n^3))
  res <- interrupt_child_fit(n, share = 1 / 4)
  skip_if(res$status == "finished", "the fit ended before the signal")
  expect_identical(res$status, "interrupted")
  # The most work between two checks is one panel of the reduction (32
  # columns: 32 symmetric matrix-vector products and a rank-64 update, on
  # at most n x n) or a block of the back-transformation of the same size:
  # about 3 * 32 / n of the reduction, 3% at n = 3000. A tenth of the whole
  # fit's time, plus R's own reaction to the signal, allows for three such
  # panels; a reduction without checks would run on for half of it or more.
  expect_lt(res$latency, 0.1 * res$full + 0.25)
  # the n x n buffer (8 n^2 bytes) is freed: memory is back near where it
  # was before the fit
  expect_lt(res$memory, 8 * n^2 / 2)
  # and R goes on working
  expect_identical(res$after, "2")
})

test_that("SIGINT stops a matrix-free fit between tiles, within a pass", {
  skip_on_cran()
  skip_under_memcheck()
  skip_on_os("windows")
  skip_if_not(file.exists("/proc/self/status"), "no /proc/self/status")
  n <- 6000
  res <- interrupt_child_fit(n, share = 1 / 3, mode = "matrix_free")
  skip_if(res$status == "finished", "the fit ended before the signal")
  expect_identical(res$status, "interrupted")
  # the most work between two checks is one block of rows times all rows
  # (at most 256 x n kernel values), a small share of one of 20 passes; a
  # tenth of the fit's time (two passes) plus R's reaction to the signal
  # bounds it, where a pass without checks would run on to its end
  expect_lt(res$latency, 0.1 * res$full + 0.25)
  # nothing n x n was ever held
  expect_lt(res$memory, 8 * n^2 / 2)
  expect_identical(res$after, "2")
})
