# kica(): incomplete Cholesky, the contrasts against a plain-R oracle with
# full Gram matrices, recovery of known mixings, invariance, the object and
# its methods, bad input. Oracles are in helper-kica.R.

test_that("the contrasts equal a plain-R computation with incomplete Cholesky factors", {
  set.seed(11)
  n <- 120
  S <- scale(oracle_sources(n, c("uniform", "exponential", "bimodal")))
  S[, 3] <- S[, 3] + 0.5 * S[, 1]
  for (contrast in c("kgv", "kcca")) for (par in list(c(0.5, 2e-2, 2e-4), c(1, 2e-3, 2e-5))) {
    value <- fastkpca:::kica_contrast(S, par, match(contrast, c("kgv", "kcca")))
    oracle <- oracle_reduced_contrast(S, par[1], par[2], par[3], contrast)
    expect_equal(as.numeric(value), oracle, tolerance = 1e-9)
  }
  # the incomplete Cholesky factor leaves a residual trace of at most tol,
  # and a positive semidefinite residual
  y <- S[, 2]
  G <- oracle_ichol(y, 0.5, n * 1e-4)
  R <- exp(-outer(y, y, "-")^2 / 0.5) - tcrossprod(G)
  expect_lte(sum(diag(R)), n * 1e-4)
  expect_gt(min(eigen(R, symmetric = TRUE, only.values = TRUE)$values), -1e-8)
})

test_that("the KGV and KCCA contrasts agree with the full-Gram oracle as eta gets small", {
  set.seed(12)
  n <- 90
  S <- oracle_sources(n, c("uniform", "exponential", "bimodal"))
  S[, 3] <- S[, 3] + S[, 1]          # a dependent pair
  S <- scale(S)
  for (contrast in c("kgv", "kcca")) for (sigma in c(0.5, 1)) {
    code <- match(contrast, c("kgv", "kcca"))
    exact <- oracle_kica_contrast(S, sigma, 2e-2, contrast)
    errors <- vapply(c(2e-4, 2e-6, 2e-9), function(eta)
      abs(fastkpca:::kica_contrast(S, c(sigma, 2e-2, eta), code) - exact), 0)
    expect_lt(errors[3L], 1e-6 * max(1, abs(exact)))
    expect_lte(errors[3L], errors[1L] + 1e-12)
  }
  # independent sources have a smaller contrast than dependent ones
  ind <- scale(oracle_sources(n, c("uniform", "exponential")))
  dep <- cbind(ind[, 1], scale(ind[, 1]^2 + 0.3 * ind[, 2]))
  for (code in 1:2) {
    expect_lt(fastkpca:::kica_contrast(ind, c(1, 2e-2, 2e-4), code),
              fastkpca:::kica_contrast(dep, c(1, 2e-2, 2e-4), code))
  }
})

test_that("the sweeps over one pair find the minimum of the contrast over the angle", {
  set.seed(13)
  S <- scale(oracle_sources(200, c("uniform", "bimodal")))
  th <- 0.3
  G <- matrix(c(cos(th), sin(th), -sin(th), cos(th)), 2)
  mixed <- S %*% G
  par <- c(1, 2e-2, 2e-4)
  step <- pi / 16
  grid <- step * (0:7 - 4)
  r <- fastkpca:::kica_sweeps(mixed, diag(2), par, 1L, grid, step, 1e-4, 10L)
  # the same minimum by brute force over a fine grid of the period
  rotation <- function(t) matrix(c(cos(t), -sin(t), sin(t), cos(t)), 2)
  fine <- seq(-pi / 4, pi / 4, length.out = 721)
  vals <- vapply(fine, function(t)
    as.numeric(fastkpca:::kica_contrast(mixed %*% t(rotation(t)), par, 1L)), 0)
  expect_lte(r$value, min(vals) + 1e-9)
  # V is a rotation, and the value is the contrast there
  expect_equal(crossprod(r$V), diag(2), tolerance = 1e-12)
  expect_equal(r$value, as.numeric(fastkpca:::kica_contrast(mixed %*% t(r$V), par, 1L)),
               tolerance = 1e-10)
  expect_gte(r$sweeps, 1L)
  expect_gt(r$evaluations, length(grid))
  # four sources: every sweep lowers the contrast from the start's
  S4 <- scale(oracle_sources(200, c("uniform", "bimodal", "exponential", "t5")))
  V0 <- qr.Q(qr(matrix(stats::rnorm(16), 4)))
  start <- as.numeric(fastkpca:::kica_contrast(S4 %*% t(V0), par, 1L))
  r4 <- fastkpca:::kica_sweeps(S4, V0, par, 1L, grid, step, 1e-3, 10L)
  expect_lt(r4$value, start)
  expect_equal(r4$value, as.numeric(fastkpca:::kica_contrast(S4 %*% t(r4$V), par, 1L)),
               tolerance = 1e-10)
})

test_that("kica recovers known mixings", {
  set.seed(14)
  cases <- list(c("uniform", "exponential"), c("bimodal", "bimodal"),
                c("uniform", "exponential", "bimodal"))
  for (kinds in cases) {
    m <- length(kinds)
    S <- oracle_sources(500, kinds)
    A <- oracle_mixing(m)
    X <- S %*% t(A)
    for (contrast in c("kgv", "kcca")) {
      fit <- kica(X, contrast = contrast)
      # Bach and Jordan report about 0.01-0.05 on such sources; JADE, say,
      # would get about 0.1 on the two bimodal ones
      expect_lt(amari_distance(fit$W, A), 0.05)
    }
  }
})

test_that("the fit is a 'bss' object with consistent W, A, S and Xmu", {
  set.seed(15)
  X <- oracle_sources(300, c("uniform", "exponential", "t5")) %*% t(oracle_mixing(3))
  X <- X + rep(c(1, -2, 3), each = 300)
  fit <- kica(X, nstarts = 2)
  expect_s3_class(fit, c("kica", "bss"))
  expect_equal(fit$Xmu, colMeans(X))
  expect_equal(fit$S, sweep(X, 2, colMeans(X)) %*% t(fit$W), ignore_attr = TRUE)
  expect_equal(fit$W %*% fit$A, diag(3), ignore_attr = TRUE)
  expect_equal(fit$W, fit$V %*% fit$K, ignore_attr = TRUE)
  expect_equal(crossprod(fit$V), diag(3), tolerance = 1e-12)
  # whitened: unit variance (cov() divides by n - 1), uncorrelated sources
  expect_equal(stats::cov(fit$S), diag(3), ignore_attr = TRUE, tolerance = 1e-10)
  expect_equal(fit$objective,
               as.numeric(fastkpca:::kica_contrast(fit$S, c(1, 2e-2, 2e-4), 1L)))
  expect_equal(fit$objective, min(fit$starts$contrast), tolerance = 1e-10)
  expect_equal(fit$starts$kind, c("jade", "random"))
  # every setting, resolved
  expect_equal(fit[c("n.comp", "contrast", "sigma", "kappa", "eta", "nstarts", "polish")],
               list(n.comp = 3L, contrast = "kgv", sigma = 1, kappa = 2e-2, eta = 2e-4,
                    nstarts = 2L, polish = FALSE))
  big <- kica(X[rep(1:300, 4), ][1:1000, ], n.comp = 2, nstarts = 1)
  expect_equal(c(big$sigma, big$kappa, big$eta), c(0.5, 2e-3, 2e-5))
  # deterministic given the seed (the random starts)
  set.seed(3); a <- kica(X, nstarts = 3)
  set.seed(3); b <- kica(X, nstarts = 3)
  expect_identical(a$W, b$W)
  # predict() unmixes new rows; without newdata it returns S
  expect_equal(predict(fit, X[1:5, ]), fit$S[1:5, ], ignore_attr = TRUE)
  expect_identical(predict(fit), fit$S)
  expect_equal(predict(fit, as.data.frame(X[6:7, ])), fit$S[6:7, ], ignore_attr = TRUE)
  expect_error(predict(fit, X[, 1:2]), "'newdata' must have 3 columns")
  expect_output(print(fit), "Kernel ICA")
  expect_output(print(fit), "KGV")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit), fit)
})

test_that("polish, fewer components than columns and a single source work", {
  set.seed(16)
  S <- oracle_sources(400, c("uniform", "exponential"))
  A <- oracle_mixing(2)
  X <- S %*% t(A)
  fit <- kica(X, polish = TRUE)
  expect_lt(amari_distance(fit$W, A), 0.05)
  expect_true(is.finite(fit$objective.polish))
  expect_equal(fit$objective.polish,
               as.numeric(fastkpca:::kica_contrast(fit$S, c(0.5, 2e-2, 2e-4), 1L)),
               tolerance = 1e-6)
  # three observed mixtures of two sources (plus a little noise): n.comp = 2
  B <- matrix(c(1, 0.5, -0.3, 0.2, 1, 0.7), 3)
  X3 <- S %*% t(B) + matrix(stats::rnorm(1200, sd = 0.01), 400)
  fit3 <- kica(X3, n.comp = 2)
  expect_equal(dim(fit3$W), c(2L, 3L))
  expect_equal(dim(fit3$A), c(3L, 2L))
  expect_equal(fit3$W %*% fit3$A, diag(2), ignore_attr = TRUE)
  expect_lt(amari_distance(fit3$W, B), 0.05)
  one <- kica(X, n.comp = 1)
  expect_equal(dim(one$S), c(400L, 1L))
  expect_equal(stats::sd(one$S[, 1]), 1)
})

test_that("permuting or rescaling the columns of x does not change the sources", {
  set.seed(17)
  for (kinds in list(c("uniform", "exponential"), c("uniform", "exponential", "bimodal"))) {
    m <- length(kinds)
    X <- oracle_sources(400, kinds) %*% t(oracle_mixing(m))
    fit <- kica(X)
    perm <- rev(seq_len(m))
    scales <- c(1000, 0.01, 3)[seq_len(m)]
    fit2 <- kica(X[, perm] * rep(scales, each = 400))
    # the sources agree up to order and sign: their correlation matrix is a
    # signed permutation
    C <- stats::cor(fit$S, fit2$S)
    expect_lt(amari_distance(C, diag(m)), 1e-3)
    expect_equal(unname(apply(abs(C), 1, max)), rep(1, m), tolerance = 1e-3)
    # nor does moving the data far from the origin
    fit3 <- kica(X + 1e6)
    expect_lt(amari_distance(stats::cor(fit$S, fit3$S), diag(m)), 1e-3)
  }
})

test_that("amari_distance follows Bach and Jordan's formula", {
  set.seed(18)
  for (m in 2:4) {
    W <- matrix(stats::rnorm(m * m), m)
    A <- matrix(stats::rnorm(m * m), m)
    expect_equal(amari_distance(W, A), oracle_amari(W, A))
    d <- amari_distance(W, A)
    expect_true(d >= 0 && d <= 1)
    # invariant to permuting the rows of W and changing their signs
    P <- diag(m)[sample(m), ] * c(-1, 1, -1, 1)[seq_len(m)]
    expect_equal(amari_distance(P %*% W, A), d)
    # 0 for any scaled permutation of the inverse
    expect_equal(amari_distance(P %*% diag(c(2, 0.1, 7, 1)[seq_len(m)]) %*% solve(A), A), 0)
  }
  expect_equal(amari_distance(matrix(1, 2, 2), diag(2)), 1)
  expect_error(amari_distance(diag(2), diag(3)), "'W' and 'A'")
  expect_error(amari_distance(matrix(NA, 2, 2), diag(2)), "'W'")
})

test_that("bad input to kica() gives errors that name the argument", {
  set.seed(19)
  X <- oracle_sources(100, c("uniform", "exponential")) %*% t(oracle_mixing(2))
  expect_error(kica(replace(X, 3, NA)), "'x' must not contain missing")
  expect_error(kica(replace(X, 3, Inf)), "'x' must not contain infinite")
  expect_error(kica(X[1:2, ]), "'x' must have more rows than columns")
  expect_error(kica(matrix(1:6, 2, 3)), "'x' must have more rows than columns")
  expect_error(kica(cbind(X, X[, 1] + X[, 2])), "'x' has a singular covariance")
  expect_error(kica(cbind(X, 1)), "'x' has a singular covariance")
  expect_error(kica(X, n.comp = 3), "'n.comp' must be a whole number between 1 and ncol")
  expect_error(kica(X, n.comp = 0), "'n.comp'")
  expect_error(kica(X, n.comp = 1.5), "'n.comp'")
  expect_error(kica(X, contrast = "mi"), "'contrast' must be one of")
  for (arg in c("sigma", "kappa", "eta")) {
    for (bad in list(0, -1, NA, Inf, "a", c(1, 2))) {
      args <- list(X)
      args[[arg]] <- bad
      expect_error(do.call(kica, args), sprintf("'%s' must be a single positive number", arg))
    }
  }
  expect_error(kica(X, nstarts = 0), "'nstarts'")
  expect_error(kica(X, maxit = 0.5), "'maxit'")
  expect_error(kica(X, ngrid = 1), "'ngrid'")
  expect_error(kica(X, tol = -1), "'tol'")
  expect_error(kica(X, polish = NA), "'polish'")
  expect_error(kica(X, foo = 1), "unused argument")
  expect_error(kica(letters), "'x' must be numeric")
  # the C entry points check their arguments too
  expect_error(fastkpca:::kica_contrast(X, c(1, 0, 1), 1L), "'kappa'")
  expect_error(fastkpca:::kica_contrast(X, c(1, 1, 1), 3L), "'contrast'")
  expect_error(.Call(fastkpca:::C_kica_sweeps, X, diag(3), c(1, 1, 1), 1L, 0, 0.1,
                     1e-3, 10L, NULL), "'V' must be a 2 x 2 double matrix")
  expect_error(kica(X[, 1]), "'x' must have at least two columns")
  expect_error(kica(X[, 1, drop = FALSE]), "'x' must have at least two columns")
})
