#' Kernel independent component analysis
#'
#' Estimates independent sources of a linear mixture with the kernel ICA of
#' Bach and Jordan (2002): the data are whitened, and the rotation of the
#' whitened data that minimises a kernel measure of dependence between the
#' estimated sources (the kernel generalized variance, KGV, or the first
#' kernel canonical correlation, KCCA) is searched for, from several starts.
#'
#' @section Model:
#' Rows of `x` are observations: \eqn{X = S A'}{X = S A'} with independent
#' columns of \eqn{S}, as in JADE. The fit returns the unmixing matrix
#' \eqn{W} with \eqn{S = (X - \mu) W'}{S = (X - mu) W'}.
#'
#' 1. Whitening. \eqn{C} is the covariance of `x`, divided by \eqn{n - 1}
#'    as in [stats::cov()]; \eqn{C = E D E'}. With `n.comp = ncol(x)` the
#'    whitening is symmetric, \eqn{K = C^{-1/2} = E D^{-1/2} E'}; with fewer
#'    components it keeps the `n.comp` leading principal components,
#'    \eqn{K = D_k^{-1/2} E_k'}. Then \eqn{W = V K} with \eqn{V} orthogonal,
#'    so the sources have unit variance and are uncorrelated.
#' 2. For each estimated source \eqn{y_i}, the Gaussian Gram matrix
#'    \eqn{K_i[a, b] = \exp(-(y_{ia} - y_{ib})^2 / (2 \sigma^2))}{K_i[a, b] = exp(-(y_ia - y_ib)^2 / (2 sigma^2))}
#'    (`sigma` is a width, in units of the sources' standard deviation; it
#'    is not kernlab's inverse width) is approximated by an incomplete
#'    Cholesky factor \eqn{G_i}, pivoting greedily on the largest residual
#'    diagonal entry until the trace of the residual is at most
#'    \eqn{n \eta}{n eta}.
#' 3. \eqn{G_i} is centred; with \eqn{G_i'G_i = A_i \Lambda_i A_i'}, the
#'    eigenvalues above \eqn{n \eta}{n eta} are kept and
#'    \eqn{U_i = G_i A_i \Lambda_i^{-1/2}}{U_i = G_i A_i Lambda_i^-1/2}.
#' 4. \eqn{R_\kappa}{R_kappa} has identity diagonal blocks and off-diagonal
#'    blocks \eqn{r(\Lambda_i) U_i' U_j r(\Lambda_j)}{r(Lambda_i) U_i'U_j r(Lambda_j)},
#'    with \eqn{r(\lambda) = \lambda / (\lambda + n \kappa / 2)}{r(lambda) = lambda / (lambda + n kappa / 2)}:
#'    the regularisation of the paper (Bach's own code uses
#'    \eqn{n \kappa}{n kappa}).
#' 5. The contrast is \eqn{-\frac12 \log\det R_\kappa}{-1/2 log det R_kappa}
#'    (`"kgv"`) or \eqn{-\frac12 \log \lambda_{min}(R_\kappa)}{-1/2 log lambda_min(R_kappa)}
#'    (`"kcca"`). Both are near 0 for independent sources and grow with
#'    dependence.
#'
#' Steps 2 to 5 run in C (LAPACK `dsyevr` and `dpotrf`); no n x n matrix is
#' formed.
#'
#' @section Optimisation:
#' The contrast is minimised over orthogonal \eqn{V} by Jacobi sweeps: for
#' each pair of sources in turn, the rotation of the pair (a geodesic of
#' the orthogonal group) is chosen by a one-dimensional search. In the first
#' sweep from each start, the search evaluates the contrast on a grid of
#' `ngrid` angles over a full period (\eqn{\pi/2}{pi/2}: the contrast does
#' not change when sources are permuted or change sign), then refines the
#' best angle by Brent's method (golden section with parabolic steps) within
#' one grid step; later sweeps refine from the current angle only. Sweeps
#' stop when no rotation exceeds `tol` radians, when a sweep lowers the
#' contrast by less than \eqn{10^{-6}}{1e-6}, or after `maxit` sweeps. With
#' two sources there is a single angle: the first sweep is then a global
#' search and is not repeated (unless its minimum lies on the edge of the
#' refined bracket). The sweeps from a start run in C, which keeps the
#' incomplete Cholesky factors of the sources and recomputes only those of
#' the two that rotate; the current contrast (at angle 0) is known and is
#' not evaluated again.
#'
#' The first start is JADE's estimate (Cardoso and Souloumiac 1993: the
#' rotation that jointly diagonalises the fourth-order cumulant matrices of
#' the whitened data), computed within fastkpca; the others are random
#' orthogonal matrices (uniform, from [stats::rnorm()], so results are
#' reproducible after [set.seed()]). The start with the lowest contrast is
#' kept.
#'
#' With `polish = TRUE` the best start is then polished as in the paper:
#' sweeps of local searches (within `25 * tol` radians) with the width
#' `sigma / 2`, the starts having been searched to `5 * tol` only. It is off
#' by default because in fastkpca's benchmark (`bench/kica.R`, Bach and
#' Jordan's 18 densities) it raised the mean Amari distance by a third or
#' more (x 100: from 3.2 to 4.2 with two sources, N = 1000; from 2.1 to 3.0
#' with four, N = 2000) and took up to twice as long.
#'
#' @section Defaults:
#' As in the paper: `sigma = 1` and `kappa = 2e-2` when `nrow(x) < 1000`,
#' `sigma = 1/2` and `kappa = 2e-3` otherwise; `eta = kappa / 100`. Two
#' sources need one start (see above); more sources get 2 by default (JADE's
#' and a random one).
#'
#' Signs and order of the sources are not identifiable; fastkpca makes the
#' largest-magnitude entry of each row of `W` positive.
#'
#' @param x A numeric matrix or data frame, one observation per row, with at
#'   least two columns and at least one more row than columns.
#' @param n.comp Number of sources, between 1 and `ncol(x)`.
#' @param contrast `"kgv"` (the default) or `"kcca"`.
#' @param sigma Width of the Gaussian kernel on the unit-variance sources.
#' @param kappa Regularisation, positive.
#' @param eta Precision of the incomplete Cholesky decomposition, positive.
#' @param nstarts Number of starts (the first is JADE's), at least 1.
#' @param maxit Maximum number of sweeps per start (and for the polish).
#' @param polish Whether to polish the best start with `sigma / 2`.
#' @param ngrid Number of angles on the grid of each pairwise search, at
#'   least 2.
#' @param tol Tolerance in radians of the pairwise searches and of the stop
#'   rule.
#' @param ... Unused; an error if given.
#' @return An object of class `c("kica", "bss")` (JADE's class), a list with
#'   \describe{
#'     \item{`W`}{the `n.comp` x `ncol(x)` unmixing matrix;}
#'     \item{`A`}{the mixing matrix, `ncol(x)` x `n.comp`, the inverse of
#'       `W` (a right inverse, `W %*% A = I`, when `n.comp < ncol(x)`);}
#'     \item{`S`}{the estimated sources, `(x - Xmu) %*% t(W)`;}
#'     \item{`Xmu`}{the column means of `x`;}
#'     \item{`K`, `V`}{the whitening matrix and the rotation, `W = V %*% K`;}
#'     \item{`objective`}{the contrast at `W` with `sigma`, and
#'       `objective.polish`, the contrast at `W` with `sigma / 2` (`NA`
#'       without polish);}
#'     \item{`iterations`}{the sweeps of the kept start, and of the polish;}
#'     \item{`evaluations`}{the number of contrast evaluations in all;}
#'     \item{`starts`}{a data frame with each start's kind (`"jade"` or
#'       `"random"`), contrast and sweeps;}
#'     \item{the settings}{`n.comp`, `contrast`, `sigma`, `kappa`, `eta`,
#'       `nstarts`, `maxit`, `polish`, `ngrid`, `tol`, all resolved.}
#'   }
#' @references Bach, F. R. and Jordan, M. I. (2002). Kernel independent
#'   component analysis. *Journal of Machine Learning Research* 3, 1-48.
#'   \doi{10.1162/153244303768966085}
#'
#'   Cardoso, J.-F. and Souloumiac, A. (1993). Blind beamforming for
#'   non-Gaussian signals. *IEE Proceedings F* 140(6), 362-370.
#'   \doi{10.1049/ip-f-2.1993.0054}
#' @seealso [amari_distance()] to compare unmixing matrices,
#'   [predict.kica()], [plot.kica()], and
#'   `vignette("kica", package = "fastkpca")`.
#' @examples
#' set.seed(1)
#' n <- 500
#' S <- cbind(runif(n, -1, 1), rexp(n) - 1)      # independent sources
#' A <- matrix(c(1, 0.5, 0.4, 1), 2)             # mixing matrix
#' X <- S %*% t(A)
#' fit <- kica(X)
#' fit
#' amari_distance(fit$W, A)                      # 0 is perfect, 1 the worst
#' # the recovered sources match the true ones up to order, sign and scale
#' round(cor(fit$S, S), 2)
#' @export
kica <- function(x, n.comp = ncol(x), contrast = c("kgv", "kcca"), sigma = NULL,
                 kappa = NULL, eta = NULL, nstarts = NULL, maxit = 10L,
                 polish = FALSE, ngrid = 8L, tol = 1e-3, ...) {
  check_no_dots(...)
  x <- as_data_matrix(x, "x")
  check_finite(x, "x")
  set <- kica_settings(nrow(x), ncol(x), n.comp, contrast, sigma, kappa, eta,
                       nstarts, maxit, polish, ngrid, tol)
  white <- kica_whiten(x, set$n.comp)
  search <- kica_search(white$z, set)
  V <- search$V
  W <- V %*% white$K
  # deterministic signs: the largest-magnitude entry of each row of W positive
  flip <- apply(W, 1L, function(w) if (w[which.max(abs(w))] < 0) -1 else 1)
  V <- V * flip
  W <- W * flip
  S <- white$z %*% t(V)
  names_s <- paste0("IC", seq_len(set$n.comp))
  A <- white$Kinv %*% t(V)
  dimnames(W) <- list(names_s, colnames(x))
  dimnames(A) <- list(colnames(x), names_s)
  dimnames(S) <- list(rownames(x), names_s)
  objective <- as.numeric(kica_contrast(S, c(set$sigma, set$kappa, set$eta),
                                        match(set$contrast, kica_contrasts)))
  validate_kica(new_kica(W = W, A = A, S = S, Xmu = white$mu, K = white$K, V = V,
                         objective = objective, search = search, settings = set))
}

# The settings of kica(), checked and resolved (defaults of Bach and Jordan
# 2002 by the number of rows n).
kica_settings <- function(n, p, n.comp, contrast, sigma, kappa, eta, nstarts, maxit,
                          polish, ngrid, tol) {
  if (p < 2L)
    stop_argument("'x' must have at least two columns (kernel ICA unmixes several variables)")
  if (n <= p)
    stop_argument(sprintf("'x' must have more rows than columns (it has %d rows and %d columns)",
                          n, p))
  if (!is.numeric(n.comp) || length(n.comp) != 1L || is.na(n.comp) ||
      n.comp != round(n.comp) || n.comp < 1 || n.comp > p)
    stop_argument(sprintf("'n.comp' must be a whole number between 1 and ncol(x) (%d)", p))
  m <- as.integer(n.comp)
  big <- n >= 1000
  sigma <- check_positive(if (is.null(sigma)) (if (big) 0.5 else 1) else sigma, "sigma")
  kappa <- check_positive(if (is.null(kappa)) (if (big) 2e-3 else 2e-2) else kappa, "kappa")
  eta <- check_positive(if (is.null(eta)) kappa / 100 else eta, "eta")
  if (is.null(nstarts)) nstarts <- if (m <= 2L) 1L else 2L
  if (!is.logical(polish) || length(polish) != 1L || is.na(polish))
    stop_argument("'polish' must be TRUE or FALSE")
  list(n.comp = m, contrast = check_choice(contrast, kica_contrasts, "contrast"),
       sigma = sigma, kappa = kappa, eta = eta,
       nstarts = check_whole(nstarts, "nstarts", 1, 1e4),
       maxit = check_whole(maxit, "maxit", 1, 1e4), polish = polish,
       ngrid = check_whole(ngrid, "ngrid", 2, 1e4), tol = check_positive(tol, "tol"))
}

# The search over rotations of the whitened data z: Jacobi sweeps from each
# start (JADE's, then random ones), and the optional polish of the best.
# Returns the best V, the contrast of every start, their sweeps, the sweeps
# of the polish, its contrast and the evaluations in all.
kica_search <- function(z, set) {
  m <- set$n.comp
  nstarts <- set$nstarts
  code <- match(set$contrast, kica_contrasts)
  par <- c(set$sigma, set$kappa, set$eta)
  starts <- c(list(jade_rotation(z)),
              lapply(seq_len(nstarts - 1L), function(i) random_rotation(m)))
  # with a polish, the starts are searched to 5 tol and the polish (local
  # searches within 25 tol, repeated when a minimum is on the edge) refines
  # the best to tol
  coarse_tol <- if (set$polish) 5 * set$tol else set$tol
  step <- (pi / 2) / set$ngrid
  grid <- step * (seq_len(set$ngrid) - 1L - set$ngrid %/% 2L) # a period, with 0
  polish <- set$polish && m > 1L
  progress <- progress_for(nstarts + polish, sprintf("kica: %d start%s", nstarts,
                                                     if (nstarts > 1L) "s" else ""))
  sweep_step <- function(what) {
    if (is.null(progress)) return(NULL)
    sweeps <- 0L
    function() {
      sweeps <<- sweeps + 1L
      progress(message = sprintf("kica: %s, sweep %d", what, sweeps), amount = 0)
    }
  }
  runs <- vector("list", nstarts)
  for (k in seq_len(nstarts)) {
    what <- sprintf("start %d of %d", k, nstarts)
    runs[[k]] <- kica_sweeps(z, starts[[k]], par, code, grid, step, coarse_tol, set$maxit,
                             sweep_step(what))
    progress_signal(progress, paste("kica:", what, "done"))
  }
  values <- vapply(runs, `[[`, 0, "value")
  best <- runs[[which.min(values)]]
  out <- list(V = best$V, starts = data.frame(
                kind = c("jade", rep("random", nstarts - 1L)), contrast = values,
                sweeps = vapply(runs, `[[`, 0L, "sweeps")),
              sweeps = best$sweeps, polish_sweeps = 0L, objective_polish = NA_real_,
              evaluations = sum(vapply(runs, `[[`, 0L, "evaluations")))
  if (polish) {
    fine <- c(set$sigma / 2, set$kappa, set$eta)
    pol <- kica_sweeps(z, best$V, fine, code, 0, 25 * set$tol, set$tol, set$maxit,
                       sweep_step("polish"))
    progress_signal(progress, "kica: polish done")
    out$V <- pol$V
    out$polish_sweeps <- pol$sweeps
    out$objective_polish <- pol$value
    out$evaluations <- out$evaluations + pol$evaluations
  }
  out
}

# The constructor of a "kica" fit: assembles the fields documented in
# ?kica from the unmixing, the search and the resolved settings.
new_kica <- function(W, A, S, Xmu, K, V, objective, search, settings) {
  structure(c(list(W = W, A = A, S = S, Xmu = Xmu, K = K, V = V,
                   objective = objective, objective.polish = search$objective_polish,
                   iterations = c(start = search$sweeps, polish = search$polish_sweeps),
                   evaluations = search$evaluations, starts = search$starts),
              settings),
            class = c("kica", "bss"))
}

# The invariants of a "kica" fit: dimensions that agree, and W = V K.
validate_kica <- function(fit) {
  m <- fit$n.comp
  p <- length(fit$Xmu)
  fields <- c("W", "A", "S", "Xmu", "K", "V", "objective", "objective.polish",
              "iterations", "evaluations", "starts", "n.comp", "contrast", "sigma",
              "kappa", "eta", "nstarts", "maxit", "polish", "ngrid", "tol")
  missing_fields <- setdiff(fields, names(fit))
  if (length(missing_fields) > 0L)
    stop_object("a kica fit needs the fields ", paste(missing_fields, collapse = ", "))
  if (!identical(dim(fit$W), c(m, p)) || !identical(dim(fit$A), c(p, m)) ||
      ncol(fit$S) != m || !identical(dim(fit$V), c(m, m)) ||
      !identical(dim(fit$K), c(m, p)))
    stop_object("a kica fit needs W (n.comp x p), A (p x n.comp), S (n x n.comp), ",
                "V (n.comp x n.comp) and K (n.comp x p)")
  if (nrow(fit$starts) != fit$nstarts)
    stop_object("a kica fit needs one row of 'starts' per start")
  fit
}

# Contrast names; the position is the code C uses (KICA_KGV, KICA_KCCA).
kica_contrasts <- c("kgv", "kcca")

# Centre and whiten x with its covariance (divided by n - 1): z = (x - mu) K'.
# Kinv is a right inverse of K (the inverse when m = ncol(x)).
kica_whiten <- function(x, m) {
  n <- nrow(x)
  mu <- colMeans(x)
  xc <- sweep(x, 2L, mu)
  C <- crossprod(xc) / (n - 1)
  e <- eigen(C, symmetric = TRUE)
  d <- e$values[seq_len(m)]
  # singular: judged on the correlation matrix when all columns are kept, so
  # that the units of the columns do not matter
  sds <- sqrt(diag(C))
  singular <- if (m == ncol(x)) {
    any(!(sds > 0)) ||
      !(min(eigen(C / tcrossprod(sds), symmetric = TRUE, only.values = TRUE)$values) > 1e-10)
  } else {
    !(d[m] > max(e$values[1L], 0) * 1e-10)
  }
  if (singular || !(d[m] > 0))
    stop_data("'x' has a singular covariance matrix (a column is constant or a linear ",
              "combination of others)")
  E <- e$vectors[, seq_len(m), drop = FALSE]
  if (m == ncol(x)) {
    K <- E %*% (t(E) / sqrt(d))
    Kinv <- E %*% (t(E) * sqrt(d))
  } else {
    K <- t(E) / sqrt(d)
    Kinv <- E * rep(sqrt(d), each = nrow(E))
  }
  list(z = xc %*% t(K), K = K, Kinv = Kinv, mu = mu)
}

# JADE's rotation of whitened data z (Cardoso and Souloumiac 1993), as rows:
# the rotation that jointly diagonalises the fourth-order cumulant matrices
# Q_ij = E[z_i z_j z z'] - delta_ij I - e_i e_j' - e_j e_i' (i <= j), by
# Jacobi rotations. Cheap for the few sources kernel ICA handles.
jade_rotation <- function(z, tol = 1e-6 / sqrt(nrow(z)), maxit = 100L) {
  n <- nrow(z)
  m <- ncol(z)
  if (m < 2L) return(diag(m))
  pairs <- which(upper.tri(diag(m), diag = TRUE), arr.ind = TRUE)
  nq <- nrow(pairs)
  # the cumulant matrices side by side: Q[, (k - 1) m + 1:m] is the k-th
  Q <- matrix(0, m, m * nq)
  for (k in seq_len(nq)) {
    i <- pairs[k, 1L]
    j <- pairs[k, 2L]
    C <- crossprod(z * (z[, i] * z[, j]), z) / n
    C[i, j] <- C[i, j] - 1
    C[j, i] <- C[j, i] - 1
    if (i == j) diag(C) <- diag(C) - 1 else C <- C * sqrt(2)
    Q[, (k - 1L) * m + seq_len(m)] <- C
  }
  V <- diag(m)
  offsets <- (seq_len(nq) - 1L) * m
  for (sweep in seq_len(maxit)) {
    rotated <- FALSE
    for (p in seq_len(m - 1L)) for (q in (p + 1L):m) {
      ip <- offsets + p
      iq <- offsets + q
      g <- rbind(Q[p, ip] - Q[q, iq], Q[p, iq] + Q[q, ip])
      gg <- tcrossprod(g)
      ton <- gg[1L, 1L] - gg[2L, 2L]
      toff <- gg[1L, 2L] + gg[2L, 1L]
      theta <- 0.5 * atan2(toff, ton + sqrt(ton^2 + toff^2))
      if (abs(theta) > tol) {
        rotated <- TRUE
        cs <- cos(theta)
        sn <- sin(theta)
        G <- matrix(c(cs, sn, -sn, cs), 2L)
        V[, c(p, q)] <- V[, c(p, q)] %*% G
        Q[c(p, q), ] <- crossprod(G, Q[c(p, q), ])
        qp <- Q[, ip]
        qq <- Q[, iq]
        Q[, ip] <- cs * qp + sn * qq
        Q[, iq] <- -sn * qp + cs * qq
      }
    }
    if (!rotated) break
  }
  t(V)
}

# A uniformly distributed orthogonal m x m matrix (QR of a Gaussian matrix,
# with the signs of R's diagonal moved into Q).
random_rotation <- function(m) {
  q <- qr(matrix(stats::rnorm(m * m), m))
  Q <- qr.Q(q)
  Q * rep(sign(diag(qr.R(q))), each = m)
}

# Jacobi sweeps over the pairs of sources from the rotation V (rows are the
# unmixing directions in whitened space), in C: each pairwise search
# evaluates the contrast at the angles 'grid' (first sweep; later sweeps
# start from the current angle only) and refines the best within +- 'half'
# to 'tol' by Brent's method. Sweeps stop when no angle exceeds tol, the
# contrast fell by less than 1e-6, or after maxit sweeps.
# Returns list(V, value, sweeps, evaluations).
kica_sweeps <- function(z, V, par, code, grid, half, tol, maxit, step = NULL) {
  engine_call(.Call(C_kica_sweeps, z, V, par, code, as.double(grid), as.double(half),
                    as.double(tol), as.integer(maxit), step))
}

# The contrast (code: 1 KGV, 2 KCCA) of the sources S at par = c(sigma,
# kappa, eta), with an attribute "ranks": the columns kept per source.
kica_contrast <- function(S, par, code) {
  engine_call(.Call(C_kica_contrast, S, par, code))
}

#' Amari distance between unmixing matrices
#'
#' The performance index of Bach and Jordan (2002), after Amari et al.
#' (1996): with \eqn{P = W A}, an m x m matrix that is a scaled permutation
#' matrix when `W` unmixes what `A` mixed,
#' \deqn{d = \frac{1}{2m(m-1)} \left[\sum_i \left(\frac{\sum_j |p_{ij}|}{\max_j |p_{ij}|} - 1\right) + \sum_j \left(\frac{\sum_i |p_{ij}|}{\max_i |p_{ij}|} - 1\right)\right].}{d = [sum_i (sum_j |p_ij| / max_j |p_ij| - 1) + sum_j (sum_i |p_ij| / max_i |p_ij| - 1)] / (2 m (m - 1)).}
#' It lies in \[0, 1\], is 0 exactly when `W %*% A` is a scaled permutation,
#' and does not change when the rows of `W` are permuted or change sign.
#' Bach and Jordan's tables report 100 d.
#'
#' @param W An m x p unmixing matrix (the `W` of [kica()], of
#'   `JADE::JADE()`, or `t(K %*% W)` of `fastICA::fastICA()`).
#' @param A The p x m mixing matrix with \eqn{X = S A'}{X = S A'}.
#' @return A number in \[0, 1\].
#' @examples
#' A <- matrix(c(2, 1, 1, 3), 2)
#' amari_distance(solve(A), A)                  # 0
#' amari_distance(diag(2), matrix(1, 2, 2) + diag(2) * 1e-3)  # near 1
#' @export
amari_distance <- function(W, A) {
  W <- as_data_matrix(W, "W")
  A <- as_data_matrix(A, "A")
  check_finite(W, "W")
  check_finite(A, "A")
  if (ncol(W) != nrow(A) || nrow(W) != ncol(A))
    stop_argument("'W' and 'A' must be m x p and p x m matrices")
  P <- abs(W %*% A)
  m <- nrow(P)
  if (m < 2L) return(0)
  if (any(apply(P, 1L, max) == 0) || any(apply(P, 2L, max) == 0))
    stop_argument("'W %*% A' must have no zero row or column")
  rows <- sum(rowSums(P) / apply(P, 1L, max) - 1)
  cols <- sum(colSums(P) / apply(P, 2L, max) - 1)
  (rows + cols) / (2 * m * (m - 1))
}

#' Print a kernel ICA fit
#'
#' @param x A `"kica"` fit from [kica()].
#' @param digits Number of significant digits.
#' @param ... Unused.
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' X <- cbind(runif(300), rexp(300)) %*% matrix(c(1, 1, -1, 2), 2)
#' kica(X)
#' @export
print.kica <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat_line("", sprintf("Kernel ICA (fastkpca): %d source%s from %d observations of %d variable%s",
                       x$n.comp, if (x$n.comp == 1L) "" else "s", nrow(x$S), ncol(x$W),
                       if (ncol(x$W) == 1L) "" else "s"))
  cat_line("Contrast:  ", sprintf("%s = %s (sigma = %g, kappa = %g, eta = %g)",
                                  toupper(x$contrast), format(x$objective, digits = digits),
                                  x$sigma, x$kappa, x$eta))
  cat_line("Search:    ", sprintf("%d start%s, best %s after %d sweep%s%s", x$nstarts,
                                  if (x$nstarts == 1L) "" else "s",
                                  x$starts$kind[which.min(x$starts$contrast)],
                                  x$iterations[["start"]],
                                  if (x$iterations[["start"]] == 1L) "" else "s",
                                  if (x$polish) sprintf("; polished with sigma = %g", x$sigma / 2)
                                  else ""))
  cat("Unmixing matrix W:\n")
  print(x$W, digits = digits)
  invisible(x)
}

#' Unmix new observations with a kernel ICA fit
#'
#' @param object A `"kica"` fit from [kica()].
#' @param newdata A matrix or data frame with the columns of the data the
#'   model was fitted to; if missing, the fitted sources are returned.
#' @param ... Unused.
#' @return The sources of `newdata`, `(newdata - Xmu) %*% t(W)`.
#' @examples
#' set.seed(1)
#' X <- cbind(runif(300), rexp(300)) %*% matrix(c(1, 1, -1, 2), 2)
#' fit <- kica(X)
#' all.equal(predict(fit, X), fit$S, check.attributes = FALSE)
#' @export
predict.kica <- function(object, newdata, ...) {
  check_no_dots(...)
  if (missing(newdata)) return(object$S)
  z <- as_data_matrix(newdata, "newdata")
  check_finite(z, "newdata")
  if (ncol(z) != ncol(object$W))
    stop_argument(sprintf("'newdata' must have %d columns", ncol(object$W)))
  S <- sweep(z, 2L, object$Xmu) %*% t(object$W)
  dimnames(S) <- list(rownames(z), rownames(object$W))
  S
}

#' Plot the sources of a kernel ICA fit
#'
#' Draws the estimated sources against each other with [graphics::pairs()]
#' (independent sources look like products of their margins: no pattern
#' beyond the shape of each), or, for one source, a histogram.
#'
#' @param x A `"kica"` fit from [kica()].
#' @param ... Further arguments to [graphics::pairs()] or
#'   [graphics::hist()].
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' X <- cbind(runif(300), rexp(300)) %*% matrix(c(1, 1, -1, 2), 2)
#' plot(kica(X))
#' @export
plot.kica <- function(x, ...) {
  if (ncol(x$S) == 1L) {
    graphics::hist(x$S[, 1L], main = "Estimated source", xlab = "IC1", ...)
  } else {
    graphics::pairs(x$S, main = "Estimated sources", pch = ".", ...)
  }
  invisible(x)
}
