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
