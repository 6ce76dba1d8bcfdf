# screeplot(), biplot(), nobs() and fitted() for kpca fits
# (R/prcomp_methods.R), against prcomp's.

test_that("biplot() of a linear-kernel fit is prcomp's: scores, sdev and loadings", {
  x <- scale(as.matrix(USArrests))
  fit <- kpca(x, kernel = "vanilladot", features = 4)
  pc <- prcomp(x)
  view <- fastkpca:::prcomp_view(fit)
  expect_equal(view$sdev, pc$sdev, tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(align_signs(view$x, pc$x), pc$x, tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(align_signs(view$rotation, pc$rotation), pc$rotation, tolerance = 1e-8,
               ignore_attr = TRUE)
  expect_identical(rownames(view$rotation), colnames(x))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_null(biplot(fit))
  expect_null(biplot(fit, choices = c(1, 3), scale = 0, pc.biplot = TRUE))
  # Nystrom with the linear kernel: loadings from the landmarks, close to prcomp's
  set.seed(2)
  ny <- kpca(x, kernel = "vanilladot", features = 2, landmarks = 25)
  nv <- fastkpca:::prcomp_view(ny)
  expect_equal(align_signs(nv$rotation, pc$rotation[, 1:2]), pc$rotation[, 1:2],
               tolerance = 1e-6, ignore_attr = TRUE)
})

test_that("biplot() of a nonlinear fit draws the scores only, scaled as prcomp's", {
  x <- scale(as.matrix(USArrests))
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 3)
  view <- fastkpca:::prcomp_view(fit)
  expect_null(view$rotation)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  biplot(fit, choices = 2:3)
  # the plot's coordinates hold the scaled scores: rotated / sqrt(n) / (sdev sqrt(n))
  n <- nrow(x)
  s <- fit$rotated[, 2:3] / sqrt(n)
  s <- sweep(s, 2L, sqrt(fit$eig[2:3] * n / (n - 1)) * sqrt(n), "/")
  usr <- graphics::par("usr")
  expect_true(all(s[, 1] >= usr[1] & s[, 1] <= usr[2] & s[, 2] >= usr[3] & s[, 2] <= usr[4]))
  expect_lt(diff(usr[1:2]), 1.2 * diff(range(s[, 1])))
  expect_error(biplot(fit, choices = 1), "'choices' must be two component numbers between 1 and 3")
  expect_error(biplot(fit, choices = c(1, 4)), "'choices' must be two component numbers")
})

test_that("screeplot() draws the eigenvalues, as screeplot(prcomp) its variances", {
  x <- scale(as.matrix(USArrests))
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 6)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_null(screeplot(fit))
  usr <- graphics::par("usr")
  expect_gte(usr[4], (1 - 1e-9) * max(fit$eig))
  expect_lt(usr[4], 1.2 * max(fit$eig))
  expect_null(screeplot(fit, npcs = 3, type = "lines"))
  expect_equal(graphics::par("usr")[1:2], c(1, 3) + c(-0.08, 0.08), tolerance = 1e-6)
  expect_error(screeplot(fit, npcs = 7), "'npcs' must be a whole number between 1 and 6")
  expect_error(screeplot(fit, type = "pie"), "'type' must be one of", class = "fastkpca_error_argument")
})

test_that("nobs() counts the rows used and fitted() gives the scores", {
  aq <- airquality[, 1:4]
  fit <- kpca(~ ., data = aq, kpar = list(sigma = 0.01), features = 2,
              na.action = na.exclude)
  used <- sum(complete.cases(aq))
  expect_identical(nobs(fit), used)
  expect_identical(fitted(fit), fit$rotated)
  expect_identical(nrow(fitted(fit)), nrow(aq))
  expect_identical(sum(complete.cases(fitted(fit))), used)
  x <- as.matrix(iris[, 1:4])
  f2 <- kpca(x, kpar = list(sigma = 0.2), features = 2)
  expect_identical(nobs(f2), 150L)
  expect_equal(fitted(f2), predict(f2, x), tolerance = 1e-8)
  set.seed(1)
  ny <- kpca(x, kpar = list(sigma = 0.2), features = 2, landmarks = 30)
  expect_identical(nobs(ny), 150L)
  expect_error(nobs(f2, 1), "unused argument")
  g <- f2
  g$rotated <- NULL
  expect_error(fitted(g), "'object' keeps no scores")
})
