# Kernel values at the extremes of the double range (issue 46, item 4):
# squared norms that overflow, outlying rows far from the others, subnormal
# data. Each case against a plain-R per-entry oracle (every value from its
# own pair of rows, differences summed coordinate by coordinate), on each
# path: the fast tiles of each SIMD copy, the wide product, the generic
# interpreter (kernel expressions), and sparse rows (sparse tiles, the
# 8-column products, the interpreter's sparse segments). Small n throughout.

# helper-oracles.R's kernel_cases, with the issue's rbfdot(0.1)
ext_kpar <- utils::modifyList(kernel_cases, list(rbfdot = list(sigma = 0.1)))

# k(x_i, y_j) for one pair, straight from the definitions.
ext_value <- function(kernel, p, a, b) {
  dd <- function() sum((a - b)^2)
  switch(kernel,
    vanilladot = sum(a * b),
    polydot = (p$scale * sum(a * b) + p$offset)^p$degree,
    rbfdot = exp(-p$sigma * dd()),
    laplacedot = exp(-p$sigma * sqrt(dd())),
    tanhdot = tanh(p$scale * sum(a * b) + p$offset),
    besseldot = {
      t <- p$sigma * sqrt(dd())
      if (t < 1e-4) 1 else if (!is.finite(t)) 0 else {
        L <- 1 / (gamma(p$order + 1) * 2^p$order)
        (suppressWarnings(besselJ(t, p$order)) * t^(-p$order) / L)^p$degree
      }
    },
    anovadot = sum(exp(-p$sigma * (a - b)^2))^p$degree,
    splinedot = {
      mn <- pmin(a, b); xy <- a * b
      prod(1 + xy + xy * mn - (a + b) / 2 * mn^2 + mn^3 / 3)
    })
}

ext_oracle <- function(kernel, x, y = x) {
  p <- utils::modifyList(kernel_default_kpar[[kernel]], ext_kpar[[kernel]])
  x <- as.matrix(x); y <- as.matrix(y)
  out <- matrix(0, nrow(x), nrow(y))
  for (i in seq_len(nrow(x))) for (j in seq_len(nrow(y)))
    out[i, j] <- ext_value(kernel, p, x[i, ], y[j, ])
  out
}

ext_kernel <- function(kernel) kern_case(kernel, ext_kpar[[kernel]])

# Evaluate expr under the options, restoring them.
ext_with <- function(opts, expr) {
  old <- options(opts)
  on.exit(options(old))
  force(expr)
}

ext_paths <- list(
  plain = list(fastkpca.simd = "plain"),
  sse2 = list(fastkpca.simd = "sse2"),
  avx2 = list(fastkpca.simd = "avx2"),
  avx512 = list(fastkpca.simd = "avx512"),
  wide = list(fastkpca.tuning = list(wide_min_d = 8))
)

# The values of K against the oracle O: equal within tol (relative to 1
# and to |O|) wherever O is finite; if O has a value that is not finite, K
# must be a classed data error naming the argument instead.
expect_oracle <- function(K, O, tol = 1e-9, label = "", arg = "'(x|newdata)'",
                          allow_error = FALSE) {
  if (allow_error && inherits(K, "fastkpca_error_data")) {
    expect_match(conditionMessage(K), arg, label = label)
    return(invisible())
  }
  if (all(is.finite(O))) {
    expect_false(inherits(K, "error"), label = paste(label, "gives an error:",
                 if (inherits(K, "error")) conditionMessage(K)))
    if (inherits(K, "error")) return(invisible())
    dimnames(K) <- NULL
    expect_true(all(is.finite(K)), label = paste(label, "values finite"))
    err <- max(abs(K - O) / pmax(1, abs(O)))
    expect_lte(err, tol, label = paste(label, "error"))
  } else {
    expect_true(inherits(K, "fastkpca_error_data"), label = paste(label, "is a data error"))
    if (inherits(K, "error"))
      expect_match(conditionMessage(K), arg, label = label)
  }
}

catch <- function(expr) tryCatch(expr, error = function(e) e)

all_kernels <- names(ext_kpar)
sparse_of <- function(x) Matrix::Matrix(x, sparse = TRUE)

test_that("squared norms past the double range: dense, every kernel and path", {
  set.seed(1)
  x <- matrix(rnorm(120), 12)
  x[1:2, ] <- x[1:2, ] * 1e160        # norms overflow, distances between them too
  x[3, ] <- x[1, ] + rnorm(10) * 1e145 # near an overflowing row
  x[4, ] <- x[4, ] * 1e300
  for (kernel in all_kernels) {
    O <- ext_oracle(kernel, x)
    for (path in names(ext_paths)) {
      K <- catch(ext_with(ext_paths[[path]], kernel_matrix(ext_kernel(kernel), x)))
      # tanhdot of an overflowing inner product: R's tanh(Inf) is 1, the
      # engine reports the overflow
      expect_oracle(K, O, label = paste(kernel, path), allow_error = kernel == "tanhdot")
    }
  }
  # the issue's case: ordinary pairs among huge rows
  set.seed(1)
  x <- matrix(rnorm(400), 40)
  x[1:3, ] <- x[1:3, ] * 1e160
  K <- kernel_matrix(rbfdot(0.1), x)
  expect_equal(K[5, 4], exp(-0.1 * sum((x[5, ] - x[4, ])^2)), tolerance = 1e-12)
  expect_oracle(K, ext_oracle("rbfdot", x), label = "issue")
})

test_that("squared norms past the double range: kernel expressions", {
  set.seed(2)
  x <- matrix(rnorm(100), 10)
  x[1:2, ] <- x[1:2, ] * 1e160
  k1 <- kern("rbfdot", sigma = 0.1) + kern("laplacedot", sigma = 0.3)
  O <- ext_oracle("rbfdot", x) + ext_oracle("laplacedot", x)
  for (path in names(ext_paths)) {
    K <- catch(ext_with(ext_paths[[path]], kernel_matrix(k1, x)))
    expect_oracle(K, O, label = paste("rbf + laplace", path))
  }
  k2 <- kern("rbfdot", sigma = 0.1) + kern("polydot", degree = 2, scale = 0.5, offset = 1)
  K <- catch(kernel_matrix(k2, x))
  expect_oracle(K, ext_oracle("rbfdot", x) + ext_oracle("polydot", x), label = "rbf + poly")
  k3 <- kern("rbfdot", sigma = 0.1) * kern("besseldot", sigma = 0.5, order = 1, degree = 2)
  K <- catch(kernel_matrix(k3, x))
  expect_oracle(K, ext_oracle("rbfdot", x) * ext_oracle("besseldot", x), label = "rbf * bessel")
})

test_that("squared norms past the double range: sparse rows", {
  skip_if_not_installed("Matrix")
  set.seed(3)
  x <- matrix(rnorm(120), 12) * (runif(120) < 0.5)
  x[1:2, ] <- x[1:2, ] * 1e160
  x[3, ] <- x[1, ] + (x[1, ] != 0) * rnorm(10) * 1e145
  y <- x[c(1, 3, 5, 7, 9), ]
  xs <- sparse_of(x); ys <- sparse_of(y)
  for (kernel in all_kernels) {
    O <- ext_oracle(kernel, x)
    K <- catch(kernel_matrix(ext_kernel(kernel), xs))            # tiles
    expect_oracle(K, O, label = paste("sparse", kernel), allow_error = kernel == "tanhdot")
    K <- catch(kernel_matrix(ext_kernel(kernel), xs, ys))        # 8-column products
    expect_oracle(K, ext_oracle(kernel, x, y), label = paste("sparse cross", kernel),
                  allow_error = kernel == "tanhdot")
  }
  k1 <- kern("rbfdot", sigma = 0.1) + kern("laplacedot", sigma = 0.3)
  K <- catch(kernel_matrix(k1, xs))
  expect_oracle(K, ext_oracle("rbfdot", x) + ext_oracle("laplacedot", x),
                label = "sparse expression")
})

test_that("kpca() and predict() on overflowing norms: right values or a classed error", {
  set.seed(4)
  x <- matrix(rnorm(200), 20)
  x[1:2, ] <- x[1:2, ] * 1e160
  z <- rbind(x[3:5, ], x[1, ] * 2)
  fit <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = 3)
  ref <- plain_kpca_K(ext_oracle("rbfdot", x), features = 3)
  expect_equal(unname(fit$eig), ref$eig, tolerance = 1e-8)
  P <- predict(fit, z)
  Kz <- ext_oracle("rbfdot", z, x)
  K <- ext_oracle("rbfdot", x)
  Kzc <- sweep(Kz, 1, rowMeans(Kz)) - matrix(colMeans(K), nrow(z), nrow(x), byrow = TRUE) +
    mean(K)
  expect_equal(unname(abs(P)), unname(abs(Kzc %*% fit$alpha)), tolerance = 1e-8)
  # a kernel whose values overflow: a classed error naming the argument
  e <- catch(kpca(x, kernel = "vanilladot", features = 2))
  expect_s3_class(e, "fastkpca_error_data")
  expect_match(conditionMessage(e), "'x'", fixed = TRUE)
  fit2 <- kpca(x[-(1:2), ], kernel = "polydot", kpar = list(degree = 2), features = 2)
  e <- catch(predict(fit2, x[1:3, ] * 1e100))
  expect_s3_class(e, "fastkpca_error_data")
  expect_match(conditionMessage(e), "'newdata'", fixed = TRUE)
})

test_that("outlying rows keep the digits of the others: every path, any d", {
  for (d in c(10, 63, 64, 100, 300)) {
    set.seed(d)
    x <- matrix(rnorm(24 * d), 24)
    x[1, ] <- x[1, ] * 1e12
    x[2, ] <- x[2, ] * 1e8
    x[4, ] <- x[5, ] + 1e-7 * rnorm(d)  # a near duplicate
    for (kernel in c("rbfdot", "laplacedot", "vanilladot", "polydot")) {
      O <- ext_oracle(kernel, x)
      for (path in names(ext_paths)) {
        K <- catch(ext_with(ext_paths[[path]], kernel_matrix(ext_kernel(kernel), x)))
        expect_oracle(K, O, label = paste(kernel, path, "d =", d))
        if (kernel %in% c("rbfdot", "laplacedot") && is.matrix(K))
          expect_true(all(diag(K) == 1), label = paste(kernel, path, d, "diagonal"))
      }
    }
    # the interpreter (expressions), and besseldot there
    k1 <- kern("rbfdot", sigma = 0.1) + kern("laplacedot", sigma = 0.3)
    K <- kernel_matrix(k1, x)
    expect_oracle(K, ext_oracle("rbfdot", x) + ext_oracle("laplacedot", x),
                  label = paste("expression d =", d))
    expect_true(all(diag(K) == 2))
    K <- kernel_matrix(ext_kernel("besseldot"), x)
    expect_oracle(K, ext_oracle("besseldot", x), label = paste("besseldot d =", d))
    # a cross kernel (predict's) and a fit
    z <- x[c(5, 4, 1, 7), ] + 0
    K <- kernel_matrix(ext_kernel("rbfdot"), z, x)
    expect_oracle(K, ext_oracle("rbfdot", z, x), label = paste("cross d =", d))
  }
})

test_that("outlying sparse rows keep the digits of the others", {
  skip_if_not_installed("Matrix")
  for (d in c(10, 100)) {
    set.seed(d)
    x <- matrix(rnorm(24 * d), 24) * (runif(24 * d) < 0.3)
    x[1, ] <- x[1, ] * 1e12
    x[3, ] <- x[1, ] + (x[1, ] != 0) * 1e-3
    x[6, ] <- x[5, ] * 1e6 + 1e-6 * (x[5, ] != 0)
    x[7, ] <- x[5, ] * 1e6
    xs <- sparse_of(x)
    for (kernel in c("rbfdot", "laplacedot", "besseldot")) {
      K <- kernel_matrix(ext_kernel(kernel), xs)
      expect_oracle(K, ext_oracle(kernel, x), label = paste("sparse", kernel, d))
      expect_true(all(diag(K) == 1))
      K <- kernel_matrix(ext_kernel(kernel), xs, xs[c(3, 1, 6, 7), ])
      expect_oracle(K, ext_oracle(kernel, x, x[c(3, 1, 6, 7), ]),
                    label = paste("sparse cross", kernel, d))
    }
  }
})

test_that("subnormal data give the oracle's values, with no NaN", {
  set.seed(5)
  x <- matrix(rnorm(80), 10) * 1e-300
  x[2, ] <- x[2, ] * 1e-10   # subnormal
  for (kernel in all_kernels) {
    O <- ext_oracle(kernel, x)
    for (path in names(ext_paths)) {
      K <- catch(ext_with(ext_paths[[path]], kernel_matrix(ext_kernel(kernel), x)))
      expect_oracle(K, O, tol = 1e-12, label = paste("subnormal", kernel, path))
    }
    if (requireNamespace("Matrix", quietly = TRUE)) {
      K <- catch(kernel_matrix(ext_kernel(kernel), sparse_of(x)))
      expect_oracle(K, O, tol = 1e-12, label = paste("subnormal sparse", kernel))
    }
  }
  # kpca(): all values 1 (the squared distances underflow, as in R): a
  # classed error, not NaN
  e <- catch(kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.1), features = 2))
  expect_s3_class(e, "fastkpca_error_data")
})

test_that("wide sparse data take memory O(nnz + n), not O(ncol)", {
  # three matrices of 2^24 columns (their column starts, about 192 MB in all)
  skip_on_cran()
  skip_if_not_installed("Matrix")
  # hashed features: 2^24 columns, 40 values a row; the 8-column products
  # of predict(), Nystrom and cross kernels scattered 8 doubles per column
  # and thread (1 GiB here) before the call's columns were renumbered
  set.seed(11)
  wide <- function(n) Matrix::sparseMatrix(
    i = rep(seq_len(n), each = 40), j = sample.int(2^24, 40 * n, replace = TRUE),
    x = rexp(40 * n), dims = c(n, 2^24))
  x <- wide(300)
  z <- wide(40)
  x50 <- x[1:50, ]   # (its own 2^24 column starts: data, made before the measure)
  k <- kern("rbfdot", sigma = 0.002)
  fit <- kpca(x, kernel = k, features = 3, threads = 2L)
  peak <- function(expr) {
    gc(reset = TRUE)
    base <- gc()["Vcells", "used"]
    force(expr)
    (gc()["Vcells", "max used"] - base) * 8
  }
  expect_lt(peak(scores <- predict(fit, z)), 64 * 2^20)
  expect_lt(peak(cross <- kernel_matrix(k, x50, z)), 64 * 2^20)
  expect_lt(peak(nys <- kpca(x, kernel = k, features = 3, landmarks = 30, threads = 2L)),
            64 * 2^20)
  # and the values are the plain-R ones
  d2 <- outer(Matrix::rowSums(x50^2), Matrix::rowSums(z^2), "+") -
    2 * as.matrix(Matrix::tcrossprod(x50, z))
  expect_equal(unname(cross), exp(-0.002 * pmax(d2, 0)), tolerance = 1e-12)
  expect_equal(dim(scores), c(40L, 3L))
  expect_false(anyNA(nys$rotated))
})
