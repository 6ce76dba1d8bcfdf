# The fit against kernlab::kpca, the plain-R oracle, prcomp and cmdscale,
# and the invariants of math.md.

# splinedot on raw iris has eigenvalues of Kc/m from 1e4 down to 1e-4 (eight
# orders): the eigenvectors of the smallest ones are determined only to about
# 1e-6 by any solver (kernlab and the plain-R oracle disagree as much), so the
# threshold mode is compared on the other data sets only.
ill_conditioned <- function(kernel, dataset, features)
  kernel == "splinedot" && dataset == "iris" && features == 0

test_that("every kernel matches kernlab::kpca (features > 0 and threshold mode)", {
  skip_if_not_installed("kernlab")
  data <- fx_datasets()
  for (kn in names(kernel_cases)) for (dn in names(data)) for (feat in c(3, 0)) {
    if (ill_conditioned(kn, dn, feat)) next
    x <- data[[dn]]; kp <- kernel_cases[[kn]]
    fit <- kpca(x, kernel = kn, kpar = kp, features = feat)
    ref <- kernlab_fit(x, kn, kp, features = feat)
    expect_kpca_equal(fit, ref, tol = 1e-8, label = sprintf("%s/%s/features=%d", kn, dn, feat))
  }
})

test_that("every kernel matches the plain-R oracle (K, H K H, eigen)", {
  data <- fx_datasets()
  for (kn in names(kernel_cases)) for (dn in names(data)) for (feat in c(3, 0)) {
    if (ill_conditioned(kn, dn, feat)) next
    x <- data[[dn]]; kp <- kernel_cases[[kn]]
    fit <- kpca(x, kernel = kn, kpar = kp, features = feat)
    ref <- plain_kpca(x, kn, kp, features = feat)
    expect_kpca_equal(fit, ref, tol = 1e-8, label = sprintf("%s/%s/features=%d", kn, dn, feat))
    big <- max(abs(ref$K))
    expect_lt(abs(fit$variance_total - sum(diag(ref$Kc)) / nrow(x)), 1e-12 * big,
              label = sprintf("%s/%s variance_total error", kn, dn))
    expect_lt(max(abs(fit$kernel_colmeans - colMeans(ref$K))), 1e-12 * big,
              label = sprintf("%s/%s kernel_colmeans error", kn, dn))
    expect_lt(abs(fit$kernel_mean - mean(ref$K)), 1e-12 * big,
              label = sprintf("%s/%s kernel_mean error", kn, dn))
  }
})

test_that("the exact solver's two-stage reduction matches the plain-R oracle", {
  # (test-two-stage.R has the rest; this one runs wherever the core tests do,
  # arm64 and the plain path included)
  x <- fx_iris()
  local_tuning(band_min_rows = 0)
  for (feat in c(0, 8)) {
    fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.3), features = feat)
    expect_kpca_equal(fit, plain_kpca(x, "rbfdot", list(sigma = 0.3), features = feat),
                      tol = 1e-8, label = sprintf("two stages, features = %d", feat))
  }
})

test_that("a non-default threshold 'th' keeps exactly the eigenvalues above it", {
  x <- fx_arrests()
  for (th in c(0.05, 0.01, 1e-3)) {
    fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), th = th)
    ref <- plain_kpca(x, "rbfdot", list(sigma = 0.2), th = th)
    expect_equal(length(fit$eig), sum(ref$values > th), label = paste("th =", th))
    expect_kpca_equal(fit, ref, label = paste("th =", th))
    expect_equal(fit$th, th)
  }
})

test_that("degenerate eigenvalues: the eigenspace (projector) matches", {
  # 8 points on a regular octagon: the rotation symmetry makes the leading
  # eigenvalues of the centered rbf kernel come in equal pairs.
  ang <- 2 * pi * (0:7) / 8
  x <- cbind(cos(ang), sin(ang))
  ref <- plain_kpca(x, "rbfdot", list(sigma = 0.7), features = 4)
  expect_true(any(lengths(eigen_clusters(ref$eig)) > 1L))   # the oracle sees ties
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.7), features = 4)
  expect_kpca_equal(fit, ref, label = "octagon")
  skip_if_not_installed("kernlab")
  expect_kpca_equal(fit, kernlab_fit(x, "rbfdot", list(sigma = 0.7), features = 4),
                    label = "octagon vs kernlab")
})

test_that("the linear kernel is PCA: prcomp", {
  for (x in list(fx_iris(), fx_arrests(), fx_cars(), fx_random())) {
    m <- nrow(x)
    pc <- stats::prcomp(x)
    f <- min(3L, ncol(x))
    fit <- kpca(x, kernel = "vanilladot", features = f)
    expect_equal(unname(fit$eig), pc$sdev[1:f]^2 * (m - 1) / m, tolerance = 1e-10)
    expect_cols_equal_up_to_sign(fit$rotated, sqrt(m) * pc$x[, 1:f], tol = 1e-8,
                                 label = "rotated vs sqrt(m) prcomp scores")
    # the feature-space axes t(X) alpha (unit-normalised) are prcomp's rotation
    axes <- crossprod(scale(x, scale = FALSE), fit$alpha)
    axes <- sweep(axes, 2L, sqrt(colSums(axes^2)), "/")
    expect_cols_equal_up_to_sign(axes, pc$rotation[, 1:f], tol = 1e-8, label = "axes")
  }
})

test_that("the linear kernel is classical MDS: cmdscale(dist(X))", {
  for (x in list(fx_arrests(), fx_cars(), fx_random())) {
    m <- nrow(x)
    md <- stats::cmdscale(stats::dist(x), k = 2, eig = TRUE)
    fit <- kpca(x, kernel = "vanilladot", features = 2)
    expect_cols_equal_up_to_sign(fit$rotated, sqrt(m) * md$points, tol = 1e-8,
                                 label = "rotated vs sqrt(m) cmdscale")
    expect_equal(unname(fit$eig), md$eig[1:2] / m, tolerance = 1e-10)
  }
})

test_that("invariants hold: centred scores, orthogonality, normalisation", {
  cases <- list(
    list(fx_iris(), "rbfdot", list(sigma = 0.2), 5),
    list(fx_arrests(), "polydot", list(degree = 2, scale = 0.5, offset = 1), 6),
    list(fx_cars(), "tanhdot", list(scale = 0.01, offset = 0.1), 4),
    list(fx_random(), "splinedot", list(), 5),
    list(fx_random(), "laplacedot", list(sigma = 0.3), 0),
    list(fx_cars(), "besseldot", list(sigma = 0.5, order = 1, degree = 2), 0),
    list(fx_arrests(), "anovadot", list(sigma = 0.5, degree = 2), 5)
  )
  for (cs in cases) {
    x <- cs[[1]]; kn <- cs[[2]]; kp <- cs[[3]]
    m <- nrow(x)
    fit <- kpca(x, kernel = kn, kpar = kp, features = cs[[4]])
    k <- length(fit$eig)
    R <- unname(fit$rotated); A <- unname(fit$alpha); eig <- unname(fit$eig)
    Kc <- plain_center(plain_kernel(x, x, kn, kp))
    expect_lt(max(abs(colMeans(R))), 1e-10 * max(abs(R)), label = paste(kn, "colMeans(rotated)"))
    expect_equal(crossprod(R), diag(m^2 * eig, k), tolerance = 1e-9,
                 label = paste(kn, "crossprod(rotated)"))
    expect_equal(eig * colSums(A^2), rep(1, k), tolerance = 1e-9,
                 label = paste(kn, "eig * colSums(alpha^2)"))
    expect_equal(t(A) %*% Kc %*% A, m * diag(k), tolerance = 1e-8,
                 label = paste(kn, "t(alpha) Kc alpha"))
    expect_equal(R, Kc %*% A, tolerance = 1e-8, label = paste(kn, "rotated = Kc alpha"))
    expect_true(all(diff(eig) <= 0), label = paste(kn, "eig decreasing"))
  }
})

test_that("signs are deterministic: the largest |alpha| entry of each column is positive", {
  for (kn in names(kernel_cases)) {
    x <- fx_arrests()
    fit <- kpca(x, kernel = kn, kpar = kernel_cases[[kn]], features = 3)
    A <- fit$alpha
    top <- A[cbind(apply(abs(A), 2L, which.max), seq_len(ncol(A)))]
    expect_true(all(top > 0), label = paste(kn, "largest alpha entries positive"))
    # the same orientation is visible in rotated (rotated = m V sqrt(eig))
    R <- fit$rotated
    expect_true(all(R[cbind(apply(abs(A), 2L, which.max), seq_len(ncol(A)))] > 0))
  }
})

test_that("two fits of the same input are identical; threads do not change results", {
  x <- fx_iris()
  a <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 5)
  b <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 5)
  expect_identical(a$alpha, b$alpha)
  expect_identical(a$eig, b$eig)
  expect_identical(a$rotated, b$rotated)
  t1 <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 5, threads = 1)
  t4 <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 5,
             threads = test_threads(4))
  expect_equal(t1$alpha, t4$alpha, tolerance = 1e-12)
  expect_equal(t1$eig, t4$eig, tolerance = 1e-12)
  expect_equal(t1$rotated, t4$rotated, tolerance = 1e-12)
  expect_equal(t1$threads, 1L)
  expect_equal(t4$threads, test_threads(4))
})

test_that("features beyond the rank: a warning, only the real components, all finite", {
  x <- fx_random()[, 1:2]
  expect_warning(fit <- kpca(x, kernel = "vanilladot", features = 4), "components")
  expect_equal(length(fit$eig), 2L)
  expect_equal(dim(fit$alpha), c(nrow(x), 2L))
  expect_equal(dim(fit$rotated), c(nrow(x), 2L))
  expect_true(all(is.finite(fit$alpha)) && all(is.finite(fit$rotated)) && all(is.finite(fit$eig)))
  expect_kpca_equal(fit, plain_kpca(x, "vanilladot", features = 2), label = "rank 2")
  # features = m: Kc has rank at most m - 1
  y <- fx_random()[1:10, ]
  expect_warning(fm <- kpca(y, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 10))
  expect_equal(length(fm$eig), 9L)
  expect_true(all(is.finite(fm$alpha)))
  expect_kpca_equal(fm, plain_kpca(y, "rbfdot", list(sigma = 0.5), features = 9), label = "m - 1")
})

test_that("features = 0 with a threshold above every eigenvalue is an error", {
  x <- fx_arrests()
  top <- plain_kpca(x, "rbfdot", list(sigma = 0.2), features = 1)$eig
  expect_error(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), th = 2 * top), "no eigenvalue of the centered kernel matrix exceeds 'th'")
  expect_error(kpca(x, kernel = "vanilladot", th = 1e6), "no eigenvalue of the centered kernel matrix exceeds 'th'")
})

test_that("tanhdot far from positive semidefinite: a warning and finite results", {
  x <- fx_random()
  kp <- list(scale = 2, offset = -1)
  values <- eigen(plain_center(plain_kernel(x, x, "tanhdot", kp)) / nrow(x),
                  symmetric = TRUE, only.values = TRUE)$values
  npos <- sum(values > 1e-12 * max(values))
  expect_lt(min(values), -1e-3 * max(values))    # the oracle: truly non-PSD
  expect_warning(fit <- kpca(x, kernel = "tanhdot", kpar = kp, features = nrow(x)),
                 "positive")
  expect_true(all(is.finite(fit$alpha)) && all(is.finite(fit$rotated)) && all(is.finite(fit$eig)))
  expect_true(all(fit$eig > 0))
  expect_equal(length(fit$eig), npos)
  expect_kpca_equal(fit, plain_kpca(x, "tanhdot", kp, features = npos), tol = 1e-7,
                    label = "tanhdot positive part")
})

test_that("invalid 'features' and 'th' are errors", {
  x <- fx_random()
  expect_error(kpca(x, features = -1), "'features' must be a whole number")
  expect_error(kpca(x, features = 2.5), "'features' must be a whole number")
  expect_error(kpca(x, features = nrow(x) + 1), "'features' must be a whole number")
  expect_error(kpca(x, features = NA), "'features' must be a whole number")
  expect_error(kpca(x, th = -1), "'th' must be a single non-negative number")
  expect_error(kpca(x, threads = 0), "'threads' must be a whole number")
  expect_error(kpca(x[1, , drop = FALSE], kernel = "vanilladot"), "'x' must have at least 2 rows")
})

test_that("a larger fit (rings, n = 300: solver = 'auto' may go iterative) matches kernlab", {
  skip_if_not_installed("kernlab")
  x <- as.matrix(fastkpca::rings[, c("x1", "x2")])
  for (kn in names(kernel_cases)) {
    feat <- switch(kn, vanilladot = 2, polydot = 4, tanhdot = 2, 5)
    fit <- kpca(x, kernel = kn, kpar = kernel_cases[[kn]], features = feat)
    ref <- kernlab_fit(x, kn, kernel_cases[[kn]], features = feat)
    expect_kpca_equal(fit, ref, tol = 1e-8, label = sprintf("rings/%s/%s", kn, fit$solver))
  }
})

test_that("alpha and rotated are the vectors over sqrt(eig) and times n sqrt(eig), as sweep() gives them", {
  # scaled_columns() (src/fit.c) against sweep(), bit for bit, on signed,
  # tiny and huge entries; then on a fit, against its own vectors
  set.seed(11)
  V <- matrix(rnorm(5000) * 10^sample(-300:300, 5000, TRUE), 500, 10)
  s <- sqrt(runif(10)) * 10^sample(-100:100, 10, TRUE)
  expect_identical(fastkpca:::scaled_columns(V, s, TRUE), sweep(V, 2L, s, "/"))
  expect_identical(fastkpca:::scaled_columns(V, s, FALSE), sweep(V, 2L, s, "*"))
  expect_identical(dim(fastkpca:::scaled_columns(V[, 0], numeric(), TRUE)), c(500L, 0L))
  expect_error(fastkpca:::scaled_columns(V, s[-1], TRUE), "'scale' must be 10 doubles")
  expect_error(fastkpca:::scaled_columns(V, s, NA), "'divide' must be TRUE or FALSE")
  # the dimnames set in C, and checked there and by R
  named <- fastkpca:::scaled_columns(V, s, TRUE, list(NULL, paste0("c", 1:10)))
  expect_identical(unname(named), sweep(V, 2L, s, "/"))
  expect_identical(dimnames(named), list(NULL, paste0("c", 1:10)))
  expect_error(fastkpca:::scaled_columns(V, s, TRUE, list()), "'dimnames' must be NULL or a list of two")
  expect_error(fastkpca:::scaled_columns(V, s, TRUE, list(NULL, "a")), "dimnames")
  x <- fx_random()
  fit <- kpca(x, features = 4)
  V <- fit$alpha * rep(sqrt(fit$eig), each = nrow(x))
  expect_equal(unname(fit$rotated), unname(V) * rep(nrow(x) * sqrt(fit$eig), each = nrow(x)),
               tolerance = 1e-14)
})
