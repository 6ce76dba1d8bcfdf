# Centered Nystrom kernel PCA (kpca(landmarks = ...), R/nystrom.R,
# src/nystrom.c) against the exact fit, prcomp and a plain-R oracle of the
# formulas in ?kpca.

# The plain-R oracle: features z = diag(s^-1/2) U' k(L, x) from K_mm's
# eigenpairs (s > 1e-10 max s), centered by their mean over the rows,
# covariance C = Zc'Zc / n = W diag(lambda) W'; eig = lambda, rotated =
# sqrt(n) Zc W, and new rows (z(x) - mean) W sqrt(n).
plain_nystrom <- function(x, L, kernel, kpar, features, newdata = NULL) {
  n <- nrow(x)
  Kmm <- plain_kernel(L, L, kernel, kpar)
  e <- eigen(Kmm, symmetric = TRUE)
  keep <- e$values > 1e-10 * max(e$values)
  Tm <- e$vectors[, keep, drop = FALSE] %*% diag(1 / sqrt(e$values[keep]), sum(keep))
  Z <- plain_kernel(x, L, kernel, kpar) %*% Tm
  zbar <- colMeans(Z)
  Zc <- sweep(Z, 2L, zbar)
  ec <- eigen(crossprod(Zc) / n, symmetric = TRUE)
  W <- ec$vectors[, seq_len(features), drop = FALSE]
  out <- list(eig = ec$values[seq_len(features)], rotated = sqrt(n) * Zc %*% W,
              total = sum(Zc^2) / n)
  if (!is.null(newdata))
    out$predicted <- sqrt(n) * sweep(plain_kernel(newdata, L, kernel, kpar) %*% Tm,
                                     2L, zbar) %*% W
  out
}


test_that("every row as a landmark gives the exact fit (eig and rotated to 1e-8)", {
  x <- fx_random()
  for (kernel in c("rbfdot", "laplacedot", "polydot", "anovadot")) {
    kpar <- kernel_cases[[kernel]]
    ex <- kpca(x, kernel = kernel, kpar = kpar, features = 4)
    ny <- kpca(x, kernel = kernel, kpar = kpar, features = 4, landmarks = x)
    expect_s3_class(ny, "fastkpca_nystrom")
    expect_lt(rel_diff(unname(ny$eig), unname(ex$eig)), 1e-8, label = kernel)
    expect_cols_equal_up_to_sign(ny$rotated, ex$rotated, 1e-8, label = kernel)
    expect_equal(ny$landmark_rule, "given")
  }
  # kernel objects: a sum and a conformal kernel go through the same engine
  k <- kern("rbfdot", sigma = 0.3) + 0.5 * kern("polydot", degree = 2, scale = 0.2)
  kc <- kern_conformal(kern("rbfdot", sigma = 0.2), function(z) exp(-rowSums(z^2) / 20))
  for (kk in list(k, kc)) {
    ex <- kpca(x, kernel = kk, features = 3)
    ny <- kpca(x, kernel = kk, features = 3, landmarks = x[nrow(x):1, ])
    expect_lt(rel_diff(unname(ny$eig), unname(ex$eig)), 1e-8)
    expect_cols_equal_up_to_sign(ny$rotated, ex$rotated, 1e-8)
    expect_equal(predict(ny, x[1:5, ]), ny$rotated[1:5, ], tolerance = 1e-10)
  }
})

test_that("the fit agrees with a plain-R oracle of the formulas", {
  x <- fx_iris()
  new <- x[c(3, 50, 77, 140), ] + 0.05
  for (rule in c("uniform", "kmeans++")) {
    fit <- with_seed(7, kpca(x, kpar = list(sigma = 0.3), features = 4,
                             landmarks = 25, landmark_rule = rule))
    expect_equal(nrow(fit$landmarks), 25L)
    expect_equal(fit$landmarks, unname(x[fit$landmark_rows, ]), ignore_attr = TRUE)
    expect_equal(anyDuplicated(fit$landmark_rows), 0L)
    ref <- plain_nystrom(x, fit$landmarks, "rbfdot", list(sigma = 0.3), 4, new)
    expect_lt(rel_diff(unname(fit$eig), ref$eig), 1e-8, label = rule)
    expect_cols_equal_up_to_sign(fit$rotated, ref$rotated, 1e-7, label = rule)
    expect_cols_equal_up_to_sign(predict(fit, new), ref$predicted, 1e-7, label = rule)
    expect_equal(fit$variance_total, ref$total, tolerance = 1e-8)
  }
})

test_that("predict() on the training rows equals rotated, and sums over blocks equal one block", {
  x <- fx_cars()
  fit <- with_seed(3, kpca(x, kernel = "laplacedot", kpar = list(sigma = 0.3),
                           features = 3, landmarks = 13))
  expect_equal(predict(fit, x), fit$rotated, tolerance = 1e-10)
  # blocks of 5 rows (7 blocks, the last one short) give the same fit
  local_tuning(block_rows = 5)
  blocked <- kpca(x, kernel = "laplacedot", kpar = list(sigma = 0.3), features = 3,
                  landmarks = fit$landmarks)
  expect_equal(unname(blocked$eig), unname(fit$eig), tolerance = 1e-12)
  expect_equal(blocked$rotated, fit$rotated, tolerance = 1e-10)
  # the formula interface: predict() from a data frame
  d <- as.data.frame(fx_random())
  ff <- with_seed(2, kpca(~ a + b + c, data = d, features = 2, landmarks = 12))
  expect_equal(predict(ff, d), ff$rotated, tolerance = 1e-10, ignore_attr = TRUE)
})

test_that("threads and set.seed() give identical fits", {
  x <- fx_iris()
  a <- with_seed(11, kpca(x, features = 3, landmarks = 40, landmark_rule = "kmeans++",
                          threads = 1))
  b <- with_seed(11, kpca(x, features = 3, landmarks = 40, landmark_rule = "kmeans++",
                          threads = 2))
  expect_identical(a$landmark_rows, b$landmark_rows)
  expect_identical(a$eig, b$eig)
  expect_identical(a$rotated, b$rotated)
})

test_that("the linear kernel with d + 1 landmarks is PCA (prcomp)", {
  x <- fx_cars()                       # 32 x 5
  n <- nrow(x)
  pc <- prcomp(x)
  fit <- with_seed(5, kpca(x, kernel = "vanilladot", features = 4, landmarks = 6))
  expect_lt(rel_diff(unname(fit$eig), pc$sdev[1:4]^2 * (n - 1) / n), 1e-8)
  expect_cols_equal_up_to_sign(fit$rotated, sqrt(n) * pc$x[, 1:4], 1e-8)
  new <- x[1:4, ] * 0.5
  expect_cols_equal_up_to_sign(predict(fit, new),
                               sqrt(n) * predict(pc, new)[, 1:4], 1e-8)
})

test_that("features = 0 keeps the eigenvalues above th", {
  x <- fx_random()
  ex <- kpca(x, kpar = list(sigma = 0.5), th = 0.01)
  ny <- kpca(x, kpar = list(sigma = 0.5), th = 0.01, landmarks = x)
  expect_equal(length(ny$eig), length(ex$eig))
  expect_true(all(ny$eig > 0.01))
})

test_that("print and summary report the n rows and the landmarks", {
  fit <- with_seed(1, kpca(fx_iris(), features = 2, landmarks = 30))
  expect_output(print(fit), "150 observations")
  expect_output(print(fit), "Landmarks:  30 \\(uniform")
  expect_equal(summary(fit)$n, 150L)
  # a Nystrom fit keeps only fields that mean something for it
  expect_null(fit$xmatrix)
  expect_null(fit$kernel_colmeans)
  expect_null(fit$solver)
  expect_equal(fit$statistics$n, 150L)
  expect_equal(dim(fit$alpha), c(30L, 2L))
})

test_that("bad landmarks give clear errors", {
  x <- fx_random()                       # 40 x 3, columns a, b, c
  expect_error(kpca(x, features = 2, landmarks = x[, 1:2]), "'landmarks' lacks column c")
  expect_error(kpca(unname(x), features = 2, landmarks = unname(x[, 1:2])),
               "'landmarks' must have 3 columns")
  bad <- x[1:10, ]; bad[2, 2] <- NA
  expect_error(kpca(x, features = 2, landmarks = bad), "'landmarks' must not contain missing")
  expect_error(kpca(x, features = 5, landmarks = x[1:5, ]),
               "'landmarks' must have at least max\\(2, features \\+ 1\\) \\(6\\) rows")
  expect_error(kpca(x, features = 5, landmarks = 5), "'landmarks' must be a whole number")
  expect_error(kpca(x, features = 2, landmarks = 41), "'landmarks' must be a whole number")
  expect_error(kpca(x, features = 2, landmarks = rbind(x, x)),
               "'landmarks' must have at most nrow\\(x\\) \\(40\\) rows")
  expect_error(kpca(x, features = 2, landmarks = 10.5), "'landmarks' must be a whole number")
  expect_error(kpca(x, features = 2, landmarks = "many"), "'landmarks' must be NULL")
  expect_error(kpca(x, features = 2, landmarks = list(1)), "'landmarks' must be NULL")
  # five copies of one row: K_mm has rank 1
  expect_error(kpca(x, features = 2, landmarks = x[rep(1, 5), ]),
               "'landmarks' leave the kernel matrix among them with 1 positive eigenvalue")
  expect_error(kpca(x, features = 2, landmarks = 10, landmark_rule = "best"),
               "'landmark_rule' must be one of")
  K <- kernel_matrix("rbfdot", x, kpar = list(sigma = 0.1))
  expect_error(kpca(K, kernel = "precomputed", features = 2, landmarks = 10),
               "'landmarks' cannot be used with kernel = \"precomputed\"")
  # k-means++ on data with only 3 distinct rows
  dup <- x[rep(1:3, 10), ]
  expect_error(with_seed(1, kpca(dup, features = 1, landmarks = 5, landmark_rule = "kmeans++")),
               "k-means\\+\\+ found only 3 rows")
})

test_that("landmarks = \"auto\" follows the documented rule", {
  expect_equal(fastkpca:::auto_landmarks(20000, 10), 200L)
  expect_equal(fastkpca:::auto_landmarks(1e6, 30), 600L)
  expect_equal(fastkpca:::auto_landmarks(150, 10), 150L)
  fit <- with_seed(4, kpca(fx_iris(), features = 3, landmarks = "auto"))
  expect_equal(nrow(fit$landmarks), 150L)
  ex <- kpca(fx_iris(), features = 3)
  expect_lt(rel_diff(unname(fit$eig), unname(ex$eig)), 1e-8)
})

test_that("the exact fit's memory error points to landmarks = \"auto\"", {
  expect_error(fastkpca:::check_memory(1e6, 5, available = 1e9),
               "landmarks = \"auto\"")
})

test_that("a long Nyström pass and k-means++ stop at an interrupt, within one step", {
  skip_on_cran()
  setup <- quote({
    set.seed(1)
    x <- matrix(rnorm(20000 * 100), 20000, 100)
    kernel <- kern("anovadot", sigma = 0.01)   # 100 exp() per kernel value
    basis <- fastkpca:::nystrom_landmark_basis(x[1:300, ], kernel, 2L, 1L)
    fastkpca:::set_tuning(block_rows = 500L)
  })
  # pass 1 in blocks of 500 rows (40 blocks), interrupted after the
  # second: the pass stops within the block after it (interrupted_at_step(),
  # helper-work.R), whatever the load on the machine
  res <- interrupted_at_step(quote(
    fastkpca:::nystrom_statistics(x, basis, kernel, 1L, step = step)), at = 2L, setup = setup,
    after = quote(length(kpca(x[1:50, 1:3], features = 2, landmarks = 20)$eig)))
  expect_identical(res$status, "interrupted", info = child_output(res))
  expect_lte(res$after, 1L)
  # R and the package stay usable
  expect_identical(res$value, 2L)
  # k-means++ checks between landmarks: of 1000, interrupted after the
  # fifth, it draws at most one more
  res <- interrupted_at_step(quote(
    fastkpca:::nystrom_kmeanspp(x, 1000L, kernel, step = step)), at = 5L, setup = setup)
  expect_identical(res$status, "interrupted", info = child_output(res))
  expect_lte(res$after, 1L)
})

test_that("the Nyström pass and k-means++ call step once per block and landmark", {
  set.seed(1)
  x <- matrix(rnorm(2000 * 5), 2000, 5)
  kernel <- kern("rbfdot", sigma = 0.1)
  basis <- fastkpca:::nystrom_landmark_basis(x[1:30, ], kernel, 2L, 1L)
  local_tuning(block_rows = 500L)
  blocks <- 0L
  fastkpca:::nystrom_statistics(x, basis, kernel, 1L, step = function() blocks <<- blocks + 1L)
  expect_identical(blocks, 4L)
  # one step after each landmark but the last; the landmarks are those
  # drawn without it
  landmarks <- 0L
  set.seed(2)
  with_steps <- fastkpca:::nystrom_kmeanspp(x, 7L, kernel,
                                            step = function() landmarks <<- landmarks + 1L)
  expect_identical(landmarks, 6L)
  set.seed(2)
  expect_identical(with_steps, fastkpca:::nystrom_kmeanspp(x, 7L, kernel))
})

test_that("Nystrom fits center and scale the data and pad na.exclude rows, as exact fits do", {
  aq <- airquality[, 1:4]
  set.seed(3)
  fit <- kpca(aq, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 2,
              center = TRUE, scale. = TRUE, na.action = na.exclude, landmarks = 60)
  complete <- stats::complete.cases(aq)
  expect_equal(nrow(fit$rotated), nrow(aq))
  expect_true(all(is.na(fit$rotated[!complete, ])))
  expect_equal(unname(fit$center), unname(colMeans(aq[complete, ])))
  # the scaled training rows project onto their scores, NA rows give NA
  p <- predict(fit, aq)
  expect_equal(p[complete, ], fit$rotated[complete, ], ignore_attr = TRUE, tolerance = 1e-8)
  expect_true(all(is.na(p[!complete, ])))
  # with every complete row as a landmark: the exact fit on the same scaled data
  exact <- kpca(aq, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 2,
                center = TRUE, scale. = TRUE)
  all_rows <- kpca(aq, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 2,
                   center = TRUE, scale. = TRUE, landmarks = exact$xmatrix)
  expect_equal(unname(all_rows$eig), unname(exact$eig), tolerance = 1e-8)
})

test_that("blocks computed panel by panel give the oracle's statistics, for any thread count", {
  # 3000 rows and 600 landmarks: one block, whose kernel is computed and
  # summed in panels of 128 rows on one thread and 1664 rows on two
  # (panel_rows() in src/nystrom.c); the sums must not depend on the panels
  set.seed(8)
  x <- matrix(rnorm(3000 * 3), 3000, 3)
  L <- x[sample(3000, 600), ]
  one <- kpca(x, kpar = list(sigma = 0.4), features = 3, landmarks = L, threads = 1)
  two <- kpca(x, kpar = list(sigma = 0.4), features = 3, landmarks = L, threads = 2)
  expect_identical(one$statistics, two$statistics)
  expect_identical(one$rotated, two$rotated)
  K <- plain_kernel(x, L, "rbfdot", list(sigma = 0.4))
  Kc <- sweep(K, 2L, one$statistics$shift)
  expect_equal(one$statistics$sums, colSums(Kc), tolerance = 1e-12)
  expect_equal(one$statistics$cross, crossprod(Kc), tolerance = 1e-12)
  ref <- plain_nystrom(x, L, "rbfdot", list(sigma = 0.4), 3)
  expect_lt(rel_diff(unname(one$eig), ref$eig), 1e-8)
  expect_cols_equal_up_to_sign(one$rotated, ref$rotated, 1e-7)
})

test_that("a data row whose kernel overflows is an error in pass 1, on any thread count", {
  # the landmarks' own kernel is finite: the error is pass 1's
  set.seed(11)
  x <- matrix(rnorm(1000 * 2), 1000, 2)
  L <- x[1:30, ]
  x[700, ] <- 1e120
  for (threads in 1:2)
    expect_error(kpca(x, kernel = "polydot", kpar = list(degree = 3), features = 2,
                      landmarks = L, threads = threads),
                 "kernel values are not finite", class = "fastkpca_error")
})
