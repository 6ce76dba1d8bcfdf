# Fixtures and oracles for the fastkpca tests.
#
# Conventions: K[i, j] = k(x_i, x_j); Kc = H K H
# with H = I - 11'/m; eig = eigenvalues of Kc / m (decreasing); alpha =
# eigenvectors / sqrt(eig); rotated = Kc %*% alpha. Everything here is plain
# R (or kernlab), written independently of the package's C engine.

# ---------------------------------------------------------------------------
# Data sets. All are small and on a decimal grid (at most 3 decimals), so that
# kernlab's laplacedot/besseldot, which round squared distances to 9 decimals,
# compute the same kernel as the exact formula.

strip_attrs <- function(x) {
  out <- matrix(as.double(x), nrow(x), ncol(x), dimnames = dimnames(x))
  out
}

# A bare double matrix: no dimnames or other attributes.
bare <- function(x) { x <- as.matrix(x); matrix(as.double(x), nrow(x), ncol(x)) }

fx_iris <- function() as.matrix(iris[, 1:4])                     # 150 x 4

fx_arrests <- function() strip_attrs(round(scale(as.matrix(USArrests)), 3)) # 50 x 4

fx_random <- function() {                                          # 40 x 3
  # a fixed stream, leaving the caller's random state as it was
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv())
          else assign(".Random.seed", old, globalenv()))
  set.seed(20240611)
  x <- round(matrix(stats::rnorm(40 * 3), 40, 3), 2)
  colnames(x) <- c("a", "b", "c")
  x
}

fx_cars <- function() {                                            # 32 x 5
  strip_attrs(round(scale(as.matrix(
    mtcars[, c("mpg", "disp", "hp", "wt", "qsec")])), 3))
}

fx_datasets <- function() {
  list(iris = fx_iris(), arrests = fx_arrests(), random = fx_random(),
       cars = fx_cars())
}

# Seed 003's 10 x 2 toy data (the worked example of the project's seed notes).
fx_seed003 <- function() {
  matrix(c(2.5, 0.5, 2.2, 1.9, 3.1, 2.3, 2.0, 1.0, 1.5, 1.1,
           2.4, 0.7, 2.9, 2.2, 3.0, 2.7, 1.6, 1.1, 1.6, 0.9), ncol = 2)
}

# The kernels and the (non-default) parameters the tests use for each.
kernel_cases <- list(
  vanilladot = list(),
  polydot = list(degree = 2, scale = 0.5, offset = 1),
  rbfdot = list(sigma = 0.2),
  laplacedot = list(sigma = 0.3),
  tanhdot = list(scale = 0.01, offset = 0.1),
  besseldot = list(sigma = 0.5, order = 1, degree = 2),
  anovadot = list(sigma = 0.5, degree = 2),
  splinedot = list()
)

# A kernel object of a named kernel with the given parameters.
kern_case <- function(kernel, kpar) do.call(kern, c(list(kernel), kpar))

# Each kernel's own defaults, as kernlab's generators define them.
kernel_default_kpar <- list(
  vanilladot = list(),
  polydot = list(degree = 1, scale = 1, offset = 1),
  rbfdot = list(sigma = 1),
  laplacedot = list(sigma = 1),
  tanhdot = list(scale = 1, offset = 1),
  besseldot = list(sigma = 1, order = 1, degree = 1),
  anovadot = list(sigma = 1, degree = 1),
  splinedot = list()
)

# ---------------------------------------------------------------------------
# Plain-R kernels, straight from the formulas (kernlab's definitions). Distances are summed
# coordinate by coordinate (not via norms), so this shares no shortcut with C.

plain_sqdist <- function(x, y) {
  out <- matrix(0, nrow(x), nrow(y))
  for (j in seq_len(ncol(x))) out <- out + outer(x[, j], y[, j], "-")^2
  out
}

plain_kernel <- function(x, y = x, kernel, kpar = list()) {
  x <- as.matrix(x); y <- as.matrix(y)
  storage.mode(x) <- "double"; storage.mode(y) <- "double"
  p <- utils::modifyList(kernel_default_kpar[[kernel]], as.list(kpar))
  dimnames(x) <- NULL; dimnames(y) <- NULL
  dot <- x %*% t(y)
  switch(kernel,
    vanilladot = dot,
    polydot = (p$scale * dot + p$offset)^p$degree,
    rbfdot = exp(-p$sigma * plain_sqdist(x, y)),
    laplacedot = exp(-p$sigma * sqrt(plain_sqdist(x, y))),
    tanhdot = tanh(p$scale * dot + p$offset),
    besseldot = {
      t <- p$sigma * sqrt(plain_sqdist(x, y))
      L <- 1 / (gamma(p$order + 1) * 2^p$order)
      small <- t < 1e-4
      ts <- ifelse(small, 1, t)
      v <- (besselJ(ts, p$order) * ts^(-p$order) / L)^p$degree
      v[small] <- 1
      v
    },
    anovadot = {
      s <- matrix(0, nrow(x), nrow(y))
      for (j in seq_len(ncol(x)))
        s <- s + exp(-p$sigma * outer(x[, j], y[, j], "-")^2)
      s^p$degree
    },
    splinedot = {
      prodm <- matrix(1, nrow(x), nrow(y))
      for (j in seq_len(ncol(x))) {
        xy <- outer(x[, j], y[, j])
        mn <- outer(x[, j], y[, j], pmin)
        sm <- outer(x[, j], y[, j], "+")
        prodm <- prodm * (1 + xy + xy * mn - sm / 2 * mn^2 + mn^3 / 3)
      }
      prodm
    },
    stop("unknown kernel ", kernel))
}

# Double centering by the projector H = I - 11'/m.
plain_center <- function(K) {
  m <- nrow(K)
  H <- diag(m) - matrix(1 / m, m, m)
  H %*% K %*% H
}

# The whole fit in plain R, from a kernel matrix K.
plain_kpca_K <- function(K, features = 0, th = 1e-4) {
  m <- nrow(K)
  Kc <- plain_center(K)
  e <- eigen(Kc / m, symmetric = TRUE)
  f <- if (features == 0) sum(e$values > th) else features
  V <- e$vectors[, seq_len(f), drop = FALSE]
  lam <- e$values[seq_len(f)]
  alpha <- sweep(V, 2L, sqrt(lam), "/")
  list(eig = lam, alpha = alpha, rotated = Kc %*% alpha, Kc = Kc,
       values = e$values, K = K)
}

plain_kpca <- function(x, kernel, kpar = list(), features = 0, th = 1e-4) {
  plain_kpca_K(plain_kernel(x, x, kernel, kpar), features, th)
}

# Out-of-sample projection in plain R (math.md, seed 004): centre the cross
# kernel with the training column means and grand mean.
plain_predict <- function(K, Kz, alpha) {
  m <- nrow(K); n <- nrow(Kz)
  Kzc <- Kz - matrix(rowMeans(Kz), n, m) -
    matrix(colMeans(K), n, m, byrow = TRUE) + mean(K)
  Kzc %*% alpha
}

# ---------------------------------------------------------------------------
# kernlab as an oracle (kpar always passed explicitly).

kernlab_fit <- function(x, kernel, kpar, features = 0, th = 1e-4) {
  k <- kernlab::kpca(x, kernel = kernel, kpar = kpar, features = features, th = th)
  list(eig = unname(kernlab::eig(k)), alpha = kernlab::pcv(k),
       rotated = kernlab::rotated(k), fit = k)
}

kernlab_kernel <- function(kernel, kpar) do.call(getExportedValue("kernlab", kernel), kpar)

# ---------------------------------------------------------------------------
# Comparing components up to sign.

# Groups of consecutive indices whose eigenvalues are within rtol (relative
# to the larger one) of each other.
eigen_clusters <- function(values, rtol = 1e-8) {
  groups <- list(1L)
  for (i in seq_along(values)[-1L]) {
    close <- abs(values[i] - values[i - 1L]) <= rtol * max(abs(values[i - 1L]), abs(values[i]))
    if (close) groups[[length(groups)]] <- c(groups[[length(groups)]], i)
    else groups[[length(groups) + 1L]] <- i
  }
  groups
}

# Flip the columns of `a` to the signs of `ref` (sign of their inner product).
align_signs <- function(a, ref) {
  s <- sign(colSums(a * ref))
  s[s == 0] <- 1
  sweep(a, 2L, s, "*")
}

# Relative difference of two vectors/matrices in the max norm.
rel_diff <- function(a, b) {
  scale <- max(abs(b))
  if (!is.finite(scale) || scale == 0) return(max(abs(a - b)))
  max(abs(a - b)) / scale
}

# Expect fit (a fastkpca fit, or a list with eig, alpha, rotated) to match
# ref (same fields) to relative tolerance tol: eigenvalues directly; alpha and
# rotated column by column (each column relative to its own size) after
# aligning each column's sign by its inner product with ref; for clusters of
# (near-)equal eigenvalues, the projector onto the cluster instead.
expect_kpca_equal <- function(fit, ref, tol = 1e-8, rotated = TRUE, label = "") {
  eig <- unname(fit$eig); ref_eig <- unname(ref$eig)
  expect_equal(length(eig), length(ref_eig), label = paste(label, "number of components"))
  if (length(eig) != length(ref_eig)) return(invisible(FALSE))
  expect_lt(rel_diff(eig, ref_eig), tol, label = paste(label, "eig: relative difference"))
  A <- unname(as.matrix(fit$alpha)); Ar <- unname(as.matrix(ref$alpha))
  R <- unname(as.matrix(fit$rotated)); Rr <- unname(as.matrix(ref$rotated))
  expect_equal(dim(A), dim(Ar), label = paste(label, "dim(alpha)"))
  expect_equal(dim(R), dim(Rr), label = paste(label, "dim(rotated)"))
  if (!identical(dim(A), dim(Ar)) || !identical(dim(R), dim(Rr))) return(invisible(FALSE))
  err_a <- err_r <- numeric(0)
  for (g in eigen_clusters(ref_eig)) {
    if (length(g) == 1L) {
      s <- sign(sum(A[, g] * Ar[, g]))
      err_a <- c(err_a, rel_diff(s * A[, g], Ar[, g]))
      err_r <- c(err_r, rel_diff(s * R[, g], Rr[, g]))
    } else {
      # alpha diag(eig) alpha' = V V', the projector onto the eigenspace;
      # rotated rotated' = m^2 V diag(eig) V'
      P <- A[, g] %*% (ref_eig[g] * t(A[, g]))
      Pr <- Ar[, g] %*% (ref_eig[g] * t(Ar[, g]))
      err_a <- c(err_a, rel_diff(P, Pr))
      err_r <- c(err_r, rel_diff(tcrossprod(R[, g]), tcrossprod(Rr[, g])))
    }
  }
  expect_lt(max(err_a), tol, label = sprintf("%s alpha: worst column (%d) relative difference",
                                              label, which.max(err_a)))
  if (rotated)
    expect_lt(max(err_r), tol, label = sprintf("%s rotated: worst column (%d) relative difference",
                                                label, which.max(err_r)))
  invisible(TRUE)
}

# Column-wise comparison up to sign for plain matrices (scores).
expect_cols_equal_up_to_sign <- function(a, ref, tol = 1e-8, label = "") {
  a <- unname(as.matrix(a)); ref <- unname(as.matrix(ref))
  expect_equal(dim(a), dim(ref), label = paste(label, "dim"))
  if (!identical(dim(a), dim(ref))) return(invisible(FALSE))
  a <- align_signs(a, ref)
  err <- vapply(seq_len(ncol(a)), function(j) rel_diff(a[, j], ref[, j]), numeric(1))
  expect_lt(max(err), tol, label = paste(label, "worst column relative difference"))
}

# Evaluate expr with R's random number generator seeded, leaving the
# global seed as it was.
with_seed <- function(seed, expr) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv())
          else assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  expr
}
