# R/diagnostics.R: flat kernel matrices and misplaced kernel parameters.
# Oracles: kernel matrices whose spectrum is known (the identity, a constant
# plus a known perturbation) given as precomputed kernels, and the formulas
# trace(Kc)/n = mean(diag(K)) - mean(K).

test_that("kernel_flatness() reads the fit's trace, mean and eigenvalues", {
  set.seed(4)
  x <- matrix(rnorm(60 * 3), 60)
  K <- exp(-0.5 * as.matrix(dist(x))^2)
  fit <- kpca(K, kernel = "precomputed", features = 3)
  n <- nrow(K)
  Kc <- K - outer(rowMeans(K), colMeans(K), "+") + mean(K)
  flat <- fastkpca:::kernel_flatness(fit)
  ev <- eigen(Kc / n, symmetric = TRUE, only.values = TRUE)$values
  expect_equal(flat$ratio, ev[1] / (sum(diag(Kc)) / n / (n - 1)), tolerance = 1e-10)
  expect_equal(flat$share, sum(diag(Kc)) / n / mean(diag(K)), tolerance = 1e-10)
  expect_true(is.na(flat$kind))
  expect_silent(fastkpca:::warn_if_flat_kernel(fit))
})

test_that("an identity kernel matrix is nearly diagonal; the cut-off is a ratio of 2", {
  n <- 40
  fit <- kpca(diag(n), kernel = "precomputed", features = 2)
  flat <- fastkpca:::kernel_flatness(fit)
  expect_identical(flat$kind, "diagonal")
  expect_equal(flat$ratio, 1, tolerance = 1e-10)
  expect_warning(fastkpca:::warn_if_flat_kernel(fit),
                 "nearly diagonal .*scale\\. = TRUE or other kernel parameters")
  # K = I + a u u' with u centered and of unit length: Kc = H + a u u' has
  # eigenvalues 1 + a, 1 (n - 2 times) and 0, so the ratio of the largest to
  # the average of the n - 1 non-zero ones is (1 + a) (n - 1) / (n - 1 + a),
  # which crosses 2 at a = (n - 1) / (n - 3)
  u <- scale(seq_len(n), scale = FALSE)[, 1]
  u <- u / sqrt(sum(u^2))
  ratio_at <- function(a) {
    f <- kpca(diag(n) + a * tcrossprod(u), kernel = "precomputed", features = 1)
    fastkpca:::kernel_flatness(f)
  }
  a0 <- (n - 1) / (n - 3)
  below <- ratio_at(a0 * 0.98)
  above <- ratio_at(a0 * 1.02)
  expect_lt(below$ratio, 2)
  expect_identical(below$kind, "diagonal")
  expect_gt(above$ratio, 2)
  expect_true(is.na(above$kind))
})

test_that("kernlab's default sigma on columns in the hundreds warns, naming median_sigma()", {
  set.seed(5)
  x <- matrix(rnorm(80 * 4, sd = 100), 80)
  # kpca() itself warns once
  expect_warning(fit <- kpca(x, features = 2), "nearly diagonal")
  expect_identical(fastkpca:::kernel_flatness(fit)$kind, "diagonal")
  w <- capture_warnings(fastkpca:::warn_if_flat_kernel(fit))
  expect_length(w, 1L)
  expect_match(w, "kpar = list(sigma = median_sigma(x))", fixed = TRUE)
  expect_match(w, "scale. = TRUE", fixed = TRUE)
  # what it suggests cures it
  expect_silent(fastkpca:::warn_if_flat_kernel(kpca(x, features = 2, scale. = TRUE)))
  expect_silent(fastkpca:::warn_if_flat_kernel(
    kpca(x, kpar = list(sigma = median_sigma(x)), features = 2)))
})

test_that("a nearly constant kernel matrix warns; the cut-off is 1000 eps of the diagonal", {
  n <- 30
  set.seed(6)
  v <- matrix(rnorm(n * 2), n)
  # K = 11' + e V V': Kc = e HVV'H, trace(Kc)/n = e ||HV||^2 / n, diagonal ~ 1
  share_for <- function(e) {
    K <- matrix(1, n, n) + e * tcrossprod(v)
    f <- kpca(K, kernel = "precomputed", features = 1)
    fastkpca:::kernel_flatness(f)
  }
  hv <- sum(scale(v, scale = FALSE)^2) / n
  cut <- 1000 * .Machine$double.eps / hv
  expect_identical(share_for(cut / 4)$kind, "constant")
  expect_true(is.na(share_for(cut * 4)$kind))
  expect_warning(kpca(matrix(1, n, n) + cut / 4 * tcrossprod(v),
                      kernel = "precomputed", features = 1),
                 "nearly constant")
  # a small sigma alone is not flat: it is linear PCA, scaled
  x <- as.matrix(iris[, 1:4])
  small <- kpca(x, kpar = list(sigma = 1e-9), features = 2)
  expect_true(is.na(fastkpca:::kernel_flatness(small)$kind))
})

test_that("fits without the fields (Nystrom) are not judged", {
  expect_true(is.na(fastkpca:::kernel_flatness(list(eig = 1, variance_total = 1))$kind))
})

test_that("kernel parameters given as arguments: 'did you mean kpar = list(...)?'", {
  expect_error(fastkpca:::stop_unused_arguments(sigma = 1),
               "unused argument: sigma; did you mean kpar = list(sigma = 1)?", fixed = TRUE)
  expect_error(fastkpca:::stop_unused_arguments(degree = 2, scale = 0.5, foo = 3),
               "unused arguments: degree, scale, foo; did you mean kpar = list(degree = 2, scale = 0.5)?",
               fixed = TRUE)
  expect_error(fastkpca:::stop_unused_arguments(foo = 3), "^unused argument: foo$")
  expect_error(fastkpca:::stop_unused_arguments(3), "^unused argument: \\(unnamed\\)$")
  expect_error(kpca(as.matrix(iris[, 1:4]), sigma = 1),
               "unused argument: sigma; did you mean kpar = list(sigma = 1)?", fixed = TRUE)
})

test_that("kpca() warns once on a flat kernel, and kpca_cv's fold fits do not", {
  set.seed(3)
  # five directions of structure in 300 columns of large values: with
  # kernlab's sigma = 0.1, K = I
  wide <- 100 * matrix(rnorm(80 * 5), 80) %*% matrix(rnorm(5 * 300), 5)
  expect_warning(kpca(wide, features = 2), "nearly diagonal")
  expect_warning(kpca(wide, features = 2, scale. = TRUE,
                      kpar = list(sigma = median_sigma(scale(wide)))), NA)
  n_warnings <- 0L
  withCallingHandlers(
    kpca_cv(wide, grid = list(sigma = c(0.1, 1e-5)), features = 2, folds = 2),
    fastkpca_flat_kernel = function(w) {
      n_warnings <<- n_warnings + 1L
      invokeRestart("muffleWarning")
    })
  # only the refit on all rows may warn (when the best setting is flat)
  expect_lte(n_warnings, 1L)
})
