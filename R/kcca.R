# Kernel canonical correlation analysis, kcca(): kernlab's formulation
# (dense, from one symmetric eigendecomposition of each view's kernel
# matrix); the centered one (a low-rank factor of each view's kernel matrix
# by incomplete Cholesky, src/kcca.c, and the small regularized problem on
# the two factors); the fit object, print() and predict().

#' Kernel canonical correlation analysis
#'
#' Finds functions \eqn{f} of `x` and \eqn{g} of `y`, in the feature spaces
#' of a kernel for each, whose values on the rows are as correlated as the
#' regularization allows: the kernel form of canonical correlation
#' ([stats::cancor()]), which finds nonlinear relations between two sets of
#' variables measured on the same rows. The call is that of
#' `kernlab::kcca()`, and by default so are the results.
#'
#' @section Two formulations:
#' `formulation = "kernlab"`, the default, solves kernlab's problem and
#' returns kernlab's numbers, so that kernlab code gives what it gave with
#' kernlab (`kcor()`, `xcoef()` and `ycoef()` equal kernlab's, up to the
#' order of the two members of each pair and the signs of the columns: see
#' the next section). Its kernel
#' matrices are not centered, which makes the leading pairs follow the means
#' of the kernel functions more than a relation between `x` and `y`; and it
#' works on dense n x n matrices. `formulation = "centered"` is the problem
#' of Bach and Jordan (2002): kernels centered in feature space, as in
#' [kpca()], regularized as they propose, each correlation once, on a
#' low-rank factor of each kernel matrix, so that it scales to large `n`.
#' It is the one for new analyses; it is not the default only because
#' kernlab code must keep kernlab's results. `print()` says which
#' formulation a fit used.
#'
#' @section kernlab's formulation:
#' With \eqn{K_x}, \eqn{K_y} the plain kernel matrices of the n rows and
#' \eqn{B_x = (K_x + \gamma I) K_x + 10^{-6} I}{Bx = (Kx + gamma I) Kx + 1e-6 I}
#' (the same for \eqn{y}), kernlab solves the generalized eigenproblem, for \eqn{v = (a, b)},
#' \deqn{K_x K_y b = \lambda B_x a, \qquad K_y K_x a = \lambda B_y b}{Kx Ky b = lambda Bx a,   Ky Kx a = lambda By b}
#' with `gamma = 0.1` by default. Its eigenvalues come in pairs
#' \eqn{+\rho}, \eqn{-\rho}, and `kcor` holds the first `ncomps` of them by
#' decreasing modulus: each correlation twice, with the coefficients
#' \eqn{(a, b)} and \eqn{(a, -b)}, scaled so that
#' \eqn{a' B_x a = b' B_y b = 1/2}{a' Bx a = b' By b = 1/2}.
#'
#' fastkpca solves this problem itself, the same way in every session
#' (whether kernlab is loaded or not, it never calls kernlab's code): from
#' one symmetric eigendecomposition of each kernel matrix,
#' \eqn{K = U \Lambda U'}{K = U L U'} (\eqn{B} is a polynomial in \eqn{K}, with
#' the same eigenvectors), and the singular value decomposition of the
#' n x n matrix \eqn{D_x U_x' U_y D_y}{Dx Ux'Uy Dy}, with
#' \eqn{D = \Lambda (\Lambda^2 + \gamma \Lambda + 10^{-6} I)^{-1/2}}{D = L (L^2 + gamma L + 1e-6 I)^-1/2},
#' whose singular values are the \eqn{\rho}. kernlab forms 2n x 2n
#' matrices and calls a non-symmetric eigensolver on one; fastkpca forms
#' none, holds about ten n x n matrices at its peak, and is several times
#' faster (`bench/kcca.R`).
#'
#' The order and the signs are fastkpca's own, the same in every session:
#' each pair is \eqn{+\rho} first, then \eqn{-\rho}, with the same \eqn{a}
#' and \eqn{-b}; the entry of largest magnitude of each column of `xcoef`
#' is positive. kernlab reports the two members of a pair in the order its
#' eigensolver's rounding gives, so kernlab's own `kcor()` may have
#' \eqn{-\rho} before \eqn{+\rho} for some pairs (and, when `ncomps` is
#' odd, end with \eqn{-\rho}), with those columns of `xcoef()` and `ycoef()`
#' swapped to match, and the sign of each of its columns is arbitrary. What
#' the problem fixes is the same: the value of each \eqn{\rho}, the
#' coefficients up to the sign of a column, and the sign of \eqn{b}
#' relative to \eqn{a} (\eqn{a' K_x K_y b}{a' Kx Ky b} has the sign of the
#' eigenvalue). Where a kernel matrix is singular (`vanilladot`, or
#' `polydot` on few columns), kernlab's coefficients also carry small
#' components in its null space, which neither the variates \eqn{K a} nor
#' the constraints (where they weigh \eqn{10^{-6}}) see; fastkpca's have
#' none, so there the two agree in \eqn{K a} and in the norm of \eqn{B},
#' not entry by entry. A kernel that is not positive semidefinite
#' (`tanhdot`) can make \eqn{B} indefinite: that is an error.
#' `tol` and `max_rank` do not apply; the fit keeps the training rows for
#' `predict()`, whose variates are \eqn{K(z, x) a}.
#'
#' @section The centered formulation:
#' With \eqn{K_x}, \eqn{K_y} the kernel matrices of the n rows, centered in
#' feature space (\eqn{HKH}, as in [kpca()]), and \eqn{c = n\,gamma/2}, the
#' first pair of canonical functions \eqn{f = K_x a}, \eqn{g = K_y b}
#' maximizes
#' \deqn{\rho = \frac{a' K_x K_y b}{\sqrt{a' (K_x + cI)^2 a}\; \sqrt{b' (K_y + cI)^2 b}}}{rho = a' Kx Ky b / sqrt(a' (Kx + c I)^2 a * b' (Ky + c I)^2 b)}
#' and the next pairs do the same under orthogonality to the previous ones
#' (Bach and Jordan, 2002, whose \eqn{\kappa} is `gamma`). `kcor` holds the
#' \eqn{\rho}, largest first: they lie in [0, 1) and shrink as `gamma`
#' grows (without regularization every pair of distinct rows could be
#' separated, and the correlation would be 1 for any data).
#'
#' Each kernel matrix is replaced by a low-rank factor \eqn{G G'} (n x M) from
#' pivoted incomplete Cholesky, stopped when the trace of what is left,
#' \eqn{trace(K - GG')}, is at most `tol` times \eqn{trace(K)}, or at
#' `max_rank` columns. The canonical correlations are then the singular
#' values of \eqn{R_x U_x' U_y R_y}, where \eqn{U \Lambda U'} is the
#' eigen-decomposition of the centered factor's \eqn{G G'} and
#' \eqn{R = \Lambda (\Lambda + cI)^{-1}}. Time is \eqn{O(n M (d + M))} and
#' memory \eqn{O(n M)}: no n x n matrix (and no 2n x 2n one) is formed, so
#' 10^5 rows are within reach when M stays in the hundreds.
#'
#' @param x,y The two views: numeric matrices or data frames with the same
#'   number of rows (a numeric vector is one column). No missing values.
#' @param kernel,kpar The kernel of `x` and its parameters, as in [kpca()]:
#'   a kernel name with `kpar`, a kernel object ([kern()], [rbfdot()], ...)
#'   or a kernlab kernel; `kpar = "automatic"` chooses `sigma` by the median
#'   heuristic ([median_sigma()]).
#' @param gamma The regularization, a positive number: kernlab's `gamma`
#'   (default `0.1`) for `formulation = "kernlab"`, Bach and Jordan's
#'   \eqn{\kappa} (default `0.02`) for the centered problem.
#' @param ncomps The number of canonical pairs (for kernlab's formulation, of
#'   eigenvalues, each correlation counting twice, as in kernlab), at most
#'   `nrow(x)`; fewer are returned, with a warning, if the factors have lower
#'   rank.
#' @param ykernel,ykpar The kernel of `y` and its parameters; by default
#'   those of `x`.
#' @param formulation `"kernlab"` (the default) for kernlab's problem and
#'   results; `"centered"` for the centered, regularized problem, which
#'   scales to large `n` (see the section on the two formulations).
#' @param tol For the centered formulation: the incomplete Cholesky factor
#'   of each kernel matrix stops when
#'   the trace of the remainder is at most `tol` times the trace of the
#'   kernel matrix (default `1e-6`).
#' @param max_rank For the centered formulation: the most columns of each
#'   factor (default 500, at most
#'   `nrow(x)`): memory is `8 * nrow(x) * max_rank` bytes per view at most.
#' @param threads Threads for the kernel matrices of kernlab's formulation
#'   and for the kernel between new rows and the pivot rows (all training
#'   rows, for kernlab's formulation) in `predict()` (see [kpca_threads()]);
#'   the factor of the centered formulation is computed on one thread, one
#'   kernel column at a time.
#' @param ... Unused; an error if given.
#' @return An object of class `"fastkpca_kcca"`, a list with
#'   \item{kcor}{the canonical correlations (kernlab's `kcor()`): for
#'     kernlab's formulation each twice, \eqn{+\rho} then \eqn{-\rho}, by
#'     decreasing modulus; for the centered one, largest first.}
#'   \item{xcoef, ycoef}{n x k matrices of dual coefficients \eqn{a}, \eqn{b}
#'     (kernlab's `xcoef()`, `ycoef()`): the canonical function of `x` is
#'     \eqn{f(z) = \sum_i a_i k_c(z, x_i)}{f(z) = sum_i a_i kc(z, x_i)}, with
#'     the centered kernel \eqn{k_c} (the plain kernel for kernlab's
#'     formulation), scaled as the constraints above say.}
#'   \item{xvariates, yvariates}{n x k canonical variates of the training
#'     rows, \eqn{K_x a} and \eqn{K_y b} (`predict()` without new data).}
#'   \item{kernel, kpar, ykernel, ykpar}{the kernels of `x` and `y` as kernel
#'     objects, and their parameters (as in [kpca()]).}
#'   \item{gamma, ncomps, formulation, tol, max_rank, threads}{the settings
#'     used, resolved.}
#'   \item{xfactor, yfactor}{what `predict()` needs of each factor: the
#'     pivot rows (`rows`, with their row numbers `pivots`), the lower
#'     triangular `L = G[pivots, ]`, the factor's column means `mean`, the
#'     `projection` from factor rows to variates, the conformal `weights` of
#'     the pivot rows, its `rank` and its relative `residual`,
#'     \eqn{trace(K - GG') / trace(K)}. For kernlab's formulation, which has
#'     no factor: all training rows, `L = NULL`, `mean` 0 and `projection`
#'     the coefficients.}
#'   \item{n, call}{the number of rows and the call.}
#' @references
#' Bach F R, Jordan M I (2002). Kernel independent component analysis.
#' *Journal of Machine Learning Research*, 3, 1--48.
#' @seealso [predict.fastkpca_kcca()]; [stats::cancor()] for linear CCA;
#'   [kica()], whose contrast is the first kernel canonical correlation of
#'   each pair of sources; [kcor()], [xcoef()], [ycoef()].
#' @examples
#' # y depends on x through a parabola: no linear correlation
#' set.seed(1)
#' x <- runif(200, -1, 1)
#' y <- x^2 + rnorm(200, sd = 0.05)
#' cancor(x, y)$cor
#' # the centered formulation, each correlation once
#' fit <- kcca(x, y, kernel = "rbfdot", kpar = list(sigma = 1), ncomps = 2,
#'             formulation = "centered")
#' fit
#' kcor(fit)
#' # kernlab's formulation, the default: kernlab's numbers, each pair +rho
#' # then -rho (kernlab's own order within a pair can differ)
#' kcor(kcca(x, y, kernel = "rbfdot", kpar = list(sigma = 1), ncomps = 2))
#' if (requireNamespace("kernlab", quietly = TRUE))
#'   print(kernlab::kcor(kernlab::kcca(as.matrix(x), as.matrix(y),
#'                                     kernel = "rbfdot", kpar = list(sigma = 1),
#'                                     ncomps = 2)))
#' # the first canonical variates are nearly a linear function of each other
#' v <- predict(fit)
#' cor(v$x[, 1], v$y[, 1])
#' @export
kcca <- function(x, y, kernel = "rbfdot", kpar = list(sigma = 0.1), gamma = NULL,
                 ncomps = 10, ykernel = kernel, ykpar = list(sigma = 0.1),
                 formulation = c("kernlab", "centered"), tol = 1e-6, max_rank = 500,
                 threads = kpca_threads(), ...) {
  check_no_dots(...)
  call <- match.call()
  formulation <- match_formulation(formulation)
  x <- kcca_data(x, "x")
  y <- kcca_data(y, "y")
  if (nrow(x) != nrow(y))
    stop_argument(sprintf("'x' and 'y' must have the same number of rows, not %d and %d",
                          nrow(x), nrow(y)))
  n <- nrow(x)
  if (n < 2L) stop_argument("'x' and 'y' must have at least 2 rows")
  xk <- kcca_kernel(kernel, kpar, missing(kpar), x, "kernel")
  yk <- if (missing(ykernel) && missing(ykpar)) kcca_kernel(kernel, kpar, missing(kpar), y, "kernel")
        else kcca_kernel(ykernel, ykpar, missing(ykpar), y, "ykernel")
  gamma <- if (is.null(gamma)) c(centered = 0.02, kernlab = 0.1)[[formulation]]
           else check_positive(gamma, "gamma")
  ncomps <- check_whole(ncomps, "ncomps", 1, n)
  if (!is.numeric(tol) || length(tol) != 1L || !is.finite(tol) || tol < 0 || tol >= 1)
    stop_argument("'tol' must be a single number in [0, 1)")
  max_rank <- check_whole(max_rank, "max_rank", 1, 1e9)
  max_rank <- min(max_rank, n)
  threads <- check_threads(threads)

  if (formulation == "kernlab") {
    sol <- kcca_kernlab(x, y, xk, yk, gamma, ncomps, threads)
    xfactor <- kcca_dense_summary(x, xk, sol$xcoef)
    yfactor <- kcca_dense_summary(y, yk, sol$ycoef)
  } else {
    fx <- kcca_ichol(x, xk, tol, max_rank)
    fy <- kcca_ichol(y, yk, tol, max_rank)
    sol <- kcca_solve(fx, fy, n, gamma, ncomps)
    xfactor <- kcca_factor_summary(fx, x, xk, sol$xprojection, sol$xmean)
    yfactor <- kcca_factor_summary(fy, y, yk, sol$yprojection, sol$ymean)
  }
  new_fastkpca_kcca(
    kcor = sol$kcor, xcoef = sol$xcoef, ycoef = sol$ycoef,
    xvariates = sol$xvariates, yvariates = sol$yvariates,
    kernel = xk, kpar = kernel_kpar(xk), ykernel = yk, ykpar = kernel_kpar(yk),
    gamma = gamma, ncomps = ncomps, formulation = formulation, tol = as.double(tol),
    max_rank = max_rank, threads = threads,
    xfactor = xfactor, yfactor = yfactor, n = n, call = call)
}

match_formulation <- function(formulation) {
  choices <- c("kernlab", "centered")
  if (identical(formulation, choices)) return("kernlab")
  if (!is.character(formulation) || length(formulation) != 1L || !formulation %in% choices)
    stop_argument("'formulation' must be \"kernlab\" or \"centered\"")
  formulation
}

kcca_data <- function(x, arg) {
  x <- as_data_rows(x, arg)   # sparse views stay sparse (R/sparse.R)
  check_finite(x, arg)
  if (ncol(x) == 0L) stop_argument(sprintf("'%s' must have at least one column", arg))
  x
}

# A view's kernel, as kpca() resolves it (R/kernel_spec.R); arg names it in
# errors ("kernel" or "ykernel").
kcca_kernel <- function(kernel, kpar, kpar_missing, x, arg) {
  if (identical(kernel, "precomputed"))
    stop_argument(sprintf("'%s' cannot be \"precomputed\" in kcca(): give the data", arg))
  k <- tryCatch(kpca_kernel(kernel, kpar, kpar_missing), error = function(e)
    stop_from(e, sub("^'kernel'", sprintf("'%s'", arg), conditionMessage(e))))
  if (identical(kpar, "automatic")) k <- automatic_sigma_kernel(k, x)
  k
}

# The incomplete Cholesky factor of the kernel matrix of x (src/kcca.c).
kcca_ichol <- function(x, kernel, tol, max_rank) {
  weights <- kernel_weights(kernel, x)
  res <- engine_call(.Call(C_kcca_ichol, x, kernel_program(kernel), weights, as.double(tol),
                           as.integer(max_rank)))
  res$weights <- weights
  if (ncol(res$G) == 0L)
    stop_data("the kernel matrix of a view is zero: check the kernel and its parameters")
  res
}

# The eigen-decomposition of a factor's Gram matrix G'G (centered: of
# (G - 1 mu')'(G - 1 mu')), keeping the directions with a positive
# eigenvalue: list(B = A D^-1/2 (so that U = G B), d = D, mean = mu).
kcca_basis <- function(G, centered) {
  n <- nrow(G)
  mu <- if (centered) colMeans(G) else numeric(ncol(G))
  S <- crossprod(G) - n * tcrossprod(mu)
  e <- eigen((S + t(S)) / 2, symmetric = TRUE)
  keep <- e$values > 1e-12 * max(e$values, 0)
  list(B = sweep(e$vectors[, keep, drop = FALSE], 2L, sqrt(e$values[keep]), "/"),
       d = e$values[keep], mean = mu)
}

# The canonical pairs of the centered problem from the two factors. With
# U = G B (orthonormal columns) and Lambda = D, the problem reduces to the
# SVD of diag(r_x) U_x'U_y diag(r_y), r = D w, with w = 1 / (D + n gamma / 2):
# the singular values are the correlations; the dual coefficients are
# a = U diag(w) P, the variates K a = U diag(D w) P. See ?kcca.
kcca_solve <- function(fx, fy, n, gamma, ncomps) {
  bx <- kcca_basis(fx$G, TRUE)
  by <- kcca_basis(fy$G, TRUE)
  weight <- function(d) 1 / (d + n * gamma / 2)
  wx <- weight(bx$d)
  wy <- weight(by$d)
  rx <- bx$d * wx
  ry <- by$d * wy
  cross <- crossprod(fx$G, fy$G) - n * tcrossprod(bx$mean, by$mean)
  M <- rx * crossprod(bx$B, cross %*% by$B) * rep(ry, each = length(rx))
  k <- min(ncomps, nrow(M), ncol(M))
  if (k < ncomps)
    warn_argument(sprintf("only %d canonical pairs exist at this rank (asked for 'ncomps' = %d)",
                          k, ncomps))
  s <- svd(M, nu = k, nv = k)
  # the dual coefficients and the maps from factor rows to variates;
  # (G - 1 mu') W is formed as G W - 1 (mu'W): no copy of G
  xsmall <- bx$B %*% (wx * s$u)
  ysmall <- by$B %*% (wy * s$v)
  xprojection <- bx$B %*% (bx$d * wx * s$u)
  yprojection <- by$B %*% (by$d * wy * s$v)
  dual <- function(G, small, mu) sweep(G %*% small, 2L, drop(crossprod(mu, small)))
  xcoef <- dual(fx$G, xsmall, bx$mean)
  ycoef <- dual(fy$G, ysmall, by$mean)
  # signs: the largest-magnitude entry of each xcoef column is positive,
  # and the y column follows (the correlation stays positive)
  flip <- kcca_pair_signs(xcoef)
  xprojection <- sweep(xprojection, 2L, flip, "*")
  yprojection <- sweep(yprojection, 2L, flip, "*")
  list(kcor = s$d[seq_len(k)],
       xcoef = sweep(xcoef, 2L, flip, "*"), ycoef = sweep(ycoef, 2L, flip, "*"),
       xvariates = dual(fx$G, xprojection, bx$mean),
       yvariates = dual(fy$G, yprojection, by$mean),
       xprojection = xprojection, yprojection = yprojection,
       xmean = bx$mean, ymean = by$mean)
}

# kernlab's problem (see ?kcca): the generalized eigenproblem
#   [0, Kx Ky; Ky Kx, 0] v = lambda [Bx, 0; 0, By] v,  B = (K + gamma I) K + 1e-6 I,
# on the plain kernel matrices. B is a polynomial in K, so with
# K = U diag(l) U' (one symmetric eigendecomposition per view, never a
# 2n x 2n matrix) B^-1/2 = U diag(b^-1/2) U' with b = l^2 + gamma l + 1e-6,
# and B^-1/2 K = U diag(d) U' with d = l / sqrt(b). The eigenvalues are
# +rho and -rho for each singular value rho of
#   Sx Kx Ky Sy = Ux N Uy',  N = diag(dx) Ux'Uy diag(dy)   (S = B^-1/2),
# with generalized eigenvectors (Sx Ux p, +-Sy Uy q) / sqrt(2) for the
# singular vectors (p, q) of the n x n core N: kernlab's scale
# (a'Bx a = 1/2, unit eigenvectors of kernlab's symmetrized problem). The
# variates need no kernel matrix: Kx a = Ux diag(dx) p / sqrt(2).
# kernlab finds these from a non-symmetric eigensolver on the 2n x 2n
# matrix, which orders the two of a pair as its rounding falls; here each
# pair is +rho then -rho, and its sign is fixed as in the centered
# formulation (kcca_pair_signs()).
kcca_kernlab <- function(x, y, xk, yk, gamma, ncomps, threads) {
  check_kcca_kernlab_memory(nrow(x))
  vx <- kcca_kernlab_view(x, xk, gamma, threads, "x")
  vy <- kcca_kernlab_view(y, yk, gamma, threads, "y")
  # t(N) (rows: the eigenvectors of y): R scales the temporaries in place,
  # so the cross product and its transpose are the only copies; its SVD is
  # Q S P'
  core <- t(crossprod(vx$vectors, vy$vectors) * vx$d) * vy$d
  k <- ceiling(ncomps / 2)
  s <- svd(core, nu = k, nv = k)
  core <- NULL
  p <- s$v * sqrt(0.5)
  q <- s$u * sqrt(0.5)
  xcoef <- vx$vectors %*% (p / sqrt(vx$b))
  flip <- kcca_pair_signs(xcoef)
  xcoef <- sweep(xcoef, 2L, flip, "*")
  ycoef <- sweep(vy$vectors %*% (q / sqrt(vy$b)), 2L, flip, "*")
  xvariates <- sweep(vx$vectors %*% (p * vx$d), 2L, flip, "*")
  yvariates <- sweep(vy$vectors %*% (q * vy$d), 2L, flip, "*")
  # each pair as +rho, then -rho: the same a, and -b
  pairs <- rep(seq_len(k), each = 2L)[seq_len(ncomps)]
  signs <- rep(c(1, -1), length.out = ncomps)
  list(kcor = s$d[pairs] * signs,
       xcoef = xcoef[, pairs, drop = FALSE],
       ycoef = sweep(ycoef[, pairs, drop = FALSE], 2L, signs, "*"),
       xvariates = xvariates[, pairs, drop = FALSE],
       yvariates = sweep(yvariates[, pairs, drop = FALSE], 2L, signs, "*"))
}

# One view of kernlab's problem: the eigendecomposition of its plain kernel
# matrix K = U diag(l) U', with b = l^2 + gamma l + 1e-6 (the eigenvalues
# of B = (K + gamma I) K + 1e-6 I) and d = l / sqrt(b) (those of
# B^-1/2 K). The kernel matrix goes straight from C to eigen(), which
# holds the only other reference to it.
kcca_kernlab_view <- function(x, kernel, gamma, threads, arg) {
  e <- eigen(engine_call(.Call(C_kernel_matrix, x, kernel_program(kernel),
                                kernel_weights(kernel, x), threads)),
             symmetric = TRUE)
  l <- e$values
  b <- l^2 + gamma * l + 1e-6
  if (any(b <= 0)) {
    # b is positive for every negative l only with gamma < (l^2 + 1e-6) / -l
    negative <- l[l < 0]
    stop_data(sprintf(paste0(
      "kernlab's regularized matrix (K + gamma I) K + 1e-6 I of '%s' is not positive ",
      "definite: its kernel matrix has the eigenvalue %.3g (the kernel is not positive ",
      "semidefinite); use a positive semidefinite kernel, or 'gamma' below %.3g"),
      arg, min(l), min((negative^2 + 1e-6) / -negative)))
  }
  list(vectors = e$vectors, b = b, d = l / sqrt(b))
}

# The signs of canonical pairs, from their x coefficients (columns): +1 or
# -1 each, so that the largest-magnitude entry of each column becomes
# positive; the y coefficients take the same signs, which keeps each
# correlation's sign.
kcca_pair_signs <- function(xcoef) {
  flip <- sign(xcoef[cbind(max.col(abs(t(xcoef)), ties.method = "first"), seq_len(ncol(xcoef)))])
  flip[flip == 0] <- 1
  flip
}

# kernlab's formulation holds dense matrices: at its peak, while the SVD of
# the n x n core runs, about 10 n x n ones (the eigenvectors of both views,
# the core, and the SVD's copy, vectors and workspace). Refused before any
# is made when they cannot fit in the memory budget (R/memory.R), with the
# way on.
check_kcca_kernlab_memory <- function(n, available = memory_budget()) {
  need <- 8 * as.double(n)^2 * 10
  if (!is.na(available) && need > available)
    stop_memory(sprintf(paste0(
      "kcca() with formulation = \"kernlab\" on %.0f rows needs about %s (dense %.0f x %.0f ",
      "matrices), but only %s of memory is available; ",
      "formulation = \"centered\" works on a low-rank factor of each kernel matrix instead"),
      n, format_bytes(need), n, n, format_bytes(available)))
  invisible(need)
}

# What predict() keeps of a view for kernlab's formulation: all training
# rows, no factor (L = NULL: a new row's "factor row" is its kernel row),
# and the coefficients: the variates of new rows z are K(z, x) a.
kcca_dense_summary <- function(x, kernel, coef) {
  n <- nrow(x)
  list(rows = x, pivots = seq_len(n), L = NULL, mean = numeric(n), projection = coef,
       weights = kernel_weights(kernel, x), rank = n, residual = 0)
}

# What predict() keeps of a view's factor: a new row z has the factor row
# L^-1 k(pivot rows, z), and the variates (g(z) - mean)' projection.
kcca_factor_summary <- function(f, x, kernel, projection, mean) {
  piv <- f$pivots
  list(rows = x[piv, , drop = FALSE], pivots = piv,
       L = f$G[piv, , drop = FALSE], mean = mean, projection = projection,
       weights = lapply(f$weights, function(w) w[piv]),
       rank = length(piv), residual = if (f$trace > 0) f$residual / f$trace else 0)
}

new_fastkpca_kcca <- function(kcor, xcoef, ycoef, xvariates, yvariates, kernel, kpar,
                              ykernel, ykpar, gamma, ncomps, formulation, tol,
                              max_rank, threads, xfactor, yfactor, n, call) {
  validate_fastkpca_kcca(structure(list(
    kcor = kcor, xcoef = xcoef, ycoef = ycoef, xvariates = xvariates,
    yvariates = yvariates, kernel = kernel, kpar = kpar, ykernel = ykernel,
    ykpar = ykpar, gamma = gamma, ncomps = ncomps, formulation = formulation,
    tol = tol, max_rank = max_rank, threads = threads, xfactor = xfactor,
    yfactor = yfactor, n = n, call = call), class = "fastkpca_kcca"))
}

validate_fastkpca_kcca <- function(fit) {
  bad <- function(what) stop_object("'object' is not a valid kcca fit: ", what)
  k <- length(fit$kcor)
  if (!is.double(fit$kcor) || k < 1L || any(!is.finite(fit$kcor)))
    bad("'kcor' must hold finite numbers")
  for (f in c("xcoef", "ycoef", "xvariates", "yvariates"))
    if (!is.matrix(fit[[f]]) || !identical(dim(fit[[f]]), c(fit$n, k)))
      bad(sprintf("'%s' must be a %d x %d matrix", f, fit$n, k))
  if (!is_kernel(fit$kernel) || !is_kernel(fit$ykernel))
    bad("'kernel' and 'ykernel' must be kernel objects")
  for (f in c("xfactor", "yfactor")) {
    fac <- fit[[f]]
    m <- fac$rank
    if ((!is.null(fac$L) && (!is.matrix(fac$L) || !identical(dim(fac$L), c(m, m)))) ||
        nrow(fac$rows) != m ||
        !identical(dim(fac$projection), c(m, k)) || length(fac$mean) != m)
      bad(sprintf("'%s' does not hold a factor of rank %d", f, m))
  }
  fit
}

#' @rdname kcca
#' @param digits Significant digits of the correlations.
#' @export
print.fastkpca_kcca <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  kernlab <- x$formulation == "kernlab"
  cat_line("", "Kernel canonical correlation (fastkpca) on ", x$n, " rows, ",
           if (kernlab) "kernlab's formulation (uncentered kernels)"
           else "centered formulation (Bach and Jordan)",
           ", gamma = ", format(x$gamma))
  rank <- function(f) if (is.null(f$L)) "dense" else paste("factor rank", f$rank)
  cat_line("Kernel of x: ", format(x$kernel), "  (", rank(x$xfactor), ")")
  cat_line("Kernel of y: ", format(x$ykernel), "  (", rank(x$yfactor), ")")
  cat("Canonical correlations:\n")
  print(x$kcor, digits = digits)
  if (kernlab)
    cat_line("", "(kernlab's formulation, the default so that kernlab code keeps kernlab's ",
             "results: each correlation appears twice, as +rho and -rho. ",
             "formulation = \"centered\" centers the kernels, without which the leading ",
             "pairs follow the kernels' means more than a relation between x and y, and ",
             "scales to large n.)")
  invisible(x)
}

#' Canonical variates of new rows
#'
#' The canonical functions of a [kcca()] fit at new rows of `x`, of `y`, or
#' of both: \eqn{f(z) = \sum_i a_i k_c(z, x_i)}{f(z) = sum_i a_i kc(z, x_i)},
#' computed through the fit's low-rank factor (the kernel between the new
#' rows and the factor's pivot rows only), so that on the training rows they
#' equal the fit's `xvariates` and `yvariates`.
#'
#' @param object A fit from [kcca()].
#' @param x,y New rows of the two views, with the training data's columns;
#'   either may be left out. With neither, the training variates.
#' @param ... Unused; an error if given.
#' @return A list with `x` and `y`: the canonical variates of the new rows
#'   (one column per canonical pair), or `NULL` for a view not given. Rows
#'   with missing values get `NA`.
#' @seealso [kcca()]
#' @examples
#' set.seed(1)
#' x <- runif(150, -1, 1)
#' y <- x^2 + rnorm(150, sd = 0.05)
#' fit <- kcca(x[1:100], y[1:100], kpar = list(sigma = 1), ncomps = 1,
#'             formulation = "centered")
#' v <- predict(fit, x = x[101:150], y = y[101:150])
#' cor(v$x, v$y)   # the relation holds on new rows
#' @export
predict.fastkpca_kcca <- function(object, x = NULL, y = NULL, ...) {
  check_no_dots(...)
  if (is.null(x) && is.null(y))
    return(list(x = object$xvariates, y = object$yvariates))
  list(x = if (!is.null(x)) kcca_variates(object$xfactor, object$kernel, x, "x",
                                          object$threads),
       y = if (!is.null(y)) kcca_variates(object$yfactor, object$ykernel, y, "y",
                                          object$threads))
}

kcca_variates <- function(factor, kernel, z, arg, threads) {
  z <- as_data_rows(z, arg)
  if (ncol(z) != ncol(factor$rows))
    stop_argument(sprintf("'%s' must have %d columns, as the training data, not %d", arg,
                          ncol(factor$rows), ncol(z)))
  check_no_infinite(z, arg)
  z <- rows_like(z, factor$rows)
  k <- ncol(factor$projection)
  out <- matrix(NA_real_, nrow(z), k, dimnames = list(rownames(z), NULL))
  ok <- complete_rows(z)
  if (is.null(ok)) ok <- rep(TRUE, nrow(z))
  if (!any(ok)) return(out)
  kz <- kernel_cross(z[ok, , drop = FALSE], factor$rows, kernel, threads, factor$weights)
  g <- if (is.null(factor$L)) t(kz) else forwardsolve(factor$L, t(kz))
  out[ok, ] <- sweep(crossprod(g, factor$projection), 2L,
                     drop(crossprod(factor$mean, factor$projection)))
  out
}

#' @export
kcor.fastkpca_kcca <- function(object, ...) {
  check_accessor_dots("kcor", ...)
  object$kcor
}

#' @export
xcoef.fastkpca_kcca <- function(object, ...) {
  check_accessor_dots("xcoef", ...)
  object$xcoef
}

#' @export
ycoef.fastkpca_kcca <- function(object, ...) {
  check_accessor_dots("ycoef", ...)
  object$ycoef
}

#' @export
kernelf.fastkpca_kcca <- function(object, ...) {
  check_accessor_dots("kernelf", ...)
  fit_kernel_function(object$kernel)
}

#' @export
kpar.fastkpca_kcca <- function(object, ...) {
  check_accessor_dots("kpar", ...)
  object$kpar
}

#' @export
kcall.fastkpca_kcca <- function(object, ...) {
  check_accessor_dots("kcall", ...)
  object$call
}
