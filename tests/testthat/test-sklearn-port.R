# scikit-learn's tests of KernelPCA (sklearn/decomposition/tests/
# test_kernel_pca.py, scikit-learn 1.2), ported to kpca() as far as its
# features go. scikit-learn's scale: fit_transform = rotated / sqrt(n),
# eigenvalues_ = n * eig, gamma = sigma (/work/shared/math.md).
#
# Ported: test_kernel_pca (exact and iterative solvers, linear, rbf, poly
# and the histogram kernel, the last as a precomputed kernel matrix),
# test_kernel_pca_invalid_parameters, test_kernel_pca_consistent_transform,
# test_kernel_pca_deterministic_output, test_kernel_pca_linear_kernel,
# test_kernel_pca_n_components, test_remove_zero_eig, test_leave_zero_eig,
# test_kernel_pca_precomputed, test_kernel_pca_precomputed_non_symmetric,
# test_nested_circles, test_kernel_conditioning,
# test_precomputed_kernel_not_psd, test_kernel_pca_solvers_equivalence
# (exact against iterative), test_kernel_pca_inverse_transform_reconstruction
# (preimage()), test_32_64_decomposition_shape (integer against double
# input), test_kernel_pca_feature_names_out (column names).
#
# Skipped, and why:
# - every "randomized" eigen_solver case (in test_kernel_pca,
#   test_kernel_pca_n_components, test_kernel_pca_precomputed,
#   test_precomputed_kernel_not_psd, test_kernel_pca_solvers_equivalence):
#   see test-randomized.R.
# - test_kernel_pca_sparse: kpca() takes dense matrices only.
# - test_gridsearch_pipeline, test_gridsearch_pipeline_precomputed:
#   scikit-learn's GridSearchCV; the tidymodels counterpart (tune_grid() over
#   a recipe with step_fastkpca_rbf()) is in test-recipes.R.
# - test_kernel_pca_raise_not_fitted_error: R has no unfitted estimator
#   objects; kpca() returns fitted objects only.
# Where fastkpca deliberately differs, the port checks fastkpca's documented
# behaviour and says so: components with eigenvalues that are not positive
# are dropped with a warning (scikit-learn keeps them as zeros, or errors),
# and a precomputed kernel must be symmetric (scikit-learn centers any
# square matrix).

# scikit-learn's RandomState draws are not R's: the data are R's, of the
# same shapes.
sk_data <- function(n, d, seed = 0) {
  set.seed(seed)
  matrix(runif(n * d), n, d)
}

align_columns <- function(a, b) {
  for (j in seq_len(ncol(a))) if (sum(a[, j] * b[, j]) < 0) a[, j] <- -a[, j]
  a
}

# make_circles(n, factor = 0.3, noise = 0.05): two rings of radii 1 and 0.3
make_circles <- function(n, factor = 0.3, noise = 0.05, seed = 0) {
  set.seed(seed)
  outer <- n %/% 2
  t <- c(seq(0, 2 * pi, length.out = outer + 1)[-1],
         seq(0, 2 * pi, length.out = n - outer + 1)[-1])
  r <- c(rep(1, outer), rep(factor, n - outer))
  x <- cbind(r * cos(t), r * sin(t)) + matrix(rnorm(2 * n, sd = noise), n)
  list(x = x, y = rep(0:1, c(outer, n - outer)))
}

test_that("test_kernel_pca: fit then predict equals the fit's scores; shapes", {
  x_fit <- sk_data(5, 4)
  x_pred <- sk_data(2, 4, seed = 1)
  kernels <- list(list("vanilladot", list()), list("rbfdot", list(sigma = 0.25)),
                  list("polydot", list(degree = 3, scale = 0.25, offset = 1)))
  for (solver in c("auto", "exact", "iterative")) {
    for (k in kernels) {
      fit <- suppressWarnings(kpca(x_fit, kernel = k[[1]], kpar = k[[2]], features = 4,
                                   solver = solver))
      expect_equal(abs(predict(fit, x_fit)), abs(fit$rotated), tolerance = 1e-6,
                   ignore_attr = TRUE)
      expect_gt(length(fit$rotated), 0L)
      expect_identical(ncol(predict(fit, x_pred)), ncol(fit$rotated))
      if (k[[1]] != "vanilladot") {
        back <- preimage(fit, predict(fit, x_pred))
        expect_identical(dim(back), dim(x_pred))
      }
    }
  }
  # the histogram kernel sum_j min(x_j, y_j), as a precomputed matrix
  hist_k <- function(a, b) outer(seq_len(nrow(a)), seq_len(nrow(b)),
                                 Vectorize(function(i, j) sum(pmin(a[i, ], b[j, ]))))
  fit <- suppressWarnings(kpca(hist_k(x_fit, x_fit), kernel = "precomputed", features = 4))
  expect_equal(abs(predict(fit, hist_k(x_fit, x_fit))), abs(fit$rotated),
               tolerance = 1e-8, ignore_attr = TRUE)
  expect_identical(ncol(predict(fit, hist_k(x_pred, x_fit))), ncol(fit$rotated))
})

test_that("test_kernel_pca_invalid_parameters: no pre-image for a precomputed kernel", {
  set.seed(2)
  z <- matrix(rnorm(100), 10)
  fit <- kpca(crossprod(z), kernel = "precomputed", features = 3)
  expect_error(preimage(fit, fit$rotated), "precomputed")
})

test_that("test_kernel_pca_consistent_transform: the fit keeps its own data", {
  x <- sk_data(10, 10)
  fit <- kpca(x, features = 3)
  t1 <- predict(fit, x)
  x_copy <- x
  x[, 1] <- 666
  expect_equal(predict(fit, x_copy), t1)
})

test_that("test_kernel_pca_deterministic_output: the same scores every time", {
  x <- sk_data(10, 10)
  for (solver in c("iterative", "exact")) {
    first <- kpca(x, features = 2, solver = solver)$rotated[1, ]
    for (i in 1:20) expect_identical(kpca(x, features = 2, solver = solver)$rotated[1, ],
                                     first)
  }
})

test_that("test_kernel_pca_linear_kernel: the linear kernel gives PCA's projections", {
  for (d in c(4, 10)) {
    x_fit <- sk_data(5, d)
    x_pred <- sk_data(2, d, seed = 1)
    pca <- prcomp(x_fit)
    for (solver in c("exact", "iterative")) {
      k <- if (solver == "iterative") 3 else 4
      fit <- kpca(x_fit, kernel = "vanilladot", features = k, solver = solver)
      ours <- predict(fit, x_pred) / sqrt(nrow(x_fit))
      theirs <- predict(pca, x_pred)[, 1:k]
      expect_equal(abs(unname(ours)), abs(unname(theirs)), tolerance = 1e-6)
    }
  }
})

test_that("test_kernel_pca_n_components: predict() has one column per component", {
  x_fit <- sk_data(5, 4)
  x_pred <- sk_data(2, 4, seed = 1)
  for (solver in c("exact", "iterative"))
    for (k in c(1, 2, 4))
      expect_identical(dim(predict(kpca(x_fit, features = k, solver = solver), x_pred)),
                       c(2L, as.integer(k)))
})

test_that("test_remove_zero_eig: no component of a zero eigenvalue", {
  x <- rbind(c(1 - 1e-30, 1), c(1, 1), c(1, 1 - 1e-20))
  # scikit-learn returns 3 x 0 scores; kpca() says there is no component
  expect_error(kpca(x, kernel = "vanilladot"), "no eigenvalue .* exceeds 'th'")
  expect_error(kpca(x, kernel = "vanilladot", features = 2), "no positive eigenvalue")
})

test_that("test_leave_zero_eig: no division by a zero eigenvalue", {
  x_fit <- rbind(c(1, 1), c(0, 0))
  # the zero eigenvalue's component is dropped with a warning (scikit-learn
  # keeps a column of zeros), and what is kept has finite scores
  expect_warning(fit <- kpca(x_fit, kernel = "vanilladot", features = 2),
                 "only 1 of the 2 requested components")
  a <- predict(fit, x_fit)
  expect_true(all(is.finite(a)))
  expect_equal(abs(a), abs(fit$rotated), ignore_attr = TRUE)
})

test_that("test_kernel_pca_precomputed: a precomputed linear kernel equals the linear kernel", {
  x_fit <- sk_data(5, 4)
  x_pred <- sk_data(2, 4, seed = 1)
  for (solver in c("exact", "iterative")) {
    direct <- kpca(x_fit, kernel = "vanilladot", features = 4, solver = solver)
    pre <- kpca(tcrossprod(x_fit), kernel = "precomputed", features = 4, solver = solver)
    expect_equal(abs(predict(direct, x_pred)),
                 abs(predict(pre, tcrossprod(x_pred, x_fit))), tolerance = 1e-6,
                 ignore_attr = TRUE)
    expect_equal(abs(pre$rotated), abs(predict(pre, tcrossprod(x_fit))), tolerance = 1e-6,
                 ignore_attr = TRUE)
  }
})

test_that("test_kernel_pca_precomputed_non_symmetric: an asymmetric kernel matrix is refused", {
  # scikit-learn centers any square matrix; kpca() reads one triangle, so it
  # requires symmetry and says so
  expect_error(kpca(rbind(c(1, 2), c(3, 40)), kernel = "precomputed", features = 1),
               "'x' must be a symmetric kernel matrix")
})

test_that("test_nested_circles: the rings are linearly separable on two components", {
  circ <- make_circles(400)
  accuracy <- function(z) {
    d <- data.frame(y = circ$y, z)
    m <- suppressWarnings(stats::glm(y ~ ., data = d, family = stats::binomial()))
    mean((stats::fitted(m) > 0.5) == (circ$y == 1))
  }
  expect_lt(accuracy(circ$x), 0.8)
  fit <- kpca(circ$x, kernel = "rbfdot", kpar = list(sigma = 2), features = 2)
  expect_identical(accuracy(fit$rotated), 1)
})

test_that("test_kernel_conditioning: a tiny eigenvalue of rounding is not a component", {
  x <- rbind(c(5, 1), c(5 + 1e-8, 1e-8), c(5 + 1e-8, 0))
  fit <- suppressWarnings(kpca(x, kernel = "vanilladot", features = 2))
  expect_true(all(fit$eig > 0))
  expect_true(all(is.finite(fit$rotated)))
  # scikit-learn's rule: eigenvalues below 1e-12 of the largest are zero
  expect_true(all(fit$eig >= 1e-12 * max(fit$eig)))
})

test_that("test_precomputed_kernel_not_psd: negative eigenvalues are not components", {
  K <- matrix(c(4.48, -1.0, 8.07, 2.33, 2.33, 2.33, -5.76, -12.78,
                -1.0, -6.48, 4.5, -1.24, -1.24, -1.24, -0.81, 7.49,
                8.07, 4.5, 15.48, 2.09, 2.09, 2.09, -11.1, -23.23,
                2.33, -1.24, 2.09, 4.0, -3.65, -3.65, 1.02, -0.9,
                2.33, -1.24, 2.09, -3.65, 4.0, -3.65, 1.02, -0.9,
                2.33, -1.24, 2.09, -3.65, -3.65, 4.0, 1.02, -0.9,
                -5.76, -0.81, -11.1, 1.02, 1.02, 1.02, 4.86, 9.75,
                -12.78, 7.49, -23.23, -0.9, -0.9, -0.9, 9.75, 21.46), 8)
  ev <- eigen(K - outer(rowMeans(K), colMeans(K), "+") + mean(K), symmetric = TRUE)$values
  for (solver in c("exact", "iterative")) {
    # scikit-learn errors for 7 components; kpca() keeps the positive ones
    # and warns that the kernel is not positive semidefinite
    expect_warning(fit7 <- kpca(K, kernel = "precomputed", features = 7, solver = "exact"),
                   "not positive semidefinite")
    expect_equal(unname(fit7$eig), ev[ev > 0][seq_along(fit7$eig)] / 8, tolerance = 1e-8)
    fit2 <- kpca(K, kernel = "precomputed", features = 2, solver = solver)
    expect_equal(unname(fit2$eig), ev[1:2] / 8, tolerance = 1e-8)
  }
})

test_that("test_kernel_pca_solvers_equivalence: exact and iterative agree", {
  circ <- make_circles(1100)
  x_fit <- circ$x[1:1000, ]
  x_pred <- circ$x[1001:1100, ]
  for (k in c(4, 10, 20)) {
    ref <- predict(kpca(x_fit, features = k, solver = "exact"), x_pred)
    it <- predict(kpca(x_fit, features = k, solver = "iterative"), x_pred)
    expect_equal(abs(it), abs(ref), tolerance = 1e-6)
  }
})

test_that("test_kernel_pca_inverse_transform_reconstruction: preimage() reconstructs", {
  set.seed(0)
  centers <- matrix(runif(3 * 4, -10, 10), 3)
  x <- centers[rep(1:3, length.out = 100), ] + matrix(rnorm(400), 100)
  # gamma = 1 / n_features, scikit-learn's default
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 1 / 4), features = 20)
  back <- preimage(fit, fit$rotated, ridge = 1e-3)
  expect_lt(sqrt(sum((x - back)^2)) / sqrt(sum(x^2)), 0.1)
})

test_that("test_32_64_decomposition_shape: integer and double input agree", {
  set.seed(3)
  xi <- matrix(sample(0:9, 40, replace = TRUE), 10)
  a <- kpca(xi, features = 3)
  b <- kpca(xi + 0, features = 3)
  expect_identical(dim(a$rotated), dim(b$rotated))
  expect_equal(a$rotated, b$rotated)
})

test_that("test_kernel_pca_feature_names_out: components are named Comp.1..k", {
  x <- sk_data(10, 4)
  fit <- kpca(x, features = 3)
  expect_identical(colnames(predict(fit, x)), paste0("Comp.", 1:3))
  expect_identical(colnames(fit$rotated), paste0("Comp.", 1:3))
})
