# Fuzzing: random shapes, kernels, parameters, scales and missing-value
# patterns. Every call either returns finite results with the invariants of
# kernel PCA (math.md), or fails with one of the package's clear errors.
# Warnings are allowed only from the documented list.

# Errors a random (but well-typed) input may legitimately end in.
fuzz_expected_errors <- paste(c(
  "no eigenvalue of the centered kernel matrix exceeds 'th'",
  "the centered kernel matrix has no positive eigenvalue",
  "'x' must have at least 2 rows",
  "kernel values .*are not finite",
  "the centered kernel matrix is not finite",
  "the centered kernel matrix is too small to be decomposed accurately",
  "the centered kernel matrix is at rounding level",
  "missing values",
  "'x' must not contain infinite values",
  "'x' must not contain missing or infinite values",
  "'features' must be a whole number between 0 and nrow\\(x\\)",
  "needs 'features' > 0"
), collapse = "|")

# Warnings the package documents.
fuzz_allowed_warnings <- paste(c(
  "only [0-9]+ of the [0-9]+ requested components have positive eigenvalues",
  "the iterative solver did not converge",
  # random kernel parameters: some make the centered kernel matrix flat
  "the centered kernel matrix is nearly (diagonal|constant)"
), collapse = "|")

# Random kernel parameters, valid for the kernel, sometimes extreme.
fuzz_kpar <- function(kernel) {
  sigma <- 10^stats::runif(1, -3, 1.5)
  degree <- if (stats::runif(1) < 0.1) sample(c(50, 200, 400), 1) else sample(1:5, 1)
  switch(kernel,
    vanilladot = list(),
    polydot = list(degree = degree, scale = sample(c(-1, 1), 1) * 10^stats::runif(1, -2, 0.5),
                   offset = stats::runif(1, -2, 2)),
    rbfdot = list(sigma = sigma),
    laplacedot = list(sigma = sigma),
    tanhdot = list(scale = sample(c(-1, 1), 1) * 10^stats::runif(1, -2, 0.5),
                   offset = stats::runif(1, -2, 2)),
    besseldot = list(sigma = sigma, order = if (stats::runif(1) < 0.2) sample(0:50, 1)
                                           else round(stats::runif(1, 0, 4), 1),
                     degree = sample(1:3, 1)),
    anovadot = list(sigma = sigma, degree = degree),
    splinedot = list())
}

# Random data: shape, scale, offset, ties, constant columns, missing values.
fuzz_data <- function() {
  n <- sample(c(2:6, 9, 17, 30, 45), 1)
  d <- sample(1:5, 1)
  scale <- if (stats::runif(1) < 0.08) 10^sample(c(-160, -20, 20, 160), 1)
           else if (stats::runif(1) < 0.05) 10^sample(c(-100, 100), 1)
           else 10^stats::runif(1, -2, 1)
  offset <- if (stats::runif(1) < 0.15) 10^stats::runif(1, 2, 7) else 0
  x <- matrix(stats::rnorm(n * d) * scale + offset, n, d)
  u <- stats::runif(1)
  if (u < 0.10) x <- x[sample(n, n, replace = TRUE), , drop = FALSE]    # ties
  else if (u < 0.15) x[] <- 3                                          # constant
  else if (u < 0.22) x[, 1] <- 1                                       # a constant column
  else if (u < 0.30) x <- round(x)                                     # a coarse grid
  if (stats::runif(1) < 0.2) x[sample(length(x), min(length(x), sample(1:3, 1)))] <- NA
  if (stats::runif(1) < 0.04) x[sample(length(x), 1)] <- Inf
  x
}

# max |a| over the columns, for relative tolerances
fuzz_colmax <- function(a) apply(abs(a), 2L, max)

# Check the invariants of a fit: finite, colMeans(rotated) = 0,
# crossprod(rotated) = diag(m^2 eig), predict(x) = rotated. Tolerances are
# relative, and widen for components whose eigenvalue is small next to the
# size of the kernel values (their directions are known less well).
fuzz_check_fit <- function(fit, newdata, info) {
  eig <- unname(fit$eig); R <- unname(fit$rotated); A <- unname(fit$alpha)
  m <- nrow(R); k <- length(eig)
  expect_true(k >= 1L && all(is.finite(eig)) && all(eig > 0), info = info)
  expect_true(all(is.finite(A)) && all(is.finite(R)), info = info)
  if (!(k >= 1L && all(is.finite(R)) && all(is.finite(A)))) return(invisible())
  eps <- .Machine$double.eps
  kscale <- max(abs(fit$kernel_colmeans), abs(fit$kernel_mean), eig[1L])
  tol <- 1e-7 + 1e3 * eps * sqrt(m) * kscale / eig          # one per component
  rms <- sqrt(colMeans(R^2))
  # colMeans(rotated) = 0 says each direction is orthogonal to 1, the null
  # vector of Kc. For eigenvalues below about 1e-6 of the kernel's size, 0
  # sits inside their cluster and the individual directions are mixed with 1
  # by rounding alone (they still span the right space): not checked there.
  clear <- eig >= 1e-6 * kscale
  expect_true(all((abs(colMeans(R)) <= tol * rms)[clear]),
              info = paste(info, "colMeans(rotated)"))
  C <- crossprod(R)
  expect_true(all(abs(C - diag(m^2 * eig, k)) <= 1e-8 * m^2 * eig[1L]),
              info = paste(info, "crossprod(rotated)"))
  expect_true(all(abs(eig * colSums(A^2) - 1) <= 1e-8), info = paste(info, "eig * |alpha|^2"))
  P <- unname(suppressWarnings(predict(fit, newdata)))
  expect_true(all(is.finite(P)), info = paste(info, "predict finite"))
  # predict() never forms the centered cross-kernel: its centering terms
  # cancel only to the rounding of the kernel's size, amplified by any mixing
  # with 1 above (the same components are left out)
  if (all(is.finite(P)))
    expect_true(all(sweep(abs(P - R), 2L, tol * fuzz_colmax(R) * 10, "<=")[, clear]),
                info = paste(info, "predict(x) = rotated"))
}

# One random case from its seed: the arguments of kpca(), the data to
# predict on and a label.
fuzz_case <- function(seed) {
  set.seed(seed)
  kernels <- c("vanilladot", "polydot", "rbfdot", "laplacedot", "tanhdot",
               "besseldot", "anovadot", "splinedot", "precomputed")
  x <- fuzz_data()
  kernel <- sample(kernels, 1)
  features <- if (stats::runif(1) < 0.3) 0 else sample(0:nrow(x), 1)
  args <- list(features = features, th = 10^stats::runif(1, -8, -1),
               solver = sample(c("auto", "exact", "iterative"), 1, prob = c(2, 2, 1)),
               threads = sample(1:2, 1),
               na.action = if (stats::runif(1) < 0.2) stats::na.fail else stats::na.omit)
  if (kernel == "precomputed") {
    xx <- stats::na.omit(x)
    inner <- sample(c("rbfdot", "tanhdot", "vanilladot"), 1)
    K <- suppressWarnings(switch(inner,
      rbfdot = exp(-as.matrix(stats::dist(xx))^2 / max(1, ncol(xx))),
      tanhdot = tanh(0.1 * tcrossprod(xx) + 0.5),
      vanilladot = tcrossprod(xx)))
    K <- matrix(as.double(K), nrow(K), ncol(K))
    # symmetric within the tolerance, as floating-point results often are
    if (length(K) && stats::runif(1) < 0.5)
      K <- K + matrix(stats::rnorm(length(K)), nrow(K)) * 1e-10 * max(abs(K))
    args$na.action <- NULL
    args <- c(list(K, kernel = "precomputed"), args)
    kernel <- paste0("precomputed ", inner)
  } else {
    args <- c(list(x, kernel = kernel, kpar = fuzz_kpar(kernel)), args)
  }
  info <- sprintf("seed %d: %s n=%d d=%d features=%s solver=%s kpar=%s", seed, kernel,
                  nrow(x), ncol(x), features, args$solver,
                  paste(deparse(args$kpar), collapse = ""))
  list(args = args, info = info)
}

# Run one case: "fit", "error" (expected) or a failed expectation.
fuzz_run <- function(case) {
  warned <- character()
  res <- tryCatch(withCallingHandlers(do.call(kpca, case$args), warning = function(w) {
    warned <<- c(warned, conditionMessage(w))
    invokeRestart("muffleWarning")
  }), error = function(e) e)
  for (w in warned)
    expect_match(w, fuzz_allowed_warnings, info = case$info)
  if (inherits(res, "error")) {
    expect_match(conditionMessage(res), fuzz_expected_errors, info = case$info)
    expect_false(grepl("\\.\\s*$", conditionMessage(res)), info = case$info)
    return("error")
  }
  # a precomputed matrix is symmetrised by the fit: predict on the same
  newdata <- if (identical(res$kernel, "precomputed")) (case$args[[1]] + t(case$args[[1]])) / 2
             else res$xmatrix
  fuzz_check_fit(res, newdata, case$info)
  "fit"
}

test_that("random inputs fit with the invariants of kernel PCA or fail cleanly", {
  skip_if_exact_solver_unsafe()
  cases <- random_cases(110L)
  outcome <- vapply(20240611L + seq_len(cases), function(seed) fuzz_run(fuzz_case(seed)),
                    character(1))
  # the fuzzer exercises both sides (natively 40 fits and 5 errors of 110
  # at least; under a memory checker, 27 cases, the same shares)
  expect_gt(sum(outcome == "fit"), floor(cases * 40 / 110))
  expect_gt(sum(outcome == "error"), floor(cases * 5 / 110))
})

test_that("random garbage of the wrong type is refused by every argument of kpca()", {
  skip_if_exact_solver_unsafe()
  set.seed(99)
  x <- as.matrix(iris[1:20, 1:4])
  junk <- list(NULL, NA, "a", list(), list(1), 1i, -1, 1e300, c(1, 2), function() 1,
               factor("a"), as.raw(1), matrix("a", 2, 2), data.frame(a = "x"), NaN, Inf)
  for (arg in c("kernel", "kpar", "features", "th", "solver", "threads", "na.action")) {
    for (j in seq_along(junk)) {
      call_args <- list(x, features = 2)
      call_args[arg] <- list(junk[[j]])
      res <- tryCatch(suppressWarnings(do.call(kpca, call_args)), error = function(e) e)
      if (inherits(res, "error")) {
        expect_true(nzchar(conditionMessage(res)))
        expect_false(grepl("\\.\\s*$", conditionMessage(res)),
                     info = paste(arg, j, conditionMessage(res)))
      } else {
        # accepted: then it must be a valid fit (e.g. kpar = NULL, th = 1e300
        # with features = 2, na.action = anything when there is no NA)
        expect_s3_class(res, "fastkpca")
        expect_true(all(is.finite(res$rotated)), info = paste(arg, j))
      }
    }
  }
})
