# median_sigma(), kpar = "automatic" and kpca_cv().

test_that("median_sigma() is 1 / median squared distance (all pairs up to 2000 rows)", {
  x <- fx_iris()
  expect_equal(median_sigma(x), 1 / median(as.vector(dist(x))^2))
  expect_equal(median_sigma(x, "anovadot"), 1 / median(as.vector(dist(x))^2))
  # laplacedot and besseldot take sigma ||x - y||: 1 / median distance
  expect_equal(median_sigma(x, "laplacedot"), 1 / median(as.vector(dist(x))))
  expect_equal(median_sigma(x, "besseldot"), 1 / median(as.vector(dist(x))))
  # a data frame gives the same
  expect_equal(median_sigma(iris[, 1:4]), median_sigma(x))
})

test_that("median_sigma() uses 2000 evenly spaced rows beyond 2000 rows", {
  set.seed(11)
  x <- matrix(rnorm(2301 * 2), ncol = 2)
  rows <- round(seq(1, 2301, length.out = 2000))
  expect_equal(median_sigma(x), 1 / median(as.vector(dist(x[rows, ]))^2))
  # deterministic: the random state does not matter
  set.seed(1); a <- median_sigma(x)
  set.seed(2); b <- median_sigma(x)
  expect_identical(a, b)
})

test_that("median_sigma() skips zero distances when they are the median; errors on constant data", {
  x <- rbind(matrix(1, 8, 2), c(0, 0), c(3, 1))
  d2 <- as.vector(dist(x))^2
  expect_equal(median(d2), 0)
  expect_equal(median_sigma(x), 1 / median(d2[d2 > 0]))
  expect_error(median_sigma(matrix(2, 5, 3)), "identical rows")
  expect_error(median_sigma(fx_iris(), "polydot"), "'kernel' must be one of the kernels with a sigma")
  expect_error(median_sigma(matrix(c(1, NA), 2)), "'x' must not contain missing")
})

test_that("median_sigma() estimates the middle value of kernlab's sigest(scaled = FALSE)", {
  skip_if_not_installed("kernlab")
  x <- fx_iris()
  set.seed(3)
  est <- kernlab::sigest(x, frac = 1, scaled = FALSE)
  # sigest samples 150 random pairs: agreement within sampling error
  expect_lt(abs(log(est[[2]] / median_sigma(x))), log(1.5))
})

test_that("kpca(kpar = \"automatic\") stores the median-heuristic sigma", {
  x <- fx_arrests()
  fit <- kpca(x, kernel = "rbfdot", kpar = "automatic", features = 2)
  expect_equal(fit$kpar$sigma, median_sigma(x))
  expect_equal(fit$kernel$kpar$sigma, median_sigma(x))
  ref <- kpca(x, kernel = "rbfdot", kpar = list(sigma = median_sigma(x)), features = 2)
  expect_equal(fit$rotated, ref$rotated)
  # after na.action: the sigma of the rows used
  xna <- rbind(x, NA)
  expect_equal(kpca(xna, kpar = "automatic", features = 2)$kpar$sigma, median_sigma(x))
  lap <- kpca(x, kernel = "laplacedot", kpar = "automatic", features = 2)
  expect_equal(lap$kpar$sigma, median_sigma(x, "laplacedot"))
  bes <- kpca(x, kernel = "besseldot", kpar = "automatic", features = 2)
  expect_equal(bes$kpar, list(sigma = median_sigma(x, "besseldot"), order = 1, degree = 1))
  # formula interface
  f <- kpca(~ x1 + x2, data = rings, kpar = "automatic", features = 2)
  expect_equal(f$kpar$sigma, median_sigma(rings[, c("x1", "x2")]))
  expect_error(kpca(x, kernel = "polydot", kpar = "automatic"),
               "with kpar = \"automatic\", 'kernel' must be one of the kernels with a sigma")
  expect_error(kpca(tcrossprod(x), kernel = "precomputed", kpar = "automatic"),
               "'kpar = \"automatic\"' needs the data")
  expect_error(kpca(x, kernel = kern("rbfdot"), kpar = "automatic"), "'kpar' must not be given")
})

# ---------------------------------------------------------------------------
# kpca_cv(): plain-R oracles of both criteria, with fixed fold ids.

# Kernel PCA of train in plain R (eigen()), projections of test onto the unit
# axes, and both criteria for f components, for the Gaussian kernel.
cv_oracle <- function(x, folds, sigma, f, ridge) {
  k <- function(a, b) exp(-sigma * pmax(outer(rowSums(a^2), rowSums(b^2), "+") -
                                          2 * tcrossprod(a, b), 0))
  rec <- res_num <- res_den <- 0
  fold_rec <- fold_res <- fold_n <- fold_kc <- numeric()
  for (v in sort(unique(folds))) {
    tr <- x[folds != v, , drop = FALSE]; te <- x[folds == v, , drop = FALSE]
    m <- nrow(tr)
    K <- k(tr, tr)
    H <- diag(m) - 1 / m
    Kc <- H %*% K %*% H
    e <- eigen(Kc, symmetric = TRUE)
    V <- e$vectors[, 1:f, drop = FALSE]; lam <- e$values[1:f]       # eigenvalues of Kc
    Ztr <- sweep(V, 2, sqrt(lam), "*")                                # unit-axis projections
    Kz <- k(te, tr)
    Kzc <- Kz - rowMeans(Kz) - matrix(colMeans(K), nrow(te), m, byrow = TRUE) + mean(K)
    Zte <- sweep(Kzc %*% V, 2, sqrt(lam), "/")
    B <- solve(k(Ztr, Ztr) + ridge * diag(m), tr)
    xhat <- k(Zte, Ztr) %*% B
    kc <- 1 - 2 * rowMeans(Kz) + mean(K)
    r <- kc - rowSums(Zte^2)
    fold_rec <- c(fold_rec, mean(rowSums((te - xhat)^2)))
    fold_n <- c(fold_n, nrow(te))
    fold_res <- c(fold_res, sum(r) / sum(kc))
    fold_kc <- c(fold_kc, sum(kc))
    rec <- rec + sum((te - xhat)^2)
    res_num <- res_num + sum(r); res_den <- res_den + sum(kc)
  }
  se <- function(e, w, p) sqrt(sum(w * (e - p)^2) / sum(w) / (length(e) - 1))
  list(reconstruction = rec / nrow(x), residual = res_num / res_den,
       se_reconstruction = se(fold_rec, fold_n, rec / nrow(x)),
       se_residual = se(fold_res, fold_kc, res_num / res_den))
}

test_that("kpca_cv() matches plain-R oracles of both criteria (fixed fold ids)", {
  x <- fx_arrests()
  folds <- rep(1:3, length.out = nrow(x))
  sigmas <- c(0.1, 0.4)
  feats <- c(2, 3)
  rec <- kpca_cv(x, "rbfdot", grid = list(sigma = sigmas), features = feats,
                 folds = folds, ridge = 0.5)
  res <- kpca_cv(x, "rbfdot", grid = list(sigma = sigmas), features = feats,
                 folds = folds, criterion = "residual")
  expect_identical(names(rec$results), c("sigma", "features", "error", "se"))
  expect_equal(nrow(rec$results), 4L)
  for (i in seq_len(nrow(rec$results))) {
    s <- rec$results$sigma[i]; f <- rec$results$features[i]
    o <- cv_oracle(x, folds, s, f, 0.5)
    expect_equal(rec$results$error[i], o$reconstruction, tolerance = 1e-8)
    expect_equal(rec$results$se[i], o$se_reconstruction, tolerance = 1e-6)
    expect_equal(res$results$error[i], o$residual, tolerance = 1e-8)
    expect_equal(res$results$se[i], o$se_residual, tolerance = 1e-6)
  }
  # best is the smallest error, refitted on all rows
  b <- which.min(rec$results$error)
  expect_equal(rec$best$features, rec$results$features[b])
  expect_equal(rec$best$kpar$sigma, rec$results$sigma[b])
  ref <- kpca(x, kernel = "rbfdot", kpar = list(sigma = rec$results$sigma[b]),
              features = rec$results$features[b])
  expect_equal(rec$fit$rotated, ref$rotated)
  expect_identical(rec$folds, folds)
})

test_that("kpca_cv() takes a list of kernel objects, random folds and kpca() arguments", {
  x <- fx_random()
  grid <- list(kern("rbfdot", sigma = 0.3), kern("laplacedot", sigma = 0.5))
  set.seed(5)
  cv <- kpca_cv(x, grid = grid, features = 2, folds = 4, threads = 1)
  expect_identical(names(cv$results), c("kernel", "features", "error", "se"))
  expect_identical(cv$results$kernel, vapply(grid, format, ""))
  expect_equal(sort(unique(cv$folds)), 1:4)
  expect_equal(as.vector(table(cv$folds)), rep(10L, 4))
  # the same random folds again with the same seed
  set.seed(5)
  expect_identical(kpca_cv(x, grid = grid, features = 2, folds = 4)$results, cv$results)
  expect_identical(cv$fit$threads, 1L)
  expect_true(cv$best$kernel$name %in% c("rbfdot", "laplacedot"))
  # printing and plotting work
  expect_output(print(cv), "Best: ")
  pdf(NULL); on.exit(dev.off())
  expect_identical(plot(cv), cv)
  cv2 <- kpca_cv(x, "rbfdot", grid = list(sigma = c(0.05, 0.5, 5)), features = c(1, 3),
                 folds = rep(1:2, 20), criterion = "residual")
  expect_identical(plot(cv2), cv2)
  # the default grid: seven sigmas around the median heuristic
  cv3 <- kpca_cv(x, features = 2, folds = rep(1:2, 20), criterion = "residual")
  expect_equal(cv3$results$sigma, median_sigma(x) * 2^(-3:3))
})

test_that("kpca_cv() rejects bad input with clear errors", {
  x <- fx_random()
  g <- list(sigma = c(0.1, 1))
  expect_error(kpca_cv(x, "rbfdot", grid = list(sigma = 1, degree = 2), features = 2),
               "'grid' has unknown parameter \"degree\" for kernel \"rbfdot\"")
  expect_error(kpca_cv(x, "rbfdot", grid = list(foo = 1, bar = 2), features = 2),
               "'grid' has unknown parameters \"foo\", \"bar\"")
  expect_error(kpca_cv(x, "rbfdot", grid = list(sigma = -1), features = 2),
               "'grid\\$sigma' must be positive")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 2, folds = 1:10),
               "'folds' must have one fold id per row of 'x' \\(40\\), not 10")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 2, folds = rep(1, 40)),
               "at least 2 different fold ids")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 2, folds = c(rep(1, 39), 2)),
               "fold 1 leaves 1 training row, fewer than 2")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 25, folds = rep(1:2, 20)),
               "fold 1 leaves 20 training rows, fewer than max\\(features\\) \\(25\\)")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 2, folds = 1),
               "'folds' must be a whole number between 2 and nrow\\(x\\)")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 2, ridge = 0),
               "'ridge' must be a single positive number")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 0),
               "'features' must be one or more whole numbers of at least 1")
  expect_error(kpca_cv(x, "rbfdot", grid = g), "'features' must be given")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 2, criterion = "foo"),
               "'criterion' must be")
  expect_error(kpca_cv(x, "rbfdot", grid = g, features = 2, kpar = list(sigma = 1)),
               "'...' must not set")
  expect_error(kpca_cv(x, "polydot", features = 2), "'grid' must be given")
  expect_error(kpca_cv(x, "rbfdot", grid = list(kern("rbfdot"), 1), features = 2),
               "either all kernel objects")
  expect_error(kpca_cv(x, grid = list(kern_conformal(kern("rbfdot"), function(r) rep(1, nrow(r)))),
                       features = 2), "conformal")
})

# ---------------------------------------------------------------------------
# kpca(variance = p): the fewest components reaching p of trace(Kc) / n.

test_that("kpca(variance = ) keeps the fewest components reaching the proportion (eigen() oracle)", {
  x <- fx_cars()
  K <- exp(-0.1 * as.matrix(dist(x))^2)
  n <- nrow(x)
  H <- diag(n) - 1 / n
  lam <- eigen(H %*% K %*% H / n, symmetric = TRUE, only.values = TRUE)$values
  share <- cumsum(lam) / sum(diag(H %*% K %*% H)) * n
  for (p in c(0.3, 0.5, 0.8, 0.95, 0.999)) {
    fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), variance = p)
    k <- which(share >= p)[1]
    expect_equal(length(fit$eig), k, info = p)
    expect_equal(fit$features, k)
    expect_equal(fit$variance, p)
    expect_equal(unname(fit$eig), lam[1:k], tolerance = 1e-10)
    # the same components as asking for k of them
    ref <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = k,
                solver = "exact")
    expect_equal(fit$rotated, ref$rotated, tolerance = 1e-8)
  }
  # variance = 1 stops at the rank: linear kernel on 5 columns
  lin <- kpca(x, kernel = "vanilladot", variance = 1)
  expect_equal(length(lin$eig), 5L)
  # as prcomp's cumulative proportion says
  pc <- summary(prcomp(x))$importance["Cumulative Proportion", ]
  lin8 <- kpca(x, kernel = "vanilladot", variance = 0.8)
  expect_equal(length(lin8$eig), unname(which(pc >= 0.8)[1]))
})

test_that("kpca(variance = ) rejects bad values", {
  x <- fx_cars()
  for (v in list(0, -0.5, 1.01, NA, Inf, c(0.5, 0.6), "0.5"))
    expect_error(kpca(x, variance = v), "'variance' must be a single number in \\(0, 1\\]")
  expect_error(kpca(x, variance = 0.9, features = 3), "give 'features' or 'variance', not both")
  expect_error(kpca(x, variance = 0.9, solver = "iterative"), "'variance' needs the exact solver")
})

test_that("kpca_cv() with landmarks cross-validates Nystrom fits by reconstruction", {
  x <- as.matrix(rings[, c("x1", "x2")])
  folds <- rep(1:3, length.out = nrow(x))
  set.seed(2)
  cv <- kpca_cv(x, "rbfdot", grid = list(sigma = c(0.5, 2)), features = c(4, 8),
                folds = folds, ridge = 0.1, landmarks = 50)
  expect_equal(nrow(cv$results), 4L)
  expect_true(all(is.finite(cv$results$error)))
  expect_s3_class(cv$fit, "fastkpca_nystrom")
  expect_error(kpca_cv(x, "rbfdot", grid = list(sigma = 1), features = 4, folds = folds,
                       criterion = "residual", landmarks = 50), "needs exact fits")
})

test_that("kpca_cv() compares held-out rows in the data's units when the fit scales them", {
  x <- as.matrix(rings[, c("x1", "x2")]) * c(1, 100)
  folds <- rep(1:3, length.out = nrow(x))
  xs <- scale(x)
  for (criterion in c("reconstruction", "residual")) {
    cv <- kpca_cv(x, "rbfdot", grid = list(sigma = 1), features = 6, folds = folds,
                  criterion = criterion, ridge = 0.1, center = TRUE, scale. = TRUE)
    # the folds rescale their own training rows, so the oracle is a per-fold
    # refit on scaled data: here only the units are checked (reconstruction
    # error in the data's units scales with the columns' spread)
    expect_true(is.finite(cv$results$error))
    if (criterion == "residual") expect_lt(cv$results$error, 1)
  }
  cv <- kpca_cv(x, "rbfdot", grid = list(sigma = 1), features = 6, folds = folds,
                ridge = 0.1, center = TRUE, scale. = TRUE)
  cv_unscaled_units <- kpca_cv(xs, "rbfdot", grid = list(sigma = 1), features = 6,
                               folds = folds, ridge = 0.1)
  # errors in the data's units are far larger than in standardized units
  expect_gt(cv$results$error, 10 * cv_unscaled_units$results$error)
})
