# Centered Nystrom kernel PCA, kpca(x, landmarks = ...), in four steps that
# chunked data can reuse one by one:
#   (a) nystrom_landmark_basis()  the landmarks prepared: K_mm, its
#       eigen-decomposition, the basis K_mm^(-1/2) and the shift
#   (b) nystrom_statistics()      the sufficient statistics of a set of rows
#       (pass 1 over row blocks, src/nystrom.c); nystrom_statistics_add()
#       adds those of two sets of rows (chunks)
#   (c) nystrom_solve()           the small eigenproblem: eig, alpha, mu
#   (d) nystrom_score_rows()      the scores of rows (pass 2), for the fit
#       and for predict()
# and the landmark rules, the fit object and its print method.

#' @rdname kpca
#' @section Nyström landmarks, beyond one n x n matrix:
#' With `landmarks`, the fit is centered Nyström kernel PCA, which never
#' forms the n x n kernel matrix. With \eqn{L} the m landmark rows,
#' \eqn{K_{mm} = k(L, L) = U \mathrm{diag}(s) U'}{K_mm = k(L, L) = U diag(s) U'}
#' (eigenvalues \eqn{s_i \le 10^{-10} \max s}{s_i <= 1e-10 max(s)} dropped,
#' leaving r of them) and \eqn{k_m(x)} the kernel between a row and the
#' landmarks, each row gets the features
#' \eqn{z(x) = \mathrm{diag}(s^{-1/2}) U' k_m(x)}{z(x) = diag(s^-1/2) U' k_m(x)},
#' so that \eqn{z(x)'z(y)} approximates \eqn{k(x, y)}. With
#' \eqn{\mu = K_{mn} 1 / n}{mu = K_mn 1 / n} the mean kernel row, the
#' features are centered by their mean, and their covariance
#' \deqn{C = \mathrm{diag}(s^{-1/2}) U' (K_{mn} K_{nm} / n - \mu \mu') U \mathrm{diag}(s^{-1/2})}{C = diag(s^-1/2) U' (K_mn K_nm / n - mu mu') U diag(s^-1/2)}
#' (r x r) is eigen-decomposed, \eqn{C = W \mathrm{diag}(\lambda) W'}{C = W diag(lambda) W'}.
#' `eig` are the leading \eqn{\lambda}, the eigenvalues of the approximated
#' \eqn{K_c / n}; `rotated` is `sqrt(n)` times the projections
#' \eqn{w_j'(z(x) - \bar z)}{w_j'(z(x) - mean(z))}: both are on the scale of
#' the exact fit, so the two can be compared directly, and with every row as
#' a landmark they are the exact fit.
#'
#' For such a fit, `alpha` is an m x k matrix of coefficients on the
#' landmarks, \eqn{\sqrt{n}\, U \mathrm{diag}(s^{-1/2}) W}{sqrt(n) U diag(s^-1/2) W}:
#' a row \eqn{x} (training or new) projects to
#' \eqn{(k_m(x) - \mu)' \alpha}{(k_m(x) - mu)' alpha}. `landmarks` holds the
#' m landmark rows (the n training rows are not kept: `predict()` needs only
#' the landmarks), `kernel_weights` the conformal weights of the landmarks,
#' `landmark_rule` the rule that chose them (`"uniform"`, `"kmeans++"` or
#' `"given"`), `landmark_rows` their row numbers in `x` (`NULL` for given
#' rows), `landmark_rank` r, and `variance_total` the trace of \eqn{C}.
#' `statistics` holds the sums over the rows that the fit is solved from,
#' whose size does not depend on n: `n` (the number of rows), `shift` (m
#' numbers \eqn{c}, close to \eqn{\mu}), `sums`
#' (\eqn{\sum_i (k_m(x_i) - c)}{sum_i (k_m(x_i) - c)}) and `cross`
#' (\eqn{\sum_i (k_m(x_i) - c)(k_m(x_i) - c)'}{sum_i (k_m(x_i) - c)(k_m(x_i) - c)'},
#' m x m), so that \eqn{\mu = c + sums / n}{mu = c + sums / n}. The fit has
#' class `c("fastkpca_nystrom", "fastkpca")`; it has no `xmatrix`,
#' `kernel_colmeans`, `kernel_mean`, `solver`, `iterations` or `variance`:
#' the m x m problems are solved by LAPACK, and `solver` and `control` are
#' not used.
#'
#' The kernel between the rows and the landmarks is computed in blocks of
#' rows, twice: a first pass sums \eqn{K_{mn} 1}{K_mn 1} and
#' \eqn{K_{mn} K_{nm}}{K_mn K_nm} (a symmetric rank-k update, blocked and
#' multithreaded in C), a second one computes the scores. Memory beyond the
#' data is \eqn{O(m^2 + b\, d + n k)}{O(m^2 + b d + n k)} for blocks of
#' \eqn{b \approx 2^{22} / m}{b = 2^22 / m} rows, plus the kernel of one
#' panel of a block's rows (at most \eqn{2^{20}}{2^20} doubles, 8 MB, so
#' that it is used while still in the cache); time is
#' \eqn{O(n m d + n m^2)}. A long fit shows a progress bar in interactive
#' sessions and can be interrupted between blocks.
#'
#' Landmarks: a number m draws m distinct rows with R's random number
#' generator, so `set.seed()` makes the fit reproducible; uniformly with
#' `landmark_rule = "uniform"`, or by kernel k-means++ seeding with
#' `"kmeans++"` (each next landmark drawn with probability proportional to
#' its squared distance in feature space from the nearest landmark so far;
#' it costs about as much kernel work as one more pass over the data, on
#' one thread, and is more accurate for the same m on clustered data).
#' `"auto"` takes
#' \eqn{m = \min(n, \max(200, 20 k))}{m = min(n, max(200, 20 k))} uniform
#' landmarks for `features = k` (`k = 10` when `features = 0`). The rule
#' comes from `bench/nystrom.R`: at n = 20000 (d = 10, `rbfdot`), 100
#' landmarks were the fewest that kept 10 eigenvalues within 1% of the exact
#' fit's and the leading score columns correlated above 0.99 with it (50
#' missed by 3%); "auto" takes twice that, and met the same bounds with 5, 10
#' and 20 features. Time grows as \eqn{n m (d + m)}, so more landmarks than
#' that cost more without a visible gain.
#'
#' @param landmarks `NULL` (the default) for the exact fit; otherwise the
#'   fit is centered Nyström kernel PCA (see the section on Nyström
#'   landmarks) with as landmarks: a number m of rows of `x`, between
#'   `max(2, features + 1)` and `nrow(x)`, chosen by `landmark_rule`; a
#'   matrix or data frame of landmark rows with the columns of `x` (as many
#'   rows as a number allows); or `"auto"`.
#' @param landmark_rule How a number of landmarks is drawn from the rows:
#'   `"uniform"` (the default) or `"kmeans++"`.
#' @name kpca
NULL

# Relative tolerance below which an eigenvalue of K_mm counts as zero.
nystrom_rtol <- 1e-10

landmark_rules <- c("uniform", "kmeans++")

# The rule behind landmarks = "auto" (see ?kpca and bench/nystrom.R): twice
# the fewest uniform landmarks that met the accuracy targets of issue 10 at
# n = 20000 with 10 features (100), 20 per feature for more features.
auto_landmarks <- function(n, features) {
  k <- if (features > 0L) features else 10L
  as.integer(min(n, max(200L, 20L * k)))
}

# The fit, called by kpca.default once the data are prepared.
kpca_nystrom <- function(x, kernel, features, th, landmarks, landmark_rule, threads,
                         call, na_action, scaling) {
  if (is_precomputed(kernel))
    stop_argument("'landmarks' cannot be used with kernel = \"precomputed\": Nystr\u00f6m ",
                  "needs the data rows to evaluate the kernel on")
  chosen <- resolve_landmarks(landmarks, landmark_rule, x, kernel, features, threads)
  program <- kernel_program(kernel)
  basis <- nystrom_landmark_basis(chosen$rows, kernel, features, threads, program)
  blocks <- ceiling(NROW(x) / block_size(NROW(x), NROW(chosen$rows)))
  progress <- nystrom_progress(2L * blocks)
  on.exit(progress$close())
  stats <- nystrom_statistics(x, basis, kernel, threads, program, progress$step)
  res <- nystrom_solve(stats, basis, features, th)
  labels <- paste0("Comp.", seq_along(res$eig))
  names(res$eig) <- labels
  dimnames(res$alpha) <- list(NULL, labels)
  rotated <- nystrom_score_rows(x, basis, kernel, res$alpha, res$mu, threads, program,
                                progress$step)
  dimnames(rotated) <- list(row_labels(x), labels)
  validate_fastkpca_nystrom(new_fastkpca_nystrom(
    alpha = res$alpha, eig = res$eig,
    # na.exclude: one row per input row, NA where dropped (as prcomp)
    rotated = stats::napredict(na_action, rotated),
    kernel = kernel, kpar = kernel_kpar(kernel), features = features, th = th,
    threads = threads, variance_total = res$variance_total, center = scaling$center,
    scale = scaling$scale, call = call, na.action = na_action,
    landmarks = chosen$rows, landmark_rule = chosen$rule, landmark_rows = chosen$index,
    landmark_rank = basis$rank, kernel_weights = basis$weights, statistics = stats))
}

# The landmark rows a `landmarks` argument means: list(rows (m x d),
# rule, index (row numbers in x, or NULL)). Strings have their own rules
# (resolve_string_landmarks(), R/string_kernels.R).
resolve_landmarks <- function(landmarks, landmark_rule, x, kernel, features, threads) {
  if (is.character(x)) return(resolve_string_landmarks(landmarks, x, features))
  n <- nrow(x)
  lo <- max(features + 1L, 2L)
  landmark_rule <- check_choice(landmark_rule, landmark_rules, "landmark_rule")
  if (is.character(landmarks) && is.null(dim(landmarks))) {
    if (length(landmarks) != 1L || is.na(landmarks) || landmarks != "auto")
      stop_argument("'landmarks' must be NULL, a number of rows, a matrix or data frame ",
                    "of landmark rows, or \"auto\"")
    m <- auto_landmarks(n, features)
    if (m < lo)
      stop_argument(sprintf("'landmarks' = \"auto\" needs at least features + 1 (%d) rows, not %d",
                            lo, n))
    return(draw_landmarks(x, m, landmark_rule, kernel, threads))
  }
  if (is.numeric(landmarks) && is.null(dim(landmarks)) && length(landmarks) == 1L) {
    m <- check_whole(landmarks, "landmarks", lo, n, lo_label = "max(2, features + 1)",
                     hi_label = "nrow(x)")
    return(draw_landmarks(x, m, landmark_rule, kernel, threads))
  }
  if (!is_rows_input(landmarks))
    stop_argument("'landmarks' must be NULL, a number of rows, a matrix or data frame ",
                  "of landmark rows, or \"auto\"")
  list(rows = given_landmark_rows(landmarks, x, lo), rule = "given", index = NULL)
}

# Landmark rows given as a matrix or data frame, checked against the data x
# (the columns of x, by name when both have names), as a double matrix.
given_landmark_rows <- function(landmarks, x, lo) {
  rows <- as_data_rows(landmarks, "landmarks")
  train_names <- colnames(x)
  if (!is.null(train_names) && !is.null(colnames(rows))) {
    absent <- setdiff(train_names, colnames(rows))
    if (length(absent) > 0L)
      stop_argument("'landmarks' lacks column", if (length(absent) > 1L) "s" else "", " ",
                    paste(absent, collapse = ", "))
    rows <- rows[, train_names, drop = FALSE]
  }
  if (ncol(rows) != ncol(x))
    stop_argument(sprintf("'landmarks' must have %d columns, as 'x', not %d", ncol(x), ncol(rows)))
  check_finite(rows, "landmarks")
  if (nrow(rows) < lo)
    stop_argument(sprintf("'landmarks' must have at least max(2, features + 1) (%d) rows, not %d",
                          lo, nrow(rows)))
  if (nrow(rows) > nrow(x))
    stop_argument(sprintf("'landmarks' must have at most nrow(x) (%d) rows, not %d", nrow(x),
                          nrow(rows)))
  dimnames(rows) <- list(NULL, colnames(x))
  rows_like(rows, x)
}

# m rows of x drawn by a landmark rule, with R's random number generator.
draw_landmarks <- function(x, m, rule, kernel, threads) {
  index <- switch(rule,
    uniform = sample.int(nrow(x), m),
    "kmeans++" = nystrom_kmeanspp(x, m, kernel))
  rows <- x[index, , drop = FALSE]
  dimnames(rows) <- list(NULL, colnames(x))
  list(rows = rows, rule = rule, index = index)
}

# m row numbers of x by kernel k-means++ seeding (in C, on one thread: each
# draw needs the one before), with R's random number generator. step:
# NULL, or a function called after each landmark but the last (the tests
# count the landmarks drawn after an interrupt).
nystrom_kmeanspp <- function(x, m, kernel, step = NULL) {
  idx <- engine_call(.Call(C_nystrom_kmeanspp, x, as.integer(m), kernel_program(kernel),
                           kernel_weights(kernel, x), step))
  if (length(idx) < m)
    stop_data(sprintf(paste0("'landmarks': k-means++ found only %d rows that differ in ",
                             "feature space, fewer than the %d asked for"),
                      length(idx), m))
  idx
}

# A progress bar for the passes, shown in interactive sessions once the
# first steps predict a fit longer than a few seconds.
nystrom_progress <- function(steps) {
  start <- proc.time()[["elapsed"]]
  done <- 0L
  bar <- NULL
  list(step = function() {
    done <<- done + 1L
    if (is.null(bar) && interactive() && done < steps) {
      spent <- proc.time()[["elapsed"]] - start
      if (spent / done * steps > 3)
        bar <<- utils::txtProgressBar(min = 0, max = steps, style = 3)
    }
    if (!is.null(bar)) utils::setTxtProgressBar(bar, done)
  }, close = function() if (!is.null(bar)) close(bar))
}

# (a) The landmarks L prepared: their conformal weights, K_mm = k(L, L) and
# its eigen-decomposition, the basis Tm = U diag(s^-1/2) on the r kept
# eigenvalues (z(x) = t(Tm) k_m(x)), and the shift: the mean kernel row of
# the landmarks, close to that of all rows, so that the sums of (b) are
# taken around it and centering subtracts small numbers.
nystrom_landmark_basis <- function(L, kernel, features, threads,
                                   program = kernel_program(kernel)) {
  weights <- kernel_weights(kernel, L)
  Kmm <- engine_call(.Call(C_kernel_matrix, L, program, weights, threads))
  e <- eigen(Kmm, symmetric = TRUE)
  keep <- e$values > nystrom_rtol * max(e$values, 0)
  rank <- sum(keep)
  if (rank < max(features, 1L))
    stop_data(sprintf(paste0("'landmarks' leave the kernel matrix among them with %d ",
                             "positive eigenvalue%s, fewer than 'features' (%d): use ",
                             "more landmarks, or rows that differ in feature space"),
                      rank, if (rank == 1L) "" else "s", max(features, 1L)))
  list(rows = L, weights = weights,
       basis = sweep(e$vectors[, keep, drop = FALSE], 2L, sqrt(e$values[keep]), "/"),
       shift = rowMeans(Kmm), rank = rank)
}

# (b) The sufficient statistics of the rows of x for the landmarks of
# basis: list(n, shift, sums = sum_i (k_m(x_i) - shift), cross = the m x m
# sum_i (k_m(x_i) - shift)(k_m(x_i) - shift)'), summed over row blocks in C
# (pass 1, one .Call). Their size does not depend on n; those of two sets
# of rows add (nystrom_statistics_add()), so a chunk of rows at a time will
# do. step: NULL, or a function called after each block (a progress bar).
nystrom_statistics <- function(x, basis, kernel, threads, program = kernel_program(kernel),
                               step = NULL) {
  part <- engine_call(.Call(C_nystrom_statistics, x, basis$rows, program,
                            kernel_weights(kernel, x), basis$weights, basis$shift,
                            block_size(NROW(x), NROW(basis$rows)), threads, step))
  list(n = NROW(x), shift = basis$shift, sums = part$sums, cross = part$cross)
}

# The statistics of two sets of rows together (taken around one shift).
nystrom_statistics_add <- function(a, b) {
  if (!identical(a$shift, b$shift))
    stop_argument("Nystr\u00f6m statistics must be taken around the same shift to be added")
  list(n = a$n + b$n, shift = a$shift, sums = a$sums + b$sums, cross = a$cross + b$cross)
}

# (c) The small problem from the statistics: mu (the mean kernel row), the
# covariance of the centered features t(Tm) (K_mn K_nm / n - mu mu') Tm and
# its leading eigenpairs; alpha = sqrt(n) Tm W (nystrom_alpha()).
nystrom_solve <- function(stats, basis, features, th) {
  n <- stats$n
  dev <- stats$sums / n
  Tm <- basis$basis
  C <- crossprod(Tm, (stats$cross / n - tcrossprod(dev)) %*% Tm)
  C <- (C + t(C)) / 2
  ec <- eigen(C, symmetric = TRUE)
  k <- if (features > 0L) features else sum(ec$values > th)
  if (k == 0L)
    stop_data(sprintf("no eigenvalue of the centered kernel matrix exceeds 'th' (%g); ", th),
              "lower 'th', set 'features', or check the kernel parameters")
  comp <- positive_components(ec$values[seq_len(k)], ec$vectors[, seq_len(k), drop = FALSE])
  list(eig = comp$values, alpha = nystrom_alpha(Tm, comp$vectors, n),
       mu = nystrom_mu(stats), variance_total = sum(diag(C)))
}

# The landmark coefficients sqrt(n) Tm W of the basis Tm and the eigenvectors
# W, with signs fixed by the one sign rule of every fit (in C,
# src/nystrom.c).
nystrom_alpha <- function(basis, vectors, n) {
  engine_call(.Call(C_nystrom_alpha, basis, vectors, as.double(n)))
}

# The mean kernel row of the rows behind a set of statistics.
nystrom_mu <- function(stats) stats$shift + stats$sums / stats$n

# (d) The scores (k_m(z) - mu)' alpha of the rows of z, over row blocks in
# C: the fit's rotated (pass 2) and predict()'s projections alike.
# landmarks: list(rows, weights) (a basis from (a) will do).
nystrom_score_rows <- function(z, landmarks, kernel, alpha, mu, threads,
                               program = kernel_program(kernel), step = NULL) {
  kernel_project_rows(z, landmarks$rows, kernel, landmarks$weights, alpha,
                      drop(crossprod(mu, alpha)), NULL, threads, program, step)
}

# predict() (and preimage()) for a Nystrom fit: the scores of the rows of z.
nystrom_project_rows <- function(object, z) {
  nystrom_score_rows(z, list(rows = object$landmarks, weights = object$kernel_weights),
                     object$kernel, object$alpha, nystrom_mu(object$statistics),
                     object$threads)
}

# summary() of a Nystrom fit says so, and names its landmarks
#' @export
summary.fastkpca_nystrom <- function(object, ...) {
  out <- NextMethod()
  out$method <- "Centered Nystr\u00f6m kernel PCA"
  out$landmarks <- sprintf("%d (%s; rank %d)", nrow(object$landmarks),
                           object$landmark_rule, object$landmark_rank)
  out
}
