# The register-tile products of src/tiles.c against R's own %*%, crossprod()
# and tcrossprod(), through every path this CPU runs (a path it lacks runs
# the widest below it, so every call here tests something).

tile_paths_here <- c("plain", "sse2", "avx2", "avx512")

# Threads take parallel regions of at least 3e7 multiply-adds (tiles.c);
# with FASTKPCA_TILE_THREAD_WORK = 0 the small problems here run on them.
on_threads <- function(code) {
  old <- Sys.getenv("FASTKPCA_TILE_THREAD_WORK", NA)
  Sys.setenv(FASTKPCA_TILE_THREAD_WORK = "0")
  on.exit(if (is.na(old)) Sys.unsetenv("FASTKPCA_TILE_THREAD_WORK")
          else Sys.setenv(FASTKPCA_TILE_THREAD_WORK = old))
  code
}

# sizes: below one tile, one row, one column, odd sizes across tile edges,
# an empty inner dimension, and more than one slice of k and chunk of n
tile_sizes <- list(c(1, 1, 1), c(1, 7, 5), c(5, 1, 3), c(3, 2, 0), c(23, 9, 130),
                   c(25, 49, 129), c(37, 5, 300), c(0, 3, 4), c(4, 0, 2))

test_that("tiled products equal %*%, crossprod and tcrossprod", {
  set.seed(27)
  for (sz in tile_sizes) {
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
      expect_identical(c(rt), c(rtt))
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
    for (path in c("plain", "avx2")) {
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
  for (path in c("plain", "avx2")) {
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
