# The seed's worked example: seed 003, "Kernel Principal Component Analysis
# from scratch with R" (the project's seed notes). Its 10 x 2
# toy data, column-centered, with kernlab's kpca(Xc, kernel = vanilladot()).
# The numbers below are kernlab's output as published in that seed: the one
# pasted reference of this suite.

seed003_eig <- c(1.15562494, 0.04417506)
seed003_rotated <- matrix(c(
   2.6182716,  0.55376322,
  -5.6212026, -0.45175422,
   3.1376040, -1.21550044,
   0.8671295, -0.41241542,
   5.2993494,  0.66249230,
   2.8869986, -0.55429176,
  -0.3134116,  1.10624283,
  -3.6194550, -0.14678426,
  -1.3852235, -0.05617669,
  -3.8700604,  0.51442443), ncol = 2, byrow = TRUE)
seed003_pcv <- matrix(c(
   0.22656759,  1.2535653,
  -0.48642101, -1.0226454,
   0.27150712, -2.7515536,
   0.07503555, -0.9335934,
   0.45857001,  1.4996976,
   0.24982141, -1.2547618,
  -0.02712053,  2.5042249,
  -0.31320326, -0.3322786,
  -0.11986791, -0.1271683,
  -0.33488896,  1.1645133), ncol = 2, byrow = TRUE)
# the seed's proportions of variance (from the covariance eigenvalues)
seed003_prop <- c(0.9631813, 0.03681869)

# |a - b| within half a unit of the last printed digit (per column).
expect_printed <- function(actual, published, decimals, label) {
  for (j in seq_len(ncol(published))) {
    err <- max(abs(actual[, j] - published[, j]))
    expect_lt(err, 0.5 * 10^-decimals[j] + 1e-12, label = paste(label, "column", j))
  }
}

test_that("seed 003: linear kernel on the centered toy data reproduces kernlab's published output", {
  Xc <- scale(fx_seed003(), scale = FALSE)
  fit <- kpca(Xc, kernel = "vanilladot")           # features = 0, th = 1e-4, as the seed
  expect_equal(length(fit$eig), 2L)
  expect_lt(max(abs(unname(fit$eig) - seed003_eig)), 0.5e-8 + 1e-12)
  expect_printed(align_signs(unname(fit$rotated), seed003_rotated), seed003_rotated,
                 c(7, 8), "rotated")
  expect_printed(align_signs(unname(fit$alpha), seed003_pcv), seed003_pcv, c(8, 7), "alpha")
  # the same with the seed's own call: a kernlab kernel object
  skip_if_not_installed("kernlab")
  fo <- kpca(Xc, kernel = kernlab::vanilladot())
  expect_lt(max(abs(unname(fo$eig) - seed003_eig)), 0.5e-8 + 1e-12)
  expect_printed(align_signs(unname(fo$rotated), seed003_rotated), seed003_rotated,
                 c(7, 8), "rotated (kernel object)")
})

test_that("seed 003: proportions of variance as published", {
  fit <- kpca(scale(fx_seed003(), scale = FALSE), kernel = "vanilladot", features = 2)
  imp <- summary(fit)$importance
  expect_lt(abs(imp[2, 1] - seed003_prop[1]), 0.5e-7 + 1e-12)
  expect_lt(abs(imp[2, 2] - seed003_prop[2]), 0.5e-8 + 1e-12)
})

test_that("seed 003: uncentered data give the same fit (centering in feature space)", {
  X <- fx_seed003()
  fit <- kpca(X, kernel = "vanilladot", features = 2)
  expect_lt(max(abs(unname(fit$eig) - seed003_eig)), 0.5e-8 + 1e-12)
  expect_printed(align_signs(unname(fit$rotated), seed003_rotated), seed003_rotated,
                 c(7, 8), "rotated (uncentered)")
})
