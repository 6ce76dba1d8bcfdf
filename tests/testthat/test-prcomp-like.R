# Where R users expect kpca() to behave like stats::prcomp(): column
# selection in predict(), NA rows in new data, na.exclude padding, and
# prcomp's `center` and `scale.`. The oracle is prcomp itself: with the
# linear kernel, rotated = sqrt(n) * prcomp's scores and eig = sdev^2 (n-1)/n
# (up to column signs); for other kernels, kernlab on data scaled by scale().

# The rows without NA scores, and the rows without NA in the oracle, match.
expect_same_na_rows <- function(p, ref, label = "") {
  expect_equal(unname(rowSums(is.na(p)) > 0), unname(rowSums(is.na(ref)) > 0),
               label = paste(label, "NA rows"))
  expect_false(any(is.na(p[rowSums(is.na(p)) < ncol(p), ])),
               label = paste(label, "rows are all-NA or all-finite"))
}

# ---------------------------------------------------------------------------
# 1. predict() takes the training columns by name first

test_that("predict() takes the training columns by name, as predict.prcomp()", {
  x <- fx_iris()
  n <- nrow(x)
  pc <- prcomp(x, scale. = TRUE)
  lin <- kpca(x, kernel = "vanilladot", features = 4, center = TRUE, scale. = TRUE)
  # prcomp ignores Species and reorders the columns; so does kpca
  p_pc <- predict(pc, iris[, c(5, 4, 2, 3, 1)])
  p_lin <- predict(lin, iris[, c(5, 4, 2, 3, 1)])
  expect_cols_equal_up_to_sign(p_lin, sqrt(n) * p_pc, label = "vanilladot vs prcomp on iris")
  # the issue's example, with the default rbf kernel
  fit <- kpca(x, features = 3)
  expect_identical(predict(fit, iris), predict(fit, x))
  expect_identical(predict(fit, iris[, c(5, 3, 1, 4, 2)]), predict(fit, x))
  # a matrix with an extra (character) column is fine too, as for prcomp
  extra <- cbind(as.data.frame(x), note = letters[1:5], stringsAsFactors = FALSE)
  expect_identical(predict(fit, extra), predict(fit, x))
  expect_identical(predict(fit, cbind(x, other = 1)), predict(fit, x))
  # a data frame fit selects in the same way
  fd <- kpca(iris[, 1:4], features = 3)
  expect_identical(predict(fd, iris), predict(fd, iris[, 1:4]))
})

test_that("a needed column missing or non-numeric is still an error naming 'newdata'", {
  x <- fx_iris()
  pc <- prcomp(x)
  fit <- kpca(x, features = 2)
  expect_error(predict(pc, iris[, c(1, 2, 5)]), "'newdata' does not have named columns")       # prcomp refuses it too
  expect_error(predict(fit, iris[, c(1, 2, 5)]), "'newdata' lacks columns Petal.Length, Petal.Width")
  chr <- iris; chr$Sepal.Length <- as.character(chr$Sepal.Length)
  expect_error(predict(pc, chr), "non-numeric argument")
  expect_error(predict(fit, chr), "'newdata' has non-numeric column: Sepal.Length")
  fct <- iris; fct$Petal.Width <- factor(fct$Petal.Width)
  expect_error(predict(fit, fct), "'newdata' has non-numeric column: Petal.Width")
  # a fit on unnamed columns matches by position, so the width must be right
  # (prcomp: "'newdata' does not have the correct number of columns")
  fu <- kpca(unname(x), features = 2)
  pu <- prcomp(unname(x))
  expect_error(predict(pu, cbind(unname(x), 1)), "'newdata' does not have the correct number of columns")
  expect_error(predict(fu, cbind(unname(x), 1)), "'newdata' must have 4 columns")
  expect_identical(predict(fu, x), predict(fit, x))
})

# ---------------------------------------------------------------------------
# 2. NA rows in new data give NA scores

test_that("rows of newdata with NA give NA scores row for row, as predict.prcomp()", {
  aq <- airquality[, 1:4]
  cc <- stats::na.omit(aq)
  n <- nrow(cc)
  pc <- prcomp(cc, scale. = TRUE)
  lin <- kpca(as.matrix(cc), kernel = "vanilladot", features = 4, center = TRUE,
              scale. = TRUE)
  p_pc <- predict(pc, aq)
  p_lin <- predict(lin, aq)
  expect_equal(dim(p_lin), c(nrow(aq), 4L))
  expect_same_na_rows(p_lin, p_pc, label = "vanilladot")
  ok <- stats::complete.cases(aq)
  expect_cols_equal_up_to_sign(p_lin[ok, ], sqrt(n) * p_pc[ok, ], label = "complete rows vs prcomp")

  # the issue's example (rbf): the other rows are exactly their own projections
  fit <- kpca(as.matrix(cc), features = 2)
  p <- predict(fit, aq)
  expect_equal(which(rowSums(is.na(p)) > 0), which(!ok))
  expect_identical(p[ok, ], predict(fit, unname(as.matrix(aq[ok, ]))))
  # NaN counts as missing; a row with NA only, too
  z <- as.matrix(aq[1:3, ]); z[1, 2] <- NaN; z[3, ] <- NA
  pz <- predict(fit, z)
  expect_true(all(is.na(pz[c(1, 3), ])))
  expect_equal(pz[2, ], predict(fit, z[2, , drop = FALSE])[1, ])
  # every row missing: an all-NA matrix of the right shape
  allna <- predict(fit, z[c(1, 3), ])
  expect_equal(dim(allna), c(2L, 2L))
  expect_true(all(is.na(allna)))
  # Inf is not missing: an error naming newdata (prcomp would give Inf scores)
  zi <- as.matrix(aq[1:3, ]); zi[2, 1] <- Inf
  expect_error(predict(fit, zi), "'newdata' must not contain infinite values")
})

test_that("NA rows give NA scores for formula and precomputed fits too", {
  df <- iris[seq(1, 150, by = 2), ]
  ff <- kpca(~ Sepal.Length + Petal.Width + Species, data = df, kpar = list(sigma = 0.3),
             features = 2)
  te <- iris[c(2, 4, 52, 102), ]
  te$Sepal.Length[2] <- NA
  te$Species[3] <- NA
  p <- predict(ff, te)
  expect_equal(unname(which(rowSums(is.na(p)) > 0)), c(2L, 3L))
  expect_equal(p[c(1, 4), ], predict(ff, te[c(1, 4), ]))
  # a numeric variable given as a column of NA only (logical)
  pn <- predict(ff, data.frame(Sepal.Length = NA, Petal.Width = 1, Species = "setosa"))
  expect_true(all(is.na(pn)))
  # precomputed: a row of the cross kernel with a missing value
  x <- fx_arrests()
  K <- plain_kernel(x[1:40, ], x[1:40, ], "rbfdot", list(sigma = 0.3))
  Kz <- plain_kernel(x[41:50, ], x[1:40, ], "rbfdot", list(sigma = 0.3))
  fk <- kpca(K, kernel = "precomputed", features = 2)
  Kz_na <- Kz; Kz_na[3, 5] <- NA
  pk <- predict(fk, Kz_na)
  expect_true(all(is.na(pk[3, ])))
  expect_equal(pk[-3, ], predict(fk, Kz)[-3, ])
})

# ---------------------------------------------------------------------------
# 3. na.action = na.exclude pads

test_that("na.exclude pads rotated and predict(fit) to one row per input row, as prcomp", {
  pc <- prcomp(~ ., data = airquality, scale. = TRUE, na.action = na.exclude)
  lin <- kpca(~ ., data = airquality, kernel = "vanilladot", features = 6, center = TRUE,
              scale. = TRUE, na.action = na.exclude)
  n <- nrow(stats::na.omit(airquality))
  expect_equal(dim(lin$rotated), dim(pc$x))                 # 153 x 6
  expect_equal(rownames(lin$rotated), rownames(pc$x))
  expect_same_na_rows(lin$rotated, pc$x, label = "formula na.exclude")
  ok <- stats::complete.cases(airquality)
  expect_cols_equal_up_to_sign(lin$rotated[ok, ], sqrt(n) * pc$x[ok, ], label = "vs prcomp")
  expect_equal(unname(lin$eig), pc$sdev^2 * (n - 1) / n)
  expect_identical(predict(lin), lin$rotated)
  expect_equal(dim(predict(pc)), dim(predict(lin)))
  expect_equal(lin$na.action, pc$na.action)
  expect_s3_class(lin$na.action, "exclude")
  # the training data again: the same padded scores
  expect_equal(predict(lin, airquality), lin$rotated, tolerance = 1e-10)
  # the issue's rbf call: 153 rows, as prcomp's 153
  rbf <- kpca(~ ., data = airquality, na.action = na.exclude, features = 2)
  expect_equal(nrow(rbf$rotated), nrow(airquality))
  omit <- kpca(~ ., data = airquality, features = 2)
  expect_identical(rbf$rotated[ok, ], omit$rotated)
  expect_identical(rbf$alpha, omit$alpha)
})

test_that("na.exclude pads for the default method; na.omit keeps its rows", {
  x <- as.matrix(airquality)
  ok <- stats::complete.cases(x)
  pc <- prcomp(~ ., data = airquality, scale. = TRUE, na.action = na.exclude)
  lin <- kpca(x, kernel = "vanilladot", features = 6, center = TRUE, scale. = TRUE,
              na.action = na.exclude)
  expect_equal(dim(lin$rotated), c(nrow(x), 6L))
  expect_same_na_rows(lin$rotated, pc$x, label = "default na.exclude")
  expect_cols_equal_up_to_sign(lin$rotated[ok, ], sqrt(sum(ok)) * pc$x[ok, ],
                               label = "default vs prcomp")
  expect_identical(predict(lin), lin$rotated)
  expect_equal(predict(lin, x), lin$rotated, tolerance = 1e-10)
  # na.omit (the default): today's behaviour, one row per complete row, as
  # prcomp with na.omit
  po <- prcomp(~ ., data = airquality, scale. = TRUE)
  fo <- kpca(x, kernel = "vanilladot", features = 6, center = TRUE, scale. = TRUE)
  expect_equal(nrow(fo$rotated), nrow(po$x))
  expect_equal(nrow(fo$rotated), sum(ok))
  expect_identical(fo$rotated, lin$rotated[ok, ])
  expect_s3_class(fo$na.action, "omit")
  # no missing values: na.exclude changes nothing
  expect_identical(kpca(fx_iris(), features = 2, na.action = na.exclude)$rotated,
                   kpca(fx_iris(), features = 2)$rotated)
})

# ---------------------------------------------------------------------------
# 4. center and scale., with prcomp's meanings

test_that("scale. = TRUE with vanilladot is prcomp(x, scale. = TRUE)", {
  for (data in list(as.matrix(USArrests), as.matrix(mtcars))) {
    n <- nrow(data)
    pc <- prcomp(data, scale. = TRUE)
    k <- min(4L, ncol(data))
    both <- kpca(data, kernel = "vanilladot", features = k, center = TRUE, scale. = TRUE)
    expect_cols_equal_up_to_sign(both$rotated, sqrt(n) * pc$x[, 1:k], label = "rotated")
    expect_equal(unname(both$eig), pc$sdev[1:k]^2 * (n - 1) / n, tolerance = 1e-10)
    # the fit stores what prcomp stores
    expect_identical(both$center, pc$center)
    expect_identical(both$scale, pc$scale)
    # the kernel saw the scaled data; predict applies the same to new rows
    expect_equal(both$xmatrix, scale(data), ignore_attr = TRUE)
    expect_cols_equal_up_to_sign(predict(both, data[1:5, ]), sqrt(n) * predict(pc, data[1:5, ])[, 1:k],
                                 label = "predict vs predict.prcomp")
  }
})

test_that("center = FALSE with scale. = TRUE divides by the root mean square, as prcomp", {
  x <- as.matrix(USArrests)
  n <- nrow(x)
  p0 <- prcomp(x, center = FALSE, scale. = TRUE)
  fit <- kpca(x, kernel = "vanilladot", features = 4, scale. = TRUE)
  expect_identical(fit$center, FALSE)
  expect_false(isTRUE(all.equal(fit$scale, prcomp(x, scale. = TRUE)$scale)))
  expect_identical(fit$center, p0$center)
  expect_equal(fit$scale, p0$scale)
  # kernel PCA still centers in feature space: PCA of x divided by those
  pc <- prcomp(x, center = TRUE, scale. = p0$scale)
  expect_cols_equal_up_to_sign(fit$rotated, sqrt(n) * pc$x, label = "rms scaling")
})

test_that("numeric center and scale. vectors are used and stored as prcomp does", {
  x <- as.matrix(USArrests)
  n <- nrow(x)
  cen <- c(8, 170, 65, 21)
  sc <- c(4, 80, 15, 9)
  pc <- prcomp(x, center = cen, scale. = sc)
  lin <- kpca(x, kernel = "vanilladot", features = 4, center = cen, scale. = sc)
  expect_equal(lin$center, pc$center)
  expect_equal(lin$scale, pc$scale)
  expect_cols_equal_up_to_sign(lin$rotated, sqrt(n) * prcomp(sweep(x, 2, sc, "/"))$x,
                               label = "numeric vectors")
  # polydot is not translation invariant: center matters, and equals kernlab
  # on the data centered and scaled by hand
  skip_if_not_installed("kernlab")
  kp <- list(degree = 2, scale = 0.5, offset = 1)
  poly <- kpca(x, kernel = "polydot", kpar = kp, features = 3, center = cen, scale. = sc)
  xs <- sweep(sweep(x, 2, cen), 2, sc, "/")
  expect_kpca_equal(poly, kernlab_fit(xs, "polydot", kp, features = 3), label = "polydot vectors")
  expect_gt(rel_diff(poly$eig, kpca(x, kernel = "polydot", kpar = kp, features = 3,
                                    scale. = sc)$eig), 1e-3)
})

test_that("an rbf fit on scaled data equals kernlab on scale(x), fit and predict", {
  skip_if_not_installed("kernlab")
  x <- as.matrix(USArrests)
  train <- x[seq(1, 50, by = 2), ]
  test <- x[seq(2, 50, by = 2), ]
  kp <- list(sigma = 0.2)
  fit <- kpca(train, kernel = "rbfdot", kpar = kp, features = 4, center = TRUE, scale. = TRUE)
  st <- scale(train)
  kl <- kernlab::kpca(unclass(st)[, ], kernel = "rbfdot", kpar = kp, features = 4)
  expect_kpca_equal(fit, list(eig = kernlab::eig(kl), alpha = kernlab::pcv(kl),
                              rotated = kernlab::rotated(kl)), label = "rbf scaled")
  want <- kernlab::predict(kl, scale(test, attr(st, "scaled:center"), attr(st, "scaled:scale")))
  s <- sign(colSums(fit$alpha * kernlab::pcv(kl)))
  expect_equal(sweep(unname(predict(fit, test)), 2, s, "*"), unname(want), tolerance = 1e-8)
  expect_equal(predict(fit, train), fit$rotated, tolerance = 1e-10)
  # centering alone changes nothing for a distance kernel
  plain <- kpca(train, kernel = "rbfdot", kpar = kp, features = 4)
  cent <- kpca(train, kernel = "rbfdot", kpar = kp, features = 4, center = TRUE)
  expect_equal(cent$eig, plain$eig, tolerance = 1e-10)
  expect_equal(predict(cent, test), predict(plain, test), tolerance = 1e-8)
  # the formula method passes them on
  ff <- kpca(~ ., data = as.data.frame(train), kernel = "rbfdot", kpar = kp, features = 4,
             center = TRUE, scale. = TRUE)
  expect_equal(ff$eig, fit$eig, tolerance = 1e-12)
  expect_equal(ff$scale, fit$scale)
  expect_equal(predict(ff, as.data.frame(test)), predict(fit, test), tolerance = 1e-10)
})

test_that("defaults leave the data alone and store FALSE, as kernlab's kpca", {
  skip_if_not_installed("kernlab")
  x <- fx_random()
  fit <- kpca(x, features = 3)
  expect_identical(fit$center, FALSE)
  expect_identical(fit$scale, FALSE)
  expect_identical(fit$xmatrix, x)
  expect_kpca_equal(fit, kernlab_fit(x, "rbfdot", list(sigma = 0.1), features = 3),
                    label = "defaults")
  # a fit made before these settings existed still predicts
  old <- fit; old$center <- NULL; old$scale <- NULL
  expect_identical(predict(old, x[1:4, ]), predict(fit, x[1:4, ]))
})

test_that("bad center and scale. are errors naming the argument", {
  x <- fx_arrests()
  const <- cbind(x, k = 3)
  expect_error(prcomp(const, scale. = TRUE), "cannot rescale a constant/zero column")              # prcomp refuses it too
  expect_error(kpca(const, center = TRUE, scale. = TRUE),
               "'scale.' = TRUE cannot rescale a constant column to unit variance: k")
  # without centering, only a column of zeros has no root mean square
  expect_error(prcomp(cbind(x, z = 0), center = FALSE, scale. = TRUE), "cannot rescale a constant/zero column")
  expect_error(kpca(cbind(x, z = 0), scale. = TRUE), "constant column to unit variance: z")
  expect_error(kpca(unname(cbind(x, 0)), center = TRUE, scale. = TRUE), "unit variance: 5")
  expect_error(kpca(x, scale. = c(1, 2)), "'scale.' must be TRUE, FALSE or a vector of 4 positive numbers")
  expect_error(kpca(x, scale. = c(1, 2, 0, 1)), "'scale.'")
  expect_error(kpca(x, scale. = c(1, 2, NA, 1)), "'scale.'")
  expect_error(kpca(x, scale. = NA), "'scale.'")
  expect_error(kpca(x, center = "yes"), "'center' must be TRUE, FALSE or a vector of 4 finite numbers")
  expect_error(kpca(x, center = c(TRUE, FALSE)), "'center'")
  expect_error(kpca(x, center = c(1, Inf, 0, 0)), "'center'")
  expect_error(kpca(x, scale. = rep(1e-320, 4)), "'x' is not finite after centering and scaling")
  tiny <- kpca(x, scale. = rep(1e-300, 4), features = 2)
  expect_error(predict(tiny, x * 1e10), "'newdata' is not finite after centering and scaling")
  # precomputed kernels have no columns to scale
  K <- plain_kernel(x, x, "rbfdot", list(sigma = 0.3))
  expect_error(kpca(K, kernel = "precomputed", scale. = TRUE), "'scale.' does not apply to kernel = \"precomputed\"")
  expect_error(kpca(K, kernel = "precomputed", center = TRUE), "'center' does not apply")
  expect_error(kpca(K, kernel = "precomputed", center = rep(0, 50)), "'center' does not apply")
  expect_silent(kpca(K, kernel = "precomputed", features = 2, center = FALSE, scale. = FALSE))
  # a damaged fit's stored scaling
  fit <- kpca(x, features = 2, scale. = TRUE)
  bad <- fit; bad$scale <- c(1, 2)
  expect_error(predict(bad, x), "'object' is not a valid fastkpca fit: 'scale'")
  bad <- fit; bad$center <- "a"
  expect_error(predict(bad, x), "'object' is not a valid fastkpca fit: 'center'")
})

test_that("print() says when the data were centered or scaled", {
  x <- fx_arrests()
  expect_false(any(grepl("before the kernel", capture.output(print(kpca(x, features = 2))))))
  expect_output(print(kpca(x, features = 2, scale. = TRUE)),
                "Data: +columns scaled \\(scale.\\) before the kernel")
  expect_output(print(kpca(x, features = 2, center = TRUE, scale. = TRUE)),
                "columns centered \\(center\\) and scaled \\(scale.\\) before the kernel")
  expect_output(print(kpca(x, features = 2, center = TRUE)),
                "columns centered \\(center\\) before the kernel")
})
