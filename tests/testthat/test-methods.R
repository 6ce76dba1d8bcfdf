# summary(), print(), plot() and the fields of a fit.

test_that("summary(): eigenvalues, proportions of trace(Kc)/m, cumulative", {
  x <- fx_arrests()
  kp <- list(sigma = 0.2)
  fit <- kpca(x, kernel = "rbfdot", kpar = kp, features = 5)
  s <- summary(fit)
  expect_s3_class(s, "summary.fastkpca")
  imp <- s$importance
  Kc <- plain_center(plain_kernel(x, x, "rbfdot", kp))
  total <- sum(diag(Kc)) / nrow(x)
  ref_eig <- plain_kpca_K(plain_kernel(x, x, "rbfdot", kp), features = 5)$eig
  expect_equal(dim(imp), c(3L, 5L))
  expect_equal(unname(imp[1, ]), ref_eig, tolerance = 1e-10)
  expect_equal(unname(imp[2, ]), ref_eig / total, tolerance = 1e-10)
  expect_equal(unname(imp[3, ]), cumsum(ref_eig / total), tolerance = 1e-10)
  expect_equal(s$variance_total, total, tolerance = 1e-10)
  expect_equal(colnames(imp), paste0("Comp.", 1:5))
  expect_output(print(s), "Proportion of Variance")
  expect_output(print(s), "rbfdot")
})

test_that("summary(): with features = m - 1 the proportions sum to 1", {
  for (kn in c("rbfdot", "laplacedot", "besseldot", "anovadot")) {
    x <- fx_random()[1:12, ]
    kp <- kernel_cases[[kn]]
    fit <- kpca(x, kernel = kn, kpar = kp, features = 11)
    imp <- summary(fit)$importance
    expect_equal(sum(imp[2, ]), 1, tolerance = 1e-10, label = paste(kn, "sum of proportions"))
    expect_equal(unname(imp[3, 11]), 1, tolerance = 1e-10)
    # oracle: proportions are the eigenvalues over their sum
    vals <- plain_kpca(x, kn, kp, features = 11)$eig
    expect_equal(unname(imp[2, ]), vals / sum(vals), tolerance = 1e-10)
  }
})

test_that("summary() of a precomputed fit uses trace(Kc)/m of the given matrix", {
  x <- fx_cars()
  K <- plain_kernel(x, x, "laplacedot", list(sigma = 0.3))
  fit <- kpca(K, kernel = "precomputed", features = 4)
  imp <- summary(fit)$importance
  ref <- plain_kpca_K(K, features = 4)
  total <- sum(diag(ref$Kc)) / nrow(K)
  expect_equal(unname(imp[2, ]), ref$eig / total, tolerance = 1e-10)
  expect_equal(unname(imp[3, ]), cumsum(ref$eig) / total, tolerance = 1e-10)
})

test_that("print() mentions the kernel and the number of components", {
  fit <- kpca(fx_iris(), kernel = "rbfdot", kpar = list(sigma = 0.2), features = 3)
  expect_output(print(fit), "rbfdot")
  expect_output(print(fit), "sigma = 0.2")
  expect_output(print(fit), "Components:\\s*3\\b")
  expect_output(print(fit), "150")
  out <- utils::capture.output(vis <- withVisible(print(fit)))
  expect_false(vis$visible)
  expect_identical(vis$value, fit)
  f0 <- kpca(fx_arrests(), kernel = "polydot", kpar = list(degree = 2), th = 0.05)
  expect_output(print(f0), "polydot")
  expect_output(print(f0), paste0("Components:\\s*", length(f0$eig), "\\b"))
  fk <- kpca(plain_kernel(fx_random(), fx_random(), "rbfdot", list(sigma = 1)),
             kernel = "precomputed", features = 2)
  expect_output(print(fk), "precomputed")
  expect_output(print(fk), "Components:\\s*2\\b")
})

test_that("plot() draws on a null device for which = 1, 2, both, and a 1-component fit", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  fit <- kpca(fx_iris(), kernel = "rbfdot", kpar = list(sigma = 0.2), features = 4)
  expect_no_error(plot(fit, which = 1))
  expect_no_error(plot(fit, which = 2))
  expect_no_error(plot(fit))
  expect_no_error(plot(fit, which = c(1, 2), col = as.integer(iris$Species), pch = 19))
  expect_invisible(plot(fit, which = 1))
  one <- kpca(fx_iris(), kernel = "rbfdot", kpar = list(sigma = 0.2), features = 1)
  expect_equal(ncol(one$rotated), 1L)
  expect_no_error(plot(one, which = 1))
  expect_no_error(plot(one, which = 2))
  expect_no_error(plot(one))
  expect_error(plot(fit, which = 3), "'which' must be 1, 2 or both")
})

test_that("fields: eig names, kernel, resolved kpar, xmatrix, settings", {
  x <- fx_cars()
  fit <- kpca(x, kernel = "besseldot", kpar = list(sigma = 0.5), features = 4)
  expect_s3_class(fit, "fastkpca")
  expect_equal(names(fit$eig), paste0("Comp.", 1:4))
  expect_equal(colnames(fit$alpha), paste0("Comp.", 1:4))
  expect_equal(colnames(fit$rotated), paste0("Comp.", 1:4))
  expect_equal(kernelf(fit), kern("besseldot", sigma = 0.5))
  expect_equal(fit$kpar, list(sigma = 0.5, order = 1, degree = 1))
  expect_equal(fit$xmatrix, x)
  expect_equal(fit$features, 4L)
  expect_equal(fit$th, 1e-4)
  expect_true(fit$solver %in% c("exact", "iterative"))
  expect_null(fit$na.action)
  expect_true(is.numeric(fit$threads) && fit$threads >= 1)
  # rownames of the data carry over to the scores
  fa <- kpca(fx_arrests(), kernel = "rbfdot", kpar = list(sigma = 0.2), features = 2)
  expect_equal(rownames(fa$rotated), rownames(fx_arrests()))
  # threshold mode records features = 0
  f0 <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2))
  expect_equal(f0$features, 0L)
  expect_equal(names(f0$eig), paste0("Comp.", seq_along(f0$eig)))
})

test_that("the call is stored and re-evaluates (update()) in the user's workspace", {
  x <- fx_random()
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 2)
  expect_true(is.call(fit$call))
  expect_equal(fit$call$features, 2)
  expect_equal(fit$call$kpar, quote(list(sigma = 0.5)))
  # As a user would: only the exported kpca() is visible (not the package
  # namespace that testthat puts around the tests).
  user <- new.env(parent = globalenv())
  assign("kpca", fastkpca::kpca, envir = user)
  ws <- new.env(parent = user)
  ws$x <- x; ws$fit <- fit
  refit <- NULL
  err <- tryCatch({
    refit <- eval(quote(update(fit, features = 3)), ws)
    NULL
  }, error = function(e) conditionMessage(e))
  expect(is.null(err), sprintf("update(fit, features = 3) failed: %s (fit$call is `%s`)",
                               err, deparse1(fit$call)))
  if (is.null(err)) {
    expect_s3_class(refit, "fastkpca")
    expect_equal(refit$eig[1:2], fit$eig, tolerance = 1e-12)
  }
  # the formula method's call
  ff <- kpca(~ a + b, data = as.data.frame(x), kpar = list(sigma = 0.5), features = 2)
  expect_true(is.call(ff$call))
  expect_identical(ff$call[[1]], as.name("kpca"))
  ws$df <- as.data.frame(x); ws$ff <- ff
  ff$call$data <- quote(df); ws$ff <- ff
  refit2 <- eval(quote(update(ff, features = 3)), ws)
  expect_equal(refit2$eig[1:2], ff$eig, tolerance = 1e-12)
})
