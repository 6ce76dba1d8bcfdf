# Plain-R oracles for kernel ICA (Bach and Jordan 2002), with full n x n
# Gram matrices: no incomplete Cholesky, no reduction.

# Centred Gaussian Gram matrix of one source, width sigma.
oracle_centred_gram <- function(y, sigma) {
  n <- length(y)
  K <- exp(-outer(y, y, "-")^2 / (2 * sigma^2))
  H <- diag(n) - 1 / n
  H %*% K %*% H
}

# The contrast from the regularised generalized eigenproblem
# K_kappa alpha = lambda D_kappa alpha: D_kappa block-diagonal with blocks
# (K_i + n kappa / 2 I)^2, K_kappa equal to D_kappa on the diagonal and
# K_i K_j off it. KCCA = -1/2 log of its smallest eigenvalue, KGV = -1/2 log
# det(K_kappa) / det(D_kappa).
oracle_kica_contrast <- function(S, sigma, kappa, contrast = c("kgv", "kcca")) {
  contrast <- match.arg(contrast)
  n <- nrow(S)
  m <- ncol(S)
  Ks <- lapply(seq_len(m), function(i) oracle_centred_gram(S[, i], sigma))
  idx <- function(i) (i - 1) * n + seq_len(n)
  Kk <- matrix(0, n * m, n * m)
  Dk <- matrix(0, n * m, n * m)
  for (i in seq_len(m)) for (j in seq_len(m)) {
    if (i == j) {
      reg <- Ks[[i]] + diag(n * kappa / 2, n)
      Kk[idx(i), idx(i)] <- Dk[idx(i), idx(i)] <- reg %*% reg
    } else {
      Kk[idx(i), idx(j)] <- Ks[[i]] %*% Ks[[j]]
    }
  }
  # D^-1/2 K D^-1/2 through the Cholesky factor of D
  L <- t(chol(Dk))
  M <- forwardsolve(L, t(forwardsolve(L, Kk)))
  ev <- eigen((M + t(M)) / 2, symmetric = TRUE, only.values = TRUE)$values
  if (contrast == "kcca") -0.5 * log(min(ev)) else -0.5 * sum(log(ev))
}

# A mixing matrix with condition number at most 2.
oracle_mixing <- function(m) {
  repeat {
    A <- matrix(stats::rnorm(m * m), m)
    if (kappa(A, exact = TRUE) <= 2) return(A)
  }
}

# Independent sources of a few of Bach and Jordan's kinds, in base R:
# uniform, exponential, a bimodal mixture of two Gaussians, Student t (5).
oracle_sources <- function(n, kinds) {
  one <- function(kind) switch(kind,
    uniform = stats::runif(n, -1, 1),
    exponential = stats::rexp(n) - 1,
    bimodal = stats::rnorm(n, sd = 0.5) + sample(c(-1, 1), n, replace = TRUE),
    t5 = stats::rt(n, 5))
  vapply(kinds, one, numeric(n))
}

# The Amari distance written out with loops, from the formula of Bach and
# Jordan (2002), for comparison with amari_distance().
oracle_amari <- function(W, A) {
  P <- abs(W %*% A)
  m <- nrow(P)
  total <- 0
  for (i in seq_len(m)) total <- total + sum(P[i, ]) / max(P[i, ]) - 1
  for (j in seq_len(m)) total <- total + sum(P[, j]) / max(P[, j]) - 1
  total / (2 * m * (m - 1))
}

# Incomplete Cholesky of the Gaussian Gram matrix of y, written out: greedy
# pivot on the largest residual diagonal entry (the first on ties), until the
# residual trace is at most tol. Returns the n x M factor.
oracle_ichol <- function(y, sigma, tol) {
  n <- length(y)
  G <- matrix(0, n, 0)
  d <- rep(1, n)
  used <- rep(FALSE, n)
  while (ncol(G) < n && sum(d) > tol) {
    p <- which.max(ifelse(used, -1, d))
    if (d[p] <= 0) break
    col <- exp(-(y - y[p])^2 / (2 * sigma^2))
    if (ncol(G) > 0) col <- col - G %*% G[p, ]
    col <- as.numeric(col) / sqrt(d[p])
    used[p] <- TRUE
    col[used] <- 0
    col[p] <- sqrt(d[p])
    d <- pmax(ifelse(used, 0, d - col^2), 0)
    G <- cbind(G, col)
  }
  G
}

# Steps 2 to 5 of the contrast with the incomplete Cholesky factors (the
# computation kica() does in C), in plain R.
oracle_reduced_contrast <- function(S, sigma, kappa, eta, contrast = c("kgv", "kcca")) {
  contrast <- match.arg(contrast)
  n <- nrow(S)
  Z <- lapply(seq_len(ncol(S)), function(i) {
    G <- scale(oracle_ichol(S[, i], sigma, n * eta), scale = FALSE)
    e <- eigen(crossprod(G), symmetric = TRUE)
    keep <- e$values > n * eta
    d <- e$values[keep]
    G %*% e$vectors[, keep, drop = FALSE] %*% diag(d / (d + n * kappa / 2) / sqrt(d), sum(keep))
  })
  Zall <- do.call(cbind, Z)
  R <- crossprod(Zall)
  sizes <- vapply(Z, ncol, 0L)
  blocks <- rep(seq_along(Z), sizes)
  for (i in seq_along(Z)) R[blocks == i, blocks == i] <- diag(sizes[i])
  ev <- eigen(R, symmetric = TRUE, only.values = TRUE)$values
  if (contrast == "kcca") -0.5 * log(min(ev)) else -0.5 * sum(log(ev))
}
