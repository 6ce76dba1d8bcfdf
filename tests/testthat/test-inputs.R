# Inputs: formula, data frames, coercion, missing values, precomputed kernel
# matrices, kernlab kernel objects, kpar defaults and checks.

test_that("the formula method matches kernlab's formula method", {
  skip_if_not_installed("kernlab")
  df <- iris[seq(1, 150, by = 3), ]
  kp <- list(sigma = 0.3)
  fit <- kpca(~ Sepal.Length + Petal.Length + log(Petal.Width), data = df,
              kernel = "rbfdot", kpar = kp, features = 3)
  kl <- kernlab::kpca(~ Sepal.Length + Petal.Length + log(Petal.Width), data = df,
                      kernel = "rbfdot", kpar = kp, features = 3)
  ref <- list(eig = unname(kernlab::eig(kl)), alpha = kernlab::pcv(kl),
              rotated = kernlab::rotated(kl))
  expect_kpca_equal(fit, ref, label = "formula")
  expect_equal(bare(fit$xmatrix), bare(kernlab::xmatrix(kl)))
  # terms are stored, without response and intercept
  expect_s3_class(fit$terms, "terms")
  expect_equal(attr(fit$terms, "term.labels"),
               c("Sepal.Length", "Petal.Length", "log(Petal.Width)"))
  expect_equal(attr(fit$terms, "intercept"), 0L)
  expect_equal(colnames(fit$xmatrix), c("Sepal.Length", "Petal.Length", "log(Petal.Width)"))
  # ~ . uses every column
  fall <- kpca(~ ., data = df[, 1:4], kernel = "polydot",
               kpar = list(degree = 2, scale = 0.1, offset = 1), features = 3)
  kall <- kernlab::kpca(~ ., data = df[, 1:4], kernel = "polydot",
                        kpar = list(degree = 2, scale = 0.1, offset = 1), features = 3)
  expect_kpca_equal(fall, list(eig = kernlab::eig(kall), alpha = kernlab::pcv(kall),
                               rotated = kernlab::rotated(kall)), label = "~ .")
})

test_that("the formula method handles factors like kernlab (one column per level)", {
  skip_if_not_installed("kernlab")
  df <- iris[seq(2, 150, by = 3), c("Sepal.Length", "Petal.Width", "Species")]
  kp <- list(sigma = 0.5)
  fit <- kpca(~ Sepal.Length + Species, data = df, kpar = kp, features = 3)
  kl <- kernlab::kpca(~ Sepal.Length + Species, data = df, kernel = "rbfdot",
                      kpar = kp, features = 3)
  expect_kpca_equal(fit, list(eig = kernlab::eig(kl), alpha = kernlab::pcv(kl),
                              rotated = kernlab::rotated(kl)), label = "factor")
  expect_equal(bare(fit$xmatrix), bare(kernlab::xmatrix(kl)))
  expect_equal(fit$xlevels$Species, levels(iris$Species))
})

test_that("a formula with a response is an error", {
  expect_error(kpca(Species ~ Sepal.Length, data = iris), "'x' must be a formula without a response")
})

test_that("formula + data frame with NA rows: na.omit, na.action stored, na.fail errors", {
  skip_if_not_installed("kernlab")
  df <- iris[1:40, 1:4]
  df[c(3, 7), 2] <- NA
  df[10, 4] <- NA
  kp <- list(sigma = 0.4)
  fit <- kpca(~ ., data = df, kernel = "rbfdot", kpar = kp, features = 3)
  kl <- kernlab::kpca(~ ., data = df, kernel = "rbfdot", kpar = kp, features = 3)
  expect_kpca_equal(fit, list(eig = kernlab::eig(kl), alpha = kernlab::pcv(kl),
                              rotated = kernlab::rotated(kl)), label = "formula + NA")
  expect_equal(nrow(fit$xmatrix), 37L)
  expect_equal(nrow(fit$rotated), 37L)
  expect_equal(fit$na.action, attr(stats::na.omit(df), "na.action"))
  expect_equal(unclass(fit$na.action), unclass(kl@n.action),
               ignore_attr = TRUE)
  expect_error(kpca(~ ., data = df, kernel = "rbfdot", kpar = kp, features = 3,
                    na.action = na.fail), "missing values in object")
})

test_that("a data frame of numeric columns equals the matrix and kernlab", {
  skip_if_not_installed("kernlab")
  df <- as.data.frame(fx_cars())
  kp <- list(sigma = 0.2)
  fd <- kpca(df, kernel = "rbfdot", kpar = kp, features = 4)
  fm <- kpca(as.matrix(df), kernel = "rbfdot", kpar = kp, features = 4)
  expect_identical(fd$alpha, fm$alpha)
  expect_identical(fd$eig, fm$eig)
  expect_equal(unname(fd$xmatrix), unname(as.matrix(df)))
  expect_kpca_equal(fd, kernlab_fit(as.matrix(df), "rbfdot", kp, features = 4), label = "df")
  expect_error(kpca(iris, kernel = "rbfdot", kpar = kp), "'x' has non-numeric column: Species")   # a factor column
})

test_that("integer and logical matrices are coerced to double", {
  skip_if_not_installed("kernlab")
  xi <- matrix(as.integer(c(3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3,
                            8, 4, 6, 2, 6, 4)), ncol = 3)
  xd <- xi; storage.mode(xd) <- "double"
  kp <- list(sigma = 0.05)
  fi <- kpca(xi, kernel = "rbfdot", kpar = kp, features = 3)
  expect_kpca_equal(fi, kernlab_fit(xd, "rbfdot", kp, features = 3), label = "integer")
  expect_kpca_equal(fi, plain_kpca(xd, "rbfdot", kp, features = 3), label = "integer/plain")
  expect_identical(storage.mode(fi$xmatrix), "double")

  xl <- matrix(c(TRUE, FALSE, TRUE, TRUE, FALSE, FALSE, TRUE, FALSE,
                 FALSE, TRUE, TRUE, TRUE, FALSE, TRUE, FALSE, FALSE,
                 TRUE, TRUE, FALSE, TRUE, FALSE, FALSE, TRUE, TRUE), ncol = 3)
  xld <- xl + 0
  fl <- kpca(xl, kernel = "polydot", kpar = list(degree = 2, scale = 1, offset = 1),
             features = 3)
  expect_kpca_equal(fl, kernlab_fit(xld, "polydot", list(degree = 2, scale = 1, offset = 1),
                                    features = 3), label = "logical")
  expect_identical(storage.mode(fl$xmatrix), "double")
})

test_that("a numeric vector is one column", {
  v <- c(0.3, 1.2, -0.7, 2.2, 0.1, -1.5, 0.9)
  fit <- kpca(v, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 2)
  expect_kpca_equal(fit, plain_kpca(matrix(v), "rbfdot", list(sigma = 0.5), features = 2),
                    label = "vector")
  expect_equal(dim(fit$xmatrix), c(7L, 1L))
})

test_that("NA rows in a matrix are dropped by na.omit (as kernlab on na.omit'ed data)", {
  skip_if_not_installed("kernlab")
  x <- fx_arrests()
  x[c(2, 11), 1] <- NA
  x[30, 3] <- NaN
  kp <- list(sigma = 0.3)
  fit <- kpca(x, kernel = "laplacedot", kpar = kp, features = 3)
  xo <- stats::na.omit(x)
  expect_kpca_equal(fit, kernlab_fit(unclass(xo)[, , drop = FALSE], "laplacedot", kp, features = 3),
                    label = "na.omit")
  expect_equal(unname(fit$xmatrix), unname(matrix(xo, nrow(xo))))
  expect_equal(as.integer(fit$na.action), c(2L, 11L, 30L))
  expect_equal(fit$na.action, attr(xo, "na.action"))
  expect_error(kpca(x, kernel = "laplacedot", kpar = kp, features = 3, na.action = na.fail), "missing values in object")
  # Inf is not missing: an error, not silently dropped
  y <- fx_arrests(); y[5, 2] <- Inf
  expect_error(kpca(y, kernel = "rbfdot", kpar = kp), "'x' must not contain infinite values")
})

test_that("a precomputed kernel matrix matches kernlab::kpca on as.kernelMatrix(K)", {
  skip_if_not_installed("kernlab")
  x <- fx_arrests()
  kp <- list(sigma = 0.2)
  K <- plain_kernel(x, x, "rbfdot", kp)
  fit <- kpca(K, kernel = "precomputed", features = 4)
  kl <- kernlab::kpca(kernlab::as.kernelMatrix(K), features = 4)
  expect_kpca_equal(fit, list(eig = kernlab::eig(kl), alpha = kernlab::pcv(kl),
                              rotated = kernlab::rotated(kl)), label = "precomputed")
  # and the same as fitting the data with the kernel
  expect_kpca_equal(fit, kpca(x, kernel = "rbfdot", kpar = kp, features = 4),
                    tol = 1e-10, label = "precomputed vs data")
  expect_equal(fit$kernel, "precomputed")
  # threshold mode
  f0 <- kpca(K, kernel = "precomputed")
  k0 <- kernlab::kpca(kernlab::as.kernelMatrix(K))
  expect_kpca_equal(f0, list(eig = kernlab::eig(k0), alpha = kernlab::pcv(k0),
                             rotated = kernlab::rotated(k0)), label = "precomputed, th")
  # a kernelMatrix object is recognised without kernel = "precomputed"
  fk <- kpca(kernlab::as.kernelMatrix(K), features = 4)
  expect_equal(fk$kernel, "precomputed")
  expect_equal(fk$eig, fit$eig, tolerance = 1e-12)
})

test_that("the user's precomputed matrix is not modified", {
  x <- fx_random()
  K <- plain_kernel(x, x, "laplacedot", list(sigma = 0.5))
  K0 <- K + 0                      # a separate copy
  fit <- kpca(K, kernel = "precomputed", features = 3)
  expect_identical(K, K0)
  predict(fit, K[1:5, ])
  expect_identical(K, K0)
  # an integer kernel matrix (coerced) leaves the user's integers alone too
  Ki <- matrix(c(4L, 1L, 0L, 1L, 3L, 1L, 0L, 1L, 5L), 3)
  Ki0 <- Ki + 0L
  fi <- kpca(Ki, kernel = "precomputed", features = 2)
  expect_identical(Ki, Ki0)
  expect_kpca_equal(fi, plain_kpca_K(Ki0 + 0, features = 2), label = "integer K")
})

test_that("precomputed: non-square or asymmetric matrices are errors", {
  x <- fx_random()
  K <- plain_kernel(x, x, "rbfdot", list(sigma = 0.5))
  expect_error(kpca(K[, -1], kernel = "precomputed"), "'x' must be a square kernel matrix")
  Ka <- K; Ka[1, 2] <- Ka[1, 2] + 0.5
  expect_error(kpca(Ka, kernel = "precomputed"), "'x' must be a symmetric kernel matrix")
  Kn <- K; Kn[3, 3] <- NA
  expect_error(kpca(Kn, kernel = "precomputed"), "'x' must not contain missing or infinite values")
})

test_that("kernlab kernel objects give the same fit as the name and kpar, for all eight kernels", {
  skip_if_not_installed("kernlab")
  x <- fx_random()
  for (kn in names(kernel_cases)) {
    kp <- kernel_cases[[kn]]
    obj <- kernlab_kernel(kn, kp)
    fo <- kpca(x, kernel = obj, features = 3)
    fn <- kpca(x, kernel = kn, kpar = kp, features = 3)
    expect_equal(fo$kernel$name, kn, label = paste(kn, "name"))
    expect_equal(fo$kpar, kernlab::kpar(obj), label = paste(kn, "kpar"))
    expect_identical(fo$alpha, fn$alpha, label = paste(kn, "alpha"))
    expect_identical(fo$eig, fn$eig, label = paste(kn, "eig"))
    expect_kpca_equal(fo, kernlab_fit(x, kn, kp, features = 3), label = paste(kn, "object vs kernlab"))
  }
  # the examples of the brief
  expect_equal(kpca(x, kernel = kernlab::rbfdot(0.5), features = 2)$kpar, list(sigma = 0.5))
  expect_equal(kpca(x, kernel = kernlab::polydot(degree = 3), features = 2)$kpar,
               list(degree = 3, scale = 1, offset = 1))
  # kpar given with a kernel object: an error, the object carries its parameters
  expect_error(kpca(x, kernel = kernlab::rbfdot(0.5), kpar = list(sigma = 2), features = 2),
               "'kpar' must not be given with a kernel object")
  # a user-defined kernlab kernel is not supported: an error
  custom <- methods::new("kernel", .Data = function(x, y) sum(x * y), kpar = list())
  expect_error(kpca(x, kernel = custom), "'kernel' is a kernlab kernel of class \"kernel\"")
})

test_that("kernel = \"polydot\" without kpar uses polydot's defaults (degree 1, scale 1, offset 1)", {
  skip_if_not_installed("kernlab")
  x <- fx_arrests()
  fit <- kpca(x, kernel = "polydot", features = 3)
  expect_equal(fit$kpar, list(degree = 1, scale = 1, offset = 1))
  expect_kpca_equal(fit, kernlab_fit(x, "polydot", list(degree = 1, scale = 1, offset = 1),
                                     features = 3), label = "polydot defaults")
  # tanhdot and splinedot, which have no sigma either
  ft <- kpca(x, kernel = "tanhdot", features = 2)
  expect_equal(ft$kpar, list(scale = 1, offset = 1))
  expect_kpca_equal(ft, plain_kpca(x, "tanhdot", list(scale = 1, offset = 1), features = 2),
                    label = "tanhdot defaults")
  expect_equal(kpca(x, kernel = "splinedot", features = 2)$kpar, list())
  expect_equal(kpca(x, kernel = "vanilladot", features = 2)$kpar, list())
})

test_that("without kpar, sigma kernels take kernlab's default kpar list(sigma = 0.1)", {
  skip_if_not_installed("kernlab")
  x <- fx_random()
  def <- kpca(x, features = 3)
  expect_equal(kernelf(def), kern("rbfdot", sigma = 0.1))
  expect_equal(def$kpar, list(sigma = 0.1))
  expect_kpca_equal(def, kernlab_fit(x, "rbfdot", list(sigma = 0.1), features = 3),
                    label = "kpca(x)")
  fl <- kpca(x, kernel = "laplacedot", features = 3)
  expect_equal(fl$kpar, list(sigma = 0.1))
  fb <- kpca(x, kernel = "besseldot", features = 3)
  expect_equal(fb$kpar, list(sigma = 0.1, order = 1, degree = 1))
  expect_kpca_equal(fb, kernlab_fit(x, "besseldot", list(sigma = 0.1), features = 3),
                    label = "besseldot sigma = 0.1")
  fa <- kpca(x, kernel = "anovadot", features = 3)
  expect_equal(fa$kpar, list(sigma = 0.1, degree = 1))
})

test_that("a partially given kpar is filled with the kernel's defaults", {
  skip_if_not_installed("kernlab")
  x <- fx_cars()
  fp <- kpca(x, kernel = "polydot", kpar = list(degree = 2), features = 3)
  expect_equal(fp$kpar, list(degree = 2, scale = 1, offset = 1))
  expect_kpca_equal(fp, kernlab_fit(x, "polydot", list(degree = 2, scale = 1, offset = 1),
                                    features = 3), label = "polydot degree 2")
  fb <- kpca(x, kernel = "besseldot", kpar = list(order = 2), features = 3)
  expect_equal(fb$kpar, list(sigma = 1, order = 2, degree = 1))
  expect_kpca_equal(fb, kernlab_fit(x, "besseldot", list(sigma = 1, order = 2, degree = 1),
                                    features = 3), label = "besseldot order 2")
  ft <- kpca(x, kernel = "tanhdot", kpar = list(scale = 0.01), features = 3)
  expect_equal(ft$kpar, list(scale = 0.01, offset = 1))
  fa <- kpca(x, kernel = "anovadot", kpar = list(degree = 2), features = 3)
  expect_equal(fa$kpar, list(sigma = 1, degree = 2))
  # order of the given entries does not matter
  f2 <- kpca(x, kernel = "polydot", kpar = list(offset = 0.5, degree = 2), features = 3)
  expect_equal(f2$kpar, list(degree = 2, scale = 1, offset = 0.5))
})

test_that("an unknown or invalid kpar entry is an error", {
  x <- fx_random()
  expect_error(kpca(x, kernel = "rbfdot", kpar = list(sigma = 1, degree = 2)), "degree")
  expect_error(kpca(x, kernel = "polydot", kpar = list(sigma = 1)), "sigma")
  expect_error(kpca(x, kernel = "vanilladot", kpar = list(sigma = 0.1)), "'kpar' has unknown entry \"sigma\"")
  expect_error(kpca(x, kernel = "rbfdot", kpar = list(sigam = 1)), "'kpar' has unknown entry \"sigam\"")
  expect_error(kpca(x, kernel = "rbfdot", kpar = list(sigma = -1)), "'kpar\\$sigma' must be positive")
  expect_error(kpca(x, kernel = "rbfdot", kpar = list(sigma = NA)), "'kpar\\$sigma' must be a single finite number")
  expect_error(kpca(x, kernel = "polydot", kpar = list(degree = 1.5)), "'kpar\\$degree' must be a whole number")
  expect_error(kpca(x, kernel = "rbfdot", kpar = list(0.5)), "'kpar' must be a named list")
  expect_error(kpca(x, kernel = "nosuchdot"), "'kernel' must be one of .*not \"nosuchdot\"")
})

test_that("unused arguments are errors", {
  expect_error(kpca(fx_random(), kernel = "rbfdot", sigma = 0.5), "unused argument: sigma")
})
