# The certificate of every exact fit (eigen_certificate(), R/eigen.R):
# residuals bound the eigenvalues, and eig_angles bound the sine of the
# angle between each eigenvector and the exact one. Checked against
# eigen() in plain R, on well and badly separated spectra.

# The sine of the angle between the unit columns of A and B (column by
# column), precise for small angles.
sines <- function(A, B) {
  vapply(seq_len(ncol(B)), function(j) {
    a <- A[, j] / sqrt(sum(A[, j]^2))
    b <- B[, j] / sqrt(sum(B[, j]^2))
    sqrt(sum((b - sum(a * b) * a)^2))
  }, numeric(1))
}

test_that("the angle bound holds for Ritz pairs, on well and badly separated spectra", {
  n <- 150
  Q <- with_seed(1, qr.Q(qr(matrix(rnorm(n * n), n))))
  tail_values <- seq(1, 0.01, length.out = n - 8)
  spectra <- list(
    well = c(10, 8, 6, 4, 3, 2.5, 2, 1.5, tail_values),
    close = c(10, 10 - 1e-5, 8, 8 - 1e-3, 6, 5, 4, 3, tail_values),
    tight_tail = c(10, 8, 6, 4, 3, 3 - 1e-6, 2, 1.5, tail_values))
  p <- 7L
  checked <- 0L
  for (name in names(spectra)) {
    A <- Q %*% (spectra[[name]] * t(Q))
    A <- (A + t(A)) / 2
    for (eps in c(1e-2, 1e-4, 1e-7, 1e-10)) {
      # Rayleigh-Ritz on a subspace near the leading eigenvectors
      X <- qr.Q(qr(Q[, seq_len(p)] + eps * with_seed(2, matrix(rnorm(n * p), n, p))))
      e <- eigen(crossprod(X, A %*% X), symmetric = TRUE)
      V <- X %*% e$vectors
      norms <- sqrt(colSums((A %*% V - sweep(V, 2L, e$values, "*"))^2))
      cert <- fastkpca:::eigen_certificate(e$values, norms, n)
      actual <- sines(V, Q[, seq_len(p)])
      expect_true(all(actual <= cert$angles), label = sprintf("%s, eps %g", name, eps))
      expect_true(all(cert$angles >= 0 & cert$angles <= 1))
      # the residuals bound the eigenvalues' errors
      expect_true(all(abs(e$values - spectra[[name]][seq_len(p)]) <=
                        cert$residuals * max(e$values) * (1 + 1e-8) + 1e-13))
      checked <- checked + 1L
    }
    # well separated and close to the subspace, the bound is small
    if (name == "well") expect_lt(max(cert$angles[seq_len(p - 1L)]), 1e-8)
  }
  expect_identical(checked, 12L)
  # a multiple eigenvalue: its vectors are not pinned down, and the bound says so
  A <- Q %*% (c(10, 10, 10, 5, 4, 3, 2.5, 2, tail_values) * t(Q))
  A <- (A + t(A)) / 2
  X <- qr.Q(qr(Q[, seq_len(p)] + 1e-9 * with_seed(3, matrix(rnorm(n * p), n, p))))
  e <- eigen(crossprod(X, A %*% X), symmetric = TRUE)
  V <- X %*% e$vectors
  norms <- sqrt(colSums((A %*% V - sweep(V, 2L, e$values, "*"))^2))
  cert <- fastkpca:::eigen_certificate(e$values, norms, n)
  expect_identical(cert$angles[1:3], c(1, 1, 1))
  expect_lt(max(cert$angles[4:6]), 1e-6)
  # the pair at the end of the block has no known gap to the rest
  expect_identical(cert$angles[p], 1)
})

test_that("every solver's angle bound holds against eigen() in plain R", {
  x <- with_seed(1, matrix(rnorm(300 * 3), 300, 3) %*% diag(c(1, 0.8, 0.6)))
  n <- nrow(x)
  e <- eigen(plain_center(plain_kernel(x, x, "rbfdot", list(sigma = 0.3))) / n,
             symmetric = TRUE)
  for (solver in c("exact", "iterative", "randomized", "matrix_free")) {
    fit <- with_seed(4, kpca(x, kpar = list(sigma = 0.3), features = 5, solver = solver))
    expect_length(fit$eig_angles, 5L)
    expect_identical(names(fit$eig_angles), names(fit$eig))
    actual <- sines(fit$alpha, e$vectors[, 1:5])
    # (plain R's own vectors are within about 1e-16 / gap)
    expect_true(all(actual <= fit$eig_angles + 1e-12), label = solver)
  }
  # the default matrix-free fit pins every vector down to control$tol
  mf <- with_seed(4, kpca(x, kpar = list(sigma = 0.3), features = 5, solver = "matrix_free"))
  expect_true(all(mf$eig_angles <= 1e-8))
  # a threshold fit: the rest of the spectrum lies below th
  fit0 <- kpca(x, kpar = list(sigma = 0.3), th = 1e-3)
  k <- length(fit0$eig)
  expect_true(all(sines(fit0$alpha, e$vectors[, seq_len(k)]) <= fit0$eig_angles + 1e-12))
  # a precomputed fit carries it too
  K <- plain_kernel(x, x, "rbfdot", list(sigma = 0.3))
  pre <- kpca(K, kernel = "precomputed", features = 3)
  expect_true(all(sines(pre$alpha, e$vectors[, 1:3]) <= pre$eig_angles + 1e-12))
})

test_that("the matrix-free bound is honest on badly separated spectra", {
  # points on a circle: the rbf kernel's eigenvalues come in pairs, exactly
  # equal for evenly spaced points and split by the noise otherwise
  n <- 400
  t <- 2 * pi * (seq_len(n) - 1) / n
  for (noise in c(1e-2, 1e-4, 0)) {
    x <- cbind(cos(t), sin(t)) + noise * with_seed(3, matrix(rnorm(2 * n), n))
    e <- eigen(plain_center(plain_kernel(x, x, "rbfdot", list(sigma = 2))) / n,
               symmetric = TRUE)
    ex <- kpca(x, kpar = list(sigma = 2), features = 5, solver = "exact")
    mf <- with_seed(1, kpca(x, kpar = list(sigma = 2), features = 5, solver = "matrix_free"))
    label <- paste("noise", noise)
    expect_true(all(sines(mf$alpha, e$vectors[, 1:5]) <= mf$eig_angles + 1e-12), label = label)
    expect_true(all(sines(mf$alpha, ex$alpha) <= mf$eig_angles + 1e-12), label = label)
    expect_true(all(sines(ex$alpha, e$vectors[, 1:5]) <= ex$eig_angles + 1e-12), label = label)
    expect_lt(rel_diff(mf$eig, ex$eig), 1e-10)
    if (noise == 0) {
      # pairs of equal eigenvalues: no vector is pinned down, in any solver
      expect_identical(unname(mf$eig_angles), rep(1, 5))
      expect_identical(unname(ex$eig_angles), rep(1, 5))
    } else {
      expect_true(all(mf$eig_angles < 1e-6), label = label)
    }
  }
})

test_that("summary() shows the angle bound beside the residual", {
  x <- with_seed(1, matrix(rnorm(200 * 3), 200, 3))
  fit <- with_seed(2, kpca(x, kpar = list(sigma = 0.3), features = 3, solver = "matrix_free"))
  s <- summary(fit)
  expect_identical(s$eig_angles, fit$eig_angles)
  out <- capture.output(s)
  expect_true(any(grepl("^Angle ", out)))
  expect_true(any(grepl("^Residual ", out)))
  expect_true(any(grepl("^Angle: +a bound on the sine of the angle", out)))
  # a fit whose components were subset by hand leaves them out
  part <- fit
  part$eig <- part$eig[1:2]
  part$alpha <- part$alpha[, 1:2]
  expect_null(summary(part)$eig_angles)
  # and a damaged bound is caught
  bad <- fit
  bad$eig_angles[2] <- 2
  expect_error(predict(bad, x), "'eig_angles' must hold bounds on sines")
})

test_that("the default matrix-free fit matches the exact solver to 1e-8, column by column", {
  x <- with_seed(1, matrix(rnorm(1000 * 6), 1000, 6) %*% diag(2^(-(0:5) / 4)))
  cases <- list(rbf = list(kernel = "rbfdot", kpar = list(sigma = 0.1)),
                laplace = list(kernel = "laplacedot", kpar = list(sigma = 0.3)),
                sum = list(kernel = kern("rbfdot", sigma = 0.1) +
                             0.5 * kern("polydot", degree = 2, scale = 0.1)))
  for (name in names(cases)) {
    args <- c(list(x), cases[[name]], list(features = 8))
    ex <- do.call(kpca, c(args, list(solver = "exact")))
    mf <- with_seed(2, do.call(kpca, c(args, list(solver = "matrix_free"))))
    expect_true(all(mf$eig_angles <= 1e-8), label = name)
    expect_kpca_equal(mf, ex, tol = 1e-8, label = name)
    expect_true(all(sines(mf$alpha, ex$alpha) <= mf$eig_angles + 1e-12), label = name)
  }
})
