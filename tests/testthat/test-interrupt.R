# Long fits can be interrupted: the kernel build and the centering check for
# interrupts (and R's time limits) between blocks of a few tens of
# milliseconds, the exact solver between panels of its tridiagonal
# reduction and blocks of its back-transformation (src/eigen.c), the
# matrix-free pass between bands of tiles (src/matrix_free.c), predict()
# between blocks of new rows (src/project.c), so a fit stops soon after
# Ctrl-C or a time limit, frees its buffer and leaves R usable.
#
# No bound here is a number of seconds: a loaded machine (CI at load 8 on 2
# cores, arm64 under emulation) slows everything. Each test interrupts the
# work at a point the code reports (interrupted_at_step(),
# helper-work.R: SIGINT, in a child process) and counts the units of
# work the code finished after it: at most one, the one under way.

# Not under valgrind or the sanitizers (scripts/*.sh set FASTKPCA_MEMCHECK):
# their allocators keep freed memory for a while (AddressSanitizer's
# quarantine), which the tests of the freed buffer would take for a leak,
# and the children's long work would be slow.
skip_under_memcheck <- function() {
  skip_if(nzchar(Sys.getenv("FASTKPCA_MEMCHECK")), "under a memory checker")
}

# The exact fit of op (fastkpca:::kernel_operator()), its progress
# reported to step (the fraction of the fit done, at the interrupt
# checkpoints; src/args.c).
exact_fit_code <- function(step) {
  bquote(fastkpca:::dense_eigen(op, "exact", 2L, 1e-4, list(), NULL, step = .(step)))
}

# The resident memory of the child process, for the tests that the n x n
# buffer is freed.
rss_code <- quote(rss <- function() {
  s <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", s)) * 1024
})

test_that("a long anovadot fit stops at an interrupt within a block of its kernel", {
  skip_on_cran()
  skip_under_memcheck()
  # 3000 rows of 200 coordinates: 4.5 million kernel values of 200 exp()
  # each, reported (at least 1% of the fit apart) while the kernel is
  # filled; interrupted at the first report, the fill stops in the block
  # after it
  res <- interrupted_at_step(exact_fit_code(quote(step)), at = 1L, setup = quote({
    set.seed(1)
    x <- matrix(rnorm(3000 * 200), 3000, 200)
    op <- fastkpca:::kernel_operator(x, kern("anovadot", sigma = 0.01), 1L)
  }), after = quote({
    # a small fit works afterwards, and gives what it gave before
    small <- kpca(x[1:60, 1:5], kernel = "anovadot", kpar = list(sigma = 0.01), features = 2)
    again <- kpca(x[1:60, 1:5], kernel = "anovadot", kpar = list(sigma = 0.01), features = 2)
    c(finite = all(is.finite(small$rotated)), same = identical(small$eig, again$eig))
  }))
  expect_identical(res$status, "interrupted", info = child_output(res))
  expect_lte(res$after, 1L)
  expect_identical(res$value, c(finite = TRUE, same = TRUE))
})

test_that("splinedot with several threads stops at an interrupt too", {
  skip_on_cran()
  skip_under_memcheck()
  res <- interrupted_at_step(exact_fit_code(quote(step)), at = 1L, setup = quote({
    set.seed(2)
    x <- matrix(runif(3000 * 200, 0, 0.1), 3000, 200)
    op <- fastkpca:::kernel_operator(x, kern("splinedot"), 2L)
  }), after = quote(length(kpca(x[1:50, 1:3], kernel = "splinedot", features = 2,
                                threads = 2)$eig)))
  expect_identical(res$status, "interrupted", info = child_output(res))
  expect_lte(res$after, 1L)
  expect_identical(res$value, 2L)
})

test_that("predict on many new rows stops at an interrupt within a block", {
  skip_on_cran()
  skip_under_memcheck()
  # 20000 new rows in blocks of 500 (40 blocks) against 200 training rows
  # of 200 coordinates; interrupted after the second block
  res <- interrupted_at_step(quote(
    fastkpca:::kernel_project_rows(big, fit$xmatrix, fit$kernel, fit$kernel_weights, fit$alpha,
                                   terms$offset, terms$alpha_sums, 1L, step = step)),
    at = 2L, setup = quote({
      set.seed(3)
      x <- matrix(rnorm(2000 * 200), 2000, 200)
      fit <- kpca(x[1:200, ], kernel = "anovadot", kpar = list(sigma = 0.01), features = 2,
                  threads = 1)
      terms <- fastkpca:::exact_centering_terms(fit)
      big <- x[rep(seq_len(2000), 10), ]
      fastkpca:::set_tuning(block_rows = 500L)
    }), after = quote(all(is.finite(predict(fit, x[1:5, ])))))
  expect_identical(res$status, "interrupted", info = child_output(res))
  expect_lte(res$after, 1L)
  expect_true(res$value)
})

test_that("SIGINT stops a large exact fit within a panel of work, buffer freed", {
  skip_on_cran()
  skip_under_memcheck()
  skip_on_os("windows")  # SIGINT and /proc
  skip_if_not(file.exists("/proc/self/status"), "no /proc/self/status")
  n <- 3000L
  # interrupted at the first report a tenth of the way in: in the
  # tridiagonal reduction, which takes most of the work (the kernel and
  # the centering cost O(n^2), it O(n^3)); between two reports (at least
  # 1% of the fit apart) it checks after each panel of 32 columns or less
  res <- interrupted_at_step(exact_fit_code(quote(function(fraction) if (fraction >= 0.1) step())),
                             at = 1L, setup = bquote({
    .(rss_code)
    set.seed(1)
    x <- matrix(rnorm(.(n) * 10), .(n), 10)
    op <- fastkpca:::kernel_operator(x, kern("rbfdot", sigma = 0.1), 1L)
    invisible(gc())
    before <- rss()
  }), after = quote(c(memory = rss() - before,
                      features = length(kpca(x[1:50, ], features = 2)$eig))))
  expect_identical(res$status, "interrupted", info = child_output(res))
  expect_lte(res$after, 1L)
  skip_if(is.null(res$value), "the child did not report")
  # the n x n buffer (8 n^2 bytes) is freed: memory is back near where it
  # was before the fit
  expect_lt(res$value[["memory"]], 8 * n^2 / 2)
  # and R goes on working
  expect_identical(res$value[["features"]], 2)
})

test_that("SIGINT stops a matrix-free pass between bands of tiles", {
  skip_on_cran()
  skip_under_memcheck()
  skip_on_os("windows")
  skip_if_not(file.exists("/proc/self/status"), "no /proc/self/status")
  n <- 6000L
  # one pass, K V for all 6000 rows: the pairs of the 8 groups of rows
  # (36), each a band of tiles with an interrupt check after it;
  # interrupted after the third
  res <- interrupted_at_step(quote(
    fastkpca:::kernel_block_product(x, 0L, nrow(x), program, weights, V, 1L, step = step)),
    at = 3L, setup = bquote({
      .(rss_code)
      set.seed(4)
      x <- matrix(rnorm(.(n) * 10), .(n), 10)
      k <- kern("rbfdot", sigma = 0.1)
      program <- fastkpca:::kernel_program(k)
      weights <- fastkpca:::kernel_weights(k, x)
      V <- matrix(rnorm(.(n) * 4), .(n), 4)
      invisible(gc())
      before <- rss()
    }), after = quote(c(memory = rss() - before,
                        bands = { steps <- 0L
                                  fastkpca:::kernel_block_product(x, 0L, nrow(x), program,
                                                                  weights, V, 1L, step = function() steps <<- steps + 1L)
                                  steps })))
  expect_identical(res$status, "interrupted", info = child_output(res))
  expect_lte(res$after, 1L)
  skip_if(is.null(res$value), "the child did not report")
  # the pass has many more bands than were done
  expect_gt(res$value[["bands"]], 10)
  # nothing n x n was ever held
  expect_lt(res$value[["memory"]], 8 * n^2 / 2)
})

test_that("SIGINT stops a threaded exact fit under OpenMP's limits and in a forked child", {
  skip_on_cran()
  skip_under_memcheck()
  skip_on_os("windows")
  # the two-stage reduction (from 2000 rows), whose sweeps wait on one
  # another, on 2 threads asked for: under a thread limit of 1, with
  # dynamic teams, and in a child forked after the parent ran threads
  # (issue 50: each of these hung before)
  setup <- quote({
    set.seed(1)
    x <- matrix(rnorm(2500 * 10), 2500, 10)
    invisible(kernel_matrix(rbfdot(0.1), x[1:500, ], threads = 2))
    op <- fastkpca:::kernel_operator(x, kern("rbfdot", sigma = 0.1), 2L)
  })
  work <- exact_fit_code(quote(function(fraction) if (fraction >= 0.1) step()))
  after <- quote(length(kpca(x[1:50, ], features = 2, threads = 2)$eig))
  cases <- list(limit = list(env = "OMP_THREAD_LIMIT=1", forked = FALSE),
                dynamic = list(env = "OMP_DYNAMIC=true", forked = FALSE),
                forked = list(env = character(), forked = TRUE))
  for (case in names(cases)) {
    res <- interrupted_at_step(work, at = 1L, setup = setup, after = after,
                               env = cases[[case]]$env, forked = cases[[case]]$forked,
                               timeout = 300)
    expect_identical(res$status, "interrupted", label = case, info = child_output(res))
    expect_lte(res$after, 1L, label = case)
    # R goes on working, threads asked for
    expect_identical(res$value, 2L, label = case)
  }
})
