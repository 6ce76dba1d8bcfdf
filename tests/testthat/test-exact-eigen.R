# The exact solver's two tridiagonal methods (src/eigen.c, exact_eigen):
# MRRR (dstemr, for the threshold mode and many components) against
# bisection with inverse iteration (dstebz + dstein, or dsyevr), kernlab and
# plain R, on every kernel, on tied and clustered eigenvalues, and on a
# spectrum spanning many orders of magnitude.

# Run expr with the exact solver forced to one method.
with_exact_method <- function(method, expr) with_tuning(list(exact_method = method), expr)

# Both methods on the same call.
fit_both <- function(...) {
  list(mrrr = with_exact_method("mrrr", kpca(...)),
       bisection = with_exact_method("bisection", kpca(...)))
}

test_that("the rule picks MRRR for thresholds and many components", {
  expect_identical(fastkpca:::exact_method(1000, 0L), "mrrr")
  expect_identical(fastkpca:::exact_method(1000, 5L), "bisection")
  expect_identical(fastkpca:::exact_method(1000, 10L), "bisection")
  expect_identical(fastkpca:::exact_method(1000, 11L), "mrrr")
  expect_identical(with_exact_method("bisection", fastkpca:::exact_method(1000, 0L)),
                   "bisection")
  expect_error(with_exact_method("qr", fastkpca:::exact_method(1000, 0L)),
               "fastkpca.tuning$exact_method", fixed = TRUE)
  expect_error(with_exact_method(c("mrrr", "bisection"), fastkpca:::exact_method(10, 0L)),
               "fastkpca.tuning$exact_method", fixed = TRUE)
  # set around the checker, the option is checked where it is read
  old <- options(fastkpca.tuning = list(exact_method = "qr"))
  on.exit(options(old))
  expect_error(fastkpca:::exact_method(1000, 0L), "fastkpca.tuning$exact_method",
               fixed = TRUE, class = "fastkpca_error_argument")
})

test_that("threshold mode: MRRR matches bisection, plain R and kernlab on every kernel", {
  skip_if_exact_solver_unsafe()
  x <- fx_iris()
  mrrr <- list()
  for (kern in names(kernel_cases)) {
    kp <- kernel_cases[[kern]]
    # splinedot and polydot grow fast: a smaller scale keeps every kept
    # eigenvalue above 1e-12 of the largest (else some are dropped, with a
    # warning, where kernlab keeps them)
    xx <- if (kern %in% c("splinedot", "polydot")) x / 4 else x
    th <- 1e-4
    fits <- fit_both(xx, kernel = kern, kpar = kp, th = th)
    expect_kpca_equal(fits$mrrr, fits$bisection, tol = 1e-9,
                      label = paste(kern, "mrrr vs bisection"))
    ref <- plain_kpca(xx, kern, kp, th = th)
    expect_kpca_equal(fits$mrrr, ref, label = paste(kern, "mrrr vs plain R"))
    expect_gt(length(fits$mrrr$eig), 3L)
    mrrr[[kern]] <- list(fit = fits$mrrr, x = xx, kp = kp, th = th)
  }
  # and kernlab, where it is installed
  skip_if_not_installed("kernlab")
  for (kern in names(mrrr))
    with(mrrr[[kern]], expect_kpca_equal(fit, kernlab_fit(x, kern, kp, th = th),
                                         label = paste(kern, "mrrr vs kernlab")))
})

test_that("many components: MRRR (RANGE = 'I') matches dsyevr and kernlab", {
  skip_if_exact_solver_unsafe()
  x <- fx_iris()
  for (f in c(11L, 40L, 60L)) {
    fits <- fit_both(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = f,
                     solver = "exact")
    expect_equal(length(fits$mrrr$eig), f)
    expect_kpca_equal(fits$mrrr, fits$bisection, tol = 1e-9,
                      label = paste(f, "components, mrrr vs dsyevr"))
    ref <- plain_kpca(x, "rbfdot", list(sigma = 0.2), features = f)
    expect_kpca_equal(fits$mrrr, ref, label = paste(f, "components vs plain R"))
  }
  skip_if_not_installed("kernlab")
  fit <- kpca(x, kernel = "laplacedot", kpar = list(sigma = 0.3), features = 60,
              solver = "exact")
  expect_kpca_equal(fit, kernlab_fit(x, "laplacedot", list(sigma = 0.3), features = 60),
                    label = "60 components vs kernlab")
})

test_that("tied eigenvalues: the octagon, a square grid and duplicated rows", {
  skip_if_exact_solver_unsafe()
  # the octagon: the rotation symmetry pairs the eigenvalues exactly
  ang <- 2 * pi * (0:7) / 8
  octagon <- cbind(cos(ang), sin(ang))
  # a 12 x 12 grid: the symmetries of the square tie many pairs
  grid <- as.matrix(expand.grid(a = 1:12, b = 1:12)) / 4
  cases <- list(octagon = list(x = octagon, kp = list(sigma = 0.7), th = 1e-6),
                grid = list(x = grid, kp = list(sigma = 0.5), th = 1e-6))
  mrrr <- list()
  for (name in names(cases)) {
    cs <- cases[[name]]
    ref <- plain_kpca(cs$x, "rbfdot", cs$kp, th = cs$th)
    expect_true(any(lengths(eigen_clusters(ref$eig)) > 1L), label = paste(name, "has ties"))
    fits <- fit_both(cs$x, kpar = cs$kp, th = cs$th)
    expect_kpca_equal(fits$mrrr, ref, label = paste(name, "mrrr vs plain R"))
    expect_kpca_equal(fits$bisection, ref, label = paste(name, "bisection vs plain R"))
    mrrr[[name]] <- fits$mrrr
    # many components through RANGE = 'I' on the grid too
    if (name == "grid") {
      many <- with_exact_method("mrrr", kpca(cs$x, kpar = cs$kp, features = 50,
                                             solver = "exact"))
      expect_kpca_equal(many, plain_kpca(cs$x, "rbfdot", cs$kp, features = 50),
                        label = "grid, 50 components")
    }
  }
  # every row three times: a third of the spectrum is exactly zero (below
  # th) and the rest is that of the distinct rows, times three
  set.seed(3)
  x0 <- matrix(round(rnorm(40 * 3), 2), 40, 3)
  dup <- x0[rep(seq_len(40), 3), ]
  fits <- fit_both(dup, kpar = list(sigma = 0.3))
  ref <- plain_kpca(dup, "rbfdot", list(sigma = 0.3))
  expect_kpca_equal(fits$mrrr, ref, label = "duplicated rows, mrrr")
  expect_kpca_equal(fits$bisection, ref, label = "duplicated rows, bisection")
  expect_equal(unname(fits$mrrr$eig), unname(kpca(x0, kpar = list(sigma = 0.3))$eig),
               tolerance = 1e-10)
  # the same vector on each copy of a row
  V <- fits$mrrr$alpha
  expect_lt(max(abs(V[1:40, ] - V[41:80, ])), 1e-10 * max(abs(V)))
  # the octagon and the grid against kernlab, where it is installed
  skip_if_not_installed("kernlab")
  for (name in names(mrrr))
    with(cases[[name]], expect_kpca_equal(mrrr[[name]], kernlab_fit(x, "rbfdot", kp, th = th),
                                          label = paste(name, "mrrr vs kernlab")))
})

test_that("a spectrum spanning 15 orders of magnitude", {
  skip_if_exact_solver_unsafe()
  # a centered kernel matrix with known eigenvalues: K = n Q diag(lam) Q',
  # Q orthonormal and orthogonal to the constant vector, so Kc = K and the
  # eigenvalues of Kc / n are lam (and zeros)
  set.seed(21)
  n <- 150; r <- 60
  lam <- 10^seq(0, -15, length.out = r)
  A <- scale(matrix(rnorm(n * r), n, r), scale = FALSE)
  Q <- qr.Q(qr(A))
  K <- n * Q %*% (lam * t(Q))
  K <- (K + t(K)) / 2
  th <- 10^-10.1            # between two of the lam (they are 10^(15/59) apart)
  kept <- lam[lam > th]
  fits <- fit_both(K, kernel = "precomputed", th = th)
  for (m in names(fits)) {
    fit <- fits[[m]]
    expect_equal(length(fit$eig), length(kept), label = paste(m, "count"))
    if (length(fit$eig) != length(kept)) next
    # absolute accuracy relative to the largest eigenvalue, as backward
    # stability promises; the leading ones to full relative accuracy
    expect_lt(max(abs(fit$eig - kept)), 1e-13, label = paste(m, "eigenvalues"))
    expect_lt(max(abs(fit$eig[1:10] / kept[1:10] - 1)), 1e-12,
              label = paste(m, "leading eigenvalues"))
    # unit eigenvectors: orthonormal, and small residuals
    V <- sweep(fit$alpha, 2L, sqrt(fit$eig), "*")
    expect_lt(max(abs(crossprod(V) - diag(ncol(V)))), 1e-12,
              label = paste(m, "orthonormality"))
    res <- K %*% V - sweep(V, 2L, n * fit$eig, "*")
    expect_lt(max(abs(res)), 1e-12 * n, label = paste(m, "residual"))
    # leading vectors with well-separated eigenvalues: the known ones
    cosines <- abs(colSums(V[, 1:20] * Q[, 1:20]))
    expect_lt(max(abs(cosines - 1)), 1e-8, label = paste(m, "leading vectors"))
  }
  expect_lt(max(abs(fits$mrrr$eig - fits$bisection$eig)), 1e-14)
  # base R's eigen() (dsyevr, whole spectrum) agrees on the count
  expect_equal(length(fits$mrrr$eig), sum(eigen(K / n, symmetric = TRUE,
                                                only.values = TRUE)$values > th))
})

test_that("MRRR scales extreme matrices as dsyevr does", {
  skip_if_exact_solver_unsafe()
  set.seed(8)
  x <- matrix(round(rnorm(60 * 3), 2), 60, 3)
  K <- plain_kernel(x, x, "rbfdot", list(sigma = 0.4))
  ref <- with_exact_method("bisection", kpca(K, kernel = "precomputed", features = 20,
                                             solver = "exact"))
  for (s in c(1e-200, 1e200)) {
    fit <- with_exact_method("mrrr", kpca(K * s, kernel = "precomputed", features = 20,
                                          solver = "exact"))
    expect_equal(unname(fit$eig) / s, unname(ref$eig), tolerance = 1e-10,
                 info = paste("scale", s))
    expect_equal(fit$alpha * sqrt(s), ref$alpha, tolerance = 1e-8, info = paste("scale", s))
  }
})
