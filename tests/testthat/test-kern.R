# Kernel objects and their algebra (R/kernel_algebra.R, R/kernel_spec.R, src/kernel.c) against plain-R
# oracles: the kernel matrix from the formulas (helper-oracles.R) combined
# with R's matrix arithmetic, and the fit and predict() from eigen() of the
# centered matrix.

x_kern <- function() fx_random()                       # 40 x 3
z_kern <- function() fx_random()[1:7, ] + 0.25          # 7 new rows

oracle_rel <- function(a, b) max(abs(a - b)) / max(abs(b))

test_that("kern() resolves every named kernel to its defaults", {
  for (kn in names(kernel_default_kpar)) {
    k <- kern(kn)
    expect_fastkpca_kernel(k, kn)
    expect_equal(k$name, kn)
    expect_equal(k$kpar, kernel_default_kpar[[kn]], label = kn)
  }
  expect_equal(kern("rbfdot")$kpar, list(sigma = 1))
  expect_equal(kern("polydot", degree = 3)$kpar, list(degree = 3, scale = 1, offset = 1))
  expect_equal(kern("besseldot", order = 2, sigma = 0.5)$kpar,
               list(sigma = 0.5, order = 2, degree = 1))
})

test_that("kern()'s defaults are those of kernlab's generators", {
  skip_if_not_installed("kernlab")
  for (kn in names(kernel_default_kpar)) if (length(kernel_default_kpar[[kn]]))
    expect_equal(kern(kn)$kpar, kernlab::kpar(kernlab_kernel(kn, list())), label = kn)
})

test_that("kern() keeps kernel objects", {
  k <- kern("rbfdot", sigma = 2)
  expect_same_kernel(kern(k), k)
  k <- 2 * kern("rbfdot", sigma = 2)
  expect_identical(kern(k), k)
})

test_that("kernlab kernel objects: kern() converts them, kpca() refuses kpar beside one", {
  skip_if_not_installed("kernlab")
  for (kn in names(kernel_cases)) {
    obj <- kernlab_kernel(kn, kernel_cases[[kn]])
    k <- kern(obj)
    expect_fastkpca_kernel(k, kn)
    expect_equal(k$name, kn)
    expect_equal(k$kpar, utils::modifyList(kernel_default_kpar[[kn]], kernel_cases[[kn]]),
                 label = kn)
  }
  expect_error(kern(kernlab::rbfdot(1), sigma = 1), "unused argument")
  expect_error(kpca(x_kern(), kernel = kernlab::rbfdot(0.5), kpar = list(sigma = 1)),
               "'kpar' must not be given with a kernel object")
})

test_that("kern() rejects unknown names, unknown parameters and invalid values by name", {
  expect_error(kern("gaussdot"), "'kernel' must be one of .*not \"gaussdot\"")
  expect_error(kern(3), "'kernel' must be a kernel name")
  expect_error(kern(NA_character_), "'kernel' must be a kernel name")
  expect_error(kern("rbfdot", sigmaa = 1), "unknown parameter \"sigmaa\" for kernel \"rbfdot\"")
  expect_error(kern("vanilladot", sigma = 1), "unknown parameter \"sigma\".*none")
  expect_error(kern("rbfdot", sigma = -1), "^'sigma' must be positive")
  expect_error(kern("rbfdot", sigma = NA), "^'sigma' must be a single finite number")
  expect_error(kern("rbfdot", sigma = c(1, 2)), "^'sigma' must be a single finite number")
  expect_error(kern("polydot", degree = 1.5), "^'degree' must be a whole number")
  expect_error(kern("besseldot", order = 80), "^'order' must be between 0 and 50")
  expect_error(kern("rbfdot", 0.5), "must be named")
  expect_error(kern("rbfdot", sigma = 1, sigma = 2), "names a parameter twice")
  expect_error(kern(kern("rbfdot"), sigma = 1), "unused argument")
})

test_that("each operator's kernel matrix equals the algebra of the plain-R matrices", {
  x <- x_kern(); z <- z_kern()
  kr <- kern("rbfdot", sigma = 0.3); kp <- kern("polydot", degree = 2, scale = 0.5)
  kl <- kern("laplacedot", sigma = 0.4); kv <- kern("vanilladot")
  g <- function(m) 1 + 0.5 * sin(rowSums(m))
  P <- function(y, kn, kpar) plain_kernel(x, y, kn, kpar)
  R <- function(y) P(y, "rbfdot", list(sigma = 0.3))
  Pp <- function(y) P(y, "polydot", list(degree = 2, scale = 0.5))
  L <- function(y) P(y, "laplacedot", list(sigma = 0.4))
  V <- function(y) P(y, "vanilladot", list())
  cases <- list(
    sum = list(kr + kp, function(y) R(y) + Pp(y)),
    product = list(kr * kp, function(y) R(y) * Pp(y)),
    scale_left = list(2.5 * kr, function(y) 2.5 * R(y)),
    scale_right = list(kp * 0.2, function(y) 0.2 * Pp(y)),
    power = list(kl^3, function(y) L(y)^3),
    exp = list(exp(kr), function(y) exp(R(y))),
    conformal = list(kern_conformal(kp, g), function(y) outer(g(x), g(y)) * Pp(y)),
    nested = list(2 * kr + exp(0.1 * kv) * kl^2,
                  function(y) 2 * R(y) + exp(0.1 * V(y)) * L(y)^2),
    deep = list(kern_conformal((kr + kp) * (kl + 3 * kv)^2, g) + kr,
                function(y) outer(g(x), g(y)) * (R(y) + Pp(y)) * (L(y) + 3 * V(y))^2 + R(y)))
  for (nm in names(cases)) {
    k <- cases[[nm]][[1L]]; oracle <- cases[[nm]][[2L]]
    K <- kernel_matrix(k, x)
    expect_lt(oracle_rel(K, oracle(x)), 1e-12, label = paste(nm, "gram"))
    expect_true(isSymmetric(K), label = paste(nm, "symmetric"))
    # the cross-kernel: rows of x against new rows
    expect_lt(oracle_rel(kernel_matrix(k, x, z), oracle(z)), 1e-12, label = paste(nm, "cross"))
  }
})

test_that("kernel_matrix() equals kernlab::kernelMatrix for every named kernel", {
  skip_if_not_installed("kernlab")
  for (nm in names(fx_datasets())) {
    x <- fx_datasets()[[nm]]
    z <- x[seq(1, nrow(x), by = 3), , drop = FALSE] + 0.125
    for (kn in names(kernel_cases)) {
      kp <- kernel_cases[[kn]]
      kl <- kernlab_kernel(kn, kp)
      ref <- unclass(kernlab::kernelMatrix(kl, x))
      expect_lt(rel_diff(unname(kernel_matrix(kn, x, kpar = kp)), unname(ref)), 1e-10,
                label = paste(nm, kn))
      # kernlab's tanhdot kernelMatrix(kernel, x, y) errors
      if (kn == "tanhdot") next
      ref_cross <- unclass(kernlab::kernelMatrix(kl, z, x))
      expect_lt(rel_diff(unname(kernel_matrix(kern(kl), z, x)), unname(ref_cross)), 1e-10,
                label = paste(nm, kn, "cross"))
    }
  }
})

test_that("kernel_matrix() checks its data and arguments like kpca()", {
  x <- x_kern()
  expect_equal(dimnames(kernel_matrix("rbfdot", x[1:3, ])), list(NULL, NULL))
  named <- x[1:3, ]; rownames(named) <- c("a", "b", "c")
  expect_equal(dimnames(kernel_matrix("rbfdot", named, named[1:2, ])),
               list(c("a", "b", "c"), c("a", "b")))
  expect_error(kernel_matrix("rbfdot", rbind(x, NA)), "'x' must not contain missing values")
  expect_error(kernel_matrix("rbfdot", x, rbind(x[1:2, ], Inf)), "'y' must not contain infinite")
  expect_error(kernel_matrix("rbfdot", x, x[, 1:2]), "'y' must have 3 columns")
  expect_error(kernel_matrix("rbfdot", letters), "'x' must be numeric")
  expect_error(kernel_matrix("rbfdot", x, kpar = list(sigma = 0)), "'kpar\\$sigma' must be positive")
  expect_error(kernel_matrix(kern("rbfdot"), x, kpar = list(sigma = 1)), "'kpar' must not be given with a kernel object")
  expect_error(kernel_matrix("foo", x), "'kernel' must be one of")
  expect_error(kernel_matrix(kern("polydot", degree = 400, scale = 10), x * 100),
               "kernel values are not finite")
  expect_error(kernel_matrix(exp(kern("polydot", degree = 3, scale = 100)), x * 10),
               "kernel expression gives values too large")
  # a vector is one column, as in kpca()
  expect_equal(kernel_matrix("vanilladot", 1:3), outer(1:3, 1:3), ignore_attr = TRUE)
})

test_that("a fit with a combined kernel equals eigen() of the centered oracle matrix", {
  x <- x_kern(); z <- z_kern()
  g <- function(m) exp(-rowSums(m^2) / 20)
  kr <- kern("rbfdot", sigma = 0.3); kp <- kern("polydot", degree = 2, scale = 0.5)
  kernels <- list(
    sum = list(2 * kr + kp, function(a, b) 2 * plain_kernel(a, b, "rbfdot", list(sigma = 0.3)) +
                 plain_kernel(a, b, "polydot", list(degree = 2, scale = 0.5))),
    exp_product = list(exp(kr) * kp^2, function(a, b) exp(plain_kernel(a, b, "rbfdot", list(sigma = 0.3))) *
                         plain_kernel(a, b, "polydot", list(degree = 2, scale = 0.5))^2),
    conformal = list(kern_conformal(kr, g), function(a, b) outer(g(a), g(b)) *
                       plain_kernel(a, b, "rbfdot", list(sigma = 0.3))))
  for (nm in names(kernels)) {
    k <- kernels[[nm]][[1L]]; oracle <- kernels[[nm]][[2L]]
    K <- oracle(x, x)
    ref <- plain_kpca_K(K, features = 4)
    for (solver in c("exact", "iterative")) {
      fit <- kpca(x, kernel = k, features = 4, solver = solver, control = list(ncv = 20))
      expect_lt(rel_diff(unname(fit$eig), ref$eig), 1e-8, label = paste(nm, solver, "eig"))
      expect_lt(rel_diff(align_signs(unname(fit$rotated), ref$rotated), ref$rotated), 1e-6,
                label = paste(nm, solver, "rotated"))
      pz <- plain_predict(K, oracle(z, x), ref$alpha)
      expect_lt(rel_diff(align_signs(unname(predict(fit, z)), pz), pz), 1e-6,
                label = paste(nm, solver, "predict"))
      expect_equal(predict(fit, x), fit$rotated, tolerance = 1e-8)
    }
    expect_identical(kernelf(fit), k)
    expect_null(fit$kpar)
  }
})

test_that("a kernel object of one named kernel gives the same bits as the name", {
  x <- fx_iris()
  for (kn in names(kernel_cases)) {
    kp <- kernel_cases[[kn]]
    by_name <- suppressWarnings(kpca(x, kernel = kn, kpar = kp, features = 3))
    by_object <- suppressWarnings(kpca(x, kernel = do.call(kern, c(list(kn), kp)), features = 3))
    expect_identical(by_object$rotated, by_name$rotated, label = kn)
    expect_identical(by_object$kernel, by_name$kernel, label = kn)
    expect_identical(by_object$kpar, by_name$kpar, label = kn)
  }
})

test_that("results do not depend on the number of threads for a combined kernel", {
  x <- fx_iris()
  k <- kern_conformal(kern("rbfdot", sigma = 0.2) * kern("anovadot") + kern("splinedot"),
                      function(m) 1 / (1 + rowSums(m^2)))
  f1 <- kpca(x, kernel = k, features = 3, threads = 1)
  f2 <- kpca(x, kernel = k, features = 3, threads = 2)
  expect_identical(f1$rotated, f2$rotated)
  expect_identical(predict(f1, x[1:20, ] + 0.1), predict(f2, x[1:20, ] + 0.1))
})

test_that("g of a conformal kernel is called once per set of rows", {
  calls <- 0L
  g <- function(m) { calls <<- calls + 1L; rep(1, nrow(m)) + m[, 1] / 100 }
  x <- x_kern()
  fit <- kpca(x, kernel = kern_conformal(kern("rbfdot"), g), features = 2)
  expect_equal(calls, 1L)
  expect_equal(fit$kernel_weights, list(g(x)))
  calls <- 0L
  predict(fit, z_kern())
  expect_equal(calls, 1L)
})

test_that("operations that would not give a positive semidefinite kernel are errors", {
  k <- kern("rbfdot"); k2 <- kern("polydot")
  psd <- "would not give a positive semidefinite kernel|not be a positive semidefinite kernel"
  expect_error(k - k2, psd)
  expect_error(-k, psd)
  expect_error(k / k2, psd)
  expect_error(k / 2, psd)
  for (c in list(0, -1, NA, NaN, Inf, c(1, 2), "2", numeric(0))) {
    expect_error(c * k, psd, label = deparse(c))
    expect_error(k * c, psd, label = deparse(c))
  }
  for (p in list(0, 0.5, -1, NA, 2.5, c(1, 2), Inf)) expect_error(k^p, psd, label = deparse(p))
  expect_error(2^k, "'\\^' raises a kernel object")
  expect_error(k + 1, "kernel plus a number is not supported")
  expect_error(k == k2)
  expect_error(1 * k == k2, "'==' is not defined for kernel objects")
  expect_error(log(k), "only exp\\(\\) keeps a kernel positive semidefinite")
  expect_error(sqrt(k), "'sqrt' is not defined")
  expect_same_kernel(+k, k)
  expect_same_kernel(k^1, k)
})

test_that("bad conformal functions are errors that name g, at fit and at predict time", {
  x <- x_kern()
  expect_error(kern_conformal(kern("rbfdot"), 2), "'g' must be a function")
  expect_error(kern_conformal("nokernel", identity), "'kernel' must be one of")
  bad <- list(
    scalar = function(m) 1,
    too_long = function(m) rep(1, nrow(m) + 1),
    character = function(m) rep("a", nrow(m)),
    na = function(m) c(NA, rep(1, nrow(m) - 1)),
    inf = function(m) c(Inf, rep(1, nrow(m) - 1)),
    fails = function(m) stop("boom"))
  for (nm in names(bad)) {
    expect_error(kpca(x, kernel = kern_conformal(kern("rbfdot"), bad[[nm]]), features = 2),
                 "'g'", label = nm)
    expect_error(kernel_matrix(kern_conformal(kern("rbfdot"), bad[[nm]]), x), "'g'", label = nm)
  }
  # fine on the training rows, wrong on new rows
  g <- function(m) if (nrow(m) == 40L) rep(1, 40) else rep(NA_real_, nrow(m))
  fit <- kpca(x, kernel = kern_conformal(kern("rbfdot"), g), features = 2)
  expect_error(predict(fit, z_kern()), "'g' of the conformal kernel must return finite numbers")
})

test_that("kpca() takes a kernel object, and refuses kpar beside it", {
  x <- x_kern()
  k <- kern("rbfdot", sigma = 0.5) + kern("vanilladot")
  expect_error(kpca(x, kernel = k, kpar = list(sigma = 1)), "'kpar' must not be given with a kernel object")
  fit <- kpca(x, kernel = k, features = 2)
  out <- capture.output(print(fit))
  expect_true(any(grepl("rbfdot(sigma = 0.5) + vanilladot()", out, fixed = TRUE)))
  expect_match(summary(fit)$kernel, "rbfdot(sigma = 0.5) + vanilladot()", fixed = TRUE)
  # formula interface and update()
  df <- as.data.frame(x)
  ff <- kpca(~ ., data = df, kernel = k, features = 2)
  expect_equal(abs(ff$rotated), abs(fit$rotated), ignore_attr = TRUE)
  expect_equal(kernelf(update(fit, features = 3)), k)
})

test_that("tanhdot in an expression warns when the result is not positive semidefinite", {
  x <- x_kern()
  k <- kern("tanhdot", scale = 2, offset = -1) + 0.001 * kern("vanilladot")
  expect_warning(fit <- kpca(x, kernel = k, features = 40), "not positive semidefinite")
  expect_true(all(fit$eig > 0))
  expect_true(all(is.finite(predict(fit, z_kern()))))
})

test_that("kernel objects print as readable expressions", {
  k <- 2 * kern("rbfdot", sigma = 0.5) + kern("polydot", degree = 2, scale = 0.5)
  expect_equal(format(k), "2 * rbfdot(sigma = 0.5) + polydot(degree = 2, scale = 0.5, offset = 1)")
  expect_output(print(k), "^Kernel: 2 \\* rbfdot")
  expect_equal(format((kern("rbfdot") + kern("vanilladot")) * kern("splinedot")),
               "(rbfdot(sigma = 1) + vanilladot()) * splinedot()")
  expect_equal(format(exp(kern("rbfdot"))^2), "exp(rbfdot(sigma = 1))^2")
  expect_equal(format((2 * kern("rbfdot"))^3), "(2 * rbfdot(sigma = 1))^3")
  g <- function(m) rowSums(m)
  expect_equal(format(kern_conformal(kern("vanilladot"), g)), "conformal(vanilladot(), g = g)")
})

test_that("a damaged kernel object in a fit gives a clear error in predict()", {
  x <- x_kern()
  fit <- kpca(x, kernel = 2 * kern("rbfdot") + kern("vanilladot"), features = 2)
  damaged <- fit; damaged$kernel$args[[1L]]$value <- -2
  expect_error(predict(damaged, x), "not a valid fastkpca fit")
  damaged <- fit; damaged$kernel$op <- "difference"
  expect_error(predict(damaged, x), "not a valid fastkpca fit")
  damaged <- fit; damaged$kernel <- "rbfdot"
  expect_error(predict(damaged, x), "not a valid fastkpca fit")
})

test_that("the kernel diagonal in C equals the diagonal of the kernel matrix", {
  x <- x_kern()
  g <- function(m) 1 + 0.5 * sin(rowSums(m))
  kernels <- c(lapply(names(kernel_cases), function(kn) kern_case(kn, kernel_cases[[kn]])),
               list(kern_conformal(2 * kern("rbfdot", sigma = 0.3) + kern("polydot")^2, g),
                    exp(0.1 * kern("vanilladot")) * kern("besseldot", order = 2)))
  for (k in kernels) {
    d <- .Call(fastkpca:::C_kernel_self, x, fastkpca:::kernel_program(k),
               fastkpca:::kernel_weights(k, x))
    expect_equal(d, diag(kernel_matrix(k, x), names = FALSE), tolerance = 1e-13,
                 label = format(k))
  }
  expect_error(.Call(fastkpca:::C_kernel_self, x * 1e3, fastkpca:::kernel_program(
    kern("polydot", degree = 400, scale = 10)), list()), "kernel values are not finite")
})

test_that("kern(), the algebra and kernelf() give fastkpca's kernel whatever is loaded or attached", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("callr")
  # in each session: kern() of one named kernel and of kernlab's object, an
  # expression, kernelf() of a fit, and what the generators give
  session <- function(setup) {
    eval(parse(text = setup), envir = globalenv())
    fk <- asNamespace("fastkpca")
    fit <- fk$kpca(as.matrix(iris[1:30, 1:4]), kernel = "rbfdot", kpar = list(sigma = 0.2),
                   features = 2)
    ks <- list(kern = fk$kern("rbfdot", sigma = 0.2), kern_of_kernlab = fk$kern(kernlab::rbfdot(0.2)),
               kern_of_generator = fk$kern(fk$rbfdot(0.2)), power_one = fk$rbfdot(0.2)^1,
               kernelf = fk$kernelf(fit))
    list(classes = lapply(ks, class), s4 = vapply(ks, isS4, TRUE),
         printed = lapply(ks, function(k) utils::capture.output(print(k))),
         generator = class(fk$rbfdot(0.2)), string_generator = class(fk$stringdot()),
         attached = "package:kernlab" %in% search())
  }
  setups <- c(alone = "library(fastkpca)",
              loaded = "library(fastkpca); loadNamespace('kernlab')",
              kernlab_first = "suppressMessages({library(kernlab); library(fastkpca)})",
              kernlab_after = "suppressMessages({library(fastkpca); library(kernlab)})")
  res <- lapply(setups, function(setup)
    callr::r(session, args = list(setup), libpath = .libPaths(),
             env = c(callr::rcmd_safe_env(), R_TESTS = "")))
  fastkpca_classes <- c("fastkpca_kernel_function", "fastkpca_kernel", "kernel")
  for (nm in names(res)) {
    for (k in names(res[[nm]]$classes))
      expect_identical(res[[nm]]$classes[[k]], fastkpca_classes, label = paste(nm, k))
    expect_false(any(res[[nm]]$s4), label = nm)
    expect_identical(res[[nm]]$printed, res$alone$printed, label = paste(nm, "print()"))
  }
  # the generators: kernlab's class only while kernlab is attached
  expect_identical(res$alone$generator, fastkpca_classes)
  expect_identical(res$loaded$generator, fastkpca_classes)
  expect_identical(res$loaded$string_generator[1L], "fastkpca_string_kernel_function")
  for (nm in c("kernlab_first", "kernlab_after")) {
    expect_true(res[[nm]]$attached)
    expect_identical(as.vector(res[[nm]]$generator), "rbfkernel", label = nm)
    expect_identical(as.vector(res[[nm]]$string_generator), "stringkernel", label = nm)
  }
})
