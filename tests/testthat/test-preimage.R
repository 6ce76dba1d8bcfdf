# preimage(): the kernel ridge regression from scores back to inputs.

# The pre-image formula in plain R: B = (k(Z, Z) + ridge I)^-1 X,
# xhat = k(S / sqrt(n), Z) B, with Z = rotated / sqrt(n) and k from the
# kernel's formula (helper-oracles.R), independent of the C code.
preimage_oracle <- function(fit, scores, ridge, kfun) {
  n <- nrow(fit$rotated)
  z <- fit$rotated / sqrt(n)
  B <- solve(kfun(z, z) + ridge * diag(n), fit$xmatrix)
  kfun(scores / sqrt(n), z) %*% B
}

rbf_oracle <- function(sigma) function(a, b) {
  d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
  exp(-sigma * pmax(d2, 0))
}
poly_oracle <- function(degree, scale, offset) function(a, b)
  (scale * tcrossprod(a, b) + offset)^degree

test_that("preimage() follows the kernel ridge formula (plain-R oracle)", {
  x <- fx_arrests()
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 4)
  new <- x[1:7, , drop = FALSE] + 0.1
  s <- predict(fit, new)
  expect_equal(unname(preimage(fit, s, ridge = 0.3)),
               unname(preimage_oracle(fit, s, 0.3, rbf_oracle(0.2))), tolerance = 1e-10)
  # the default scores are the training scores, the default ridge is 1
  expect_equal(unname(preimage(fit)),
               unname(preimage_oracle(fit, fit$rotated, 1, rbf_oracle(0.2))),
               tolerance = 1e-10)
  expect_identical(colnames(preimage(fit)), colnames(x))

  fitp <- kpca(x, kernel = "polydot", kpar = list(degree = 2, scale = 0.5, offset = 1),
               features = 3)
  expect_equal(unname(preimage(fitp, s <- predict(fitp, new), ridge = 2)),
               unname(preimage_oracle(fitp, s, 2, poly_oracle(2, 0.5, 1))),
               tolerance = 1e-10)
})

test_that("the solved map is reused only by the same fit and ridge, and survives a reload", {
  x <- fx_random()
  k <- rbf_oracle(0.3)
  fit <- kpca(x, kpar = list(sigma = 0.3), features = 3)
  other <- kpca(x[-1, ], kpar = list(sigma = 0.3), features = 3)
  new <- x[1:4, ] + 0.05
  for (ridge in c(0.5, 2, 0.5)) {
    # the same fit with two ridges, then another fit, then the first again
    expect_equal(unname(preimage(fit, predict(fit, new), ridge = ridge)),
                 unname(preimage_oracle(fit, predict(fit, new), ridge, k)), tolerance = 1e-10)
    expect_equal(unname(preimage(other, predict(other, new), ridge = ridge)),
                 unname(preimage_oracle(other, predict(other, new), ridge, k)),
                 tolerance = 1e-10)
    expect_equal(unname(preimage(fit, ridge = ridge)),
                 unname(preimage_oracle(fit, fit$rotated, ridge, k)), tolerance = 1e-10)
  }
  # a fit whose fields were changed (as kpca_cv() does) is a different map
  sub <- fit
  sub$rotated <- fit$rotated[, 1:2]
  sub$alpha <- fit$alpha[, 1:2]
  sub$eig <- fit$eig[1:2]
  expect_equal(unname(preimage(sub, ridge = 0.5)),
               unname(preimage_oracle(sub, sub$rotated, 0.5, k)), tolerance = 1e-10)
  # saved and loaded again
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(fit, path)
  again <- readRDS(path)
  expect_equal(preimage(again, predict(again, new), ridge = 0.5),
               preimage(fit, predict(fit, new), ridge = 0.5), tolerance = 1e-12)
})

test_that("preimage() does not depend on the signs of the components", {
  x <- fx_random()
  fit <- kpca(x, kpar = list(sigma = 0.3), features = 3)
  flipped <- fit
  flip <- c(-1, 1, -1)
  flipped$rotated <- sweep(fit$rotated, 2L, flip, "*")
  flipped$alpha <- sweep(fit$alpha, 2L, flip, "*")
  expect_equal(preimage(flipped, predict(flipped, x[1:5, ]), ridge = 0.1),
               preimage(fit, predict(fit, x[1:5, ]), ridge = 0.1), tolerance = 1e-10)
})

test_that("preimage() solves indefinite systems (tanhdot) through dsysv", {
  x <- fx_cars()
  fit <- suppressWarnings(kpca(x, kernel = "tanhdot",
                               kpar = list(scale = 2, offset = -1), features = 3))
  tanh_oracle <- function(a, b) tanh(2 * tcrossprod(a, b) - 1)
  # k(Z, Z) + ridge I is indefinite for this small ridge
  z <- fit$rotated / sqrt(nrow(x))
  ridge <- 1e-3
  expect_lt(min(eigen(tanh_oracle(z, z) + ridge * diag(nrow(x)),
                      symmetric = TRUE, only.values = TRUE)$values), 0)
  expect_equal(unname(preimage(fit, ridge = ridge)),
               unname(preimage_oracle(fit, fit$rotated, ridge, tanh_oracle)),
               tolerance = 1e-8)
})

test_that("preimage() agrees with scikit-learn's inverse_transform", {
  py <- sklearn_python()
  skip_if(is.null(py), "no python with scikit-learn on the PATH")
  x <- fx_arrests()
  new <- round(x[c(3, 9, 27), ] * 0.9 + 0.05, 3)
  script <- "
from sklearn.decomposition import KernelPCA
X, Y = inp['x'], inp['new']
for name, kw in [('rbf', dict(kernel='rbf', gamma=0.2)),
                 ('poly', dict(kernel='poly', degree=2, gamma=0.5, coef0=1.0))]:
    kp = KernelPCA(n_components=4, eigen_solver='dense', fit_inverse_transform=True,
                   alpha=0.3, **kw).fit(X)
    np.savetxt(out[name + '_train'], kp.inverse_transform(kp.transform(X)), delimiter=',')
    np.savetxt(out[name + '_new'], kp.inverse_transform(kp.transform(Y)), delimiter=',')
"
  sk <- run_sklearn(py, script, list(x = x, new = new),
                    c("rbf_train", "rbf_new", "poly_train", "poly_new"))
  cases <- list(rbf = kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 4),
                poly = kpca(x, kernel = "polydot",
                            kpar = list(degree = 2, scale = 0.5, offset = 1), features = 4))
  for (name in names(cases)) {
    fit <- cases[[name]]
    expect_equal(unname(preimage(fit, ridge = 0.3)), unname(sk[[paste0(name, "_train")]]),
                 tolerance = 1e-6)
    expect_equal(unname(preimage(fit, predict(fit, new), ridge = 0.3)),
                 unname(sk[[paste0(name, "_new")]]), tolerance = 1e-6)
  }
})

# Mika et al.'s fixed-point iteration in plain R, from a given start, for a
# fixed number of steps.
mika_oracle <- function(fit, scores, start, sigma, steps) {
  x <- fit$xmatrix; n <- nrow(x)
  A <- fit$alpha / sqrt(n)
  g <- (scores / sqrt(n)) %*% t(A)
  g <- g + (1 - rowSums(g)) / n
  z <- start
  for (it in seq_len(steps)) {
    w <- g * rbf_oracle(sigma)(z, x)
    z <- (w %*% x) / rowSums(w)
  }
  z
}

test_that("preimage(method = \"fixed-point\") is Mika et al.'s iteration (plain-R oracle)", {
  x <- as.matrix(rings[, c("x1", "x2")])
  fit <- kpca(x, kpar = list(sigma = 1), features = 8)
  set.seed(4)
  noisy <- x[seq(1, 300, by = 10), ] + matrix(rnorm(60, sd = 0.3), ncol = 2)
  s <- predict(fit, noisy)
  start <- preimage(fit, s, ridge = 0.1)
  one <- suppressWarnings(preimage(fit, s, ridge = 0.1, method = "fixed-point",
                                   control = list(maxit = 1)))
  expect_equal(unname(one), unname(mika_oracle(fit, s, start, 1, 1)), tolerance = 1e-10)
  five <- suppressWarnings(preimage(fit, s, ridge = 0.1, method = "fixed-point",
                                    control = list(maxit = 5, tol = 1e-15)))
  expect_equal(unname(five), unname(mika_oracle(fit, s, start, 1, 5)), tolerance = 1e-10)
  # converged: a fixed point of the oracle's map
  z <- preimage(fit, s, ridge = 0.1, method = "fixed-point")
  expect_equal(unname(mika_oracle(fit, s, z, 1, 1)), unname(z), tolerance = 1e-6)
  # and nearer the rings (radii 1 and 3) than the ridge pre-images
  gap <- function(p) { r <- sqrt(rowSums(p^2)); mean(pmin(abs(r - 1), abs(r - 3))) }
  expect_lt(gap(z), gap(start))
  # with every component, the projection of a training row is its own image:
  # the fixed point is the row itself, reached from any start in one step
  small <- fx_random()[1:20, ]
  full <- kpca(small, kpar = list(sigma = 0.3), features = 19)
  expect_equal(length(full$eig), 19L)
  one_step <- suppressWarnings(preimage(full, ridge = 5, method = "fixed-point",
                                        control = list(maxit = 1)))
  expect_equal(unname(one_step), unname(small), tolerance = 1e-8)
  expect_gt(max(abs(preimage(full, ridge = 5) - small)), 1e-3)  # the start was elsewhere
  expect_warning(preimage(fit, s, method = "fixed-point", control = list(maxit = 1, tol = 1e-15)),
                 "did not converge")
  # the training scores, iterated in C, as the oracle iterates them
  all_rows <- suppressWarnings(preimage(fit, ridge = 0.1, method = "fixed-point",
                                        control = list(maxit = 3, tol = 1e-15)))
  expect_equal(unname(all_rows),
               unname(mika_oracle(fit, fit$rotated, preimage(fit, ridge = 0.1), 1, 3)),
               tolerance = 1e-10)
  expect_error(preimage(kpca(x, kernel = "laplacedot", features = 2), method = "fixed-point"),
               "needs the \"rbfdot\" kernel")
  expect_error(preimage(fit, method = "newton"), "'method' must be")
  expect_error(preimage(fit, method = "fixed-point", control = list(maxit = 0)),
               "'control\\$maxit'")
  expect_error(preimage(fit, method = "fixed-point", control = list(foo = 1)),
               "unknown entry")
})

test_that("preimage() rejects bad input with clear errors", {
  x <- fx_arrests()
  fit <- kpca(x, kpar = list(sigma = 0.2), features = 3)
  expect_error(preimage(fit, ridge = 0), "'ridge' must be a single positive number")
  expect_error(preimage(fit, ridge = -1), "'ridge' must be a single positive number")
  expect_error(preimage(fit, ridge = c(1, 2)), "'ridge' must be a single positive number")
  expect_error(preimage(fit, ridge = NA), "'ridge' must be a single positive number")
  expect_error(preimage(fit, matrix(0, 2, 2)), "'scores' must have 3 columns")
  expect_error(preimage(fit, matrix(0, 2, 4)), "'scores' must have 3 columns")
  expect_error(preimage(fit, matrix(NA_real_, 2, 3)), "'scores' must not contain missing")
  expect_error(preimage(fit, ridge = 1, foo = 2), "unused argument")
  K <- kernel_matrix("rbfdot", x, kpar = list(sigma = 0.2))
  pre <- kpca(K, kernel = "precomputed", features = 2)
  expect_error(preimage(pre), "precomputed")
  conf <- kpca(x, kernel = kern_conformal(kern("rbfdot"), function(r) rep(1, nrow(r))),
               features = 2)
  expect_error(preimage(conf), "conformal")
  # a single vector is one row of scores
  expect_equal(dim(preimage(fit, fit$rotated[1, ])), c(1L, 4L))
})

test_that("the C entry point preimage_coefficients errors on garbage in any argument", {
  x <- fx_random()
  fit <- kpca(x, kpar = list(sigma = 0.3), features = 3)
  z <- fit$rotated / sqrt(nrow(x))
  dimnames(z) <- NULL
  args <- list(z, fastkpca:::kernel_program(fit$kernel), list(), x, 0.5, 1L)
  solve <- function(a) do.call(.Call, c(list(fastkpca:::C_preimage_coefficients), a))
  B <- solve(args)
  k <- rbf_oracle(0.3)
  expect_equal(unname(B), unname(base::solve(k(z, z) + 0.5 * diag(nrow(x)), x)),
               tolerance = 1e-10)
  garbage <- list(NULL, NA, NA_real_, "a", numeric(0), matrix(0, 0, 0), -1, 0, c(1, 2),
                  matrix("a", 2, 2), matrix(1L, 40, 3), TRUE, Inf, NaN,
                  list(1, "a"), matrix(0, 3, 3), 2000000000L)
  for (pos in seq_along(args)) {
    for (g in seq_along(garbage)) {
      spoiled <- args
      spoiled[pos] <- list(garbage[[g]])
      expect_error(suppressWarnings(solve(spoiled)),
                   "^'(z|kernel|weights|x|ridge|threads)' must",
                   info = sprintf("argument %d, garbage %d", pos, g))
    }
  }
})

test_that("pre-images come back in the data's units for scaled and na.exclude fits", {
  aq <- airquality[, 1:4]
  complete <- stats::complete.cases(aq)
  fit <- kpca(aq, kpar = list(sigma = 0.2), features = 6, center = TRUE, scale. = TRUE,
              na.action = na.exclude)
  # the same fit on the data scaled by hand: its pre-images, unscaled by hand
  xs <- scale(as.matrix(aq[complete, ]))
  ref <- kpca(xs, kpar = list(sigma = 0.2), features = 6)
  p_ref <- preimage(ref, ridge = 0.5)
  p_ref <- sweep(sweep(p_ref, 2L, attr(xs, "scaled:scale"), "*"), 2L,
                 attr(xs, "scaled:center"), "+")
  p <- preimage(fit, fit$rotated[complete, ], ridge = 0.5)
  expect_equal(unname(p), unname(p_ref), tolerance = 1e-8)
  # new rows: the same through the hand-scaled fit
  new <- as.matrix(aq[complete, ][1:5, ]) + 1
  new_s <- scale(new, attr(xs, "scaled:center"), attr(xs, "scaled:scale"))
  q_ref <- preimage(ref, predict(ref, new_s), ridge = 0.5)
  q_ref <- sweep(sweep(q_ref, 2L, attr(xs, "scaled:scale"), "*"), 2L,
                 attr(xs, "scaled:center"), "+")
  expect_equal(unname(preimage(fit, predict(fit, new), ridge = 0.5)), unname(q_ref),
               tolerance = 1e-8)
})

test_that("a Nystrom fit learns its pre-image map on the landmarks (no n x n system)", {
  x <- as.matrix(rings[, c("x1", "x2")])
  set.seed(1)
  fit <- kpca(x, kpar = list(sigma = 0.5), features = 8, landmarks = 60)
  # the oracle: kernel ridge regression from the landmarks' unit projections
  n <- nrow(x); L <- fit$landmarks
  zL <- predict(fit, L) / sqrt(n)
  kz <- function(a, b) plain_kernel(a, b, "rbfdot", list(sigma = 0.5))
  B <- solve(kz(zL, zL) + 0.1 * diag(nrow(L)), L)
  s <- predict(fit, x[1:7, ])
  expect_equal(unname(preimage(fit, s, ridge = 0.1)), unname(kz(s / sqrt(n), zL) %*% B),
               tolerance = 1e-8)
  expect_error(preimage(fit, s, method = "fixed-point"), "needs an exact fit")
})
