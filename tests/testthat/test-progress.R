# Progress reports through progressr (R/progress.R, progress_at() in
# src/args.c): every long call signals at least three times, the exact fit
# reports its steps as fractions that add up to the whole, nothing is shown
# without a handler, and the results do not change.

# The progression conditions of expr, as a data frame (type, amount,
# message); progressr signals them only when enabled (it is not, by default,
# outside interactive sessions).
progressions <- function(expr) {
  skip_if_not_installed("progressr")
  old <- options(progressr.enable = TRUE)
  on.exit(options(old))
  got <- list()
  withCallingHandlers(expr, progression = function(c) got[[length(got) + 1L]] <<- c)
  data.frame(type = vapply(got, function(c) c$type, ""),
             amount = vapply(got, function(c) as.double(c$amount %||% 0), 0),
             message = vapply(got, function(c) paste(c$message, collapse = ""), ""))
}
`%||%` <- function(a, b) if (is.null(a)) b else a
updates <- function(p) p[p$type == "update", ]

test_that("an exact fit reports its steps, adding up to the whole, whatever its size", {
  set.seed(3)
  for (n in c(12L, 150L, 600L)) {
    x <- matrix(rnorm(n * 3), n)
    p <- progressions(fit <- kpca(x, kpar = list(sigma = 0.3), features = 2,
                                  solver = "exact"))
    u <- updates(p)
    expect_gte(nrow(u), 3L)
    expect_true(all(u$amount >= 0))
    expect_equal(sum(u$amount), 1000)   # progress_resolution: the fraction 1
    expect_identical(p$type[c(1L, nrow(p))], c("initiate", "finish"))
    expect_match(u$message, sprintf("^kpca: exact fit on %d rows$", n))
    # the numbers do not depend on the reports
    old <- options(fastkpca.progress = FALSE)
    quiet <- kpca(x, kpar = list(sigma = 0.3), features = 2, solver = "exact")
    options(old)
    expect_identical(fit$alpha, quiet$alpha)
    expect_identical(fit$eig, quiet$eig)
  }
  # past LAPACK's crossover (about 128 rows) the reduction reports its panels
  expect_gt(nrow(u), 10L)
})

test_that("the other solvers, threshold and variance fits report too", {
  set.seed(4)
  x <- matrix(rnorm(300 * 3), 300)
  for (args in list(list(features = 3, solver = "iterative"),
                    list(features = 3, solver = "randomized"),
                    list(features = 0, th = 1e-3),
                    list(variance = 0.8))) {
    u <- updates(progressions(do.call(kpca, c(list(x, kpar = list(sigma = 0.3)), args))))
    expect_gte(nrow(u), 3L)
    expect_equal(sum(u$amount), 1000)
  }
})

test_that("nothing is signalled with fastkpca.progress = FALSE, nothing shown without a handler", {
  x <- as.matrix(iris[, 1:4])
  old <- options(fastkpca.progress = FALSE)
  expect_identical(nrow(progressions(kpca(x, kpar = list(sigma = 0.2), features = 2))), 0L)
  options(old)
  skip_if_not_installed("progressr")
  old <- options(progressr.enable = TRUE)
  on.exit(options(old))
  expect_silent(kpca(x, kpar = list(sigma = 0.2), features = 2, solver = "exact"))
})

test_that("kpca_cv() reports one step per setting and fold and the final fit, its fits quiet", {
  x <- as.matrix(iris[1:60, 1:4])
  set.seed(5)
  p <- progressions(cv <- kpca_cv(x, kernel = "rbfdot", grid = list(sigma = c(0.1, 1)),
                                   features = 2, folds = 3))
  u <- updates(p)
  # only kpca_cv's progressor: one initiate and one finish
  expect_identical(sum(p$type == "initiate"), 1L)
  expect_identical(u$amount, c(0, rep(1, 2 * 3 + 1)))
  expect_match(u$message[2], "^kpca_cv: setting 1 of 2, fold 1 of 3$")
  expect_false(any(grepl("exact fit", u$message)))
})

test_that("kica() reports each sweep of each start", {
  set.seed(6)
  S <- cbind(runif(300), rexp(300))
  p <- progressions(fit <- kica(S %*% matrix(c(1, 0.5, 0.3, 1), 2), nstarts = 3))
  u <- updates(p)
  sweeps <- grep("sweep", u$message)
  expect_identical(length(sweeps), as.integer(sum(fit$starts$sweeps) + fit$iterations[["polish"]]))
  expect_identical(sum(u$amount), 3 + as.double(fit$polish && ncol(fit$S) > 1L))
  expect_gte(nrow(u), 3L)
})

test_that("preimage() reports the map, its blocks and each fixed-point iteration", {
  x <- as.matrix(iris[, 1:4])
  fit <- kpca(x, kpar = list(sigma = 0.2), features = 2)
  u <- updates(progressions(preimage(fit, predict(fit, x[1:5, ]))))
  expect_identical(u$message, c("preimage: 5 rows", "preimage: the map's coefficients",
                                "preimage: block 1 of 1", "preimage: the map applied"))
  u <- updates(progressions(z <- suppressWarnings(preimage(fit, method = "fixed-point",
                                          control = list(maxit = 4, tol = 1e-12)))))
  expect_identical(sum(grepl("fixed-point iteration [0-9]+$", u$message)), 4L)
  expect_identical(sum(u$amount), 3)
})
