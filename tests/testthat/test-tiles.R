# The register-tile products of src/tiles.c against R's own %*%, crossprod()
# and tcrossprod(), through every vector path (src/simd.h; a path the CPU
# lacks runs the widest below it, so every call here tests something), and
# the switch between the paths, options(fastkpca.simd).

tile_paths_here <- c("plain", "sse2", "avx2", "avx512", "neon")

# Threads take parallel regions of at least 3e7 multiply-adds (tiles.c);
# with the tuning setting tile_thread_work = 0 the small problems here
# run on them.
on_threads <- function(code) with_tuning(list(tile_thread_work = 0), code)

# sizes: below one tile, one row, one column, odd sizes across tile edges,
# an empty inner dimension, and more than one slice of k and chunk of n
tile_sizes <- list(c(1, 1, 1), c(1, 7, 5), c(5, 1, 3), c(3, 2, 0), c(23, 9, 130),
                   c(25, 49, 129), c(37, 5, 300), c(0, 3, 4), c(4, 0, 2))

test_that("tiled products equal %*%, crossprod and tcrossprod", {
  set.seed(27)
  # and a thin op(a) against a square b: the matrix-free pipeline's
  # transposed tiles
  for (sz in c(tile_sizes, list(c(20, 256, 256), c(49, 17, 260)))) {
    m <- sz[1]; n <- sz[2]; k <- sz[3]
    a <- matrix(rnorm(m * k), m, k)
    b <- matrix(rnorm(k * n), k, n)
    c0 <- matrix(rnorm(m * n), m, n)
    scale <- 1 + max(abs(c0), 0) + k
    for (path in tile_paths_here) {
      r <- fastkpca:::tile_product(a, b, c0, path = path)
      expect_equal(dim(r), c(m, n))
      expect_lte(max(abs(r - (c0 + a %*% b)), 0), 1e-14 * scale)
      rt <- fastkpca:::tile_product(t(a), b, trans_a = TRUE, path = path)
      expect_lte(max(abs(rt - crossprod(t(a), b)), 0), 1e-14 * scale)
      rtt <- fastkpca:::tile_product(a, t(b), trans_b = TRUE, path = path)
      expect_lte(max(abs(rtt - tcrossprod(a, t(b))), 0), 1e-14 * scale)
      # the same sums in the same order, however the operands are stored
      # (here B read in place by the tiles, there packed; A the other way)
      expect_identical(c(rt), c(rtt))
      # the transposed tiles, c + t(t(b) t(a)): "gemm_transposed" packs
      # t(b) and reads t(a) in place, "gemm" with trans_a packs a and reads
      # b in place: the same products summed in the same order
      rtr <- fastkpca:::tile_product(t(a), b, c0, op = "gemm_transposed", path = path)
      expect_equal(dim(rtr), c(m, n))
      expect_lte(max(abs(rtr - (c0 + crossprod(t(a), b))), 0), 1e-14 * scale)
      expect_identical(c(rtr), c(fastkpca:::tile_product(t(a), b, c0, trans_a = TRUE,
                                                         path = path)))
    }
  }
})

test_that("a row's result depends on its own row only, and not on the thread count", {
  set.seed(28)
  m <- 301; n <- 41; k <- 257
  a <- matrix(rnorm(m * k), m, k)
  b <- matrix(rnorm(k * n), k, n)
  c0 <- matrix(rnorm(m * n), m, n)
  on_threads(for (path in tile_paths_here) {
    r1 <- fastkpca:::tile_product(a, b, c0, threads = 1L, path = path)
    expect_identical(fastkpca:::tile_product(a, b, c0, threads = 2L, path = path), r1)
    expect_identical(fastkpca:::tile_product(a, b, c0, threads = test_threads(3), path = path),
                     r1)
    # many columns and few rows: the threads split the columns
    rt <- fastkpca:::tile_product(t(b), t(a), t(c0), threads = 1L, path = path)
    expect_identical(fastkpca:::tile_product(t(b), t(a), t(c0), threads = test_threads(3),
                                             path = path),
                     rt)
    rows <- c(5, 17, 300)
    sub <- fastkpca:::tile_product(a[rows, , drop = FALSE], b, c0[rows, , drop = FALSE],
                                   path = path)
    expect_identical(c(sub), c(r1[rows, , drop = FALSE]))
    one <- fastkpca:::tile_product(a[7, , drop = FALSE], b, c0[7, , drop = FALSE],
                                   path = path)
    expect_identical(c(one), c(r1[7, , drop = FALSE]))
  })
})

test_that("NaN and Inf propagate as in plain loops", {
  set.seed(29)
  m <- 29; n <- 11; k <- 13
  a <- matrix(rnorm(m * k), m, k)
  b <- matrix(rnorm(k * n), k, n)
  a[3, 4] <- NaN
  a[20, 2] <- Inf
  a[28, 1] <- -Inf
  b[2, 5] <- 0        # Inf * 0 is NaN
  b[7, 9] <- Inf
  # R's %*% uses its own triple loop when an operand has NaN or NA
  expected <- a %*% b
  for (path in tile_paths_here) {
    r <- fastkpca:::tile_product(a, b, path = path)
    expect_identical(is.nan(r), is.nan(expected))
    expect_identical(r[is.infinite(expected)], expected[is.infinite(expected)])
    finite <- is.finite(expected)
    expect_lte(max(abs(r[finite] - expected[finite])), 1e-13)
  }
})

test_that("tile_product() names its arguments in its errors", {
  a <- matrix(1, 3, 2)
  expect_error(fastkpca:::tile_product(a, matrix(1, 3, 2)), "'b' must have 2 rows")
  expect_error(fastkpca:::tile_product(a, matrix(1, 2, 2), matrix(0, 2, 2)),
               "'c' must be 3 x 2")
  expect_error(fastkpca:::tile_product(a, matrix(1, 2, 2), threads = 0L), "'threads'")
})

# the symmetric matrix-vector product of the solvers: A from its lower
# triangle (the upper one is never read: NaN there must not show)
lower_only <- function(A) {
  A[upper.tri(A)] <- NaN
  A
}

test_that("the symmetric product equals %*% on the full matrix, for any thread count", {
  set.seed(30)
  # below one column group (4), across group and block (128) edges
  on_threads(for (n in c(1, 2, 3, 5, 9, 131, 257, 700)) {
    A <- crossprod(matrix(rnorm(n * n), n))
    b <- matrix(rnorm(2 * n), n, 2)
    expected <- A %*% b
    for (path in tile_paths_here) {
      r1 <- fastkpca:::tile_product(lower_only(A), b, symmetric = TRUE, path = path)
      expect_lte(max(abs(r1 - expected)), 1e-13 * max(abs(expected)))
      for (threads in c(2L, test_threads(3)))
        expect_identical(
          fastkpca:::tile_product(lower_only(A), b, symmetric = TRUE, threads = threads,
                                  path = path), r1)
    }
  })
})

test_that("NaN and Inf in the symmetric product propagate as in plain loops", {
  set.seed(31)
  n <- 11
  A <- crossprod(matrix(rnorm(n * n), n))
  A[7, 3] <- A[3, 7] <- NaN
  A[10, 9] <- A[9, 10] <- Inf
  b <- matrix(rnorm(n), n)
  b[5] <- 0  # Inf * 0 is NaN
  expected <- A %*% b
  for (path in tile_paths_here) {
    r <- fastkpca:::tile_product(lower_only(A), b, symmetric = TRUE, path = path)
    expect_identical(is.nan(r), is.nan(expected))
    expect_identical(r[is.infinite(expected)], expected[is.infinite(expected)])
  }
})

test_that("exact and iterative fits on the tiles are identical for 1, 2 and 3 threads", {
  set.seed(32)
  # n = 700: panels of the reduction, the symmetric product, the tiled
  # rank-2k update and back-transformation, on their threads
  x <- matrix(rnorm(700 * 3), 700)
  on_threads(for (args in list(list(th = 1e-4), list(features = 4, solver = "iterative"))) {
    fits <- lapply(c(1L, 2L, test_threads(3)),
                   function(t) do.call(kpca, c(list(x, threads = t), args)))
    expect_identical(fits[[2]]$alpha, fits[[1]]$alpha)
    expect_identical(fits[[3]]$alpha, fits[[1]]$alpha)
    expect_identical(fits[[3]]$eig, fits[[1]]$eig)
  })
})

# ---- the other products, every path, and the switch between paths ---------

# The paths this CPU runs, and the pairs of them whose products must give
# the same bits: the same sums in the same order, both without fused
# multiply-adds (plain loops and SSE2) or both with them (AVX2 and
# AVX-512, whose vector-product kernels are one copy).
paths_run <- simd_path(available = TRUE)
same_bits <- Filter(function(p) all(p %in% paths_run),
                    list(c("plain", "sse2"), c("avx2", "avx512")))

# op of tile_product() and its plain-R oracle
tile_oracle <- function(op, a, b) {
  switch(op,
    gemm = a %*% b,
    symv = , symm = a %*% b,
    syrk = {
      s <- sweep(a, 2, c(b))
      g <- crossprod(s)
      g[upper.tri(g)] <- 0
      g
    },
    gemv = a %*% b,
    gemv_t = crossprod(a, b))
}

tile_operands <- function(op, seed) {
  set.seed(seed)
  switch(op,
    gemm = list(a = matrix(rnorm(61 * 37), 61), b = matrix(rnorm(37 * 29), 37)),
    symv = , symm = {
      A <- crossprod(matrix(rnorm(300 * 261), 300))
      list(a = A, b = matrix(rnorm(261 * 3), 261), lower = TRUE)
    },
    # rows off the origin and a shift near their mean, as in a Nystrom fit;
    # more rows than a slice (128) and columns across the tiles' edges
    syrk = {
      a <- matrix(rnorm(301 * 53, mean = 2), 301)
      list(a = a, b = matrix(colMeans(a) + 0.01, 1))
    },
    gemv = list(a = matrix(rnorm(203 * 31), 203), b = matrix(rnorm(31 * 2), 31)),
    gemv_t = list(a = matrix(rnorm(203 * 31), 203), b = matrix(rnorm(203 * 2), 203)))
}

test_that("every product on every path equals its plain-R oracle, with equal bits where the sums are the same", {
  for (op in c("gemm", "symv", "syrk", "gemv", "gemv_t", "symm")) {
    o <- tile_operands(op, match(op, fastkpca:::tile_ops))
    a_in <- if (isTRUE(o$lower)) lower_only(o$a) else o$a
    expected <- tile_oracle(op, o$a, o$b)
    scale <- max(abs(expected))
    results <- list()
    for (path in c(paths_run, "auto")) {
      r <- fastkpca:::tile_product(a_in, o$b, op = op, path = path)
      label <- sprintf("%s on %s", op, path)
      expect_equal(dim(r), dim(expected), label = label)
      expect_lte(max(abs(r - expected)), 1e-13 * scale, label = label)
      if (op == "syrk")
        expect_lte(max(abs(attr(r, "sums") - colSums(sweep(o$a, 2, c(o$b))))),
                   1e-12 * max(abs(o$a)) * nrow(o$a), label = label)
      if (path != "auto") expect_identical(attr(r, "path") %in% paths_run, TRUE)
      attributes(r) <- list(dim = dim(r))
      results[[path]] <- r
    }
    # "auto" is the session's path, the widest this CPU runs
    expect_identical(results[["auto"]], results[[simd_path()]], label = op)
    for (p in same_bits)
      expect_identical(results[[p[1]]], results[[p[2]]],
                       label = sprintf("%s: %s and %s", op, p[1], p[2]))
  }
})

test_that("the rank-k update and the other products give the same bits for any thread count", {
  on_threads(for (op in c("gemm", "symv", "syrk", "symm")) {
    o <- tile_operands(op, 40 + match(op, fastkpca:::tile_ops))
    a_in <- if (isTRUE(o$lower)) lower_only(o$a) else o$a
    for (path in paths_run) {
      r1 <- fastkpca:::tile_product(a_in, o$b, op = op, path = path, threads = 1L)
      for (threads in unique(c(2L, test_threads(3))))
        expect_identical(fastkpca:::tile_product(a_in, o$b, op = op, path = path,
                                                 threads = threads), r1,
                         label = sprintf("%s on %s, %d threads", op, path, threads))
    }
  })
})

test_that("options(fastkpca.simd) switches every path, and simd_path() reports it", {
  # unset (the suite may run with FASTKPCA_SIMD set): the widest path
  old <- options(fastkpca.simd = NULL)
  on.exit(options(old))
  expect_true(simd_path() %in% c("plain", "sse2", "avx2", "avx512", "neon"))
  expect_identical(simd_path(available = TRUE)[1], "plain")
  expect_identical(simd_path(), utils::tail(simd_path(available = TRUE), 1))
  options(fastkpca.simd = "plain")
  expect_identical(simd_path(), "plain")
  set.seed(44)
  a <- matrix(rnorm(40 * 9), 40)
  b <- matrix(rnorm(9 * 5), 9)
  expect_identical(attr(fastkpca:::tile_product(a, b), "path"), "plain")
  # the kernels and a whole fit on the plain path, against plain R
  x <- matrix(rnorm(60 * 3), 60)
  K <- kernel_matrix("rbfdot", x, kpar = list(sigma = 0.3))
  expect_equal(unname(K), unname(exp(-0.3 * as.matrix(dist(x))^2)), tolerance = 1e-14)
  fit_plain <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.3), features = 3)
  for (path in paths_run) {
    options(fastkpca.simd = path)
    expect_identical(simd_path(), path)
    fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.3), features = 3)
    expect_equal(fit$eig, fit_plain$eig, tolerance = 1e-12, label = path)
    expect_equal(abs(fit$rotated), abs(fit_plain$rotated), tolerance = 1e-10, label = path)
  }
  # a path this CPU lacks gives the widest it runs below it
  options(fastkpca.simd = "avx512")
  expect_identical(simd_path(), utils::tail(simd_path(available = TRUE), 1))
  options(fastkpca.simd = "fast")
  err <- expect_error(simd_path(), "fastkpca.simd", class = "fastkpca_error_argument")
  expect_error(kernel_matrix("rbfdot", x), "fastkpca.simd", class = "fastkpca_error_argument")
  options(fastkpca.simd = NULL, fastkpca.tuning = list(tile_thread_work = -1))
  expect_error(kernel_matrix("rbfdot", x), "fastkpca.tuning$tile_thread_work", fixed = TRUE,
               class = "fastkpca_error_argument")
  options(fastkpca.tuning = NULL)
  expect_error(simd_path(available = NA), "'available'", class = "fastkpca_error_argument")
})

test_that("the environment variable FASTKPCA_SIMD sets the option as the package loads", {
  skip_on_cran()
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  out <- system2(rscript, c("-e", shQuote("cat(fastkpca::simd_path(), getOption('fastkpca.simd'))")),
                 stdout = TRUE, stderr = TRUE,
                 env = c(paste0("R_LIBS=", libs), "FASTKPCA_SIMD=plain"))
  expect_identical(utils::tail(out, 1), "plain plain")
})
