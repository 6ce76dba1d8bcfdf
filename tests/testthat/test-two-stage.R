# The exact solver's two-stage reduction (src/band_reduction.c): dense to
# band on the tiles, band to tridiagonal by bulge chasing, and the
# back-transformation of the wanted vectors through both stages. It runs
# from the tuning setting band_min_rows on (where R's reference BLAS sends
# every product to the tiles), and from 2 b + 1 rows, b = 48 the band
# width: the tests set it to 0 so that small problems take it, and to a
# huge number for the one-stage reduction.

with_band_rows <- function(rows, expr) with_tuning(list(band_min_rows = rows), expr)

two_stage <- function(expr) with_band_rows(0, expr)
one_stage <- function(expr) with_band_rows(1e9, expr)

# Deterministic rows with a slowly decaying spectrum under rbfdot.
wavy_rows <- function(n, d = 3) {
  i <- seq_len(n * d)
  matrix(sin(i * 1.37) + cos(i * 0.21) / 2, n, d)
}

test_that("two stages give plain R's eigenpairs at sizes around the band", {
  skip_if_exact_solver_unsafe()
  # 97 = 2 b + 1 (one panel of one row), 98, 144 = 3 b, 145, 193, 250
  for (n in c(97L, 98L, 144L, 145L, 193L, 250L)) {
    x <- wavy_rows(n)
    kp <- list(sigma = 0.7)
    ref <- plain_kpca(x, "rbfdot", kp, th = 1e-6)
    fit <- two_stage(kpca(x, kernel = "rbfdot", kpar = kp, th = 1e-6))
    expect_gt(length(fit$eig), 20L)
    expect_kpca_equal(fit, ref, label = paste("threshold, n =", n))
    f10 <- two_stage(kpca(x, kernel = "rbfdot", kpar = kp, features = 10))
    expect_kpca_equal(f10, plain_kpca(x, "rbfdot", kp, features = 10),
                      label = paste("features = 10, n =", n))
  }
})

test_that("two stages and one agree, by a different computation, with both tridiagonal methods", {
  skip_if_exact_solver_unsafe()
  x <- wavy_rows(300L, 4L)
  for (method in c("mrrr", "bisection")) {
    local_tuning(exact_method = method)
    two <- two_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.4), features = 60))
    one <- one_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.4), features = 60))
    expect_kpca_equal(two, one, tol = 1e-10, label = method)
    # the two paths did run: their last bits differ
    expect_false(identical(two$alpha, one$alpha), label = paste(method, "paths differ"))
  }
})

test_that("two stages keep the variance rule and kernlab's numbers", {
  skip_if_exact_solver_unsafe()
  x <- fx_iris()
  fit <- two_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), variance = 0.99))
  one <- one_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), variance = 0.99))
  expect_kpca_equal(fit, one, tol = 1e-10, label = "variance")
  skip_if_not_installed("kernlab")
  for (kern in c("rbfdot", "laplacedot", "polydot")) {
    kp <- switch(kern, polydot = list(degree = 2, scale = 0.1, offset = 1), list(sigma = 0.2))
    fit <- two_stage(kpca(x, kernel = kern, kpar = kp))
    expect_kpca_equal(fit, kernlab_fit(x, kern, kp), label = paste(kern, "vs kernlab"))
  }
})

test_that("two stages give the same bits on any number of threads", {
  skip_if_exact_solver_unsafe()
  x <- wavy_rows(400L, 5L)
  local_tuning(tile_thread_work = 0)  # every product on its threads
  fits <- lapply(c(1L, test_threads(2L), test_threads(3L)), function(th)
    two_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.5), threads = th)))
  expect_gt(length(fits[[1]]$eig), 50L)
  for (f in fits[-1]) {
    expect_identical(f$eig, fits[[1]]$eig)
    expect_identical(f$alpha, fits[[1]]$alpha)
    expect_identical(f$rotated, fits[[1]]$rotated)
  }
})

test_that("two stages on every vector path of this CPU", {
  skip_if_exact_solver_unsafe()
  x <- wavy_rows(200L)
  ref <- plain_kpca(x, "rbfdot", list(sigma = 0.7), th = 1e-6)
  for (path in simd_path(available = TRUE)) {
    old <- options(fastkpca.simd = path)
    fit <- two_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.7), th = 1e-6))
    options(old)
    expect_kpca_equal(fit, ref, label = path)
  }
})

test_that("two stages on rank-deficient, diagonal and tied spectra", {
  skip_if_exact_solver_unsafe()
  # rank 3: the panels below the third column are zero (tau 0 everywhere)
  x <- wavy_rows(150L)
  fit <- two_stage(kpca(x, kernel = "vanilladot", kpar = list()))
  expect_kpca_equal(fit, plain_kpca(x, "vanilladot", list()), label = "vanilladot")
  expect_length(fit$eig, 3L)
  # a diagonal kernel matrix: already tridiagonal, every reflector trivial
  K <- diag(seq(2, 1, length.out = 120))
  expect_warning(fitK <- two_stage(kpca(K, kernel = "precomputed", features = 5)),
                 "nearly diagonal")
  Kc <- plain_center(K)
  expect_equal(unname(fitK$eig), eigen(Kc, symmetric = TRUE)$values[1:5] / 120,
               tolerance = 1e-12)
  # duplicated rows: tied eigenvalues, compared as eigenspaces
  xd <- rbind(x[1:60, ], x[1:60, ])
  fitd <- two_stage(kpca(xd, kernel = "rbfdot", kpar = list(sigma = 0.7), features = 20))
  expect_kpca_equal(fitd, plain_kpca(xd, "rbfdot", list(sigma = 0.7), features = 20),
                    label = "duplicated rows")
})

test_that("two stages on columns of tiny norm: the panel's reflectors scaled as dlarfg's", {
  skip_if_exact_solver_unsafe()
  # a kernel matrix of two blocks, one 1e-300 (or subnormal 1e-310) times
  # the other, their rows interleaved: the panels' columns below the band
  # hold reflectors whose norm is below the safe minimum (scaled up and
  # back); one stage (dsytrd's) is the oracle
  x <- wavy_rows(160L)
  K1 <- plain_kernel(x[1:100, ], x[1:100, ], "rbfdot", list(sigma = 0.7))
  K2 <- plain_kernel(x[101:160, ], x[101:160, ], "rbfdot", list(sigma = 0.3))
  order <- order(c(seq(1, 160, length.out = 100), seq(1.5, 159.5, length.out = 60)))
  for (tiny in c(1e-300, 1e-310)) {
    K <- matrix(0, 160, 160)
    K[1:100, 1:100] <- K1
    K[101:160, 101:160] <- K2 * tiny
    K <- K[order, order]
    one <- one_stage(kpca(K, kernel = "precomputed", features = 8, solver = "exact"))
    two <- two_stage(kpca(K, kernel = "precomputed", features = 8, solver = "exact"))
    expect_equal(unname(two$eig), unname(one$eig), tolerance = 1e-12, info = format(tiny))
    expect_cols_equal_up_to_sign(two$alpha, one$alpha, 1e-9, label = format(tiny))
  }
})

test_that("the tuning settings of the two stages are checked", {
  expect_error(local_tuning(band_min_rows = -1), "fastkpca.tuning$band_min_rows",
               fixed = TRUE, class = "fastkpca_error_argument")
  # set around the checker, the option is checked before every engine call
  old <- options(fastkpca.tuning = list(band_min_rows = -1))
  on.exit(options(old))
  expect_error(kpca(wavy_rows(20L), features = 2), "fastkpca.tuning$band_min_rows",
               fixed = TRUE, class = "fastkpca_error_argument")
  options(fastkpca.tuning = NULL)
  for (bad in list(list(band_width = 1), list(band_width = 48.5), list(band_group = 0),
                   list(band_chunk = -1), list(eigen_check_work = 0)))
    expect_error(with_tuning(bad, NULL), paste0("fastkpca.tuning$", names(bad)),
                 fixed = TRUE, class = "fastkpca_error_argument")
})

test_that("the band's width, groups and chunks and the interrupt checks' work move the bits only", {
  skip_if_exact_solver_unsafe()
  x <- wavy_rows(300L, 4L)
  ref <- two_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.4), features = 40))
  for (settings in list(list(band_width = 8), list(band_width = 149), list(band_group = 1),
                        list(band_group = 100), list(band_chunk = 1),
                        list(eigen_check_work = 4096))) {
    fit <- with_tuning(settings, two_stage(kpca(x, kernel = "rbfdot",
                                                kpar = list(sigma = 0.4), features = 40)))
    expect_kpca_equal(fit, ref, tol = 1e-10,
                      label = paste(names(settings), unlist(settings)))
  }
})

test_that("the stage clock names every step of a fit, each within the call's time", {
  skip_if_exact_solver_unsafe()
  x <- wavy_rows(300L, 4L)
  stages <- c("fill", "center", "stage1", "stage2", "tridiagonal", "back_stage2",
              "back_stage1", "certificate", "other")
  fit_clock <- function(fit_call) {
    elapsed <- system.time(fit_call)[["elapsed"]]
    secs <- fastkpca:::stage_seconds()
    expect_identical(names(secs), stages)
    expect_true(all(is.finite(secs) & secs >= 0))
    # proc.time() counts in milliseconds
    expect_lte(sum(secs), elapsed + 0.002)
    secs
  }
  two <- fit_clock(two_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.4),
                                  features = 60)))
  expect_true(all(two[c("fill", "stage1", "stage2", "back_stage2", "back_stage1")] > 0))
  one <- fit_clock(one_stage(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.4),
                                  features = 60)))
  expect_true(all(one[c("stage1", "back_stage1")] > 0))
  expect_identical(unname(one[c("stage2", "back_stage2")]), c(0, 0))
  # the iterative solver runs no stage of the exact one: its time is other
  it <- fit_clock(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.4), features = 5,
                       solver = "iterative"))
  expect_identical(unname(it[c("stage1", "stage2", "tridiagonal", "back_stage2",
                               "back_stage1")]), rep(0, 5))
  expect_gt(it[["other"]], 0)
})
