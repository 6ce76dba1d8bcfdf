# Long fits can be interrupted: the kernel build and the centering check for
# interrupts (and R's time limits) every few tens of milliseconds, so a fit
# stops soon after the limit, frees its buffer and leaves R usable.
# LAPACK's dsyevr cannot be interrupted, so the fits here are ones where the
# kernel build dominates: anovadot and splinedot cost O(d) per kernel value.

# Timings mean nothing under valgrind or the sanitizers (scripts/*.sh set
# FASTKPCA_MEMCHECK).
skip_under_memcheck <- function() {
  skip_if(nzchar(Sys.getenv("FASTKPCA_MEMCHECK")), "timing under a memory checker")
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

test_that("a long anovadot fit stops at a time limit and R stays usable", {
  skip_on_cran()
  skip_under_memcheck()
  set.seed(1)
  n <- 4000
  x <- matrix(rnorm(n * 200), n, 200)
  # about 10 s of kernel build uninterrupted (8e6 kernel values x 200 exp())
  res <- run_with_time_limit(
    kpca(x, kernel = "anovadot", kpar = list(sigma = 0.01), features = 2,
         solver = "exact", threads = 1),
    limit = 1)
  expect_match(res$message, "reached elapsed time limit")
  expect_lt(res$elapsed, 2.5)
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
  n <- 4000
  x <- matrix(runif(n * 200, 0, 0.1), n, 200)
  res <- run_with_time_limit(
    kpca(x, kernel = "splinedot", features = 2, solver = "exact", threads = 2),
    limit = 1)
  expect_match(res$message, "reached elapsed time limit")
  expect_lt(res$elapsed, 2.5)
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
  # 2000 x 200 kernel values of 200 coordinates each, blocks of new rows:
  # the cross-kernel checks for interrupts between its column blocks
  big <- x[rep(seq_len(2000), 10), ]
  res <- run_with_time_limit(predict(fit, big), limit = 1)
  if (res$message != "finished") {
    expect_match(res$message, "reached elapsed time limit")
    expect_lt(res$elapsed, 2.5)
  } else {
    succeed("predict finished within the limit")
  }
  expect_true(all(is.finite(predict(fit, x[1:5, ]))))
})
