# MRRR on the threads (src/tridiagonal.c, tridiagonal_mrrr(): one root
# representation, its eigenvalues by bisection in pieces, groups of vectors
# cut where dlarrv separates them at the root). The tuning's
# mrrr_group_min and mrrr_bisection_min force groups and pieces of a few
# on small problems; the largest int gives one group and one piece, which
# is dstemr's own computation. Up to half the eigenvalues wanted, the root
# is made by the package's pieces (dlarre's bisection path); beyond, by
# dlarre itself (dqds). Oracles: the known spectrum of a matrix built from
# it, and plain R's eigen().

# A centered kernel matrix with eigenvalues lam (those of Kc / n) and zeros:
# K = n Q diag(lam) Q', Q orthonormal and orthogonal to the constant vector.
spectrum_kernel <- function(lam, n, seed) {
  set.seed(seed)
  r <- length(lam)
  Q <- qr.Q(qr(scale(matrix(rnorm(n * r), n, r), scale = FALSE)))
  K <- n * Q %*% (lam * t(Q))
  (K + t(K)) / 2
}

# The exact MRRR fit of K with groups of at least group_min vectors and
# pieces of its bisections of as many eigenvalues.
mrrr_fit <- function(K, group_min, threads, ...) {
  with_tuning(list(exact_method = "mrrr", mrrr_group_min = group_min,
                   mrrr_bisection_min = group_min),
              kpca(K, kernel = "precomputed", solver = "exact", threads = threads, ...))
}

unit_vectors <- function(fit) sweep(fit$alpha, 2L, sqrt(fit$eig), "*")

# The fit's pairs against the spectrum lam of K: orthonormal vectors, small
# residuals, the eigenvalues to within rounding of the largest.
expect_pairs_of <- function(fit, K, lam, label) {
  n <- nrow(K)
  k <- length(fit$eig)
  V <- unit_vectors(fit)
  expect_lt(max(abs(crossprod(V) - diag(k))), 1e-12, label = paste(label, "orthonormality"))
  res <- K %*% V - sweep(V, 2L, n * fit$eig, "*")
  expect_lt(max(abs(res)) / n, 1e-12 * max(lam), label = paste(label, "residual"))
  expect_lt(max(abs(fit$eig - sort(lam, decreasing = TRUE)[seq_len(k)])), 1e-13 * max(lam),
            label = paste(label, "eigenvalues"))
}

spectra <- list(
  # well separated: evenly spaced
  separated = seq(1, 0.01, length.out = 300),
  # 30 clusters of 10 eigenvalues within 1e-6 relative, wider than a group
  # of 4: clusters at and across the places a group would end
  clustered = rep(10^seq(0, -3, length.out = 30), each = 10) *
    (1 + 1e-7 * rep(0:9, 30)),
  # exact multiplicities of three
  tied = rep(seq(1, 0.05, length.out = 100), each = 3),
  # graded: from 1 down to 1e-14
  graded = 10^seq(0, -14, length.out = 300),
  # 500 of 600: more than half wanted, dlarre's own root
  separated_most = seq(1, 0.01, length.out = 500),
  clustered_most = rep(10^seq(0, -3, length.out = 50), each = 10) *
    (1 + 1e-7 * rep(0:9, 50)))

# Each spectrum's fits with groups of 4 vectors or more: on 1 and 2 threads,
# and in one group.
check_spectra <- function(names_of) {
  n <- 600
  for (name in names_of) {
    lam <- spectra[[name]]
    K <- spectrum_kernel(lam, n, match(name, names(spectra)))
    # the root by the pieces' bisections, for many vectors and for few;
    # by dlarre where more than half are wanted (spectra_most)
    for (k in if (length(lam) > n / 2) c(400L, 30L) else c(250L, 30L)) {
      label <- paste(name, k, if (2 * k <= n) "bisection root" else "dlarre's root")
      one <- mrrr_fit(K, 4L, 1L, features = k)
      two <- mrrr_fit(K, 4L, 2L, features = k)
      whole <- mrrr_fit(K, .Machine$integer.max, 2L, features = k)
      expect_equal(length(one$eig), k, label = paste(label, "count"))
      expect_pairs_of(one, K, lam, label)
      expect_pairs_of(whole, K, lam, paste(label, "one group"))
      expect_identical(two$alpha, one$alpha, label = paste(label, "threads 2 vs 1"))
      expect_identical(two$eig, one$eig, label = paste(label, "threads 2 vs 1"))
      expect_lt(max(abs(one$eig - whole$eig)), 1e-14, label = paste(label, "vs one group"))
      # vectors of well-separated eigenvalues: those of one group
      if (name %in% c("separated", "graded"))
        expect_lt(max(abs(unit_vectors(one) - unit_vectors(whole))), 1e-10,
                  label = paste(label, "vectors vs one group"))
    }
  }
}

test_that("groups of vectors: separated and clustered spectra", {
  skip_if_exact_solver_unsafe()
  check_spectra(c("separated", "clustered"))
})

test_that("groups of vectors: tied and graded spectra", {
  skip_if_exact_solver_unsafe()
  check_spectra(c("tied", "graded"))
})

test_that("groups of vectors: more than half wanted (dlarre's root)", {
  skip_if_exact_solver_unsafe()
  check_spectra(c("separated_most", "clustered_most"))
})

test_that("a tridiagonal that splits: blocks sorted together, ties across them", {
  skip_if_exact_solver_unsafe()
  # two graph Laplacians side by side: whole numbers, rows summing to zero,
  # so centering changes nothing and the reduction keeps the two blocks
  # apart (T splits exactly); their eigenvalues interleave
  laplacian <- function(m, p, seed) {
    set.seed(seed)
    A <- matrix(rbinom(m * m, 1, p), m)
    A[lower.tri(A, diag = TRUE)] <- 0
    A <- A + t(A)
    diag(rowSums(A)) - A
  }
  n <- 600
  K <- matrix(0, n, n)
  K[1:300, 1:300] <- laplacian(300, 0.1, 1)
  K[301:600, 301:600] <- laplacian(300, 0.1, 2)
  lam <- eigen(K / n, symmetric = TRUE, only.values = TRUE)$values
  for (k in c(250L, 30L, 400L)) {
    # the Laplacians' spectra are flat: the fit warns that the components
    # mean little
    one <- suppressWarnings(mrrr_fit(K, 4L, 1L, features = k))
    two <- suppressWarnings(mrrr_fit(K, 4L, 2L, features = k))
    expect_pairs_of(one, K, lam, paste("two blocks", k))
    expect_identical(two$alpha, one$alpha)
    expect_false(is.unsorted(rev(one$eig)))
  }
})

test_that("groups in the threshold mode match plain R on duplicated points", {
  skip_if_exact_solver_unsafe()
  # every point twice: the kernel's eigenvalues come in exact pairs
  set.seed(11)
  x0 <- matrix(round(rnorm(300 * 3), 2), 300, 3)
  x <- x0[rep(seq_len(300), 2), ]
  kp <- list(sigma = 0.3)
  ref <- plain_kpca(x, "rbfdot", kp, th = 1e-6)
  expect_gt(length(ref$eig), 100L)
  for (threads in 1:2) {
    fit <- with_tuning(list(exact_method = "mrrr", mrrr_group_min = 4L),
                       kpca(x, kpar = kp, th = 1e-6, solver = "exact", threads = threads))
    expect_kpca_equal(fit, ref, label = paste("duplicated points,", threads, "threads"))
    V <- unit_vectors(fit)
    expect_lt(max(abs(crossprod(V) - diag(ncol(V)))), 1e-12)
    # the same vector on each copy of a point
    expect_lt(max(abs(V[1:300, ] - V[301:600, ])), 1e-10 * max(abs(V)))
  }
})

test_that("the group size and the piece size are tuning settings", {
  expect_identical(fastkpca:::tuning_table()$mrrr_group_min$default, 32L)
  expect_identical(fastkpca:::tuning_table()$mrrr_bisection_min$default, 32L)
  expect_error(with_tuning(list(mrrr_bisection_min = 0), kpca(diag(3), kernel = "precomputed")),
               "fastkpca.tuning$mrrr_bisection_min", fixed = TRUE)
  expect_error(with_tuning(list(mrrr_group_min = 0), kpca(diag(3), kernel = "precomputed")),
               "fastkpca.tuning$mrrr_group_min", fixed = TRUE)
})

test_that("one piece and one group give LAPACK's dstemr bits; pieces stay close", {
  skip_if_exact_solver_unsafe()
  # kernel spectra (a Gaussian kernel on Gaussian points, the default fit's
  # shape) and a clustered one; top k by the pieces' root and, for k > n / 2,
  # by dlarre's; the threshold mode (range 'V'). (The clustered K has rank
  # 300, so T splits: where more than half of a block's eigenvalues are
  # wanted, dlarre takes dqds for that block and the pieces bisection, so
  # its k stays under 150 here.)
  set.seed(5)
  x <- matrix(rnorm(700 * 5), 700, 5)
  K <- kernel_matrix(rbfdot(0.2), x)
  Kc <- spectrum_kernel(spectra$clustered, 600, 2)
  fit_with <- function(K, method, size, ...) {
    with_tuning(list(exact_method = method, mrrr_group_min = size, mrrr_bisection_min = size),
                kpca(K, kernel = "precomputed", solver = "exact", threads = 2L, ...))
  }
  for (case in list(list(K = K, k = 20L), list(K = K, k = 150L), list(K = K, k = 500L),
                    list(K = Kc, k = 120L), list(K = K, th = 1e-8))) {
    args <- if (is.null(case$k)) list(th = case$th) else list(features = case$k)
    label <- paste(nrow(case$K), if (is.null(case$k)) "threshold" else case$k)
    lapack <- do.call(fit_with, c(list(case$K, "dstemr", 32L), args))
    whole <- do.call(fit_with, c(list(case$K, "mrrr", .Machine$integer.max), args))
    pieces <- suppressWarnings(do.call(fit_with, c(list(case$K, "mrrr", 4L), args)))
    expect_identical(whole$eig, lapack$eig, label = paste(label, "eigenvalues"))
    expect_identical(whole$alpha, lapack$alpha, label = paste(label, "vectors"))
    expect_equal(length(pieces$eig), length(lapack$eig))
    expect_lt(max(abs(pieces$eig - lapack$eig)), 1e-14 * max(lapack$eig), label = label)
    V <- unit_vectors(pieces)
    expect_lt(max(abs(crossprod(V) - diag(ncol(V)))), 1e-12, label = paste(label, "orthonormality"))
  }
})
