# The dense fit in one trip to C (src/fit.c, issue 51): dense_eigen()
# fills, centers and solves, and measures the certificate's residuals
# itself, from the points it read once (certificate_norms()), where the R
# side once recentered the vectors, recomputed the kernel through
# kernel_block_product() and recentered the product. Checked against that
# assembly (kernel_operator()$apply(), the matrix-free solver's product,
# still in use) and against plain R's Kc v - value v.

# The exact solver as kpca() calls it (dense_eigen(), R/eigen.R), for its
# unit vectors and the norms behind its residuals (which eigen_certificate()
# divides by the largest eigenvalue, the extra pair's included).
solve_dense <- function(x, kernel, features = 0L, th = 1e-4, variance = NULL,
                        threads = 1L, solver = "exact", control = list()) {
  kernel <- if (is.character(x)) fastkpca:::resolve_string_kernel(kernel, list(), TRUE)
            else fastkpca:::kpca_kernel(kernel, list(), TRUE)
  op <- fastkpca:::kernel_operator(x, kernel, threads = threads)
  res <- fastkpca:::dense_eigen(op, solver, as.integer(features), th, control, variance,
                                step = NULL)
  res$norms <- res$residuals * max(res$values)
  res$op <- op
  res
}

# ||Kc v / n - value v|| by the R assembly of before: H K H V / n from the
# kernel's rows times V, tile by tile (the matrix-free solver's product).
assembled_norms <- function(res) {
  AV <- res$op$apply(res$vectors)
  sqrt(colSums((AV - sweep(res$vectors, 2L, res$values, "*"))^2))
}

# The same in plain R from the kernel matrix K.
plain_norms <- function(res, K) {
  n <- nrow(K)
  H <- diag(n) - 1 / n
  AV <- H %*% (K %*% (H %*% res$vectors)) / n
  sqrt(colSums((AV - sweep(res$vectors, 2L, res$values, "*"))^2))
}

# The norms are at the rounding of a product (about 1e-15 of the largest
# eigenvalue): two ways of summing it agree to that, not to digits.
expect_certificate_measured <- function(res, K, label) {
  # measured, not zero: rounding leaves a residual in every pair
  expect_true(length(res$norms) > 0 && all(res$norms > 0), label = label)
  scale <- max(res$values)
  expect_lt(max(abs(res$norms - assembled_norms(res))) / scale, 1e-13, label = label)
  expect_lt(max(abs(res$norms - plain_norms(res, K))) / scale, 1e-13, label = label)
}

test_that("the exact fit's certificate is measured in C, as the R assembly measured it", {
  skip_if_exact_solver_unsafe()
  x <- with_seed(1, matrix(rnorm(260 * 4), 260))
  kernels <- list(rbf = rbfdot(0.3), laplace = laplacedot(0.5),
                  sum = rbfdot(0.3) + vanilladot())  # no shared tiles: block by block
  for (name in names(kernels)) {
    k <- kernels[[name]]
    K <- kernel_matrix(k, x)
    expect_certificate_measured(solve_dense(x, k, features = 6), K, paste(name, "features"))
    expect_certificate_measured(solve_dense(x, k, threads = 2L), K, paste(name, "threshold"))
  }
  k <- rbfdot(0.3)
  K <- kernel_matrix(k, x)
  expect_certificate_measured(solve_dense(x, k, variance = 0.8), K, "variance")
  # the two-stage reduction
  local_tuning(band_min_rows = 0)
  expect_certificate_measured(solve_dense(x, k, features = 8, threads = 2L), K, "two stages")
  # more vectors than fill half the buffer: measured in two blocks
  expect_certificate_measured(solve_dense(x, k, features = 200, threads = 2L), K, "blocks")
})

test_that("on wide data the certificate's kernel is the fill's again, through the buffer", {
  skip_if_exact_solver_unsafe()
  # wide blocks from 8 columns on: the points read in place, K refilled
  # into the buffer by the wide blocks for the product (wide_certificate())
  local_tuning(wide_min_d = 8L, wide_group = 16L)
  x <- with_seed(6, matrix(rnorm(240 * 40, mean = 2), 240))
  for (k in list(rbfdot(0.02), laplacedot(0.1), vanilladot())) {
    K <- kernel_matrix(k, x)
    expect_certificate_measured(solve_dense(x, k, features = 6), K, class(k)[1])
    expect_certificate_measured(solve_dense(x, k, threads = 2L), K, class(k)[1])
  }
})

test_that("the iterative solver's residuals are the buffer's product's, digit for digit", {
  # a loose tolerance leaves residuals far above rounding: a relative check
  x <- with_seed(5, matrix(rnorm(300 * 3), 300))
  k <- rbfdot(0.5)
  res <- suppressWarnings(solve_dense(x, k, features = 4, solver = "iterative",
                                      control = list(tol = 1e-3, ncv = 12, maxit = 1)))
  expect_gt(min(res$norms) / max(res$values), 1e-10)
  expect_equal(res$norms, plain_norms(res, kernel_matrix(k, x)), tolerance = 1e-8)
})

test_that("the certificate is measured on sparse rows, strings and a kernel matrix", {
  skip_if_exact_solver_unsafe()
  skip_if_not_installed("Matrix")
  x <- with_seed(2, matrix(rpois(200 * 30, 0.3), 200))
  xs <- fastkpca:::as_data_rows(Matrix::Matrix(x, sparse = TRUE))
  k <- rbfdot(0.05)
  K <- kernel_matrix(k, x)
  expect_certificate_measured(solve_dense(xs, k, features = 5), K, "sparse")
  words <- with_seed(3, vapply(seq_len(60), function(i)
    paste(sample(letters[1:4], 8, replace = TRUE), collapse = ""), ""))
  ks <- stringdot(length = 3, type = "spectrum")
  Ks <- kernel_matrix(ks, words)
  expect_certificate_measured(solve_dense(words, ks, features = 4), Ks, "strings")
  # a precomputed kernel matrix: the user's matrix times the vectors
  expect_certificate_measured(solve_dense(K, "precomputed", features = 5), K, "precomputed")
})

test_that("the default fit enters C once for the fit and copies no data", {
  skip_if_exact_solver_unsafe()
  x <- with_seed(4, matrix(rnorm(300 * 5), 300))
  entered <- entries_entered(kpca(x))
  expect_true("dense_eigen" %in% entered)
  expect_false(any(c("kernel_block_product", "center_columns") %in% entered))
  # no copy of x on the way (tracemem reports each duplicate of it)
  skip_if_not(capabilities("profmem"), "R built without memory profiling")
  copies <- utils::capture.output({
    tracemem(x)
    fit <- kpca(x)
    untracemem(x)
  })
  expect_identical(grep("^tracemem\\[", copies, value = TRUE), character())
})
