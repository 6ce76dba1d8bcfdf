# solver = "randomized" (src/randomized.c) against the exact solver, and
# scikit-learn's tests of its randomized KernelPCA solver
# (sklearn/decomposition/tests/test_kernel_pca.py), ported where fastkpca
# has the feature.

blob_data <- function(n, d, centers, seed) {
  set.seed(seed)
  mid <- matrix(rnorm(centers * d, sd = 4), centers, d)
  mid[sample.int(centers, n, replace = TRUE), , drop = FALSE] + matrix(rnorm(n * d), n, d)
}

test_that("randomized eigenvalues are within 1e-6 of the exact ones", {
  # anisotropic Gaussian rows: eigenvalues without near-ties
  set.seed(1)
  x <- sweep(matrix(rnorm(400 * 4), 400, 4), 2, 2^(-(0:3) / 2), "*")
  cases <- list(list("rbfdot", list(sigma = 0.1)), list("laplacedot", list(sigma = 0.5)),
                list("polydot", list(degree = 2, scale = 0.1, offset = 1)))
  for (case in cases) for (k in c(1L, 5L, 10L)) {
    ex <- kpca(x, kernel = case[[1]], kpar = case[[2]], features = k, solver = "exact")
    set.seed(3)
    rd <- kpca(x, kernel = case[[1]], kpar = case[[2]], features = k, solver = "randomized")
    expect_identical(rd$solver, "randomized")
    expect_lte(max(abs(rd$eig / ex$eig - 1)), 1e-6)
    # the vectors too, up to sign; laplacedot's spectrum decays slowly, and
    # its vectors need more power iterations (see ?kpca)
    if (case[[1]] == "laplacedot") {
      set.seed(3)
      rd <- kpca(x, kernel = case[[1]], kpar = case[[2]], features = k,
                 solver = "randomized", control = list(power = 20))
    }
    expect_equal(abs(unname(rd$rotated)), abs(unname(ex$rotated)), tolerance = 1e-6)
  }
})

# test_kernel_pca_solvers_equivalence: fit on one set, transform another,
# same projections as the dense solver
test_that("the randomized and exact solvers give the same projections", {
  x <- blob_data(500, 2, 3, 0)
  fit_rows <- 1:400
  for (k in c(4L, 10L, 20L)) {
    ex <- kpca(x[fit_rows, ], kpar = list(sigma = 0.05), features = k, solver = "exact")
    set.seed(0)
    rd <- kpca(x[fit_rows, ], kpar = list(sigma = 0.05), features = k, solver = "randomized")
    expect_equal(abs(predict(rd, x[-fit_rows, ])), abs(predict(ex, x[-fit_rows, ])),
                 tolerance = 1e-6)
  }
})

# test_kernel_pca_linear_kernel: with a linear kernel the projections are
# those of PCA
test_that("randomized kernel PCA with a linear kernel is PCA", {
  set.seed(0)
  x <- matrix(rnorm(100 * 4), 100, 4) %*% diag(c(4, 3, 2, 1))
  pc <- stats::prcomp(x)
  set.seed(1)
  rd <- kpca(x, kernel = "vanilladot", features = 3, solver = "randomized")
  # kernlab's scale of the scores: sqrt(n) times prcomp's
  expect_equal(abs(unname(rd$rotated)) / sqrt(100), abs(unname(pc$x[, 1:3])),
               tolerance = 1e-8)
})

# test_kernel_pca_deterministic_output: the same seed gives the same fit;
# the settings are R's random number generator's
test_that("the randomized solver is reproducible with set.seed()", {
  x <- blob_data(200, 3, 4, 5)
  fits <- lapply(1:2, function(i) {
    set.seed(42)
    kpca(x, kpar = list(sigma = 0.2), features = 4, solver = "randomized",
         control = list(power = 1, oversample = 2))
  })
  expect_identical(fits[[1]]$rotated, fits[[2]]$rotated)
  expect_identical(fits[[1]]$eig, fits[[2]]$eig)
  # and the seed matters when the iterations have not converged
  set.seed(43)
  other <- kpca(x, kpar = list(sigma = 0.2), features = 4, solver = "randomized",
                control = list(power = 0, oversample = 0))
  expect_false(identical(other$eig, fits[[1]]$eig))
})

# test_kernel_pca_n_components: the number of components asked for
test_that("randomized fits have the components asked for", {
  x <- blob_data(60, 4, 2, 7)
  for (k in c(1L, 2L, 4L)) {
    rd <- kpca(x, kpar = list(sigma = 0.1), features = k, solver = "randomized")
    expect_identical(dim(rd$rotated), c(60L, k))
    expect_identical(dim(predict(rd, x[1:5, ])), c(5L, k))
  }
  # l = features + oversample larger than n: the whole space
  rd <- kpca(x[1:12, ], kpar = list(sigma = 0.1), features = 5, solver = "randomized")
  ex <- kpca(x[1:12, ], kpar = list(sigma = 0.1), features = 5, solver = "exact")
  expect_equal(rd$eig, ex$eig, tolerance = 1e-12)
})

# test_precomputed_kernel_not_psd: a kernel with a large negative
# eigenvalue is reported, as with the other solvers
test_that("a precomputed kernel that is not PSD warns with the randomized solver", {
  K <- matrix(c(4.48, -1, 8.07, 2.33, 2.33, 2.33, 2.33, 2.33, 1.07, 2.33, -1, 2.33,
                2.33, 2.33, 2.33, 2.33), 4, 4)
  K <- (K + t(K)) / 2
  K[1, 1] <- -50
  expect_warning(kpca(K, kernel = "precomputed", features = 3, solver = "randomized"),
                 "positive eigenvalues")
})

test_that("the randomized solver's settings are checked", {
  x <- blob_data(50, 2, 2, 1)
  expect_error(kpca(x, features = 0, solver = "randomized"),
               "'solver = \"randomized\"' needs 'features' > 0")
  expect_error(kpca(x, features = 2, solver = "randomized", control = list(power = -1)),
               "'control\\$power' must be a whole number between 0 and 1000")
  expect_error(kpca(x, features = 2, solver = "randomized", control = list(oversample = 1.5)),
               "'control\\$oversample' must be a whole number between 0 and 50")
  expect_error(kpca(x, features = 2, solver = "randomized", control = list(power = NA)),
               "'control\\$power' must be a single finite number")
  expect_error(kpca(x, features = 2, solver = "randomised"), "'solver' must be one of")
})
