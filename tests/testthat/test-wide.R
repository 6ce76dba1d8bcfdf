# The kernels of an inner product or a distance on wide data
# (src/kernel_fast.c): from the tuning setting wide_min_d columns on, a
# block's inner products come from the register tiles of the matrix
# product, then the kernel's function. Against plain R (helper-oracles.R),
# kernlab, and the tiles below the crossover (the option set out of
# reach), on every vector path, on 1 and 2 threads, through every caller:
# the square and cross matrices, predict(), the exact fit, the matrix-free
# passes, Nystrom and kcca().

wide_cases <- function(d) list(
  rbfdot = list(sigma = 1 / d),
  laplacedot = list(sigma = 1 / sqrt(d)),
  polydot = list(degree = 3, scale = 1 / d, offset = 1),
  vanilladot = list(),
  tanhdot = list(scale = 1 / d, offset = 0.1))

# Rows off the origin, with exact and near duplicates (1e-9 apart): 53 + 10
# rows, a count that is not a multiple of any tile's.
wide_data <- function(n, d, seed) {
  set.seed(seed)
  x <- matrix(rnorm(n * d, mean = 3), n, d)
  rbind(x, x[1:5, , drop = FALSE], x[6:10, , drop = FALSE] + 1e-9)
}

# code run with the blocks as products from min_d columns on
with_wide <- function(min_d, code) {
  old <- options(fastkpca.tuning = list(wide_min_d = min_d))  # checked by the engine's call
  on.exit(options(old))
  code
}
tiles_only <- 1e9

rel_to_max <- function(a, b) max(abs(a - b)) / max(abs(b))

test_that("the crossover's default is the documented one, and the setting is checked", {
  expect_identical(fastkpca:::tuning("wide_min_d"), 256L)
  x <- matrix(rnorm(20), 4, 5)
  for (bad in list(0, -1, 1.5, NA_real_, "a", c(1, 2)))
    expect_error(with_wide(bad, kernel_matrix("rbfdot", x)), "fastkpca.tuning$wide_min_d",
                 fixed = TRUE, class = "fastkpca_error_argument")
})

test_that("wide blocks match plain R and the tiles: square and cross, every path, 1 and 2 threads", {
  d <- 700L
  x <- wide_data(53L, d, 1)
  z <- wide_data(21L, d, 2)[c(1:21, 25:27), ]
  z[1:3, ] <- x[c(1, 60, 20), ]          # a duplicate and a near-duplicate of rows of x
  for (name in names(wide_cases(d))) {
    kp <- wide_cases(d)[[name]]
    ref <- plain_kernel(x, x, name, kp)
    ref_zx <- plain_kernel(z, x, name, kp)
    for (simd in simd_path(available = TRUE)) {
      old <- options(fastkpca.simd = simd)
      tiles <- with_wide(tiles_only, kernel_matrix(name, x, kpar = kp, threads = 1))
      tiles_zx <- with_wide(tiles_only, kernel_matrix(name, z, x, kpar = kp, threads = 1))
      for (threads in 1:2) {
        label <- paste(name, simd, threads)
        sq <- with_wide(256, kernel_matrix(name, x, kpar = kp, threads = threads))
        zx <- with_wide(256, kernel_matrix(name, z, x, kpar = kp, threads = threads))
        expect_lte(rel_to_max(unname(sq), ref), 1e-13, label = label)
        expect_lte(rel_to_max(unname(zx), ref_zx), 1e-13, label = label)
        expect_true(isSymmetric(unname(sq), tol = 0), label = label)
        if (name == "laplacedot") {
          # distances from the norms, near duplicates refined: within 1e-13
          expect_lte(rel_to_max(sq, tiles), 1e-13, label = label)
          expect_lte(rel_to_max(zx, tiles_zx), 1e-13, label = label)
          # exact duplicates: differences of exactly 0, a value of exactly 1
          expect_identical(unname(diag(sq)), rep(1, nrow(x)), label = label)
          expect_identical(unname(zx[1, 1]), 1, label = label)
        } else {
          # the same inner products, summed in the same order: the same bits
          expect_identical(sq, tiles, label = label)
          expect_identical(zx, tiles_zx, label = label)
        }
      }
      options(old)
    }
  }
})

test_that("a row gets the same bits alone or among others, in kernel_matrix() and predict()", {
  d <- 600L
  x <- wide_data(40L, d, 3)
  z <- wide_data(30L, d, 4)          # 40 rows: more than the tallest tile (24)
  for (name in c("rbfdot", "laplacedot", "polydot")) {
    kp <- wide_cases(d)[[name]]
    with_wide(256, {
      fit <- kpca(x, kernel = name, kpar = kp, features = 3, threads = 2)
      all_rows <- kernel_matrix(name, z, x, kpar = kp, threads = 2)
      few_rows <- kernel_matrix(name, z[5:9, ], x, kpar = kp, threads = 1)
      expect_identical(few_rows, all_rows[5:9, ], label = name)
      p_all <- predict(fit, z)
      for (i in c(1L, 17L, 40L)) {
        expect_identical(kernel_matrix(name, z[i, , drop = FALSE], x, kpar = kp, threads = 2),
                         all_rows[i, , drop = FALSE], label = paste(name, i))
        expect_identical(predict(fit, z[i, , drop = FALSE]), p_all[i, , drop = FALSE],
                         label = paste(name, i))
      }
    })
  }
})

test_that("the exact fit, matrix-free passes, Nystrom, predict() and kcca() take the wide blocks", {
  d <- 500L
  x <- wide_data(70L, d, 5)
  z <- wide_data(12L, d, 6)
  for (name in c("rbfdot", "laplacedot")) {
    kp <- wide_cases(d)[[name]]
    fits <- lapply(c(wide = 256, tiles = tiles_only), function(min_d) with_wide(min_d, {
      exact <- kpca(x, kernel = name, kpar = kp, features = 4, solver = "exact", threads = 2)
      mf <- with_seed(2, kpca(x, kernel = name, kpar = kp, features = 4, threads = 2,
                              solver = "matrix_free", control = list(tol = 1e-11)))
      ny <- kpca(x, kernel = name, kpar = kp, features = 4, landmarks = x[seq(1, 70, 3), ],
                 threads = 2)
      kc <- kcca(x, x[, d:1] + 0.01, kernel = name, kpar = kp, ykernel = name, ykpar = kp,
                 gamma = 0.1, ncomps = 2, threads = 2)
      list(exact = exact$rotated, exact_p = predict(exact, z), mf = mf$eig,
           mf_p = abs(predict(mf, z)), ny = ny$rotated, ny_p = predict(ny, z),
           kcor = kc$kcor)
    }))
    ref <- plain_kpca(x, name, kp, features = 4)
    expect_cols_equal_up_to_sign(fits$wide$exact, ref$rotated, tol = 1e-9, label = name)
    for (part in names(fits$wide)) {
      if (name == "rbfdot") {
        # the same kernel values to the bit: the same fits
        expect_identical(fits$wide[[part]], fits$tiles[[part]], label = paste(name, part))
      } else {
        expect_lt(rel_diff(fits$wide[[part]], fits$tiles[[part]]), 1e-9,
                  label = paste(name, part))
      }
    }
  }
})

test_that("wide blocks match kernlab's kernelMatrix()", {
  skip_if_not_installed("kernlab")
  # distinct rows: kernlab forms distances from norms without a shift, which
  # loses the near duplicates' digits
  d <- 800L
  set.seed(7)
  x <- matrix(rnorm(30 * d, mean = 3), 30, d)
  z <- matrix(rnorm(9 * d, mean = 3), 9, d)
  for (name in names(wide_cases(d))) {
    kp <- wide_cases(d)[[name]]
    kl <- kernlab_kernel(name, kp)
    with_wide(256, {
      expect_lte(rel_to_max(unname(kernel_matrix(name, x, kpar = kp)),
                            unclass(kernlab::kernelMatrix(kl, x))), 1e-12, label = name)
      # (kernlab's cross kernelMatrix() of a tanhdot kernel errors)
      if (name != "tanhdot")
        expect_lte(rel_to_max(unname(kernel_matrix(name, z, x, kpar = kp)),
                              unclass(kernlab::kernelMatrix(kl, z, x))), 1e-12, label = name)
    })
  }
})

test_that("wide blocks report values that are not finite", {
  x <- matrix(rnorm(40 * 300, sd = 3), 40, 300)
  with_wide(256, {
    expect_error(kernel_matrix("polydot", x, kpar = list(degree = 200, scale = 1, offset = 1)),
                 "not finite")
    expect_error(kernel_matrix("polydot", x[1:3, ], x,
                               kpar = list(degree = 200, scale = 1, offset = 1)),
                 "not finite")
  })
})

test_that("kernel_matrix() refuses missing and infinite values from the norms C sums, not from a pass of R's", {
  # kernel_matrix(k, x) leaves x's values to C (check_point_values()):
  # R's error, naming 'x', on every path, wide or not, for every kernel;
  # finite values whose squares overflow are not refused (the kernel's own
  # error, as before); x beside y stays R's to check
  for (shape in list(c(30L, 4L), c(30L, 300L))) {
    x <- with_seed(4, matrix(rnorm(prod(shape)), shape[1L], shape[2L]))
    for (kernel in list(kern("rbfdot", sigma = 1 / shape[2L]), kern("vanilladot"),
                        kern("laplacedot", sigma = 0.1), kern("polydot", degree = 2),
                        kern("rbfdot", sigma = 0.1) + kern("vanilladot"))) {
      for (bad in c(NA, NaN, Inf, -Inf)) {
        xb <- x
        xb[7L, 3L] <- bad
        what <- if (is.infinite(bad)) "infinite values" else "missing values \\(NA or NaN\\)"
        label <- paste(shape[2L], format(bad))
        with_wide(256, {
          expect_error(kernel_matrix(kernel, xb), paste0("^'x' must not contain ", what),
                       class = "fastkpca_error_argument", label = label)
          expect_error(kernel_matrix(kernel, xb, x[1:3, ]), paste0("^'x' must not contain ", what),
                       class = "fastkpca_error_argument", label = label)
          expect_error(kernel_matrix(kernel, x, xb), paste0("^'y' must not contain ", what),
                       class = "fastkpca_error_argument", label = label)
        })
      }
    }
    xb <- x
    xb[7L, 3L] <- 1e200
    K <- with_wide(256, kernel_matrix(kern("rbfdot", sigma = 1), xb))
    expect_identical(K[7L, ], replace(numeric(30L), 7L, 1), ignore_attr = TRUE)
  }
})

test_that("wide sums in groups: plain R's values, the same bits alone or among others, on 1 and 2 threads", {
  # groups of 128 coordinates (the tuning's wide_group; 1024 by default),
  # so that d = 700 sums 6 groups; 53 rows are one task: on 2 threads the
  # task's groups are dealt to both threads (each added to the block in
  # the groups' order), on 1 the thread sums them one after another
  d <- 700L
  x <- wide_data(53L, d, 8)
  z <- wide_data(30L, d, 9)
  z[1:2, ] <- x[c(3, 61), ]
  for (name in names(wide_cases(d))) {
    kp <- wide_cases(d)[[name]]
    local_tuning(wide_min_d = 256L, wide_group = 128L)
    for (simd in simd_path(available = TRUE)) {
      old <- options(fastkpca.simd = simd)
      label <- paste(name, simd)
      sq1 <- kernel_matrix(name, x, kpar = kp, threads = 1)
      sq2 <- kernel_matrix(name, x, kpar = kp, threads = 2)
      zx1 <- kernel_matrix(name, z, x, kpar = kp, threads = 1)
      zx2 <- kernel_matrix(name, z, x, kpar = kp, threads = 2)
      expect_identical(sq1, sq2, label = label)
      expect_identical(zx1, zx2, label = label)
      expect_lte(rel_to_max(unname(sq2), plain_kernel(x, x, name, kp)), 1e-13, label = label)
      expect_lte(rel_to_max(unname(zx2), plain_kernel(z, x, name, kp)), 1e-13, label = label)
      # a row alone, and the square's values off its diagonal in the cross matrix
      expect_identical(kernel_matrix(name, z[7, , drop = FALSE], x, kpar = kp),
                       zx2[7, , drop = FALSE], label = label)
      xx <- kernel_matrix(name, x + 0, x, kpar = kp, threads = 2)
      off <- lower.tri(xx)
      expect_identical(unname(xx[off]), unname(sq2[off]), label = label)
      # and the diagonal kernel_self() gives is the square's
      expect_identical(fastkpca:::kernel_self(x, do.call(kern, c(list(name), kp))), unname(diag(sq2)),
                       label = label)
      options(old)
    }
  }
})

test_that("wide groups: the fit's predict() of a row alone is its predict() among others", {
  d <- 600L
  x <- wide_data(40L, d, 10)
  z <- wide_data(20L, d, 11)
  local_tuning(wide_min_d = 256L, wide_group = 200L)
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 1 / d), features = 3, threads = 2)
  ref <- plain_kpca(x, "rbfdot", list(sigma = 1 / d), features = 3)
  expect_cols_equal_up_to_sign(fit$rotated, ref$rotated, tol = 1e-9)
  p <- predict(fit, z)
  for (i in c(1L, 13L)) expect_identical(predict(fit, z[i, , drop = FALSE]), p[i, , drop = FALSE])
})

test_that("wide data are read in place: no copy of the points in kernel_matrix(), predict() or the fit", {
  skip_on_cran()
  # 100 x 80000 (64 MB): a shifted, transposed copy of the points would be
  # 64 MB; the calls' own memory is their result, the norms, the threads'
  # packed slices and the fit's buffer
  d <- 80000L
  set.seed(12)
  x <- (matrix(rnorm(100 * 5, sd = 3), 100, 5) %*% matrix(rnorm(5 * d), 5) +
          rnorm(100 * d)) / sqrt(46)
  z <- x[1:20, ] + 0.5
  peak <- function(expr) {
    gc(reset = TRUE)
    base <- gc()["Vcells", "used"]
    force(expr)
    (gc()["Vcells", "max used"] - base) * 8
  }
  tenth <- 0.1 * 8 * length(x)
  k <- kern("rbfdot", sigma = 1 / d)
  expect_lt(peak(kernel_matrix(k, x, threads = 2)), tenth)
  expect_lt(peak(kernel_matrix(k, z, x, threads = 2)), tenth)
  fit <- kpca(x, kernel = k, features = 5, threads = 2)
  expect_lt(peak(predict(fit, z)), tenth)
  expect_lt(peak(kpca(x, kernel = k, features = 5, threads = 2)), tenth)
})
