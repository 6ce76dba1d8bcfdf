# Centered Nystrom kernel PCA, kpca(x, landmarks = ...): choosing the
# landmarks, the two passes over row blocks (src/nystrom.c), the small
# eigenproblems, predict() and printing.

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
#' \eqn{(k_m(x) - \mu)' \alpha}{(k_m(x) - mu)' alpha}. `kernel_colmeans` is
#' \eqn{\mu}, `kernel_mean` its mean, `xmatrix` and `landmarks` hold the m
#' landmark rows (the n training rows are not kept: `predict()` needs only
#' the landmarks), `kernel_weights` the conformal weights of the landmarks,
#' `landmark_rule` the rule that chose them (`"uniform"`, `"kmeans++"` or
#' `"given"`), `landmark_rows` their row numbers in `x` (`NULL` for given
#' rows), `landmark_rank` r, and `variance_total` the trace of \eqn{C}. The
#' fit has class `c("fastkpca_nystrom", "fastkpca")`. `solver` and
#' `control` are not used: the m x m problems are solved by LAPACK.
#'
#' The kernel between the rows and the landmarks is computed in blocks of
#' rows, twice: a first pass sums \eqn{K_{mn} 1}{K_mn 1} and
#' \eqn{K_{mn} K_{nm}}{K_mn K_nm} (a symmetric rank-k update, blocked and
#' multithreaded in C), a second one computes the scores. Memory beyond the
#' data is \eqn{O(m^2 + b\, m + n k)}{O(m^2 + b m + n k)} for blocks of
#' \eqn{b \approx 2^{22} / m}{b = 2^22 / m} rows; time is
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
    stop("'landmarks' cannot be used with kernel = \"precomputed\": Nystr\u00f6m ",
         "needs the data rows to evaluate the kernel on", call. = FALSE)
  chosen <- resolve_landmarks(landmarks, landmark_rule, x, kernel, features, threads)
  res <- nystrom_fit(x, chosen$rows, kernel, features, th, threads)
  labels <- paste0("Comp.", seq_along(res$eig))
  names(res$eig) <- labels
  dimnames(res$alpha) <- list(NULL, labels)
  dimnames(res$rotated) <- list(rownames(x), labels)
  structure(list(
    alpha = res$alpha, eig = res$eig,
    # na.exclude: one row per input row, NA where dropped (as prcomp)
    rotated = stats::napredict(na_action, res$rotated),
    kernel = kernel, kpar = kernel_kpar(kernel), xmatrix = chosen$rows,
    kernel_weights = res$lweights, center = scaling$center, scale = scaling$scale,
    kernel_colmeans = res$mu, kernel_mean = mean(res$mu),
    variance_total = res$variance_total,
    features = features, th = th, solver = "exact", threads = threads,
    landmarks = chosen$rows, landmark_rule = chosen$rule,
    landmark_rows = chosen$index, landmark_rank = res$rank,
    call = call, na.action = na_action
  ), class = c("fastkpca_nystrom", "fastkpca"))
}

# The landmark rows a `landmarks` argument means: list(rows (m x d),
# rule, index (row numbers in x, or NULL)).
resolve_landmarks <- function(landmarks, landmark_rule, x, kernel, features, threads) {
  n <- nrow(x)
  lo <- max(features + 1L, 2L)
  if (!is.character(landmark_rule) || length(landmark_rule) < 1L ||
      is.na(landmark_rule[1L]) || !landmark_rule[1L] %in% landmark_rules)
    stop("'landmark_rule' must be one of ",
         paste(dQuote(landmark_rules, FALSE), collapse = ", "), call. = FALSE)
  landmark_rule <- landmark_rule[1L]
  if (is.character(landmarks) && is.null(dim(landmarks))) {
    if (length(landmarks) != 1L || is.na(landmarks) || landmarks != "auto")
      stop("'landmarks' must be NULL, a number of rows, a matrix or data frame ",
           "of landmark rows, or \"auto\"", call. = FALSE)
    m <- auto_landmarks(n, features)
    if (m < lo)
      stop(sprintf("'landmarks' = \"auto\" needs at least features + 1 (%d) rows, not %d",
                   lo, n), call. = FALSE)
    return(draw_landmarks(x, m, landmark_rule, kernel, threads))
  }
  if (is.numeric(landmarks) && is.null(dim(landmarks)) && length(landmarks) == 1L) {
    if (is.na(landmarks) || landmarks != round(landmarks) || landmarks < lo ||
        landmarks > n)
      stop(sprintf(paste0("'landmarks' must be a whole number between ",
                          "max(2, features + 1) (%d) and nrow(x) (%d)"), lo, n),
           call. = FALSE)
    return(draw_landmarks(x, as.integer(landmarks), landmark_rule, kernel, threads))
  }
  if (!is.matrix(landmarks) && !is.data.frame(landmarks))
    stop("'landmarks' must be NULL, a number of rows, a matrix or data frame ",
         "of landmark rows, or \"auto\"", call. = FALSE)
  rows <- as_data_matrix(landmarks, "landmarks")
  train_names <- colnames(x)
  if (!is.null(train_names) && !is.null(colnames(rows))) {
    absent <- setdiff(train_names, colnames(rows))
    if (length(absent) > 0L)
      stop("'landmarks' lacks column", if (length(absent) > 1L) "s" else "", " ",
           paste(absent, collapse = ", "), call. = FALSE)
    rows <- rows[, train_names, drop = FALSE]
  }
  if (ncol(rows) != ncol(x))
    stop(sprintf("'landmarks' must have %d columns, as 'x', not %d", ncol(x), ncol(rows)),
         call. = FALSE)
  check_finite(rows, "landmarks")
  if (nrow(rows) < lo)
    stop(sprintf("'landmarks' must have at least max(2, features + 1) (%d) rows, not %d",
                 lo, nrow(rows)), call. = FALSE)
  if (nrow(rows) > n)
    stop(sprintf("'landmarks' must have at most nrow(x) (%d) rows, not %d", n, nrow(rows)),
         call. = FALSE)
  dimnames(rows) <- list(NULL, colnames(x))
  list(rows = rows, rule = "given", index = NULL)
}

# m rows of x drawn by a landmark rule, with R's random number generator.
draw_landmarks <- function(x, m, rule, kernel, threads) {
  index <- switch(rule,
    uniform = sample.int(nrow(x), m),
    "kmeans++" = {
      idx <- .Call(C_nystrom_kmeanspp, x, as.integer(m), kernel_program(kernel),
                   kernel_weights(kernel, x), threads)
      if (length(idx) < m)
        stop(sprintf(paste0("'landmarks': k-means++ found only %d rows that differ in ",
                            "feature space, fewer than the %d asked for"),
                     length(idx), m), call. = FALSE)
      idx
    })
  rows <- x[index, , drop = FALSE]
  dimnames(rows) <- list(NULL, colnames(x))
  list(rows = rows, rule = rule, index = index)
}

# Blocks of rows for the passes, as c(first row from 0, rows): the kernel
# between a block and the landmarks holds about 2^22 doubles (32 MB). The
# internal option fastkpca.nystrom_block_rows sets another size (the tests
# use it to check that sums over many blocks equal one block).
nystrom_blocks <- function(n, m) {
  size <- getOption("fastkpca.nystrom_block_rows", max(256, floor(2^22 / m)))
  size <- as.integer(max(1, min(n, size)))
  starts <- seq.int(0L, n - 1L, by = size)
  lapply(starts, function(s) c(s, min(size, n - s)))
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

# The fit on landmark rows L: K_mm and its eigenvectors, pass 1 (sums over
# row blocks), the r x r eigenproblem, pass 2 (scores block by block).
nystrom_fit <- function(x, L, kernel, features, th, threads) {
  n <- nrow(x)
  m <- nrow(L)
  program <- kernel_program(kernel)
  xweights <- kernel_weights(kernel, x)
  lweights <- kernel_weights(kernel, L)
  Kmm <- .Call(C_kernel_gram, L, program, lweights, threads)
  e <- eigen(Kmm, symmetric = TRUE)
  keep <- e$values > nystrom_rtol * max(e$values, 0)
  rank <- sum(keep)
  if (rank < max(features, 1L))
    stop(sprintf(paste0("'landmarks' leave the kernel matrix among them with %d ",
                        "positive eigenvalue%s, fewer than 'features' (%d): use ",
                        "more landmarks, or rows that differ in feature space"),
                 rank, if (rank == 1L) "" else "s", max(features, 1L)), call. = FALSE)
  # K_mm^(-1/2) on the kept eigenvectors: z(x) = t(Tm) k_m(x)
  Tm <- sweep(e$vectors[, keep, drop = FALSE], 2L, sqrt(e$values[keep]), "/")
  # the mean kernel row of the landmarks, close to that of all rows: the
  # sums are taken around it so that centering subtracts small numbers
  shift <- rowMeans(Kmm)
  rm(Kmm, e)

  blocks <- nystrom_blocks(n, m)
  progress <- nystrom_progress(2L * length(blocks))
  on.exit(progress$close())
  sums <- numeric(m)
  cross <- matrix(0, m, m)
  for (rows in blocks) {
    part <- .Call(C_nystrom_pass1, x, rows, L, program, xweights, lweights, shift, threads)
    sums <- sums + part$sums
    cross <- cross + part$cross
    progress$step()
  }
  cross[upper.tri(cross)] <- t(cross)[upper.tri(cross)]
  dev <- sums / n
  mu <- shift + dev
  # covariance of the centered features: t(Tm) (K_mn K_nm / n - mu mu') Tm
  C <- crossprod(Tm, (cross / n - tcrossprod(dev)) %*% Tm)
  C <- (C + t(C)) / 2
  ec <- eigen(C, symmetric = TRUE)
  k <- if (features > 0L) features else sum(ec$values > th)
  if (k == 0L)
    stop(sprintf("no eigenvalue of the centered kernel matrix exceeds 'th' (%g); ", th),
         "lower 'th', set 'features', or check the kernel parameters", call. = FALSE)
  comp <- positive_components(ec$values[seq_len(k)], ec$vectors[, seq_len(k), drop = FALSE])
  alpha <- orient_signs(sqrt(n) * (Tm %*% comp$vectors))
  offset <- drop(crossprod(mu, alpha))

  rotated <- matrix(0, n, ncol(alpha))
  for (rows in blocks) {
    idx <- rows[1L] + seq_len(rows[2L])
    rotated[idx, ] <- .Call(C_nystrom_pass2, x, rows, L, program, xweights, lweights,
                            alpha, offset, threads)
    progress$step()
  }
  list(eig = comp$values, alpha = alpha, rotated = rotated, mu = mu,
       variance_total = sum(diag(C)), rank = rank, lweights = lweights)
}

# predict() for a Nystrom fit: (k_m(z) - mu)' alpha, block by block.
nystrom_project_rows <- function(object, z) {
  alpha <- object$alpha
  L <- object$landmarks
  m <- nrow(alpha)
  if (!is.matrix(L) || !is.double(L) || nrow(L) != m)
    stop("'object' is not a valid fastkpca fit: its landmarks and 'alpha' do not match",
         call. = FALSE)
  offset <- drop(crossprod(object$kernel_colmeans, alpha))
  out <- matrix(0, nrow(z), ncol(alpha))
  for (rows in row_blocks(nrow(z), m)) {
    kz <- kernel_cross(z[rows, , drop = FALSE], L, object$kernel, object$threads,
                       object$kernel_weights)
    out[rows, ] <- sweep(kz %*% alpha, 2L, offset, "-")
  }
  out
}

#' @export
print.fastkpca_nystrom <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Kernel PCA (fastkpca, centered Nystr\u00f6m) on %d observations of %d variable%s\n",
              nrow(x$rotated), ncol(x$landmarks), if (ncol(x$landmarks) == 1L) "" else "s"))
  cat("Kernel:     ", format(x$kernel), "\n", sep = "")
  cat(sprintf("Landmarks:  %d (%s; rank %d)\n", nrow(x$landmarks), x$landmark_rule,
              x$landmark_rank))
  k <- length(x$eig)
  rule <- if (x$features == 0L) sprintf("eigenvalues above th = %g", x$th)
          else sprintf("features = %d", x$features)
  cat("Components: ", k, " (", rule, ")\n", sep = "")
  cat("Eigenvalues", if (k > 10L) " (first 10)", ":\n", sep = "")
  print(utils::head(x$eig, 10L), digits = digits)
  invisible(x)
}

#' @export
summary.fastkpca_nystrom <- function(object, ...) {
  out <- NextMethod()
  out$n <- nrow(object$rotated)
  out
}
