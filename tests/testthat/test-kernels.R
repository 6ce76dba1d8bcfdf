# The C kernels (fastkpca:::kernel_cross) against kernlab::kernelMatrix and
# against plain-R implementations of the formulas in math.md.

full_kpar <- function(kernel, kpar) utils::modifyList(kernel_default_kpar[[kernel]], kpar)

test_that("the plain-R kernels agree with kernlab::kernelMatrix (oracle check)", {
  skip_if_not_installed("kernlab")
  x <- fx_random()
  for (kn in names(kernel_cases)) {
    kp <- full_kpar(kn, kernel_cases[[kn]])
    km <- unclass(kernlab::kernelMatrix(kernlab_kernel(kn, kp), x))
    expect_equal(plain_kernel(x, x, kn, kp), unname(km), tolerance = 1e-12,
                 label = paste("plain", kn))
  }
})

test_that("kernel_cross(x, x) equals kernlab::kernelMatrix for every kernel and data set", {
  skip_if_not_installed("kernlab")
  for (dn in c("iris", "arrests", "random", "cars")) {
    x <- fx_datasets()[[dn]]
    for (kn in names(kernel_cases)) {
      kp <- full_kpar(kn, kernel_cases[[kn]])
      ours <- fastkpca:::kernel_cross(x, x, kern_case(kn, kp))
      km <- unname(unclass(kernlab::kernelMatrix(kernlab_kernel(kn, kp), x)))
      expect_equal(dim(ours), c(nrow(x), nrow(x)))
      expect_equal(unname(ours), km, tolerance = 1e-12, label = paste(kn, "on", dn))
    }
  }
})

test_that("kernel_cross(x, x) equals the plain-R formula for every kernel and data set", {
  for (dn in c("iris", "arrests", "random", "cars")) {
    x <- fx_datasets()[[dn]]
    for (kn in names(kernel_cases)) {
      kp <- full_kpar(kn, kernel_cases[[kn]])
      ours <- fastkpca:::kernel_cross(x, x, kern_case(kn, kp))
      expect_equal(unname(ours), plain_kernel(x, x, kn, kp), tolerance = 1e-12,
                   label = paste(kn, "on", dn))
      expect_equal(ours, t(ours), tolerance = 1e-14, label = paste(kn, "symmetry on", dn))
    }
  }
})

test_that("kernel_cross(z, x) with z != x equals kernlab and the plain-R formula", {
  skip_if_not_installed("kernlab")
  x <- fx_arrests()[1:30, ]
  z <- fx_arrests()[31:50, ]
  for (kn in names(kernel_cases)) {
    kp <- full_kpar(kn, kernel_cases[[kn]])
    ours <- fastkpca:::kernel_cross(z, x, kern_case(kn, kp))
    expect_equal(dim(ours), c(20L, 30L))
    expect_equal(unname(ours), plain_kernel(z, x, kn, kp), tolerance = 1e-12,
                 label = paste("plain", kn))
    # kernlab's tanhdot kernelMatrix(kernel, x, y) errors (it is why its
    # predict() fails on tanhdot fits): the plain formula is the oracle there.
    if (kn != "tanhdot") {
      km <- unname(unclass(kernlab::kernelMatrix(kernlab_kernel(kn, kp), z, x)))
      expect_equal(unname(ours), km, tolerance = 1e-12, label = paste("kernlab", kn))
    }
  }
})

test_that("each kernel's default parameters give kernlab's default kernel", {
  skip_if_not_installed("kernlab")
  x <- fx_random()
  for (kn in names(kernel_default_kpar)) {
    ours <- fastkpca:::kernel_cross(x, x, kern_case(kn, kernel_default_kpar[[kn]]))
    kl <- do.call(getExportedValue("kernlab", kn), list())   # kernlab's defaults
    km <- unname(unclass(kernlab::kernelMatrix(kl, x)))
    expect_equal(unname(ours), km, tolerance = 1e-12, label = kn)
  }
})

test_that("other parameter values agree with kernlab and plain R", {
  skip_if_not_installed("kernlab")
  x <- fx_cars()
  cases <- list(
    list("polydot", list(degree = 3, scale = 0.2, offset = -0.5)),
    list("polydot", list(degree = 1, scale = 2, offset = 0)),
    list("rbfdot", list(sigma = 2.5)),
    list("laplacedot", list(sigma = 0.05)),
    list("tanhdot", list(scale = 0.5, offset = -1)),
    list("besseldot", list(sigma = 0.3, order = 0, degree = 1)),
    list("besseldot", list(sigma = 1.2, order = 2.5, degree = 3)),
    list("besseldot", list(sigma = 0.7, order = 3, degree = 2)),
    list("anovadot", list(sigma = 0.1, degree = 3)),
    list("anovadot", list(sigma = 2, degree = 1))
  )
  for (cs in cases) {
    kn <- cs[[1]]; kp <- full_kpar(kn, cs[[2]])
    lab <- paste(kn, deparse(cs[[2]]))
    ours <- unname(fastkpca:::kernel_cross(x, x, kern_case(kn, kp)))
    expect_equal(ours, plain_kernel(x, x, kn, kp), tolerance = 1e-12, label = paste("plain", lab))
    km <- unname(unclass(kernlab::kernelMatrix(kernlab_kernel(kn, kp), x)))
    expect_equal(ours, km, tolerance = 1e-12, label = paste("kernlab", lab))
  }
})

test_that("kernels at zero distance take their limits (duplicated rows)", {
  x <- rbind(c(1, 2, 3), c(1, 2, 3), c(0.5, -1, 2), c(1, 2, 3.00001))
  for (kn in c("rbfdot", "laplacedot", "besseldot")) {
    kp <- full_kpar(kn, kernel_cases[[kn]])
    k <- fastkpca:::kernel_cross(x, x, kern_case(kn, kp))
    expect_true(all(is.finite(k)), label = kn)
    expect_equal(diag(k), rep(1, 4), tolerance = 1e-14, label = paste(kn, "diagonal"))
    expect_equal(k[1, 2], 1, tolerance = 1e-14, label = paste(kn, "duplicate rows"))
    expect_equal(unname(k), plain_kernel(x, x, kn, kp), tolerance = 1e-9, label = kn)
  }
  # besseldot below t = 1e-4 is exactly 1; just above, the Bessel formula
  kp <- list(sigma = 1, order = 1, degree = 1)
  near <- rbind(c(0, 0), c(5e-5, 0), c(2e-3, 0))
  k <- fastkpca:::kernel_cross(near, near, kern_case("besseldot", kp))
  expect_identical(k[1, 2], 1)
  expect_equal(unname(k), plain_kernel(near, near, "besseldot", kp), tolerance = 1e-12)
  expect_lt(k[1, 3], 1)
})

test_that("a single-column data set and a single new row work", {
  x <- matrix(c(0.1, 0.5, -0.3, 2, 1.1), ncol = 1)
  z <- matrix(c(0.7), ncol = 1)
  for (kn in names(kernel_cases)) {
    kp <- full_kpar(kn, kernel_cases[[kn]])
    expect_equal(unname(fastkpca:::kernel_cross(z, x, kern_case(kn, kp))),
                 plain_kernel(z, x, kn, kp), tolerance = 1e-12, label = kn)
  }
})
