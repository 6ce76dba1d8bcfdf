# predict() against kernlab's predict() and the plain-R centering formula.

# Flip the columns of pred by the signs that align fit's alpha with ref_alpha.
align_pred <- function(pred, fit_alpha, ref_alpha) {
  s <- sign(colSums(unname(fit_alpha) * unname(ref_alpha)))
  sweep(unname(as.matrix(pred)), 2L, s, "*")
}

split_iris <- function() {
  x <- fx_iris()
  list(train = x[seq(1, 150, by = 2), ], test = x[seq(2, 150, by = 2), ])
}

test_that("predict() on held-out rows matches kernlab's predict()", {
  skip_if_not_installed("kernlab")
  s <- split_iris()
  for (kn in setdiff(names(kernel_cases), "tanhdot")) {
    kp <- kernel_cases[[kn]]
    fit <- kpca(s$train, kernel = kn, kpar = kp, features = 3)
    kl <- kernlab::kpca(s$train, kernel = kn, kpar = kp, features = 3)
    ours <- align_pred(predict(fit, s$test), fit$alpha, kernlab::pcv(kl))
    ref <- unname(kernlab::predict(kl, s$test))
    expect_cols_equal_up_to_sign(ours, ref, tol = 1e-8, label = paste(kn, "predict vs kernlab"))
    # signs must be those of the fit (not re-chosen per call)
    expect_equal(ours, ref, tolerance = 1e-8, label = paste(kn, "predict, fit's signs"))
  }
})

test_that("predict() matches the plain-R centering formula for every kernel (tanhdot too)", {
  s <- list(train = fx_arrests()[1:35, ], test = fx_arrests()[36:50, ])
  for (kn in names(kernel_cases)) {
    kp <- kernel_cases[[kn]]
    fit <- kpca(s$train, kernel = kn, kpar = kp, features = 3)
    ref <- plain_kpca(s$train, kn, kp, features = 3)
    Kz <- plain_kernel(s$test, s$train, kn, kp)
    want <- plain_predict(ref$K, Kz, ref$alpha)
    ours <- align_pred(predict(fit, s$test), fit$alpha, ref$alpha)
    expect_cols_equal_up_to_sign(ours, want, tol = 1e-8, label = paste(kn, "predict vs plain"))
    expect_equal(ours, unname(want), tolerance = 1e-8, label = paste(kn, "predict, fit's signs"))
  }
})

test_that("kernlab's sum(K)/(m n) centering constant gives the same projections (math.md)", {
  # kernlab adds sum(K)/(m n) where math.md adds mean(K); the constant
  # multiplies colSums(alpha) = 0, so both agree. Checked on our alpha.
  s <- split_iris()
  kp <- list(scale = 0.01, offset = 0.1)
  fit <- kpca(s$train, kernel = "tanhdot", kpar = kp, features = 3)
  K <- plain_kernel(s$train, s$train, "tanhdot", kp)
  Kz <- plain_kernel(s$test, s$train, "tanhdot", kp)
  m <- nrow(K); n <- nrow(Kz)
  kl_style <- (Kz - rowMeans(Kz) - matrix(colMeans(K), n, m, byrow = TRUE) + sum(K) / (m * n)) %*%
    unname(fit$alpha)
  expect_equal(unname(predict(fit, s$test)), kl_style, tolerance = 1e-8)
})

test_that("predict(fit, x_train) equals fit$rotated; predict(fit) returns rotated", {
  data <- fx_datasets()
  for (kn in names(kernel_cases)) {
    x <- data[[if (kn %in% c("splinedot", "tanhdot")) "cars" else "iris"]]
    fit <- kpca(x, kernel = kn, kpar = kernel_cases[[kn]], features = 4)
    p <- predict(fit, x)
    for (j in seq_len(ncol(p)))
      expect_lt(rel_diff(p[, j], fit$rotated[, j]), 1e-8,
                label = paste(kn, "predict(x_train) column", j))
    expect_identical(predict(fit), fit$rotated)
  }
})

test_that("matrix fits: named columns are matched by name; the wrong width is an error", {
  s <- split_iris()
  fit <- kpca(s$train, kernel = "rbfdot", kpar = list(sigma = 0.3), features = 2)
  base <- predict(fit, s$test)
  expect_equal(predict(fit, s$test[, 4:1]), base)
  expect_equal(predict(fit, as.data.frame(s$test)[, c(2, 4, 1, 3)]), base)
  expect_error(predict(fit, s$test[, 1:3]), "'newdata' lacks column Petal.Width")
  expect_error(predict(fit, cbind(unname(s$test), 1)), "'newdata' must have 4 columns, as the training data, not 5")
  # a row with NA gives NA scores (as predict.prcomp), the other row its own
  na_row <- s$test[1:2, ]; na_row[1, 1] <- NA
  p_na <- predict(fit, na_row)
  expect_true(all(is.na(p_na[1, ])))
  expect_equal(p_na[2, ], base[2, ])
  expect_error(predict(fit, s$test, foo = 1), "unused argument: foo")
})

test_that("a data.frame fit predicts a data.frame with columns in another order", {
  skip_if_not_installed("kernlab")
  df <- iris[, 1:4]
  tr <- df[seq(1, 150, by = 2), ]; te <- df[seq(2, 150, by = 2), ]
  kp <- list(sigma = 0.25)
  fit <- kpca(tr, kernel = "laplacedot", kpar = kp, features = 3)
  kl <- kernlab::kpca(as.matrix(tr), kernel = "laplacedot", kpar = kp, features = 3)
  want <- unname(kernlab::predict(kl, as.matrix(te)))
  got <- align_pred(predict(fit, te[, c(3, 1, 4, 2)]), fit$alpha, kernlab::pcv(kl))
  expect_equal(got, want, tolerance = 1e-8)
})

test_that("a formula fit predicts a data frame: columns in another order, extras ignored", {
  skip_if_not_installed("kernlab")
  tr <- iris[seq(1, 150, by = 2), ]; te <- iris[seq(2, 150, by = 2), ]
  kp <- list(sigma = 0.3)
  fit <- kpca(~ Sepal.Length + Petal.Length + Petal.Width, data = tr,
              kernel = "rbfdot", kpar = kp, features = 3)
  kl <- kernlab::kpca(~ Sepal.Length + Petal.Length + Petal.Width, data = tr,
                      kernel = "rbfdot", kpar = kp, features = 3)
  shuffled <- te[, c("Species", "Petal.Width", "Sepal.Width", "Sepal.Length", "Petal.Length")]
  got <- align_pred(predict(fit, shuffled), fit$alpha, kernlab::pcv(kl))
  want <- unname(kernlab::predict(kl, te))
  expect_equal(got, want, tolerance = 1e-8)
  # and equal to the matrix fit on the same three columns
  cols <- c("Sepal.Length", "Petal.Length", "Petal.Width")
  fm <- kpca(as.matrix(tr[, cols]), kernel = "rbfdot", kpar = kp, features = 3)
  expect_equal(unname(predict(fit, shuffled)), unname(predict(fm, as.matrix(te[, cols]))),
               tolerance = 1e-12)
  expect_error(predict(fit, te[, c("Sepal.Length", "Petal.Width")]), "'newdata' lacks variable of the formula: Petal.Length")   # a variable missing
})

test_that("a formula fit with a factor predicts new rows with the training levels", {
  tr <- iris[seq(1, 150, by = 2), c("Sepal.Length", "Species")]
  te <- iris[c(2, 4, 6), c("Sepal.Length", "Species")]    # all setosa
  fit <- kpca(~ Sepal.Length + Species, data = tr, kpar = list(sigma = 0.5), features = 2)
  p_factor <- predict(fit, te)
  te_chr <- data.frame(Sepal.Length = te$Sepal.Length, Species = as.character(te$Species),
                       row.names = rownames(te))
  expect_equal(predict(fit, te_chr), p_factor)
  # oracle: plain-R projection on the dummy-coded data
  xtr <- cbind(tr$Sepal.Length, outer(as.integer(tr$Species), 1:3, "==") + 0)
  xte <- cbind(te$Sepal.Length, outer(as.integer(te$Species), 1:3, "==") + 0)
  ref <- plain_kpca(xtr, "rbfdot", list(sigma = 0.5), features = 2)
  want <- plain_predict(ref$K, plain_kernel(xte, xtr, "rbfdot", list(sigma = 0.5)), ref$alpha)
  expect_cols_equal_up_to_sign(p_factor, want, tol = 1e-8, label = "factor predict")
})

test_that("a single numeric vector is one new row", {
  skip_if_not_installed("kernlab")
  s <- split_iris()
  kp <- list(degree = 2, scale = 0.5, offset = 1)
  fit <- kpca(s$train, kernel = "polydot", kpar = kp, features = 3)
  kl <- kernlab::kpca(s$train, kernel = "polydot", kpar = kp, features = 3)
  row <- s$test[7, ]                     # a named numeric vector
  p <- predict(fit, row)
  expect_equal(dim(p), c(1L, 3L))
  expect_equal(p, predict(fit, s$test[7, , drop = FALSE]), ignore_attr = TRUE)
  want <- unname(kernlab::predict(kl, s$test[7, , drop = FALSE]))
  expect_equal(align_pred(p, fit$alpha, kernlab::pcv(kl)), want, tolerance = 1e-8)
  expect_equal(dim(predict(fit, unname(row))), c(1L, 3L))
  expect_equal(predict(fit, unname(row)), p, ignore_attr = TRUE)
  # a named vector is matched by name, like a matrix's columns
  expect_equal(predict(fit, rev(row)), p, ignore_attr = TRUE)
})

test_that("a precomputed fit predicts from the n_new x m cross kernel (as kernlab)", {
  skip_if_not_installed("kernlab")
  s <- split_iris()
  kp <- list(sigma = 0.3)
  K <- plain_kernel(s$train, s$train, "rbfdot", kp)
  Kz <- plain_kernel(s$test, s$train, "rbfdot", kp)
  fit <- kpca(K, kernel = "precomputed", features = 3)
  kl <- kernlab::kpca(kernlab::as.kernelMatrix(K), features = 3)
  want <- unname(kernlab::predict(kl, kernlab::as.kernelMatrix(Kz)))
  got <- align_pred(predict(fit, Kz), fit$alpha, kernlab::pcv(kl))
  expect_equal(got, want, tolerance = 1e-8)
  # the same as the data fit's prediction
  fd <- kpca(s$train, kernel = "rbfdot", kpar = kp, features = 3)
  expect_equal(unname(predict(fit, Kz)), unname(predict(fd, s$test)), tolerance = 1e-9)
  expect_error(predict(fit, Kz[, -1]), "'newdata' must be the kernel matrix between new and training rows")
})

test_that("many new rows (several internal blocks) give the same as one row at a time", {
  x <- fx_iris()
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 3)
  big <- x[rep(seq_len(150), length.out = 30000), ] +
    rep(seq(0, 0.3, length.out = 30000), 4)
  p <- predict(fit, big)
  expect_equal(dim(p), c(30000L, 3L))
  pick <- c(1, 2, 15000, 27962, 27963, 27964, 29999, 30000)
  ref <- plain_kpca(x, "rbfdot", list(sigma = 0.2), features = 3)
  want <- plain_predict(ref$K, plain_kernel(big[pick, ], x, "rbfdot", list(sigma = 0.2)),
                        ref$alpha)
  expect_equal(align_pred(p[pick, ], fit$alpha, ref$alpha), unname(want), tolerance = 1e-8)
  expect_equal(p[pick, ], predict(fit, big[pick, ]), tolerance = 1e-12)
})

test_that("fits with removed NA rows predict with the rows kept", {
  x <- fx_arrests(); x[c(4, 9), 2] <- NA
  fit <- kpca(x, kernel = "anovadot", kpar = list(sigma = 0.5, degree = 2), features = 3)
  xo <- x[-c(4, 9), ]
  ref <- plain_kpca(xo, "anovadot", list(sigma = 0.5, degree = 2), features = 3)
  z <- fx_arrests()[c(4, 9), ]
  want <- plain_predict(ref$K, plain_kernel(z, xo, "anovadot", list(sigma = 0.5, degree = 2)),
                        ref$alpha)
  expect_equal(align_pred(predict(fit, z), fit$alpha, ref$alpha), unname(want), tolerance = 1e-8)
})

test_that("predict() over panels of a block (src/project.c) matches the plain-R formula", {
  # 2000 training rows: a block's kernel with new rows is computed and used
  # in panels of 2^20 / 2000 = 524 rows, so 1600 new rows take four panels
  # (the last of 28 rows)
  set.seed(9)
  x <- matrix(rnorm(2000 * 2), 2000, 2)
  new <- matrix(rnorm(1600 * 2), 1600, 2)
  fit <- kpca(x, kpar = list(sigma = 0.5), features = 2)
  K <- plain_kernel(x, x, "rbfdot", list(sigma = 0.5))
  want <- plain_predict(K, plain_kernel(new, x, "rbfdot", list(sigma = 0.5)), fit$alpha)
  expect_equal(predict(fit, new), unname(want), tolerance = 1e-8, ignore_attr = TRUE)
  expect_identical(predict(fit, new)[1201:1600, ], predict(fit, new[1201:1600, ]))
})

test_that("predict() gives the same bits on 1 and 2 threads, and its overflow error on both", {
  # with threads, a kernel of an inner product or a distance gives each
  # thread whole panels of rows (project_block_by_threads() in
  # src/project.c); other kernels share each panel's columns
  set.seed(10)
  x <- matrix(rnorm(900 * 3), 900, 3)
  new <- matrix(rnorm(2500 * 3), 2500, 3)
  for (kk in list(kern("rbfdot", sigma = 0.3), kern("polydot", degree = 2),
                  kern("rbfdot", sigma = 0.3) + kern("vanilladot"))) {
    ex <- kpca(x, kernel = kk, features = 3)
    ny <- with_seed(1, kpca(x, kernel = kk, features = 3, landmarks = 60))
    for (fit in list(ex, ny)) {
      one <- fit
      one$threads <- 1L
      two <- fit
      two$threads <- 2L
      expect_identical(predict(one, new), predict(two, new))
    }
  }
  fit <- kpca(x, kernel = "polydot", kpar = list(degree = 3), features = 2, threads = 2)
  big <- new
  big[2000, ] <- 1e120
  expect_error(predict(fit, big),
               "kernel values between 'newdata' and the training data are not finite")
})

test_that("columns whose names are empty, NA or repeated are taken by position", {
  x <- as.matrix(iris[1:60, 1:4])
  ref <- kpca(unname(x), kpar = list(sigma = 0.2), features = 2)
  for (nm in list(c("", "b", "c", "d"), c("a", NA, "c", "d"), c("a", "a", "c", "d"))) {
    xn <- x
    colnames(xn) <- nm
    fit <- kpca(xn, kpar = list(sigma = 0.2), features = 2)
    expect_equal(unname(predict(fit, xn[1:7, ])), unname(predict(ref, unname(x[1:7, ]))),
                 tolerance = 1e-12, label = paste(nm, collapse = ","))
  }
})

test_that("predict()'s row means of the kernel are R's rowMeans() to the last bit", {
  # src/project.c sums each row in long double, column by column as
  # rowMeans() does, four rows at a time over chunks of columns: 600
  # training rows (more than a chunk), 203 new rows (not a multiple of 4)
  set.seed(44)
  x <- matrix(rnorm(600 * 5), 600)
  z <- matrix(rnorm(203 * 5), 203)
  # rbfdot (the fast kernels' panels per thread) and an expression (one
  # shared panel, kernel_block())
  for (kernel in list(rbfdot(sigma = 0.2), kern("rbfdot", sigma = 0.2) * 1)) {
    ref <- rowMeans(kernel_matrix(kernel, z, x))
    fit <- kpca(x, kernel = kernel, features = 3)
    for (threads in 1:2) {
      fit$threads <- threads
      expect_identical(attr(fastkpca:::project_rows(fit, z), "row_means"), ref)
    }
  }
})
