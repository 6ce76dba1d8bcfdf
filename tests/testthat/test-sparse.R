# Sparse data (R/sparse.R, src/sparse.c, src/sparse_columns.c, src/sparse_tiles.c): kept sparse from the input to
# every kernel value, and equal to the dense computation (and to the
# plain-R formulas, kernlab and scikit-learn) on random sparse matrices with
# an empty row, an empty column and a row of one value, and on a real
# corpus.

sparse_kernels <- list(
  vanilladot = list(), polydot = list(degree = 2, scale = 0.5, offset = 1),
  rbfdot = list(sigma = 0.3), laplacedot = list(sigma = 0.5),
  tanhdot = list(scale = 0.1, offset = 0.2),
  besseldot = list(sigma = 0.4, order = 1, degree = 2),
  anovadot = list(sigma = 0.2, degree = 2), splinedot = list())

rel_entry_diff <- function(a, b) max(abs(a - b) / pmax(1, abs(b)))

test_that("kernel matrices of sparse rows equal the dense ones and the plain-R formulas", {
  x <- random_sparse(40, 25, 0.12)
  z <- random_sparse(9, 25, 0.2, seed = 2)
  xd <- as.matrix(x)
  zd <- as.matrix(z)
  for (kn in names(sparse_kernels)) {
    kp <- sparse_kernels[[kn]]
    K <- kernel_matrix(kn, x, kpar = kp)
    expect_true(is.matrix(K) && is.double(K))
    expect_lt(rel_entry_diff(K, kernel_matrix(kn, xd, kpar = kp)), 1e-13, label = kn)
    expect_lt(rel_entry_diff(K, plain_kernel(xd, xd, kn, kp)), 1e-12, label = kn)
    expect_identical(dimnames(K), list(rownames(x), rownames(x)))
    C <- kernel_matrix(kn, z, x, kpar = kp)
    expect_lt(rel_entry_diff(C, kernel_matrix(kn, zd, xd, kpar = kp)), 1e-13, label = kn)
    expect_lt(rel_entry_diff(C, plain_kernel(zd, xd, kn, kp)), 1e-12, label = kn)
  }
  # the algebra, conformal weights (g gets the rows as a dgRMatrix)
  k <- 2 * kern("rbfdot", sigma = 0.3) + kern("polydot", degree = 2)^2 +
    exp(0.1 * kern("vanilladot"))
  expect_lt(rel_entry_diff(kernel_matrix(k, x), kernel_matrix(k, xd)), 1e-13)
  g <- function(v) 1 / (1 + sqrt(Matrix::rowSums(v^2)))
  kc <- kern_conformal(kern("rbfdot", sigma = 0.3), g)
  expect_lt(rel_entry_diff(kernel_matrix(kc, x), kernel_matrix(kc, xd)), 1e-13)
  # the threads do not change the values
  expect_identical(kernel_matrix("rbfdot", x, kpar = list(sigma = 0.3), threads = 1L),
                   kernel_matrix("rbfdot", x, kpar = list(sigma = 0.3), threads = 2L))
})

test_that("kernel matrices and predict() of rows with frequent columns equal the dense ones", {
  # columns in at least 1/8 of the rows go to the dense head of the tiles
  # (src/sparse_tiles.c): every gathered-product kernel, square and cross
  set.seed(5)
  frequent <- Matrix::Matrix(cbind(matrix(runif(150 * 2), 150), rbinom(150, 1, 0.3)),
                             sparse = TRUE)
  x <- cbind(frequent, random_sparse(150, 60, 0.05))
  z <- x[c(3, 40, 41, 90), ]
  z[, 2] <- 0
  xd <- as.matrix(x)
  zd <- as.matrix(z)
  for (kn in c("rbfdot", "polydot", "vanilladot", "tanhdot")) {
    kp <- sparse_kernels[[kn]]
    expect_lt(rel_entry_diff(kernel_matrix(kn, x, kpar = kp), plain_kernel(xd, xd, kn, kp)),
              1e-13, label = kn)
    expect_lt(rel_entry_diff(kernel_matrix(kn, z, x, kpar = kp), plain_kernel(zd, xd, kn, kp)),
              1e-13, label = kn)
  }
  # a polydot degree past the vector transform's range (kernel_fast.c: 10^6)
  kp <- list(degree = 1e6 + 1, scale = 1e-9, offset = 1)
  expect_lt(rel_entry_diff(kernel_matrix("polydot", x, kpar = kp),
                           kernel_matrix("polydot", xd, kpar = kp)), 1e-13)
  # the rows beside a row of newdata do not change its bits (the first
  # columns have no names: all are taken by position)
  fit <- kpca(x, kpar = list(sigma = 0.3), features = 3)
  all <- predict(fit, z)
  for (i in seq_len(nrow(z)))
    expect_identical(predict(fit, z[i, , drop = FALSE]), all[i, , drop = FALSE])
  expect_lt(max(abs(all - predict(kpca(xd, kpar = list(sigma = 0.3), features = 3), zd)) /
                  max(abs(all))), 1e-10)
})

test_that("every sparse class is read, without a dense copy of the data", {
  skip_if_not_installed("slam")
  x <- random_sparse(20, 12, 0.2)
  xd <- as.matrix(x)
  ref <- kernel_matrix("rbfdot", xd, kpar = list(sigma = 0.2))
  same <- function(y, label) {
    K <- kernel_matrix("rbfdot", y, kpar = list(sigma = 0.2))
    expect_lt(rel_entry_diff(unname(K), unname(ref)), 1e-13, label = label)
  }
  same(methods::as(x, "RsparseMatrix"), "dgRMatrix")
  same(methods::as(x, "TsparseMatrix"), "dgTMatrix")
  # triplets with a duplicated entry: summed, as Matrix and slam mean them
  t3 <- Matrix::sparseMatrix(i = c(1, 1, 2), j = c(2, 2, 3), x = c(1, 2, 5), dims = c(3, 4),
                             repr = "T")
  expect_equal(unname(kernel_matrix("vanilladot", t3)), unname(tcrossprod(as.matrix(t3))))
  same(slam::as.simple_triplet_matrix(xd), "simple_triplet_matrix")
  # a subclass of dgCMatrix, as quanteda's dfm is
  setClass("fastkpca_test_dfm", contains = "dgCMatrix", where = globalenv())
  on.exit(removeClass("fastkpca_test_dfm", where = globalenv()))
  same(methods::new("fastkpca_test_dfm", x), "subclass")
  # pattern, symmetric and triangular (unit diagonal) classes, expanded
  nz <- Matrix::summary(x)
  p <- Matrix::sparseMatrix(i = nz$i, j = nz$j, dims = dim(x))
  expect_true(methods::is(p, "ngCMatrix"))
  expect_equal(unname(kernel_matrix("vanilladot", p)),
               unname(tcrossprod(as.matrix(p) * 1)), tolerance = 1e-14)
  l <- x != 0   # logical
  expect_equal(unname(kernel_matrix("vanilladot", l)), unname(kernel_matrix("vanilladot", p)))
  s <- Matrix::forceSymmetric(methods::as(x[1:12, ], "CsparseMatrix"))
  expect_equal(unname(kernel_matrix("vanilladot", s)), unname(tcrossprod(as.matrix(s))),
               tolerance = 1e-14)
  u <- Matrix::sparseMatrix(i = c(1, 2), j = c(2, 3), x = c(3, 4), dims = c(3, 3),
                            triangular = TRUE)
  u@diag <- "U"
  expect_equal(unname(kernel_matrix("vanilladot", u)), unname(tcrossprod(as.matrix(u))))
  # tm's DocumentTermMatrix (a simple_triplet_matrix)
  skip_if_not_installed("tm")
  docs <- tm::VCorpus(tm::VectorSource(c("a rose is a rose", "war and peace", "a war")))
  dtm <- tm::DocumentTermMatrix(docs, control = list(wordLengths = c(1, Inf)))
  dense <- as.matrix(dtm)
  expect_equal(unname(kernel_matrix("vanilladot", dtm)), unname(tcrossprod(dense)))
})

test_that("sparse fits equal the dense fits for every solver", {
  x <- random_sparse(70, 30, 0.1)
  xd <- as.matrix(x)
  for (solver in c("exact", "iterative", "randomized", "matrix_free")) {
    control <- if (solver == "randomized") list(power = 8) else list()
    fs <- with_seed(1, kpca(x, kpar = list(sigma = 0.2), features = 4, solver = solver,
                            control = control))
    fd <- with_seed(1, kpca(xd, kpar = list(sigma = 0.2), features = 4, solver = solver,
                            control = control))
    expect_kpca_equal(fs, fd, tol = 1e-10, label = solver)
    expect_identical(fs$solver, solver)
    expect_s3_class(fs$xmatrix, "fastkpca_sparse_rows")
  }
  # every kernel on the exact solver, and the plain-R oracle
  for (kn in names(sparse_kernels)) {
    if (kn == "tanhdot") next   # not positive semidefinite: compared below
    fs <- kpca(x, kernel = kn, kpar = sparse_kernels[[kn]], features = 3)
    expect_kpca_equal(fs, kpca(xd, kernel = kn, kpar = sparse_kernels[[kn]], features = 3),
                      tol = 1e-10, label = kn)
    expect_kpca_equal(fs, plain_kpca(xd, kn, sparse_kernels[[kn]], features = 3), tol = 1e-8,
                      label = paste(kn, "plain"))
  }
  # a fit keeps its rows sparse: saved, it stays small
  fs <- kpca(x, kpar = list(sigma = 0.2), features = 2)
  fd <- kpca(xd, kpar = list(sigma = 0.2), features = 2)
  expect_lt(length(serialize(fs$xmatrix, NULL)), length(serialize(fd$xmatrix, NULL)) / 2)
})

test_that("sparse Nystrom fits equal the dense ones, for both landmark rules", {
  x <- random_sparse(80, 30, 0.1)
  xd <- as.matrix(x)
  for (rule in c("uniform", "kmeans++")) {
    fs <- with_seed(3, kpca(x, kpar = list(sigma = 0.2), features = 3, landmarks = 25,
                            landmark_rule = rule))
    fd <- with_seed(3, kpca(xd, kpar = list(sigma = 0.2), features = 3, landmarks = 25,
                            landmark_rule = rule))
    expect_kpca_equal(fs, fd, tol = 1e-10, rotated = TRUE, label = rule)
    expect_cols_equal_up_to_sign(predict(fs, x[1:5, ]), predict(fd, xd[1:5, ]), tol = 1e-10)
  }
  # landmarks given as sparse rows
  fs <- kpca(x, kpar = list(sigma = 0.2), features = 3, landmarks = x[1:20, ])
  fd <- kpca(xd, kpar = list(sigma = 0.2), features = 3, landmarks = xd[1:20, ])
  expect_kpca_equal(fs, fd, tol = 1e-10)
})

test_that("predict() takes sparse and dense newdata for sparse and dense fits", {
  x <- random_sparse(50, 20, 0.15)
  xd <- as.matrix(x)
  z <- random_sparse(8, 20, 0.3, seed = 5)
  zd <- as.matrix(z)
  fs <- kpca(x, kpar = list(sigma = 0.3), features = 3)
  fd <- kpca(xd, kpar = list(sigma = 0.3), features = 3)
  ref <- predict(fd, zd)
  for (pair in list(list(fs, z), list(fs, zd), list(fd, z))) {
    expect_cols_equal_up_to_sign(predict(pair[[1]], pair[[2]]), ref, tol = 1e-10)
  }
  expect_cols_equal_up_to_sign(predict(fs, x), fs$rotated, tol = 1e-10)
  expect_identical(rownames(predict(fs, z)), rownames(z))
  # columns are matched by name, as for dense data
  perm <- z[, rev(colnames(z))]
  expect_cols_equal_up_to_sign(predict(fs, perm), ref, tol = 1e-10)
  extra <- cbind(z, other = 1)
  expect_cols_equal_up_to_sign(predict(fs, extra), ref, tol = 1e-10)
  expect_error(predict(fs, z[, -1]), "lacks column c1", class = "fastkpca_error_argument")
  unnamed <- z
  unnamed@Dimnames <- list(NULL, NULL)
  expect_error(predict(fs, unnamed[, -1]), "must have 20 columns",
               class = "fastkpca_error_argument")
  # a row with NA gets NA scores
  zna <- z
  zna[2, 5] <- NA
  p <- predict(fs, zna)
  expect_true(all(is.na(p[2, ])))
  expect_cols_equal_up_to_sign(p[-2, ], ref[-2, ], tol = 1e-10)
  # scale. = TRUE: the root mean square of each column, as base::scale()
  keep <- Matrix::colSums(x != 0) > 0
  xs <- x[, keep]
  f1 <- kpca(xs, kpar = list(sigma = 0.3), features = 3, scale. = TRUE)
  f2 <- kpca(as.matrix(xs), kpar = list(sigma = 0.3), features = 3, scale. = TRUE)
  expect_equal(f1$scale, f2$scale, tolerance = 1e-14)
  expect_kpca_equal(f1, f2, tol = 1e-10)
  expect_cols_equal_up_to_sign(predict(f1, z[, keep]), predict(f2, zd[, keep]), tol = 1e-10)
  expect_error(kpca(x, center = TRUE, features = 2), "'center' must be FALSE for sparse 'x'",
               class = "fastkpca_error_argument")
})

test_that("NA, Inf and other bad sparse input give classed errors naming the argument", {
  x <- random_sparse(30, 10, 0.2)
  xna <- x
  xna[4, 7] <- NA
  xna[9, 2] <- NaN
  fit <- kpca(xna, kpar = list(sigma = 0.3), features = 2)
  ref <- kpca(as.matrix(x)[-c(4, 9), ], kpar = list(sigma = 0.3), features = 2)
  expect_kpca_equal(fit, ref, tol = 1e-10)
  expect_equal(as.integer(fit$na.action), c(4L, 9L))
  expect_identical(names(fit$na.action), c("r4", "r9"))
  expect_error(kpca(xna, na.action = na.fail, features = 2), class = "fastkpca_error_data")
  ex <- kpca(xna, kpar = list(sigma = 0.3), features = 2, na.action = na.exclude)
  expect_true(all(is.na(ex$rotated[c(4, 9), ])))
  xinf <- x
  xinf[3, 3] <- Inf
  expect_error(kpca(xinf, features = 2), "'x' must not contain infinite values",
               class = "fastkpca_error_argument")
  expect_error(kernel_matrix("rbfdot", xinf), "'x' must not contain infinite values",
               class = "fastkpca_error_argument")
  expect_error(kpca(x[, integer(0)], features = 1), "at least one column",
               class = "fastkpca_error_argument")
  expect_error(kpca(x[integer(0), ], features = 1), "at least 2 rows",
               class = "fastkpca_error_argument")
  expect_error(kernel_matrix("rbfdot", x, random_sparse(3, 11, 0.5)), "must have 10 columns",
               class = "fastkpca_error_argument")
  # a sparse class without a reading
  setClass("fastkpca_test_unreadable", contains = "sparseMatrix", where = globalenv())
  on.exit(removeClass("fastkpca_test_unreadable", where = globalenv()))
  odd <- methods::new("fastkpca_test_unreadable", Dim = c(2L, 2L))
  expect_error(kpca(odd), "cannot read", class = "fastkpca_error_argument")
  # steps without a sparse path refuse it, never densify silently
  expect_error(kica(x), "'x' is sparse", class = "fastkpca_error_argument")
  fit <- kpca(x, kpar = list(sigma = 0.3), features = 2)
  expect_error(preimage(fit), "sparse data", class = "fastkpca_error_argument")
  expect_error(kpca_cv(x, grid = list(sigma = 1), features = 2), "reconstruction",
               class = "fastkpca_error_argument")
  # the dense copy a user asks for is checked against the memory
  rows <- fit$xmatrix
  old <- options(fastkpca.memory_limit = 1000)
  on.exit(options(old), add = TRUE)
  expect_error(as.matrix(rows), "dense copy", class = "fastkpca_error_memory")
  options(old)
  expect_equal(as.matrix(rows), as.matrix(x)[rownames(rows), ])
  # the engine re-checks what R made
  bad <- unclass(rows)
  bad$j[1] <- 99L
  expect_error(kernel_matrix("rbfdot", structure(bad, class = "fastkpca_sparse_rows")),
               "out of range", class = "fastkpca_error_argument")
})

test_that("the median heuristic, kpca_cv() and kcca() take sparse data", {
  x <- random_sparse(60, 15, 0.2)
  xd <- as.matrix(x)
  expect_equal(median_sigma(x), median_sigma(xd), tolerance = 1e-12)
  fs <- kpca(x, kpar = "automatic", features = 2)
  expect_equal(fs$kpar$sigma, median_sigma(xd), tolerance = 1e-12)
  cs <- with_seed(2, kpca_cv(x, grid = list(sigma = c(0.1, 1)), features = 2, folds = 3,
                             criterion = "residual"))
  cd <- with_seed(2, kpca_cv(xd, grid = list(sigma = c(0.1, 1)), features = 2, folds = 3,
                             criterion = "residual"))
  expect_equal(cs$results$error, cd$results$error, tolerance = 1e-10)
  y <- random_sparse(60, 8, 0.3, seed = 9)
  ks <- kcca(x, y, kpar = list(sigma = 0.2), ncomps = 2, formulation = "centered")
  kd <- kcca(xd, as.matrix(y), kpar = list(sigma = 0.2), ncomps = 2, formulation = "centered")
  expect_equal(ks$kcor, kd$kcor, tolerance = 1e-10)
  vs <- predict(ks, x = x[1:5, ], y = y[1:5, ])
  vd <- predict(kd, x = xd[1:5, ], y = as.matrix(y)[1:5, ])
  expect_cols_equal_up_to_sign(vs$x, vd$x, tol = 1e-8)
  # kernlab's formulation (the default)
  ks <- kcca(x, y, kpar = list(sigma = 0.2), ncomps = 2)
  kd <- kcca(xd, as.matrix(y), kpar = list(sigma = 0.2), ncomps = 2)
  expect_equal(ks$kcor, kd$kcor, tolerance = 1e-8)
  expect_cols_equal_up_to_sign(predict(ks, x = x[1:5, ])$x, predict(kd, x = xd[1:5, ])$x,
                               tol = 1e-6)
})

test_that("sparse row chunks give the fit of the dense chunks", {
  x <- random_sparse(90, 20, 0.15)
  xd <- as.matrix(x)
  parts <- list(1:30, 31:60, 61:90)
  fs <- with_seed(4, kpca(row_chunks(lapply(parts, function(i) x[i, ])),
                          kpar = list(sigma = 0.2), features = 3, landmarks = 20))
  fd <- with_seed(4, kpca(row_chunks(lapply(parts, function(i) xd[i, ])),
                          kpar = list(sigma = 0.2), features = 3, landmarks = 20))
  expect_equal(fs$eig, fd$eig, tolerance = 1e-10)
  expect_cols_equal_up_to_sign(fs$alpha, fd$alpha, tol = 1e-10)
  expect_s3_class(fs$landmarks, "fastkpca_sparse_rows")
  ps <- predict(fs, row_chunks(lapply(parts, function(i) x[i, ])))
  pd <- predict(fd, row_chunks(lapply(parts, function(i) xd[i, ])))
  expect_cols_equal_up_to_sign(do.call(rbind, ps), do.call(rbind, pd), tol = 1e-10)
})

test_that("sparse matrix-free passes share the tiles, here and on future's workers", {
  skip_if_not_installed("future")
  skip_if_emulated("future's workers")
  x <- random_sparse(600, 40, 0.08)
  # the tiles of src/sparse_tiles.c: columns in at least 1/8 of the rows
  # (here 3 in every row and 2 in a third) go to a dense head, the rest
  # indexed per tile; rows of 300 values overfill the index of a tile's 256
  # rows, which is then made in parts
  set.seed(4)
  head <- Matrix::Matrix(cbind(matrix(runif(600 * 3), 600), rbinom(600, 1, 1 / 3),
                               rbinom(600, 1, 1 / 3) * rnorm(600)), sparse = TRUE)
  with_head <- cbind(head, random_sparse(600, 40, 0.05))
  long <- random_sparse(300, 5000, 0.06)
  long <- long / pmax(sqrt(Matrix::rowSums(long^2)), 1)
  cases <- list(sparse = x, with_head = with_head, long_rows = long)
  for (case in names(cases)) {
    xc <- cases[[case]]
    n <- nrow(xc)
    rows <- fastkpca:::as_sparse_rows(xc)
    xd <- as.matrix(xc)
    set.seed(1)
    V <- matrix(rnorm(n * 3), n, 3)
    kernels <- if (case == "sparse") c("rbfdot", "laplacedot", "anovadot", "polydot")
               else c("rbfdot", "polydot", "vanilladot", "tanhdot")
    for (kn in kernels) {
      label <- paste(case, kn)
      program <- fastkpca:::kernel_program(fastkpca:::as_kernel(kn, sparse_kernels[[kn]]))
      one <- fastkpca:::kernel_block_product(rows, 0L, n, program, list(), V, 1L,
                                             count = TRUE)
      # about half the kernel matrix per pass (the diagonal tiles whole), as
      # for dense rows, where batches of whole rows would compute all of it
      expect_lt(attr(one, "kernel_values") / (n^2 / 2), 1.9, label = label)
      attr(one, "kernel_values") <- NULL
      Kd <- kernel_matrix(kn, xd, kpar = sparse_kernels[[kn]])
      expect_lt(max(abs(one - Kd %*% V)) / max(abs(Kd %*% V)), 1e-13, label = label)
      # the threads, the tile and part of the rows give the same bits
      expect_identical(fastkpca:::kernel_block_product(rows, 0L, n, program, list(), V, 2L,
                                                       tile = 16L), one, label = label)
      part <- fastkpca:::kernel_block_product(rows, 100L, 50L, program, list(), V, 2L)
      expect_identical(part, one[101:150, , drop = FALSE], label = label)
    }
  }
  # with the head, a matrix-free fit is the dense fit
  fs <- with_seed(3, kpca(with_head, kpar = list(sigma = 0.2), features = 3,
                          solver = "matrix_free"))
  fd <- with_seed(3, kpca(as.matrix(with_head), kpar = list(sigma = 0.2), features = 3,
                          solver = "matrix_free"))
  expect_kpca_equal(fs, fd, tol = 1e-10, label = "matrix-free with a head")
  ref <- with_seed(2, kpca(x, kpar = list(sigma = 0.2), features = 3, solver = "matrix_free",
                           threads = 1L))
  on.exit(future::plan(future::sequential))
  future::plan(future::multisession, workers = 2)
  fit <- with_seed(2, kpca(x, kpar = list(sigma = 0.2), features = 3, solver = "matrix_free",
                           threads = 1L))
  expect_identical(fit$eig, ref$eig)
  expect_identical(fit$alpha, ref$alpha)
})
