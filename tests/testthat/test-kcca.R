# Kernel canonical correlation, kcca() (R/kcca.R, src/kcca.c): a plain-R
# oracle of the centered regularized problem and of kernlab's, kernlab's
# kcca() at its own settings (as pairs: kernlab orders the two members of a
# pair as rounding falls), the same fit whether kernlab is loaded or not, a
# nonlinear relation that linear CCA misses, the low-rank factor.

kcca_views <- function(n, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * 2), n, 2)
  y <- cbind(x[, 1]^2 + rnorm(n, sd = 0.1), rnorm(n))
  list(x = x, y = y)
}

# The centered regularized problem with dense matrices: the generalized
# eigenproblem [0 KxKy; KyKx 0] v = rho blockdiag((Kx + cI)^2, (Ky + cI)^2) v.
kcca_oracle <- function(x, y, kx, ky, gamma, k) {
  n <- nrow(x)
  H <- diag(n) - 1 / n
  Kx <- H %*% kernel_matrix(kx, x) %*% H
  Ky <- H %*% kernel_matrix(ky, y) %*% H
  c0 <- n * gamma / 2
  Bx <- crossprod(Kx + c0 * diag(n))
  By <- crossprod(Ky + c0 * diag(n))
  Z <- matrix(0, n, n)
  A <- rbind(cbind(Z, Kx %*% Ky), cbind(Ky %*% Kx, Z))
  B <- rbind(cbind(Bx, Z), cbind(Z, By))
  values <- sort(Re(eigen(solve(B, A), only.values = TRUE)$values), decreasing = TRUE)
  list(kcor = values[seq_len(k)], Kx = Kx, Ky = Ky, Bx = Bx, By = By)
}

test_that("kcca() solves the centered regularized problem (plain-R oracle)", {
  v <- kcca_views(50)
  kx <- rbfdot(0.5)
  ky <- polydot(degree = 2, scale = 0.5)
  fit <- kcca(v$x, v$y, kernel = kx, ykernel = ky, gamma = 0.05, ncomps = 4, tol = 0,
              formulation = "centered")
  expect_s3_class(fit, "fastkpca_kcca")
  or <- kcca_oracle(v$x, v$y, kx, ky, 0.05, 4)
  expect_equal(kcor(fit), or$kcor, tolerance = 1e-8)
  # the constraints and the objective, on the dense matrices
  for (j in 1:4) {
    a <- xcoef(fit)[, j]
    b <- ycoef(fit)[, j]
    expect_equal(drop(t(a) %*% or$Bx %*% a), 1, tolerance = 1e-8)
    expect_equal(drop(t(b) %*% or$By %*% b), 1, tolerance = 1e-8)
    expect_equal(drop(t(a) %*% or$Kx %*% or$Ky %*% b), kcor(fit)[j], tolerance = 1e-8)
  }
  # the variates are Kc a and Kc b, on the training rows and by predict()
  expect_equal(fit$xvariates, or$Kx %*% xcoef(fit), tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(fit$yvariates, or$Ky %*% ycoef(fit), tolerance = 1e-8, ignore_attr = TRUE)
  p <- predict(fit, x = v$x, y = v$y)
  expect_equal(p$x, fit$xvariates, tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(p$y, fit$yvariates, tolerance = 1e-8, ignore_attr = TRUE)
  expect_identical(predict(fit), list(x = fit$xvariates, y = fit$yvariates))
  # new rows: the centered kernel between new and training rows times a
  w <- kcca_views(10, seed = 2)
  Kz <- kernel_matrix(kx, w$x, v$x)
  Kx0 <- kernel_matrix(kx, v$x)
  Kzc <- sweep(Kz - rowMeans(Kz), 2L, colMeans(Kx0)) + mean(Kx0)
  expect_equal(predict(fit, x = w$x)$x, Kzc %*% xcoef(fit), tolerance = 1e-8,
               ignore_attr = TRUE)
  expect_null(predict(fit, x = w$x)$y)
})

# kernlab's kcca() fit with each pair in fastkpca's order: kernlab's
# eigensolver puts +rho or -rho first as its rounding falls, fastkpca puts
# +rho first (columns of xcoef and ycoef swapped with their values).
kernlab_kcca_pairs <- function(fit) {
  kc <- kernlab::kcor(fit)
  o <- seq_along(kc)
  for (j in seq(1L, length(kc) - 1L, by = 2L))
    if (kc[j] < kc[j + 1L]) o[c(j, j + 1L)] <- o[c(j + 1L, j)]
  list(kcor = kc[o], xcoef = kernlab::xcoef(fit)[, o, drop = FALSE],
       ycoef = kernlab::ycoef(fit)[, o, drop = FALSE])
}

# kernlab's fit and fastkpca's of the same call (kernlab's arguments).
kcca_both <- function(args) {
  list(kernlab = kernlab_kcca_pairs(do.call(kernlab::kcca, args)),
       fastkpca = do.call(kcca, args))
}

test_that("kcca() by default gives kernlab's kcor(), xcoef() and ycoef(), each pair +rho first", {
  skip_if_not_installed("kernlab")
  # kernlab's example(kcca): 15 rows of noise, two columns each
  ex <- with_seed(1, list(x = matrix(rnorm(30), 15), y = matrix(rnorm(30), 15)))
  v <- kcca_views(60)
  w <- kcca_views(150, seed = 3)
  cases <- list(
    example = list(ex$x, ex$y, ncomps = 2),
    defaults = list(v$x, v$y, ncomps = 4),
    laplacedot = list(v$x, v$y, kernel = laplacedot(0.3), ncomps = 4, gamma = 0.2),
    anovadot = list(v$x, v$y, kernel = "anovadot", kpar = list(sigma = 0.5, degree = 2),
                    ncomps = 6),
    rbfdot_150 = list(w$x, w$y, kernel = "rbfdot", kpar = list(sigma = 0.2), ncomps = 4))
  for (label in names(cases)) {
    both <- kcca_both(cases[[label]])
    f <- both$fastkpca
    k <- both$kernlab
    expect_identical(f$formulation, "kernlab")
    # kcor: each pair +rho, -rho
    expect_identical(sign(kcor(f)), rep(c(1, -1), length.out = length(kcor(f))), label = label)
    expect_equal(kcor(f), k$kcor, tolerance = 1e-6, label = label)
    # the coefficients, up to the sign of each column (arbitrary in kernlab)
    expect_equal(align_signs(xcoef(f), k$xcoef), k$xcoef, tolerance = 1e-5, label = label)
    expect_equal(align_signs(ycoef(f), k$ycoef), k$ycoef, tolerance = 1e-5, label = label)
    # the two members of a pair: the same a, and b of opposite signs
    expect_identical(xcoef(f)[, 1], xcoef(f)[, 2], label = label)
    expect_identical(ycoef(f)[, 1], -ycoef(f)[, 2], label = label)
  }
  f <- kcca(v$x, v$y, ncomps = 4)
  expect_equal(f$gamma, 0.1)
  expect_equal(kpar(f), list(sigma = 0.1))
})

test_that("with a singular kernel matrix, kernlab's formulation agrees with kernlab where the problem is determined", {
  skip_if_not_installed("kernlab")
  # kernlab's coefficients carry small components in the null space of a
  # singular kernel matrix, which neither K a nor the constraints (where
  # they weigh 1e-6) see: the problem leaves them free up to its rounding,
  # so the comparison is in K a and in the norm of B
  v <- kcca_views(60)
  cases <- list(
    polydot = list(v$x, v$y, kernel = "polydot", kpar = list(degree = 2), gamma = 0.5, ncomps = 4),
    vanilladot = list(v$x, v$y, kernel = "vanilladot", kpar = list(), ncomps = 4),
    sum = list(v$x, v$y, kernel = rbfdot(0.2) + polydot(degree = 2), ncomps = 4))
  n <- nrow(v$x)
  for (label in names(cases)) {
    both <- kcca_both(cases[[label]])
    f <- both$fastkpca
    k <- both$kernlab
    gamma <- if (is.null(cases[[label]]$gamma)) 0.1 else cases[[label]]$gamma
    expect_equal(kcor(f), k$kcor, tolerance = 1e-6, label = label)
    Kx <- kernel_matrix(f$kernel, v$x)
    Ky <- kernel_matrix(f$kernel, v$y)
    Bx <- (Kx + gamma * diag(n)) %*% Kx + 1e-6 * diag(n)
    By <- (Ky + gamma * diag(n)) %*% Ky + 1e-6 * diag(n)
    ax <- align_signs(xcoef(f), k$xcoef)
    by <- align_signs(ycoef(f), k$ycoef)
    expect_equal(Kx %*% ax, Kx %*% k$xcoef, tolerance = 1e-6, label = paste(label, "K a"))
    expect_equal(Ky %*% by, Ky %*% k$ycoef, tolerance = 1e-6, label = paste(label, "K b"))
    # the difference in the norm of B, against a'Bx a = 1/2
    expect_lt(max(colSums((ax - k$xcoef) * (Bx %*% (ax - k$xcoef)))), 1e-12)
    expect_lt(max(colSums((by - k$ycoef) * (By %*% (by - k$ycoef)))), 1e-12)
    # and fastkpca's solves the generalized eigenproblem at least as well as kernlab's
    residual <- function(a, b, values)
      max(abs(cbind(Kx %*% Ky %*% b - sweep(Bx %*% a, 2L, values, "*"),
                    Ky %*% Kx %*% a - sweep(By %*% b, 2L, values, "*"))))
    expect_lte(residual(xcoef(f), ycoef(f), kcor(f)), residual(k$xcoef, k$ycoef, k$kcor))
  }
})

test_that("kcca() gives the same fit before and after kernlab's namespace is loaded", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("callr")
  session <- function() {
    library(fastkpca)
    set.seed(3)
    n <- 120
    X <- matrix(rnorm(n * 3), n)
    Y <- cbind(X[, 1]^2 + rnorm(n, sd = 0.1), rnorm(n))
    fit <- function() kcca(X, Y, kernel = "rbfdot", kpar = list(sigma = 0.2), ncomps = 4)
    two <- function() kcca(X, Y, kernel = rbfdot(0.2), ykernel = polydot(2), ncomps = 3)
    before <- list(fit(), two(), class(rbfdot(0.2)))
    loaded_before <- isNamespaceLoaded("kernlab")
    loadNamespace("kernlab")
    after <- list(fit(), two(), class(rbfdot(0.2)))
    list(before = before, after = after, loaded = c(loaded_before, isNamespaceLoaded("kernlab")))
  }
  res <- callr::r(session, libpath = .libPaths(), env = c(callr::rcmd_safe_env(), R_TESTS = ""))
  expect_identical(res$loaded, c(FALSE, TRUE))
  expect_identical(res$after, res$before)
  expect_identical(sign(res$before[[1]]$kcor), c(1, -1, 1, -1))
  expect_identical(sign(res$before[[2]]$kcor), c(1, -1, 1))
})

test_that("kernlab's formulation refuses a kernel that makes its regularized matrix indefinite", {
  v <- kcca_views(60)
  # tanhdot is not positive semidefinite: with a large gamma, some
  # eigenvalue l < 0 of its kernel matrix gives l^2 + gamma l + 1e-6 < 0
  K <- kernel_matrix(tanhdot(scale = 0.5, offset = -1), v$x)
  l <- eigen(K, symmetric = TRUE, only.values = TRUE)$values
  expect_true(any(l^2 + 10 * l + 1e-6 <= 0))
  expect_error(kcca(v$x, v$y, kernel = tanhdot(scale = 0.5, offset = -1), gamma = 10, ncomps = 2),
               "regularized matrix .* of 'x' is not positive definite",
               class = "fastkpca_error_data")
})

test_that("kernlab's formulation solved by fastkpca: kernlab's problem, each pair +rho then -rho", {
  v <- kcca_views(40)
  kx <- rbfdot(0.3)
  ky <- polydot(degree = 2, scale = 0.5)
  # two kernels (kernlab has no ykernel): the plain-R oracle of kernlab's problem
  f <- kcca(v$x, v$y, kernel = kx, ykernel = ky, gamma = 0.2, ncomps = 6)
  n <- nrow(v$x)
  Kx <- kernel_matrix(kx, v$x)
  Ky <- kernel_matrix(ky, v$y)
  Bx <- (Kx + 0.2 * diag(n)) %*% Kx + 1e-6 * diag(n)
  By <- (Ky + 0.2 * diag(n)) %*% Ky + 1e-6 * diag(n)
  Z <- matrix(0, n, n)
  A <- rbind(cbind(Z, Kx %*% Ky), cbind(Ky %*% Kx, Z))
  B <- rbind(cbind(Bx, Z), cbind(Z, By))
  # the oracle: eigenvalues of B^-1 A by decreasing modulus, in +-pairs
  values <- Re(eigen(solve(B, A), only.values = TRUE)$values)
  rho <- sort(abs(values), decreasing = TRUE)[c(1, 3, 5)]
  expect_equal(kcor(f), c(rho[1], -rho[1], rho[2], -rho[2], rho[3], -rho[3]), tolerance = 1e-6)
  # each column (a, b) is a generalized eigenvector with kernlab's scale
  for (j in 1:6) {
    v2 <- c(xcoef(f)[, j], ycoef(f)[, j])
    expect_equal(drop(A %*% v2), kcor(f)[j] * drop(B %*% v2), tolerance = 1e-6)
    expect_equal(drop(crossprod(xcoef(f)[, j], Bx %*% xcoef(f)[, j])), 0.5, tolerance = 1e-6)
    expect_equal(drop(crossprod(ycoef(f)[, j], By %*% ycoef(f)[, j])), 0.5, tolerance = 1e-6)
  }
  # the variates are K a, and predict() gives them on the training rows
  expect_equal(f$xvariates, Kx %*% xcoef(f), tolerance = 1e-10, ignore_attr = TRUE)
  p <- predict(f, x = v$x, y = v$y)
  expect_equal(p$x, f$xvariates, tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(p$y, f$yvariates, tolerance = 1e-10, ignore_attr = TRUE)
  # a dense problem that cannot fit is refused, with the way on
  withr_limit <- options(fastkpca.memory_limit = 1e5)
  on.exit(options(withr_limit), add = TRUE)
  expect_error(kcca(v$x, v$y, ncomps = 2), "formulation = \"centered\" works on a low-rank factor",
               class = "fastkpca_error_memory")
  expect_s3_class(kcca(v$x, v$y, ncomps = 2, formulation = "centered"), "fastkpca_kcca")
})

test_that("the first canonical correlation finds a nonlinear relation that cancor() misses", {
  set.seed(5)
  n <- 400
  t <- runif(n, -1, 1)
  x <- cbind(t, rnorm(n))                       # the signal and a noise column
  y <- cbind(cos(pi * t) + rnorm(n, sd = 0.1), rnorm(n))
  lin <- stats::cancor(x, y)$cor
  expect_lt(lin[1], 0.3)
  fit <- kcca(x, y, kpar = list(sigma = 1), ncomps = 3, formulation = "centered")
  # (the regularized correlation: smaller than that of the variates)
  expect_gt(kcor(fit)[1], 0.6)
  expect_gt(abs(cor(fit$xvariates[, 1], fit$yvariates[, 1])), 0.9)
  # the canonical variates carry the signal: on new rows too
  set.seed(6)
  t2 <- runif(200, -1, 1)
  v <- predict(fit, x = cbind(t2, rnorm(200)), y = cbind(cos(pi * t2) + rnorm(200, sd = 0.1),
                                                        rnorm(200)))
  expect_gt(abs(cor(v$x[, 1], v$y[, 1])), 0.9)
  expect_gt(abs(cor(v$x[, 1], cos(pi * t2))), 0.9)
  # independent views: a much smaller first correlation
  set.seed(7)
  ind <- kcca(x, matrix(rnorm(n * 2), n), kpar = list(sigma = 1), ncomps = 1,
              formulation = "centered")
  expect_lt(kcor(ind)[1], kcor(fit)[1] - 0.3)
})

test_that("the incomplete Cholesky factor reproduces the kernel matrix for any kernel", {
  set.seed(3)
  x <- matrix(rnorm(40 * 3), 40, 3)
  kernels <- list(rbfdot(0.3), polydot(degree = 2, scale = 0.2),
                  laplacedot(0.5), 2 * rbfdot(0.1) + vanilladot(),
                  kern_conformal(rbfdot(0.2), function(z) exp(-rowSums(z^2) / 10)))
  for (k in kernels) {
    f <- fastkpca:::kcca_ichol(x, k, tol = 0, max_rank = 40)
    K <- kernel_matrix(k, x)
    expect_lt(max(abs(tcrossprod(f$G) - K)) / max(abs(K)), 1e-9, label = format(k))
    L <- f$G[f$pivots, , drop = FALSE]
    expect_equal(L[upper.tri(L)], rep(0, sum(upper.tri(L))), label = format(k))
    # a new row's factor row is L^-1 k(pivots, z): on the training rows, G
    g <- forwardsolve(L, t(kernel_matrix(k, x, x[f$pivots, , drop = FALSE])))
    expect_lt(max(abs(t(g) - f$G)), 1e-8, label = format(k))
  }
  # a looser tolerance stops early, with the residual trace it promised
  f <- fastkpca:::kcca_ichol(x, rbfdot(0.05), tol = 1e-3, max_rank = 40)
  expect_lt(ncol(f$G), 40L)
  expect_lte(f$residual, 1e-3 * f$trace)
  expect_equal(f$trace, 40)
})

test_that("a low-rank factor keeps the correlations and holds no n x n matrix", {
  v <- kcca_views(300)
  exact <- kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 3, tol = 0,
                formulation = "centered")
  low <- kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 3, tol = 1e-6,
              formulation = "centered")
  expect_lt(low$xfactor$rank, 150L)
  expect_lt(max(abs(kcor(low) - kcor(exact))), 1e-4)
  expect_lte(low$xfactor$residual, 1e-6)
  # rank capped by max_rank
  capped <- kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 3, max_rank = 10,
                 formulation = "centered")
  expect_equal(c(capped$xfactor$rank, capped$yfactor$rank), c(10L, 10L))
  # 20000 rows: the fit is O(n M), far below one n x n matrix
  big <- kcca_views(20000)
  fit <- kcca(big$x, big$y, kpar = list(sigma = 0.5), ncomps = 2, max_rank = 100,
              formulation = "centered")
  expect_lt(as.numeric(object.size(fit)), 0.01 * 8 * 20000^2)
  expect_gt(kcor(fit)[1], 0.5)
})

test_that("kcca fits print, and kernlab's generics reach kcor(), xcoef(), ycoef()", {
  v <- kcca_views(40)
  fit <- kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 2, formulation = "centered")
  expect_output(print(fit), "Kernel canonical correlation .* 40 rows, centered formulation")
  expect_output(print(fit), "gamma = 0.02")
  expect_output(print(fit), "Kernel of y: rbfdot\\(sigma = 0.5\\)")
  expect_same_kernel(kernelf(fit), rbfdot(0.5))
  # the default says it is kernlab's formulation, and why the centered one exists
  fit_kl <- kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 2)
  expect_output(print(fit_kl), "kernlab's formulation\\s+\\(uncentered kernels\\), gamma = 0.1")
  expect_output(print(fit_kl), "formulation = \"centered\"\\s+centers the kernels")
  expect_identical(kpar(fit), list(sigma = 0.5))
  expect_identical(kcall(fit), fit$call)
  skip_if_not_installed("kernlab")
  loadNamespace("kernlab")
  expect_identical(kernlab::kcor(fit), kcor(fit))
  expect_identical(kernlab::xcoef(fit), xcoef(fit))
  expect_identical(kernlab::ycoef(fit), ycoef(fit))
})

test_that("kpar = \"automatic\" takes each view's median heuristic", {
  v <- kcca_views(50)
  y <- v$y * 10
  fit <- kcca(v$x, y, kpar = "automatic", ncomps = 2)
  expect_equal(kpar(fit)$sigma, median_sigma(v$x))
  expect_equal(fit$ykpar$sigma, median_sigma(y))
})

test_that("kcca: bad input gives errors naming the argument", {
  v <- kcca_views(30)
  expect_error(kcca(v$x, v$y[1:20, ]), "'x' and 'y' must have the same number of rows, not 30 and 20")
  expect_error(kcca(v$x, v$y, ncomps = 0), "'ncomps' must be a whole number between 1 and 30")
  expect_error(kcca(v$x, v$y, ncomps = 31), "'ncomps' must be a whole number")
  expect_error(kcca(v$x, v$y, gamma = -1), "'gamma' must be a single positive number")
  expect_error(kcca(v$x, v$y, formulation = "plain"), "'formulation' must be \"kernlab\" or \"centered\"")
  expect_error(kcca(v$x, v$y, tol = 2), "'tol' must be a single number in \\[0, 1\\)")
  expect_error(kcca(v$x, v$y, max_rank = 0), "'max_rank' must be a whole number")
  expect_error(kcca(v$x, v$y, kernel = "precomputed"), "'kernel' cannot be \"precomputed\"")
  expect_error(kcca(v$x, v$y, ykernel = "nope"), "'ykernel' must be one of")
  expect_error(kcca(v$x, v$y, kpar = list(sigma = -1)), "'kpar\\$sigma' must be positive")
  x <- v$x
  x[2, 1] <- NA
  expect_error(kcca(x, v$y), "'x' must not contain missing values")
  expect_error(kcca(v$x, letters[1:30]), "'y' must be numeric")
  expect_error(kcca(v$x, v$y, foo = 1), "unused argument: foo")
  fit <- kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 2, formulation = "centered")
  expect_error(predict(fit, x = v$x[, 1]), "'x' must have 2 columns, as the training data, not 1")
  expect_error(predict(fit, y = v$y, z = 1), "unused argument: z")
  expect_error(xcoef(fit, which = 1), "xcoef\\(\\) takes only 'object'; unknown argument 'which'")
  expect_warning(kcca(v$x, v$y, kpar = list(sigma = 0.5), ncomps = 5, max_rank = 3,
                      formulation = "centered"),
                 "only 3 canonical pairs exist at this rank \\(asked for 'ncomps' = 5\\)")
  # NA rows of new data get NA variates
  z <- v$x[1:3, ]
  z[2, 2] <- NA
  p <- predict(fit, x = z)$x
  expect_true(all(is.na(p[2, ])))
  expect_false(anyNA(p[-2, ]))
})
