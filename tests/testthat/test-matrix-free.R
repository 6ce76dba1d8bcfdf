# The matrix-free exact solver (R/matrix_free.R, src/matrix_free.c): the
# eigenpairs of the dense solvers without the n x n matrix, an honest
# certificate on every fit, auto's switch under a memory budget, the same
# numbers under every future plan, lost workers retried, progress.

mf_rows <- function(n, d = 4, seed = 1) {
  with_seed(seed, matrix(rnorm(n * d), n, d) %*% diag(2^(-(seq_len(d) - 1) / 4), d))
}

# The pairs of groups (g, h), h <= g, coded g * 100 + h, of blocks (a 3-row
# matrix of level, i, j: src/matrix_free.c's tree over G groups), in plain R.
block_pairs <- function(blocks, G) {
  unlist(lapply(seq_len(ncol(blocks)), function(p) {
    L <- blocks[1L, p]
    node <- function(i) intersect(seq(i * 2^L, (i + 1) * 2^L - 1), seq_len(G) - 1)
    gs <- node(blocks[2L, p])
    hs <- node(blocks[3L, p])
    pairs <- expand.grid(g = gs, h = hs)
    pairs <- pairs[pairs$h <= pairs$g, ]
    as.integer(pairs$g * 100 + pairs$h)
  }))
}

# K V for all n rows in one process against the workers' blocks for each
# number of workers, folded: the same bits, every pair of groups once
expect_blocks_fold <- function(x, program, V, workers, label) {
  n <- nrow(x)
  G <- length(fastkpca:::matrix_free_groups(n)) - 1L
  one <- fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, 2L)
  for (w in workers) {
    schedule <- fastkpca:::matrix_free_schedule(n, w)
    pairs <- unlist(lapply(schedule, block_pairs, G = G))
    expect_identical(length(pairs), (G * (G + 1L)) %/% 2L, label = label)
    expect_identical(anyDuplicated(pairs), 0L, label = label)
    batches <- lapply(schedule, function(p) list(pairs = p))
    values <- lapply(batches, function(b)
      fastkpca:::kernel_pair_products(x, b$pairs, program, list(), V, 1L))
    expect_identical(fastkpca:::matrix_free_fold(n, ncol(V), batches, values), one,
                     label = sprintf("%s, %d workers", label, w))
  }
  one
}

test_that("matrix_free gives the dense exact solver's eigenpairs, for every kind of kernel", {
  x <- mf_rows(400)
  g <- function(rows) 1 + 0.5 * tanh(rows[, 1])
  cases <- list(
    rbf = list(kernel = "rbfdot", kpar = list(sigma = 0.2)),
    laplace = list(kernel = "laplacedot", kpar = list(sigma = 0.3)),
    poly = list(kernel = "polydot", kpar = list(degree = 2, scale = 0.5, offset = 1)),
    anova = list(kernel = "anovadot", kpar = list(sigma = 0.5, degree = 2)),
    sum = list(kernel = kern("rbfdot", sigma = 0.2) + 0.5 * kern("polydot", degree = 2)),
    conformal = list(kernel = kern_conformal(kern("rbfdot", sigma = 0.2), g)))
  for (name in names(cases)) {
    case <- cases[[name]]
    args <- c(list(x), case, list(features = 5))
    ex <- do.call(kpca, c(args, list(solver = "exact")))
    mf <- with_seed(2, do.call(kpca, c(args, list(solver = "matrix_free",
                                                    control = list(tol = 1e-11)))))
    expect_identical(mf$solver, "matrix_free")
    expect_kpca_equal(mf, ex, tol = 1e-8, label = name)
    expect_lt(rel_diff(mf$eig, ex$eig), 1e-10, label = paste(name, "eig"))
    # the centering terms and the total variance that predict() and summary() use
    expect_equal(mf$kernel_colmeans, ex$kernel_colmeans, tolerance = 1e-12)
    expect_equal(mf$kernel_mean, ex$kernel_mean, tolerance = 1e-12)
    expect_equal(mf$variance_total, ex$variance_total, tolerance = 1e-10)
    expect_cols_equal_up_to_sign(predict(mf, x[1:30, ] + 0.1), predict(ex, x[1:30, ] + 0.1),
                                 tol = 1e-7, label = paste(name, "predict"))
  }
})

test_that("matrix_free matches kernlab and the plain-R fit", {
  skip_if_not_installed("kernlab")
  x <- mf_rows(300, d = 3)
  mf <- with_seed(1, kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.3), features = 4,
                          solver = "matrix_free", control = list(tol = 1e-11)))
  expect_kpca_equal(mf, kernlab_fit(x, "rbfdot", list(sigma = 0.3), features = 4),
                    tol = 1e-7, label = "kernlab")
  expect_kpca_equal(mf, plain_kpca(x, "rbfdot", list(sigma = 0.3), features = 4),
                    tol = 1e-7, label = "plain R")
})

test_that("every solver's certificate is the residual recomputed in plain R", {
  x <- mf_rows(300)
  n <- nrow(x)
  Kc <- plain_center(plain_kernel(x, x, "rbfdot", list(sigma = 0.25)))
  residual <- function(fit) {
    V <- sweep(fit$alpha, 2L, sqrt(fit$eig), "*")
    sqrt(colSums((Kc %*% V / n - sweep(V, 2L, fit$eig, "*"))^2)) / max(fit$eig)
  }
  for (solver in c("exact", "iterative", "randomized", "matrix_free")) {
    fit <- with_seed(3, kpca(x, kpar = list(sigma = 0.25), features = 4, solver = solver))
    r <- residual(fit)
    expect_length(fit$eig_residuals, 4L)
    expect_true(all(abs(fit$eig_residuals - r) <= 1e-13 + 1e-6 * r), label = solver)
  }
  # a threshold fit (features = 0) and a precomputed one carry it too
  fit0 <- kpca(x, kpar = list(sigma = 0.25))
  expect_true(all(abs(fit0$eig_residuals - residual(fit0)) <= 1e-12))
  K <- plain_kernel(x, x, "rbfdot", list(sigma = 0.25))
  pre <- kpca(K, kernel = "precomputed", features = 3)
  expect_true(all(abs(pre$eig_residuals - residual(pre)) <= 1e-12))
  # the matrix-free fit reached its tolerance, and says how it got there
  mf <- with_seed(3, kpca(x, kpar = list(sigma = 0.25), features = 4,
                          solver = "matrix_free", control = list(tol = 1e-9)))
  expect_true(all(mf$eig_residuals <= 1e-9))
  expect_identical(length(mf$residual_history), mf$passes)
  expect_identical(tail(mf$residual_history, 1), max(mf$eig_residuals))
  # summary() shows it
  out <- capture.output(summary(mf))
  expect_true(any(grepl("^Residual", out)))
  expect_match(paste(out, collapse = " "), "solver\\s+\"matrix_free\", [0-9]+ passes")
})

test_that("a solver that cannot reach its tolerance says by how much", {
  x <- mf_rows(300)
  expect_warning(fit <- kpca(x, kpar = list(sigma = 0.25), features = 4,
                             solver = "matrix_free",
                             control = list(tol = 1e-15, maxit = 3, landmarks = 0)),
                 "did not reach control\\$tol \\(1e-15\\) in 3 passes.*times the tolerance")
  expect_identical(fit$passes, 3L)
  expect_true(all(is.finite(fit$eig)))
})

test_that("a kernel of lower rank than the block still ends, certified", {
  # polydot of degree 2 on 4 columns: the centered kernel matrix has rank
  # 14, so most of a block of 20 vectors has nothing left to converge to
  x <- mf_rows(300)
  fit <- with_seed(8, kpca(x, kernel = "polydot", kpar = list(degree = 2), features = 12,
                           solver = "matrix_free", control = list(block = 20, landmarks = 0)))
  ex <- kpca(x, kernel = "polydot", kpar = list(degree = 2), features = 12, solver = "exact")
  expect_lt(rel_diff(fit$eig, ex$eig), 1e-10)
  expect_true(all(fit$eig_residuals <= 1e-8))
  expect_identical(length(fit$residual_history), fit$passes)
})

test_that("auto goes matrix-free when the buffer does not fit, and features = 0 names both ways", {
  x <- mf_rows(300)
  old <- options(fastkpca.memory_limit = 1e5)
  on.exit(options(old))
  fit <- with_seed(4, kpca(x, kpar = list(sigma = 0.2), features = 3))
  expect_identical(fit$solver, "matrix_free")
  expect_error(kpca(x, kpar = list(sigma = 0.2)),
               "landmarks = \"auto\".*solver = \"matrix_free\"")
  expect_error(kpca(x, kpar = list(sigma = 0.2), features = 3, solver = "exact"),
               "needs about .* but only 97.7 KiB")
  options(fastkpca.memory_limit = "a lot")
  expect_error(kpca(x, features = 3), "'fastkpca.memory_limit' must be a positive number")
  options(old)
  expect_identical(kpca(x, kpar = list(sigma = 0.2), features = 3)$solver, "iterative")
})

test_that("bad settings of the matrix-free solver are named", {
  x <- mf_rows(100)
  expect_error(kpca(x, features = 0, solver = "matrix_free"), "needs 'features' > 0")
  expect_error(kpca(x, features = 3, solver = "matrix_free", control = list(block = 2)),
               "'control\\$block' must be")
  expect_error(kpca(x, features = 3, solver = "matrix_free", control = list(ncv = 5)),
               "'control\\$ncv' must be")
  expect_error(kpca(x, features = 3, solver = "matrix_free", control = list(landmarks = -1)),
               "'control\\$landmarks' must be")
  K <- plain_kernel(x, x, "rbfdot", list(sigma = 1))
  expect_error(kpca(K, kernel = "precomputed", features = 2, solver = "matrix_free"),
               "needs the data rows")
})

test_that("the passes give the same numbers for any rows, threads and plan", {
  x <- mf_rows(700)
  program <- fastkpca:::kernel_program(kern("rbfdot", sigma = 0.2))
  V <- with_seed(5, matrix(rnorm(700 * 3), 700, 3))
  all_rows <- fastkpca:::kernel_block_product(x, 0L, 700L, program, list(), V, 1L)
  expect_equal(all_rows, plain_kernel(x, x, "rbfdot", list(sigma = 0.2)) %*% V,
               tolerance = 1e-12)
  # rows split anywhere, any number of threads: the same bits
  parts <- rbind(fastkpca:::kernel_block_product(x, 0L, 13L, program, list(), V, 2L),
                 fastkpca:::kernel_block_product(x, 13L, 500L, program, list(), V, 3L),
                 fastkpca:::kernel_block_product(x, 513L, 187L, program, list(), V, 1L))
  expect_identical(parts, all_rows)
  # all rows at once: each tile of the lower triangle once, used twice
  # (tile_pipeline() in src/matrix_free.c), on any thread count
  for (threads in unique(c(2L, test_threads(3))))
    expect_identical(fastkpca:::kernel_block_product(x, 0L, 700L, program, list(), V,
                                                     threads), all_rows)
  expect_identical(parts[1:13, , drop = FALSE],
                   fastkpca:::kernel_block_product(x, 0L, 13L, program, list(), V, 1L))
  # the expanded form of rbfdot (70 coordinates): k(a, b) and k(b, a) agree
  # to the last bit there too
  x70 <- mf_rows(600, d = 70)
  V70 <- with_seed(7, matrix(rnorm(600 * 2), 600, 2))
  p70 <- fastkpca:::kernel_program(kern("rbfdot", sigma = 0.01))
  whole <- fastkpca:::kernel_block_product(x70, 0L, 600L, p70, list(), V70, 2L)
  expect_identical(rbind(fastkpca:::kernel_block_product(x70, 0L, 300L, p70, list(), V70, 1L),
                         fastkpca:::kernel_block_product(x70, 300L, 300L, p70, list(), V70, 2L)),
                   whole)
  expect_equal(whole, kernel_matrix(kern("rbfdot", sigma = 0.01), x70) %*% V70,
               tolerance = 1e-12)
  # kernel_fast.c's kernels give each thread whole blocks of rows; other
  # kernels share each tile's columns among the threads: the same bits
  for (kk in list(kern("laplacedot", sigma = 0.3), kern("polydot", degree = 2),
                  kern("rbfdot", sigma = 0.2) + kern("vanilladot"))) {
    p <- fastkpca:::kernel_program(kk)
    one <- fastkpca:::kernel_block_product(x, 0L, 700L, p, list(), V, 1L)
    expect_equal(one, kernel_matrix(kk, x) %*% V, tolerance = 1e-12)
    expect_identical(fastkpca:::kernel_block_product(x, 5L, 695L, p, list(), V, 2L),
                     one[6:700, , drop = FALSE])
  }
  # a value that overflows, in one thread's rows, is the error of one thread
  big <- x
  big[650, ] <- 1e120
  p3 <- fastkpca:::kernel_program(kern("polydot", degree = 3))
  for (threads in 1:2)
    expect_error(fastkpca:::kernel_block_product(big, 0L, 700L, p3, list(), V, threads),
                 "kernel values are not finite")
  skip_if_not_installed("future")
  skip_if_emulated("future's workers")
  fit_of <- function() with_seed(6, kpca(x, kpar = list(sigma = 0.2), features = 3,
                                         solver = "matrix_free", threads = 1))
  here <- fit_of()
  on.exit(future::plan(future::sequential))
  future::plan(future::multisession, workers = 2)
  there <- fit_of()
  expect_identical(there$eig, here$eig)
  expect_identical(there$alpha, here$alpha)
  # threads per worker by default: kpca_threads() shared among the workers
  shared <- with_seed(6, kpca(x, kpar = list(sigma = 0.2), features = 3,
                              solver = "matrix_free"))
  expect_identical(shared$threads, max(1L, kpca_threads() %/% 2L))
  future::plan(future::cluster, workers = 2)
  expect_identical(fit_of()$alpha, here$alpha)
  # a kernel that does not share tiles goes to the workers by whole rows
  sum_fit <- function() with_seed(6, kpca(x, kernel = kern("rbfdot", sigma = 0.2) +
                                            kern("vanilladot"), features = 3,
                                          solver = "matrix_free", threads = 1))
  there <- sum_fit()
  future::plan(future::sequential)
  expect_identical(there$alpha, sum_fit()$alpha)
})

test_that("a pass sets every sum itself, whatever its buffers held before", {
  # the tiles' pipeline zeroes its rows of the tree's sums on the threads
  # (no zero fill first): a pass after one that left NaN in the memory it
  # freed (V of NaN) still matches the oracle, on partial tiles and groups
  n <- 2001
  x <- mf_rows(n)
  program <- fastkpca:::kernel_program(kern("rbfdot", sigma = 0.2))
  V <- with_seed(10, matrix(rnorm(n * 3), n, 3))
  oracle <- plain_kernel(x, x, "rbfdot", list(sigma = 0.2)) %*% V
  one <- fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, 1L, tile = 24L)
  expect_equal(one, oracle, tolerance = 1e-12)
  for (threads in unique(c(1L, 2L, test_threads(3)))) {
    spoiled <- fastkpca:::kernel_block_product(x, 0L, n, program, list(), V * NaN, threads,
                                               tile = 24L)
    expect_true(all(is.nan(spoiled)))
    expect_identical(fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, threads,
                                                     tile = 24L), one)
  }
})

test_that("a pass computes half the kernel matrix, and the same bits, for any number of workers", {
  n <- 2000
  x <- mf_rows(n)
  program <- fastkpca:::kernel_program(kern("rbfdot", sigma = 0.2))
  V <- with_seed(9, matrix(rnorm(n * 3), n, 3))
  tile <- 32L
  one <- fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, 1L, tile = tile,
                                         count = TRUE)
  one_count <- attr(one, "kernel_values")
  attr(one, "kernel_values") <- NULL
  expect_equal(one, plain_kernel(x, x, "rbfdot", list(sigma = 0.2)) %*% V, tolerance = 1e-12)
  # the values a pass computes, from the groups and tiles in plain R: each
  # pair of groups whole, each group's square by the tiles of its lower
  # triangle
  starts <- fastkpca:::matrix_free_groups(n)
  sizes <- diff(starts)
  square <- function(m) {
    t <- diff(unique(c(seq(0, m, by = tile), m)))
    sum(outer(t, t)[lower.tri(diag(length(t)), diag = TRUE)])
  }
  expected <- sum(vapply(sizes, square, 0)) +
    sum(outer(sizes, sizes)[lower.tri(diag(length(sizes)))])
  expect_identical(one_count, expected)
  expect_lt(abs(one_count / (n^2 / 2) - 1), 0.05)
  for (workers in c(1L, 2L, 3L, 4L, 8L)) {
    schedule <- fastkpca:::matrix_free_schedule(n, workers)
    expect_length(schedule, workers)
    # every pair of groups once, among all the workers' blocks
    expect_identical(sort(unlist(lapply(schedule, block_pairs, G = length(sizes)))),
                     sort(as.integer(outer(seq_along(sizes) - 1L, seq_along(sizes) - 1L,
                                           function(g, h) g * 100L + h)[
                       lower.tri(diag(length(sizes)), diag = TRUE)])))
    batches <- lapply(schedule, function(pairs) list(pairs = pairs))
    values <- lapply(batches, function(b)
      fastkpca:::kernel_pair_products(x, b$pairs, program, list(), V, 2L, tile = tile))
    counts <- vapply(values, function(v) attr(v, "kernel_values"), 0)
    label <- paste(workers, "workers")
    expect_identical(sum(counts), expected, label = label)
    expect_lt(abs(sum(counts) / (n^2 / 2) - 1), 0.05, label = label)
    # the shares are about even
    expect_lt(max(counts) / mean(counts), 1.1, label = label)
    expect_identical(fastkpca:::matrix_free_fold(n, 3L, batches, values), one, label = label)
  }
  # the tile's size and the threads (which run the row blocks of a pair
  # one tile apart) do not change the numbers
  expect_identical(fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, 2L), one)
  for (threads in unique(c(2L, test_threads(3))))
    expect_identical(fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, threads,
                                                     tile = 16L), one)
  # a kernel that does not share tiles has no pairs; bad pairs are named
  p_sum <- fastkpca:::kernel_program(kern("rbfdot", sigma = 0.2) + kern("vanilladot"))
  expect_false(fastkpca:::kernel_shares_tiles(p_sum, x))
  expect_true(fastkpca:::kernel_shares_tiles(program, x))
  # on sparse rows (C reads the kind from the data), every single base
  # kernel but besseldot shares tiles
  xs <- fastkpca:::as_sparse_rows(Matrix::Matrix(x, sparse = TRUE))
  expect_true(fastkpca:::kernel_shares_tiles(fastkpca:::kernel_program(kern("anovadot")), xs))
  expect_false(fastkpca:::kernel_shares_tiles(fastkpca:::kernel_program(kern("anovadot")), x))
  expect_false(fastkpca:::kernel_shares_tiles(fastkpca:::kernel_program(kern("besseldot")),
                                              xs))
  expect_false(fastkpca:::kernel_shares_tiles(p_sum, xs))
  expect_error(fastkpca:::kernel_pair_products(x, matrix(0L, 2, 1), p_sum, list(), V, 1L),
               "does not share tiles")
  expect_error(fastkpca:::kernel_pair_products(x, matrix(c(0L, 0L, 1L), 3, 1), program, list(),
                                               V, 1L),
               "'blocks' must hold levels 0 to 3 and nodes j <= i")
  expect_error(fastkpca:::kernel_pair_products(x, matrix(c(1L, 4L, 0L), 3, 1), program, list(),
                                               V, 1L),
               "node 4 of level 1 holds no group")
  # blocks that miss a pair, or hold one twice, are refused by the fold
  blocks <- fastkpca:::matrix_free_schedule(n, 3L)
  batches <- lapply(blocks, function(pairs) list(pairs = pairs))
  values <- lapply(batches, function(b)
    fastkpca:::kernel_pair_products(x, b$pairs, program, list(), V, 1L, tile = tile))
  expect_error(fastkpca:::matrix_free_fold(n, 3L, batches[-1L], values[-1L]),
               "every pair of groups once")
  expect_error(fastkpca:::matrix_free_fold(n, 3L, c(batches, batches[1L]), c(values, values[1L])),
               "every pair of groups once")
  expect_error(fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, 1L, tile = 30L),
               "'tile' must be a multiple of 8")
})

test_that("a centered pass is centered_product()'s bits, on every path and thread count", {
  n <- 1003   # not a multiple of 8 or 4: partial tiles, groups and vectors
  x <- mf_rows(n)
  V <- with_seed(12, matrix(rnorm(n * 5, mean = 2), n, 5))
  H <- diag(n) - 1 / n
  K_rbf <- plain_kernel(x, x, "rbfdot", list(sigma = 0.2))
  cases <- list(list(kernel = kern("rbfdot", sigma = 0.2), K = K_rbf),       # tree of pairs
                list(kernel = kern("rbfdot", sigma = 0.2) + kern("vanilladot"),  # whole rows
                     K = K_rbf + plain_kernel(x, x, "vanilladot")))
  for (case in cases) {
    program <- fastkpca:::kernel_program(case$kernel)
    label <- if (fastkpca:::kernel_shares_tiles(program, x)) "shared tiles" else "whole rows"
    product <- function(V) fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, 1L)
    assembled <- fastkpca:::centered_product(product, V, 1L)
    # against plain R's H K H V / n
    expect_equal(assembled, H %*% (case$K %*% (H %*% V)) / n, tolerance = 1e-12, label = label)
    for (threads in unique(c(1L, 2L, test_threads(3))))
      for (tile in c(16L, 256L))
        expect_identical(fastkpca:::kernel_block_product(x, 0L, n, program, list(), V, threads,
                                                         tile = tile, center = TRUE),
                         assembled, label = paste(label, threads, tile))
  }
  # the fit's operator centers in the pass, with the same bits
  op <- fastkpca:::kernel_operator(x, kern("rbfdot", sigma = 0.2), threads = 2L)
  expect_identical(op$apply(V), fastkpca:::centered_product(op$product, V, 2L))
  expect_error(fastkpca:::kernel_block_product(x, 3L, n - 3L, program, list(), V, 1L,
                                               center = TRUE),
               "'center' needs all 1003 rows, not 1000")
})

test_that("a chunk whose worker dies is run again on another, and the fit is the same", {
  skip_if_not_installed("future")
  skip_if_emulated("future's workers")
  skip_on_os("windows")
  parts <- lapply(1:4, function(i) mf_rows(60, seed = i))
  marker <- tempfile()
  reader <- function(i) {
    if (i == 3L && !file.exists(marker)) {
      file.create(marker)
      tools::pskill(Sys.getpid(), tools::SIGKILL)   # this worker dies, once
    }
    parts[[i]]
  }
  landmarks <- parts[[1]][1:20, ]
  ref <- kpca(row_chunks(parts), kpar = list(sigma = 0.2), features = 2,
              landmarks = landmarks)
  on.exit(future::plan(future::sequential))
  future::plan(future::multisession, workers = 2)
  fit <- kpca(row_chunks(reader, chunks = 4), kpar = list(sigma = 0.2), features = 2,
              landmarks = landmarks)
  expect_true(file.exists(marker))
  expect_equal(fit$eig, ref$eig, tolerance = 1e-12)
  # a chunk that kills every worker it reaches: the error names it, after
  # the retries, and no fit is returned
  always <- function(i) {
    if (i == 2L) tools::pskill(Sys.getpid(), tools::SIGKILL)
    parts[[i]]
  }
  expect_error(kpca(row_chunks(always, chunks = 4), kpar = list(sigma = 0.2), features = 2,
                    landmarks = landmarks),
               "chunk.* was lost 3 times")
})

test_that("progress reports the passes and the largest residual", {
  skip_if_not_installed("progressr")
  x <- mf_rows(300)
  old <- options(progressr.enable = TRUE)
  on.exit(options(old))
  messages <- character()
  fit <- withCallingHandlers(
    with_seed(7, kpca(x, kpar = list(sigma = 0.2), features = 3, solver = "matrix_free")),
    progression = function(p) {
      if (identical(p$type, "update") && p$amount > 0)
        messages <<- c(messages, conditionMessage(p))
    })
  expect_length(messages, fit$passes)
  expect_match(messages[1], "^pass 1, largest residual [0-9.e+-]+$")
  expect_match(messages[fit$passes], sprintf("^pass %d, ", fit$passes))
})

test_that("degenerate data end as with the exact solver, in a pass or none, under auto too", {
  # each case under solver = "matrix_free" and under auto with a memory
  # budget that sends it there; the exact solver's condition is the oracle
  outcome <- function(expr) {
    warnings <- list()
    value <- withCallingHandlers(tryCatch(expr, error = identity), warning = function(w) {
      warnings[[length(warnings) + 1L]] <<- w
      invokeRestart("muffleWarning")
    })
    list(value = value, warnings = warnings)
  }
  same_end <- function(x, kpar, features, label, n_passes = NULL) {
    ex <- outcome(kpca(x, kpar = kpar, features = features, solver = "exact"))
    old <- options(fastkpca.memory_limit = 8 * nrow(x)^2 / 4)
    on.exit(options(old))
    for (solver in c("matrix_free", "auto")) {
      mf <- outcome(with_seed(1, kpca(x, kpar = kpar, features = features, solver = solver)))
      what <- paste(label, solver)
      if (inherits(ex$value, "error")) {
        expect_s3_class(mf$value, class(ex$value)[1L])
        expect_s3_class(mf$value, "fastkpca_error")
        expect_true(startsWith(conditionMessage(mf$value), conditionMessage(ex$value)),
                    label = what)
      } else {
        expect_s3_class(mf$value, "fastkpca_exact")
        expect_identical(mf$value$solver, "matrix_free")
        expect_lt(rel_diff(mf$value$eig, ex$value$eig), 1e-10, label = what)
        if (!is.null(n_passes)) expect_lte(mf$value$passes, n_passes, label = what)
      }
      expect_identical(lapply(mf$warnings, class), lapply(ex$warnings, class), label = what)
      expect_identical(vapply(mf$warnings, conditionMessage, ""),
                       vapply(ex$warnings, conditionMessage, ""), label = what)
    }
  }
  n <- 600
  # constant rows, and one distinct row repeated: K is constant, Kc zero
  same_end(matrix(0, n, 2), list(sigma = 0.1), 2, "constant rows")
  one <- with_seed(1, matrix(rnorm(3), 1, 3))[rep(1L, n), ]
  same_end(one, list(sigma = 0.1), 2, "one distinct row")
  # distinct rows, but a kernel that is 1 everywhere: zero from the first pass
  spread <- with_seed(2, matrix(rnorm(n * 2), n, 2))
  same_end(spread, list(sigma = 1e-300), 2, "a kernel of ones")
  # a handful of distinct rows repeated: Kc has rank 4, fewer or more asked
  few <- with_seed(3, matrix(rnorm(5 * 2), 5, 2))[rep(1:5, n / 5), ]
  same_end(few, list(sigma = 0.5), 3, "five distinct rows, 3 components")
  same_end(few, list(sigma = 0.5), 8, "five distinct rows, 8 components")
  # a kernel that underflows to the identity: every eigenvalue alike (the
  # exact solver's flat-kernel warning), and no vector to pin down
  same_end(spread * 100, list(sigma = 1e6), 2, "identity", n_passes = 2L)
  # with many rows, the cases without components end before any pass or at
  # the first (a pass at n = 6000 is 1.8e7 kernel values)
  old <- options(fastkpca.memory_limit = 1e6)
  on.exit(options(old))
  expect_error(kpca(matrix(0, 6000, 2), features = 2), "no positive eigenvalue.*every row",
               class = "fastkpca_error_data")
  expect_error(kpca(with_seed(4, matrix(rnorm(12000), 6000, 2)), kpar = list(sigma = 1e-300),
                    features = 2),
               "no positive eigenvalue.*from the first pass", class = "fastkpca_error_data")
})

test_that("a start of lower rank than the block is filled up, and the fit is certified", {
  # a Nystrom start on 5 distinct rows has rank 4; the block is 8
  x <- with_seed(3, matrix(rnorm(5 * 2), 5, 2))[rep(1:5, 60), ]
  x <- x + with_seed(4, matrix(rnorm(600), 300, 2)) * 1e-3
  start <- with_seed(5, fastkpca:::matrix_free_start(
    fastkpca:::kernel_operator(x, kern("rbfdot", sigma = 0.5), 1L),
    list(block = 8L, landmarks = 100L)))
  expect_identical(dim(start), c(300L, 8L))
  expect_lt(max(abs(crossprod(start) - diag(8))), 1e-12)
  expect_lt(max(abs(colSums(start))), 1e-12)
  fit <- with_seed(5, kpca(x, kpar = list(sigma = 0.5), features = 6, solver = "matrix_free",
                           control = list(block = 8L, landmarks = 100L)))
  ex <- kpca(x, kpar = list(sigma = 0.5), features = 6, solver = "exact")
  expect_lt(rel_diff(fit$eig, ex$eig), 1e-10)
  expect_true(all(fit$eig_residuals <= 1e-8))
})

test_that("the dense steps between passes match their plain-R formulas (src/krylov.c)", {
  n <- 700
  Q <- qr.Q(qr(with_seed(3, matrix(rnorm(n * 6), n, 6))))
  basis <- list(Q = cbind(Q, matrix(9, n, 3)), used = 6L)   # columns past `used` ignored
  W <- with_seed(4, matrix(rnorm(n * 5), n, 5))
  # a column already in the basis, one repeating another, one barely new
  W[, 2] <- Q %*% (1:6)
  W[, 4] <- 3 * W[, 1]
  W[, 5] <- W[, 3] + 1e-6 * W[, 5]
  for (threads in 1:2) {
    out <- fastkpca:::orthonormal_columns(W, basis, threads)
    # by construction, what of W is new beyond the basis is spanned by its
    # columns 1, 3 and 5 (2 lies in the basis, 4 repeats 1)
    P <- W - Q %*% crossprod(Q, W)
    expect_identical(ncol(out), 3L)
    expect_identical(qr(P[, c(1, 3, 5)], tol = 1e-8)$rank, 3L)
    expect_equal(crossprod(out), diag(ncol(out)), tolerance = 1e-14)
    expect_lt(max(abs(crossprod(Q, out))), 1e-14)
    # the same space as the new part of W
    expect_lt(max(abs(P - out %*% crossprod(out, P))), 1e-12 * max(abs(P)))
    # without a basis: the columns of W made orthonormal, the repeated one dropped
    alone <- fastkpca:::orthonormal_columns(W[, c(1, 3, 4)], NULL, threads)
    expect_identical(ncol(alone), 2L)
    expect_equal(crossprod(alone), diag(2), tolerance = 1e-14)
  }
  # a block of nothing new gives no column
  expect_identical(ncol(fastkpca:::orthonormal_columns(Q[, 1:2] %*% diag(2), basis)), 0L)
  A <- crossprod(with_seed(5, matrix(rnorm(n * n / 10), n / 10, n))) / n
  AQ <- A %*% basis$Q
  Y <- qr.Q(qr(with_seed(6, matrix(rnorm(36), 6, 6))))[, 1:4]
  values <- c(3, 2, 1, 0.5)
  rr <- fastkpca:::rayleigh_ritz_vectors(basis$Q, AQ, 6L, Y, values, 2L)
  expect_equal(rr$X, Q %*% Y, tolerance = 1e-14)
  expect_equal(rr$AX, AQ[, 1:6] %*% Y, tolerance = 1e-14)
  expect_equal(rr$R, AQ[, 1:6] %*% Y - sweep(Q %*% Y, 2L, values, "*"), tolerance = 1e-14)
  expect_equal(rr$norms, sqrt(colSums(rr$R^2)), tolerance = 1e-14)
  expect_equal(fastkpca:::basis_cross_product(basis$Q, AQ, 6L, 4L, 1L),
               crossprod(Q, AQ[, 1:4]), tolerance = 1e-14)
  expect_identical(dim(fastkpca:::basis_cross_product(basis$Q, AQ, 0L, 4L, 1L)), c(0L, 4L))
})

test_that("a new basis holds its first columns and zeros, made on the threads, grown in place", {
  # tile_thread_work = 0: the columns are made on the threads even here
  local_tuning(tile_thread_work = 0)
  n <- 1003
  X <- with_seed(9, matrix(rnorm(n * 3), n, 3))
  for (threads in unique(c(1L, 2L, test_threads(3)))) {
    basis <- fastkpca:::krylov_basis(X, 2 * X, 8L, threads)
    expect_identical(basis$Q, cbind(X, matrix(0, n, 5)))
    expect_identical(basis$AQ, cbind(2 * X, matrix(0, n, 5)))
    expect_identical(basis$used, 3L)
  }
  one <- new.env()
  expect_identical(fastkpca:::basis_matrix(one, "Q", X, 3L, 2L)$Q, X)
  expect_error(fastkpca:::basis_matrix(one, "Q", X, 2L, 1L), "'ncv'",
               class = "fastkpca_error_argument")
  expect_error(fastkpca:::basis_matrix(one, "Q", X, n + 1L, 1L), "'ncv'",
               class = "fastkpca_error_argument")
  # the basis grows in its own matrices: R holds one reference to each
  # (krylov_basis() assigns them within engine_call()), so nothing copies
  # them (a new basis: the expectations above hold references of their own)
  skip_if_not(capabilities("profmem"))
  fresh <- fastkpca:::krylov_basis(X, 2 * X, 8L, 2L)
  copies <- utils::capture.output({
    tracemem(fresh$Q)
    tracemem(fresh$AQ)
    fastkpca:::krylov_add(fresh, X[, 1:2], X[, 1:2], 1L)
    untracemem(fresh$Q)
    untracemem(fresh$AQ)
  })
  expect_false(any(grepl("tracemem\\[", copies)))
})

test_that("the serial steps' C loops and products match plain R, on any thread count", {
  # tile_thread_work = 0: every loop, product and Gram-Schmidt block of
  # src/krylov.c goes to its threads even at these sizes (by default they
  # do only past about 10^6 numbers of work)
  local_tuning(tile_thread_work = 0)
  n <- 1003   # not a multiple of 4: the last thread's rows end in a partial vector
  V <- with_seed(8, matrix(rnorm(n * 7, mean = 3), n, 7))
  plain <- V - rep(colMeans(V), each = n)
  one <- fastkpca:::center_columns(V)
  # R's colMeans() and subtraction (the means summed in long double as
  # there, in four interleaved sums), divided by the scale
  expect_equal(one, plain, tolerance = 1e-15)
  expect_lt(max(abs(colMeans(one))), 1e-15)
  for (threads in unique(c(1L, 2L, test_threads(3)))) {
    expect_identical(fastkpca:::center_columns(V, threads = threads), one)
    expect_identical(fastkpca:::center_columns(V, n, threads), one / n)
  }
  expect_equal(fastkpca:::centered_product(function(V) 2 * V, V, 2L),
               (2 * plain - rep(colMeans(2 * plain), each = n)) / n, tolerance = 1e-15)
  Q <- qr.Q(qr(with_seed(9, matrix(rnorm(n * 40), n, 40))))
  W <- with_seed(10, matrix(rnorm(n * 23), n, 23))
  W[, 7] <- W[, 2] - 2 * W[, 5]    # dropped: what is new of it repeats 2 and 5
  W[, 11] <- Q %*% (1:40)          # dropped: in the basis
  basis <- list(Q = Q, used = 40L)
  one <- fastkpca:::orthonormal_columns(W, basis, 1L)
  expect_identical(ncol(one), 21L)
  expect_equal(crossprod(cbind(Q, one)), diag(61), tolerance = 1e-14)
  P <- W - Q %*% crossprod(Q, W)
  expect_lt(max(abs(P - one %*% crossprod(one, P))), 1e-12 * max(abs(P)))
  picked <- c(3L, 1L, 20L, 9L)
  alone <- fastkpca:::orthonormal_columns(W, NULL, 1L)
  for (threads in unique(c(2L, test_threads(3), test_threads(5)))) {
    # the threads split the Gram-Schmidt block by rows and by groups of
    # columns: one thread's bits
    expect_identical(fastkpca:::orthonormal_columns(W, basis, threads), one)
    expect_identical(fastkpca:::orthonormal_columns(W, NULL, threads), alone)
    # columns picked and centered in C: the same as picked and centered in R
    expect_identical(fastkpca:::orthonormal_columns(W, basis, threads, columns = picked,
                                                    center = TRUE),
                     fastkpca:::orthonormal_columns(fastkpca:::center_columns(W[, picked]),
                                                    basis, 1L))
  }
  expect_error(fastkpca:::orthonormal_columns(W, NULL, 1L, columns = 24L), "'columns'")
  # the Nystrom start's products and leading pairs
  A <- with_seed(11, matrix(rnorm(300 * 40), 300, 40))
  B <- with_seed(12, matrix(rnorm(300 * 9), 300, 9))
  for (threads in 1:2) {
    expect_equal(fastkpca:::dense_product(A, B, TRUE, threads), crossprod(A, B),
                 tolerance = 1e-14)
    expect_equal(fastkpca:::dense_product(t(A), B, FALSE, threads), t(A) %*% B,
                 tolerance = 1e-14)
  }
  expect_identical(fastkpca:::dense_product(A, B, TRUE, 2L),
                   fastkpca:::dense_product(A, B, TRUE, 1L))
  S <- crossprod(A)
  top <- fastkpca:::top_eigen_pairs(S, 5L)
  e <- eigen(S, symmetric = TRUE)
  expect_equal(top$values, e$values[1:5], tolerance = 1e-13)
  expect_equal(abs(crossprod(top$vectors, e$vectors[, 1:5])), diag(5), tolerance = 1e-10)
})

test_that("a fit has the same bits on any thread count, and the exact solver's pairs", {
  local_tuning(tile_thread_work = 0)
  x <- mf_rows(1500, d = 5)
  fit_on <- function(threads) with_seed(4, kpca(x, kpar = list(sigma = 0.3), features = 6,
                                               solver = "matrix_free", threads = threads))
  one <- fit_on(1L)
  for (threads in unique(c(2L, test_threads(3)))) {
    other <- fit_on(threads)
    expect_identical(other$eig, one$eig)
    expect_identical(other$alpha, one$alpha)
    expect_identical(other$passes, one$passes)
  }
  ex <- kpca(x, kpar = list(sigma = 0.3), features = 6, solver = "exact")
  expect_lt(max(abs(one$eig - ex$eig)) / ex$eig[[1]], 1e-10)
  expect_lt(max(abs(abs(unclass(one$alpha)) - abs(unclass(ex$alpha))) /
                rep(sqrt(colSums(ex$alpha^2)), each = nrow(x))), 1e-8)
})

test_that("every share of the blocks folds to one process's bits, whatever the tree", {
  # 5, 6 and 7 groups (n of 40, 48, 56: groups of 8 rows) make trees whose
  # right side holds fewer groups than its level: nodes with one child
  program <- fastkpca:::kernel_program(kern("rbfdot", sigma = 0.3))
  for (n in c(40L, 48L, 56L, 64L)) {
    x <- mf_rows(n, d = 3, seed = n)
    V <- with_seed(n, matrix(rnorm(n * 2), n, 2))
    one <- expect_blocks_fold(x, program, V, c(1L, 2L, 3L, 5L, 8L, 40L), paste("n =", n))
    expect_equal(one, plain_kernel(x, x, "rbfdot", list(sigma = 0.3)) %*% V,
                 tolerance = 1e-13)
    # part of the rows adds each row's group sums in the same tree
    expect_identical(fastkpca:::kernel_block_product(x, 3L, n - 10L, program, list(), V, 2L),
                     one[4:(n - 7), , drop = FALSE])
  }
})

test_that("past 32768 rows the groups grow, and the fold still gives one process's bits", {
  # 32769 rows: 9 groups of 3648 (the first n with more than 8), a tree of
  # 16 leaves holding 9; one pass is 5.4e8 kernel values, so few of them.
  # Under qemu (scripts/arm64.sh) a pass takes minutes: the arithmetic is
  # the native runs' (the small trees above run there)
  skip_if_emulated("one pass at n = 32769")
  n <- 32769L
  expect_length(fastkpca:::matrix_free_groups(n), 10L)
  x <- mf_rows(n, d = 2)
  V <- with_seed(3, matrix(rnorm(n), n, 1))
  program <- fastkpca:::kernel_program(kern("rbfdot", sigma = 0.5))
  one <- expect_blocks_fold(x, program, V, 3L, "n = 32769")
  rows <- c(1:5, 20000:20004, n)
  expect_equal(one[rows, ], drop(plain_kernel(x[rows, ], x, "rbfdot", list(sigma = 0.5)) %*% V),
               tolerance = 1e-12)
})

test_that("the row groups are right up to the largest number of rows", {
  # the plain-R oracle of mf_groups(): about n / 4096 groups, 8 to 64, of
  # equal width, a multiple of 8, the last one smaller
  groups <- function(n) {
    target <- min(64, max(8, ceiling(n / 4096)))
    width <- ceiling(ceiling(n / target) / 8) * 8
    c(seq(0, n - 1, by = width), n)
  }
  for (n in c(1, 7, 8, 9, 63, 64, 65, 1000, 30000, 32768, 32769, 50000, 262144, 262145,
              1e6, 2^31 - 1)) {
    expect_identical(as.double(fastkpca:::matrix_free_groups(n)), groups(n), label = n)
  }
})
