# prcomp's center and scale. (R/scaling.R): resolved as base::scale() does,
# stored, applied again to new rows.

test_that("scale_data() centers and scales as base::scale() and stores what it used", {
  x <- fx_arrests()
  for (args in list(list(TRUE, TRUE), list(TRUE, FALSE), list(FALSE, TRUE),
                    list(colMeans(x) + 1, rep(2, 4)))) {
    res <- fastkpca:::scale_data(x, args[[1]], args[[2]])
    ref <- scale(x, args[[1]], args[[2]])
    expect_equal(res$x, ref, ignore_attr = TRUE)
    expect_equal(if (isFALSE(res$center)) NULL else res$center,
                 attr(ref, "scaled:center"), ignore_attr = TRUE)
    expect_equal(if (isFALSE(res$scale)) NULL else res$scale,
                 attr(ref, "scaled:scale"), ignore_attr = TRUE)
  }
  none <- fastkpca:::scale_data(x, FALSE, FALSE)
  expect_identical(none$x, x)
  expect_false(none$center)
  expect_false(none$scale)
})

test_that("apply_scaling() gives back the training rows exactly", {
  x <- fx_arrests()
  res <- fastkpca:::scale_data(x, TRUE, TRUE)
  expect_identical(fastkpca:::apply_scaling(x, res$center, res$scale), res$x)
  expect_identical(fastkpca:::apply_scaling(x, FALSE, FALSE), x)
})

test_that("bad center and scale. are refused, naming the argument", {
  x <- fx_arrests()
  expect_error(fastkpca:::scale_data(x, "yes", FALSE),
               "^'center' must be TRUE, FALSE or a vector of 4 finite numbers, one per column of 'x'$")
  expect_error(fastkpca:::scale_data(x, FALSE, c(1, 2, 0, 1)),
               "^'scale.' must be TRUE, FALSE or a vector of 4 positive numbers")
  expect_error(fastkpca:::scale_data(x, c(1, 2), FALSE), "'center' must be TRUE, FALSE or a vector of 4")
  expect_error(fastkpca:::scale_data(cbind(x, k = 1), TRUE, TRUE),
               "'scale.' = TRUE cannot rescale a constant column to unit variance: k")
  expect_error(fastkpca:::scale_data(diag(3), TRUE, FALSE, precomputed = TRUE),
               "'center' does not apply to kernel = \"precomputed\"")
  expect_error(fastkpca:::scale_data(diag(3), FALSE, TRUE, precomputed = TRUE),
               "'scale.' does not apply to kernel = \"precomputed\"")
  K <- diag(3)
  expect_identical(fastkpca:::scale_data(K, FALSE, FALSE, precomputed = TRUE)$x, K)
})

test_that("a fit's stored scaling is checked before predict() uses it", {
  fit <- kpca(fx_arrests(), kpar = list(sigma = 0.1), features = 2, center = TRUE,
              scale. = TRUE)
  bad <- fit; bad$scale <- c(1, 0, 1, 1)
  expect_error(predict(bad, fx_arrests()), "'object' is not a valid fastkpca fit: 'scale'")
  bad <- fit; bad$center <- "a"
  expect_error(predict(bad, fx_arrests()), "'object' is not a valid fastkpca fit: 'center'")
})
