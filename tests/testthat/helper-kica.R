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
