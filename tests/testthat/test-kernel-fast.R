# The fast kernel blocks (src/kernel_fast.c, src/kernel_simd.h) against
# direct evaluation in plain R, and their vector exp against exp().

ulp_of <- function(e) 2^(floor(log2(e)) - 52)

test_that("the vector exp of rbfdot is within 1 ulp of exp() over its whole range", {
  set.seed(21)
  # exp(-t) for t = x^2: rbfdot(sigma = 1) between the points x (one column)
  # and 0 is exp(-x^2), with x^2 formed exactly as here (the difference
  # form of one coordinate, no shift: the fixed point is 0). Every binade of
  # the result over exp's whole range of non-positive arguments (the only
  # ones the kernels give it), its subnormal and underflowing end included,
  # a fine grid and random points.
  t <- c(seq(0, 745.2, length.out = 200003), runif(1e5, 0, 1), runif(1e5, 0, 745.2),
         log(2) * (0:1074), 708, 709.5, 745.2, 746, 1e-300)
  x <- matrix(sqrt(t))
  e <- exp(-x[, 1]^2)
  normal <- e >= .Machine$double.xmin
  # every vector path this CPU runs (options(fastkpca.simd), R/simd.R),
  # and the plain one, whose exp() is the C library's
  for (simd in simd_path(available = TRUE)) {
    old <- options(fastkpca.simd = simd)
    v <- kernel_matrix("rbfdot", x, matrix(0), kpar = list(sigma = 1), threads = 1)[, 1]
    options(old)
    expect_lte(max(abs(v[normal] - e[normal]) / ulp_of(e[normal])), 1)
    # subnormal and zero results come from exp() itself
    expect_identical(v[!normal], e[!normal])
  }
})

# Rows with exact duplicates and near-duplicates (1e-9 apart), a number of
# rows that is not a multiple of the tile's 8, data off the origin
fast_path_data <- function(n, d, seed) {
  set.seed(seed)
  x <- matrix(rnorm(n * d, mean = 3), n, d)
  rbind(x, x[1:5, , drop = FALSE], x[6:10, , drop = FALSE] + 1e-9)
}

plain_kernel <- function(name, x, y, kp) {
  d2 <- outer(rowSums(x^2), rowSums(y^2), "+") * 0
  for (j in seq_len(ncol(x))) d2 <- d2 + outer(x[, j], y[, j], "-")^2
  dot <- x %*% t(y)
  switch(name,
    rbfdot = exp(-kp$sigma * d2),
    laplacedot = exp(-kp$sigma * sqrt(d2)),
    polydot = (kp$scale * dot + kp$offset)^kp$degree,
    vanilladot = dot,
    tanhdot = tanh(kp$scale * dot + kp$offset))
}

test_that("each fast path matches direct evaluation to 1e-12, duplicated rows included", {
  cases <- list(rbfdot = function(d) list(sigma = 0.5 / d),
                laplacedot = function(d) list(sigma = 0.5 / d),
                polydot = function(d) list(degree = 3, scale = 1 / d, offset = 1),
                vanilladot = function(d) list(),
                tanhdot = function(d) list(scale = 0.01 / d, offset = 0.1))
  # d = 3 and 10: the difference form; 70 and 200: rbfdot's expanded form
  for (d in c(3L, 10L, 70L, 200L)) {
    x <- fast_path_data(93L, d, d)
    y <- x[c(1:7, 96:103), , drop = FALSE]   # 15 columns: not a multiple of 4
    for (name in names(cases)) {
      kp <- cases[[name]](d)
      ref <- plain_kernel(name, x, x, kp)
      ref_xy <- plain_kernel(name, x, y, kp)
      # rbf and laplace values are positive: elementwise relative error; the
      # inner-product kernels cross zero: relative to the largest value
      rel <- function(a, b) if (name %in% c("rbfdot", "laplacedot"))
        max(abs(a - b) / abs(b)) else max(abs(a - b)) / max(abs(b))
      for (threads in 1:2) {
        gram <- kernel_matrix(name, x, kpar = kp, threads = threads)
        cross <- kernel_matrix(name, x, y, kpar = kp, threads = threads)
        expect_lte(rel(unname(gram), ref), 1e-12)
        expect_lte(rel(unname(cross), ref_xy), 1e-12)
      }
      if (name %in% c("rbfdot", "laplacedot") && d <= 10L) {
        # the difference form: distances of duplicates are exactly 0
        expect_identical(unname(diag(gram)), rep(1, nrow(x)))
        expect_identical(unname(gram[1:5, 1:5]), unname(gram[94:98, 94:98]))
      }
    }
  }
})

test_that("kernel expressions, predict() and kpca() use the same values", {
  x <- fast_path_data(61L, 4L, 2L)
  z <- fast_path_data(13L, 4L, 3L)
  k <- kern("rbfdot", sigma = 0.3) + 2 * kern("polydot", degree = 2, scale = 0.5)
  ref <- plain_kernel("rbfdot", x, z, list(sigma = 0.3)) +
    2 * plain_kernel("polydot", x, z, list(degree = 2, scale = 0.5, offset = 1))
  expect_lte(max(abs(unname(kernel_matrix(k, x, z)) - ref)) / max(abs(ref)), 1e-12)
  fit <- kpca(x, kpar = list(sigma = 0.3), features = 3, solver = "exact")
  K <- plain_kernel("rbfdot", x, x, list(sigma = 0.3))
  Kz <- plain_kernel("rbfdot", z, x, list(sigma = 0.3))
  n <- nrow(x)
  Kzc <- Kz - outer(rowMeans(Kz), rep(1, n)) - outer(rep(1, nrow(z)), colMeans(K)) + mean(K)
  expect_equal(unname(predict(fit, z)), unname(Kzc %*% fit$alpha), tolerance = 1e-10)
})

test_that("far-apart points give exact zeros, as exp() does", {
  x <- rbind(c(0, 0), c(100, 0), c(0, 30), c(1e-3, 0))
  K <- kernel_matrix("rbfdot", x, kpar = list(sigma = 1))
  ref <- unname(exp(-as.matrix(dist(x))^2))
  expect_identical(unname(K) == 0, ref == 0)
  expect_equal(unname(K), ref, tolerance = 1e-15)
  L <- kernel_matrix("laplacedot", x, kpar = list(sigma = 20))
  ref <- unname(exp(-20 * as.matrix(dist(x))))
  expect_identical(unname(L) == 0, ref == 0)
  expect_equal(unname(L), ref, tolerance = 1e-12)
})

test_that("one value that overflows is found wherever it falls in the vectors", {
  # row r of x overflows polydot(degree = 3) with every column and the other
  # rows do not: each column's segment has one Inf, at every lane position
  # and in the scalar tail (13 rows), on every path this CPU runs
  y <- matrix(seq(0.5, 1.5, length.out = 10), 5, 2)
  for (simd in simd_path(available = TRUE)) {
    old <- options(fastkpca.simd = simd)
    for (r in c(1, 2, 3, 4, 5, 8, 9, 12, 13)) {
      x <- matrix(0.3, 13, 2)
      x[r, ] <- 1e110
      expect_error(kernel_matrix(polydot(degree = 3), x, y), "not finite",
                   label = sprintf("row %d, simd '%s'", r, simd))
    }
    x <- matrix(0.3, 13, 2)
    expect_equal(kernel_matrix(polydot(degree = 3), x, y),
                 (tcrossprod(x, y) + 1)^3, ignore_attr = TRUE)
    options(old)
  }
})

test_that("the AVX-512 and AVX2 copies give the same bits", {
  # kernel_simd.h's copies do the same operations on every lane, in the
  # same order (8 x 8 tiles on AVX-512, 8 x 4 on AVX2; four exp chains or
  # one): the paths of one width family with fused multiply-adds agree to
  # the last bit, in the kernel matrices, predict() and the fit
  skip_if_not(all(c("avx512", "avx2") %in% simd_path(available = TRUE)),
              "this CPU has no AVX-512 (arm64, or an older x86-64)")
  x <- fast_path_data(203L, 10L, 5L)
  x[7, ] <- x[7, ] * 40   # far points: lanes outside the polynomial's range
  y <- x[c(1:9, 100:130), ]
  for (d in c(3L, 10L, 70L)) {
    xd <- fast_path_data(157L, d, d)
    yd <- xd[c(1:13, 60:90), , drop = FALSE]
    for (k in list(rbfdot(sigma = 0.5 / d), rbfdot(sigma = 4), laplacedot(sigma = 0.3),
                   polydot(degree = 3, scale = 1 / d, offset = 1), vanilladot(),
                   tanhdot(scale = 0.01 / d, offset = 0.1))) {
      run <- function(simd) {
        old <- options(fastkpca.simd = simd)
        on.exit(options(old))
        list(kernel_matrix(k, xd, threads = 2), kernel_matrix(k, xd, yd, threads = 1),
             kernel_matrix(k, x[, 1:3], y[, 1:3]))
      }
      expect_identical(run("avx512"), run("avx2"))
    }
  }
  run_fit <- function(simd) {
    old <- options(fastkpca.simd = simd)
    on.exit(options(old))
    fit <- kpca(x, kpar = list(sigma = 0.05), features = 4)
    list(fit$rotated, predict(fit, y))
  }
  expect_identical(run_fit("avx512"), run_fit("avx2"))
})

test_that("kernel_matrix(k, x) is k(x, x) to the last bit, its upper triangle mirrored", {
  # kernel_matrix(k, x) computes the lower triangle and copies it into the
  # upper one block by block (mirror_lower_columns()); the cross matrix
  # computes every entry; a kernel value is the same either way round. 1300
  # rows of 10 coordinates make several column blocks of the fill
  x <- fast_path_data(1290L, 10L, 7L)
  rownames(x) <- paste0("r", seq_len(nrow(x)))
  kernels <- list(rbfdot(sigma = 0.05), polydot(degree = 2, scale = 0.1),
                  kern("rbfdot", sigma = 0.05) + kern("vanilladot"),
                  anovadot(sigma = 0.1, degree = 2))
  for (k in kernels) for (threads in 1:2) {
    K <- kernel_matrix(k, x, threads = threads)
    expect_identical(K, t(K))
    expect_identical(K, kernel_matrix(k, x, x, threads = threads))
  }
  # sparse rows (the sparse tiles) and strings (the generic path)
  s <- Matrix::rsparsematrix(700, 40, density = 0.1)
  for (threads in 1:2) {
    K <- kernel_matrix(rbfdot(sigma = 0.1), s, threads = threads)
    expect_identical(K, t(K))
    expect_equal(K, kernel_matrix(rbfdot(sigma = 0.1), as.matrix(s)), tolerance = 1e-13)
  }
  words <- vapply(1:300, function(i) paste(sample(letters[1:4], 8, TRUE), collapse = ""), "")
  K <- kernel_matrix(stringdot(length = 2), words)
  expect_identical(K, t(K))
})
