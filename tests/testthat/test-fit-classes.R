# The fit classes (R/fit_classes.R): one constructor and validator per
# class; each class keeps only the fields that mean something for it.

common_fields <- c("alpha", "eig", "rotated", "kernel", "kpar", "features", "th", "threads",
                   "variance_total", "center", "scale", "call", "na.action")

test_that("each kind of fit has its class and its fields", {
  x <- fx_iris()
  ex <- kpca(x, kpar = list(sigma = 0.2), features = 3)
  expect_s3_class(ex, c("fastkpca_exact", "fastkpca"), exact = TRUE)
  expect_identical(names(ex), c(common_fields, "xmatrix", "kernel_weights", "kernel_colmeans",
                                "kernel_mean", "solver", "iterations", "variance",
                                "eig_residuals", "eig_angles", "passes",
                                "residual_history"))
  ny <- with_seed(1, kpca(x, kpar = list(sigma = 0.2), features = 3, landmarks = 40))
  expect_s3_class(ny, c("fastkpca_nystrom", "fastkpca"), exact = TRUE)
  expect_identical(names(ny), c(common_fields, "landmarks", "landmark_rule", "landmark_rows",
                                "landmark_rank", "kernel_weights", "statistics"))
  K <- kernel_matrix("rbfdot", x, kpar = list(sigma = 0.2))
  pre <- kpca(K, kernel = "precomputed", features = 3)
  expect_s3_class(pre, c("fastkpca_precomputed", "fastkpca"), exact = TRUE)
  expect_identical(names(pre), c(common_fields, "kernel_colmeans", "kernel_mean", "solver",
                                 "iterations", "variance", "eig_residuals", "eig_angles"))
  expect_identical(pre$kernel, "precomputed")
  # the same numbers whatever the class: precomputed equals exact
  expect_equal(pre$eig, ex$eig, tolerance = 1e-12)
  expect_equal(pre$kernel_colmeans, ex$kernel_colmeans, tolerance = 1e-12)
})

test_that("the validators catch a damaged fit of each class", {
  x <- fx_iris()
  ex <- kpca(x, kpar = list(sigma = 0.2), features = 2)
  ny <- with_seed(1, kpca(x, kpar = list(sigma = 0.2), features = 2, landmarks = 30))
  K <- kernel_matrix("rbfdot", x, kpar = list(sigma = 0.2))
  pre <- kpca(K, kernel = "precomputed", features = 2)
  expect_identical(fastkpca:::validate_fastkpca_exact(ex), ex)
  expect_identical(fastkpca:::validate_fastkpca_nystrom(ny), ny)
  expect_identical(fastkpca:::validate_fastkpca_precomputed(pre), pre)
  bad <- ex; bad$xmatrix <- bad$xmatrix[-1, ]
  expect_error(predict(bad, x), "'object' is not a valid fastkpca fit: 'xmatrix' must be a double matrix (or sparse rows) with 150 rows",
               fixed = TRUE)
  bad <- ex; bad$eig <- bad$eig[1]
  expect_error(predict(bad, x), "'eig' must hold 2 eigenvalues")
  bad <- ny; bad$landmarks <- bad$landmarks[-1, ]
  expect_error(predict(bad, x), "its landmarks and 'alpha' do not match")
  bad <- ny; bad$statistics$sums <- 1
  expect_error(predict(bad, x), "'statistics' must hold the row count and the sums over 30 landmarks")
  bad <- pre; bad$kernel_mean <- NA_real_
  expect_error(predict(bad, K), "'kernel_mean' must be a single finite number")
  bad <- pre; bad$kernel <- kern("rbfdot")
  expect_error(predict(bad, K), "'kernel' must be \"precomputed\"")
  bad <- ex; class(bad) <- "fastkpca"
  expect_error(predict(bad, x), "its class must be one of")
  expect_error(fastkpca:::check_fit(list(alpha = 1)), "it must be a kpca\\(\\) fit")
})

test_that("print, summary and glance count the fitted rows for every class", {
  x <- fx_iris()
  fits <- list(kpca(x, kpar = list(sigma = 0.2), features = 2),
               with_seed(1, kpca(x, kpar = list(sigma = 0.2), features = 2, landmarks = 30)),
               kpca(kernel_matrix("rbfdot", x, kpar = list(sigma = 0.2)),
                    kernel = "precomputed", features = 2))
  for (f in fits) {
    expect_identical(summary(f)$n, 150L)
    expect_identical(glance(f)$n, 150L)
    expect_output(print(f), "150")
  }
  expect_output(print(fits[[1]]), "exact solver")
  expect_output(print(fits[[3]]), "150 x 150 kernel matrix")
  # alpha of a Nystrom fit is tidied one row per landmark
  expect_identical(nrow(tidy(fits[[2]], matrix = "alpha")), 30L * 2L)
})

test_that("Nystrom's statistics of chunks add up to those of all rows", {
  x <- fx_iris()
  kernel <- kern("rbfdot", sigma = 0.2)
  L <- x[seq(1, 150, by = 5), ]
  basis <- fastkpca:::nystrom_landmark_basis(L, kernel, 3L, 1L)
  all_rows <- fastkpca:::nystrom_statistics(x, basis, kernel, 1L)
  parts <- lapply(split(seq_len(150), rep(1:3, c(40, 70, 40))), function(r)
    fastkpca:::nystrom_statistics(x[r, , drop = FALSE], basis, kernel, 1L))
  summed <- Reduce(fastkpca:::nystrom_statistics_add, parts)
  expect_identical(summed$n, 150L)
  expect_equal(summed$sums, all_rows$sums, tolerance = 1e-13)
  expect_equal(summed$cross, all_rows$cross, tolerance = 1e-13)
  expect_true(isSymmetric(all_rows$cross))
  # the small problem solved from the summed statistics is the fit
  fit <- kpca(x, kernel = kernel, features = 3, landmarks = L)
  expect_identical(fit$statistics, all_rows)
  sol <- fastkpca:::nystrom_solve(summed, basis, 3L, 1e-4)
  expect_equal(unname(sol$eig), unname(fit$eig), tolerance = 1e-12)
  expect_equal(unname(sol$alpha), unname(fit$alpha), tolerance = 1e-10)
  # and the plain-R sums, as an oracle
  Kx <- kernel_matrix(kernel, x, L) - rep(basis$shift, each = 150)
  expect_equal(all_rows$sums, colSums(Kx), tolerance = 1e-12)
  expect_equal(all_rows$cross, crossprod(Kx), tolerance = 1e-12)
  # statistics around different shifts do not add
  other <- all_rows; other$shift <- other$shift + 1
  expect_error(fastkpca:::nystrom_statistics_add(all_rows, other), "the same shift")
})

test_that("kpca_cv() results have their own class and validator", {
  x <- fx_iris()[1:60, ]
  cv <- with_seed(2, kpca_cv(x, "rbfdot", grid = list(sigma = c(0.2, 1)), features = 2,
                             folds = 3, criterion = "residual"))
  expect_s3_class(cv, "fastkpca_cv", exact = TRUE)
  expect_s3_class(cv$fit, "fastkpca_exact")
  expect_error(fastkpca:::validate_fastkpca_cv(list(results = 1)), "not a valid kpca_cv\\(\\) result")
})
