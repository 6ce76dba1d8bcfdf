# Centered Nystrom kernel PCA over row chunks (R/row_chunks.R): the passes
# over the chunks (in this process, or on future's workers, one future per
# batch: R/workers.R), the landmarks drawn across chunks, the fit class without
# per-row scores, predict() on chunks and update() with more rows.
#
# A pass sends each worker a batch of chunk descriptions with the
# landmarks and the kernel; the worker reads its chunks, turns each into a
# small result (the pass-1 sums of R/nystrom.R, a sample of rows, or
# scores) and adds up what can be added before sending it back.

#' @rdname kpca
#' @section Data in chunks:
#' `kpca(row_chunks(...), landmarks = m)` fits centered Nyström kernel PCA
#' to data that never come together in one R matrix: files, a list of
#' matrices, a database query or a function of the chunk number (see
#' [row_chunks()]). The fit is a sum over rows, so the chunks are read one
#' at a time and only the sums are kept: the result is the fit on
#' `rbind()` of the chunks, whatever their number and order, up to
#' rounding (about `1e-12` relative for the eigenvalues in the tests). Each
#' chunk must have the training columns: by name where the chunks have
#' names (other columns are ignored), by position otherwise. A chunk that
#' cannot be read, or lacks a column, stops the fit with an error naming
#' it. `na.action` applies to each chunk.
#'
#' A number of landmarks is drawn uniformly from all rows, by a first pass
#' in which every chunk gives each of its rows a random key and returns the
#' rows with the smallest keys; the m smallest over all chunks are the
#' landmarks. The keys of chunk i come from a random-number stream of its
#' own (L'Ecuyer-CMRG, as [parallel::nextRNGStream()]), derived from one
#' draw of R's generator, so `set.seed()` gives the same landmarks under
#' every plan and number of workers. The same pass computes the column
#' means and variances that `center = TRUE` and `scale. = TRUE` need.
#' Given landmark rows skip it (unless those are asked for). `landmark_rule
#' = "kmeans++"` and `kpar = "automatic"` need the rows in one matrix.
#'
#' The fit has class `c("fastkpca_nystrom_chunked", "fastkpca_nystrom",
#' "fastkpca")`. It keeps no per-row scores (`rotated` is `NULL`; n may be
#' far beyond memory): `predict(fit, row_chunks(...))` computes them chunk
#' by chunk. Like every Nyström fit it keeps the sufficient statistics in
#' `statistics` (with the number of rows, `statistics$n`; see
#' [update.fastkpca_nystrom()]), and adds `chunks`, the number of chunks
#' read; `na.action` is `NULL`.
#'
#' @section Parallel passes:
#' Under a [future::plan()] other than `sequential` (with the package
#' future installed), each pass over the chunks runs on the plan's
#' workers, one future per batch of chunks: a worker
#' gets the descriptions of a batch of chunks (file names, a query with its
#' offset, or the chunks themselves for a list), the landmarks and the
#' kernel, reads the chunks itself, and sends back their sums (an m x m
#' matrix per batch). A batch whose worker is lost (its process killed,
#' by the user, the system or a lost node) runs again once the round's
#' other batches are back, on the plan's workers started again, up to
#' twice; a batch that no renewed worker takes (a cluster made by the
#' user) runs in the calling process, and a batch lost three times stops
#' the fit with an error naming its chunks. Chunks held by a live DBI connection are read in the
#' calling process (a connection cannot travel); give [row_chunks()] a
#' function that connects instead. With the sequential plan, or without
#' future, the passes run in the calling process. Progress is signalled
#' through progressr, one step per chunk, from the workers (wrap the call
#' in [progressr::with_progress()] or set [progressr::handlers()] to see
#' it), and a fit can be interrupted between chunks.
#'
#' `threads` is then the number of threads per worker; its default is
#' `kpca_threads()` divided by the number of workers (at least 1), so that
#' workers times threads does not oversubscribe the machine. On a cluster
#' of machines, set it to the cores of one machine divided by the workers
#' it runs.
#'
#' Any future backend serves, and gives the numbers of the sequential plan:
#' the package's tests check the chunked passes and the matrix-free
#' solver's under `multisession`, `cluster` on localhost, future.batchtools'
#' `batchtools_local` and future.mirai's `mirai_multisession`. On a Slurm cluster, with the chunks on a file
#' system the nodes share and fastkpca installed where they run R,
#' future.batchtools sends each batch of chunks as a job; save a template
#' such as this one as `slurm.tmpl` (batchtools fills in the `<%= %>` parts):
#' ```
#' #!/bin/bash
#' #SBATCH --job-name=<%= job.name %>
#' #SBATCH --output=<%= log.file %>
#' #SBATCH --error=<%= log.file %>
#' #SBATCH --ntasks=1
#' #SBATCH --cpus-per-task=<%= resources$ncpus %>
#' #SBATCH --mem-per-cpu=<%= resources$memory %>
#' #SBATCH --time=<%= ceiling(resources$walltime / 60) %>
#' Rscript -e 'batchtools::doJobCollection("<%= uri %>")'
#' ```
#' and set the plan before the fit (`workers`: the jobs at once, one batch
#' of chunks each; `memory` in megabytes per CPU, `walltime` in seconds):
#' ```
#' future::plan(future.batchtools::batchtools_slurm, template = "slurm.tmpl",
#'              workers = 20, resources = list(ncpus = 2, memory = 2048,
#'                                             walltime = 3600))
#' fit <- kpca(row_chunks(files), kpar = list(sigma = 0.05), features = 10,
#'             landmarks = 500, threads = 2)
#' ```
#' @name kpca
NULL

#' @rdname kpca
#' @export
kpca.fastkpca_row_chunks <- function(x, kernel = "rbfdot", kpar = list(sigma = 0.1),
                                     features = 0, th = 1e-4, na.action = na.omit,
                                     threads = NULL, center = FALSE, scale. = FALSE,
                                     landmarks = "auto", landmark_rule = "uniform", ...) {
  check_no_dots(...)
  call <- match.call()
  call[[1L]] <- as.name("kpca")
  kernel <- kpca_kernel(kernel, kpar, missing(kpar))
  if (is_precomputed(kernel))
    stop_argument("'kernel' = \"precomputed\" cannot be used with chunks of rows")
  if (identical(kpar, "automatic"))
    stop_argument("'kpar' = \"automatic\" needs the rows in one matrix: give sigma, for example ",
                  "median_sigma() of a sample of the rows")
  if (!identical(landmark_rule, "uniform"))
    stop_argument("'landmark_rule' must be \"uniform\" for chunks of rows: \"kmeans++\" needs ",
                  "the rows in one matrix")
  if (is.null(landmarks))
    stop_argument("'landmarks' must be given for chunks of rows: the exact fit needs all rows ",
                  "in one matrix")
  threads <- if (is.null(threads)) chunk_threads() else check_threads(threads)
  th <- check_th(th)
  features <- check_whole(features, "features", 0, .Machine$integer.max)
  source <- x
  given <- is_rows_input(landmarks)
  scan <- NULL
  if (!given || isTRUE(center) || isTRUE(scale.)) {
    scan <- scan_chunks(source, landmarks_cap(landmarks, features), na.action,
                        columns = if (given) colnames(landmarks),
                        d = if (given) ncol(landmarks))
    source$chunks <- scan$chunks
  }
  columns <- if (given) colnames(landmarks) else scan$columns
  d <- if (given) ncol(landmarks) else length(scan$mean)
  scaling <- chunk_scaling(center, scale., scan, d)
  chosen <- if (given) given_landmarks(landmarks, features)
            else sampled_landmarks(scan, landmarks, features, scaling)
  basis <- nystrom_landmark_basis(chosen$rows, kernel, features, threads)
  args <- list(arg = "x", prepare = "columns", columns = columns, d = d,
               na_action = na.action, center = scaling$center, scale = scaling$scale,
               basis = worker_basis(basis), kernel = kernel, threads = threads)
  passed <- chunk_map(source, "sums", args, add_chunk_statistics)
  n <- if (is.null(passed$value)) 0 else passed$value$n
  if (n < nrow(chosen$rows))
    stop_data(sprintf("'x' has %.0f rows (after 'na.action'), fewer than the %d landmarks",
                      n, nrow(chosen$rows)))
  nystrom_chunked_fit(passed$value, basis, kernel, features, th, threads, scaling,
                      chosen, passed$chunks, call)
}

# Threads per worker by default: kpca_threads() shared among the workers.
chunk_threads <- function() {
  if (!chunks_in_parallel()) return(kpca_threads())
  max(1L, as.integer(kpca_threads() %/% future::nbrOfWorkers()))
}

# TRUE when the passes go to future's workers: future is installed and the
# plan is not sequential.
chunks_in_parallel <- function() {
  # a plan is future's once it is loaded, or named by its settings before
  # (options(future.plan), R_FUTURE_PLAN): without either, no plan but the
  # sequential one, and future is not loaded for nothing (a tenth of a
  # second, serial time in every matrix-free fit of a fresh session)
  if (!isNamespaceLoaded("future") && is.null(getOption("future.plan")) &&
      !nzchar(Sys.getenv("R_FUTURE_PLAN")))
    return(FALSE)
  requireNamespace("future", quietly = TRUE) &&
    !inherits(future::plan(), "sequential")
}

# How many rows each chunk offers as landmark candidates: the number asked
# for, or the most "auto" can take (R/nystrom.R's rule, before n is known).
landmarks_cap <- function(landmarks, features) {
  if (is_rows_input(landmarks)) return(0L)
  if (identical(landmarks, "auto")) return(auto_landmarks(.Machine$integer.max, features))
  if (!is.numeric(landmarks) || length(landmarks) != 1L || is.na(landmarks) ||
      landmarks != round(landmarks) || landmarks < max(2L, features + 1L) ||
      landmarks > .Machine$integer.max)
    stop_argument(sprintf(paste0("'landmarks' must be a whole number of at least max(2, features ",
                                 "+ 1) (%d), a matrix or data frame of landmark rows, or \"auto\""),
                          max(2L, features + 1L)))
  as.integer(landmarks)
}

# The first pass, for landmarks drawn by number and for center/scale = TRUE:
# rows, columns and column moments of every chunk, and its `cap` rows with
# the smallest random keys. Returns list(chunks, n, columns, mean, m2 (sums
# of squared deviations from the mean), candidates (keys, rows, and their
# row numbers over all chunks)).
scan_chunks <- function(source, cap, na_action, columns = NULL, d = NULL) {
  args <- list(arg = "x", prepare = "columns", columns = columns, d = d,
               na_action = na_action, center = FALSE, scale = FALSE, cap = cap)
  parts <- chunk_map(source, "scan", args, seeds = chunk_seeds())$value
  if (is.null(columns)) columns <- parts[[1L]]$columns
  d <- length(parts[[1L]]$mean)
  n <- 0
  mean <- numeric(d)
  m2 <- numeric(d)
  keys <- numeric()
  rows <- list()
  index <- numeric()
  for (i in seq_along(parts)) {
    part <- align_scan_part(parts[[i]], columns, d, chunk_label(source, i), i)
    if (part$n == 0L) next
    # Chan et al.'s pairwise update of the mean and the squared deviations
    total <- n + part$n
    delta <- part$mean - mean
    m2 <- m2 + part$m2 + delta^2 * n * part$n / total
    mean <- mean + delta * part$n / total
    if (!is.null(part$sample)) {
      keys <- c(keys, part$sample$keys)
      rows[[length(rows) + 1L]] <- part$sample$rows
      index <- c(index, n + part$sample$index)
    }
    n <- total
  }
  if (n < 2)
    stop_argument(sprintf("'x' must have at least 2 rows (after 'na.action'), not %.0f", n))
  names(mean) <- columns
  list(chunks = length(parts), n = n, columns = columns, mean = mean, m2 = m2,
       candidates = list(keys = keys, rows = bind_rows(rows), index = index))
}

# A chunk's scan result with the first chunk's columns, in their order.
align_scan_part <- function(part, columns, d, label, i) {
  have <- part$columns
  if (!is.null(columns) && !is.null(have)) {
    if (!setequal(have, columns))
      stop_chunk(sprintf("chunk %d (%s) of 'x' has columns %s, not those of chunk 1 (%s)", i,
                         label, paste(have, collapse = ", "), paste(columns, collapse = ", ")))
    part$mean <- part$mean[columns]
    part$m2 <- part$m2[columns]
    if (!is.null(part$sample)) part$sample$rows <- part$sample$rows[, columns, drop = FALSE]
  } else if (length(part$mean) != d) {
    stop_chunk(sprintf("chunk %d (%s) of 'x' has %d columns, not %d as chunk 1", i, label,
                       length(part$mean), d))
  }
  part
}

# center and scale. as prcomp() means them (R/scaling.R), from the moments
# of the scan: the numbers subtracted and divided by, or FALSE.
chunk_scaling <- function(center, scale., scan, d) {
  center <- check_scaling_arg(center, "center", d)
  scale. <- check_scaling_arg(scale., "scale.", d)
  cen <- if (isTRUE(center)) scan$mean else if (is.numeric(center)) center
  sc <- if (is.numeric(scale.)) scale.
  if (isTRUE(scale.)) {
    # base::scale(): the root mean square of the centered columns, n - 1
    off <- if (is.null(cen)) 0 else cen
    sc <- sqrt((scan$m2 + scan$n * (scan$mean - off)^2) / max(1, scan$n - 1))
    names(sc) <- scan$columns
    if (any(!(sc > 0)))
      stop_data(sprintf("'scale.' = TRUE cannot rescale a constant column to unit variance: %s",
                        paste(if (is.null(scan$columns)) which(!(sc > 0))
                              else scan$columns[!(sc > 0)], collapse = ", ")))
  }
  list(center = if (is.null(cen)) FALSE else cen, scale = if (is.null(sc)) FALSE else sc)
}

# Landmark rows given by the user, checked as R/nystrom.R checks them.
given_landmarks <- function(landmarks, features) {
  rows <- as_data_rows(landmarks, "landmarks")
  check_finite(rows, "landmarks")
  lo <- max(features + 1L, 2L)
  if (nrow(rows) < lo)
    stop_argument(sprintf("'landmarks' must have at least max(2, features + 1) (%d) rows, not %d",
                          lo, nrow(rows)))
  dimnames(rows) <- list(NULL, colnames(rows))
  list(rows = rows, rule = "given", index = NULL)
}

# The m candidates with the smallest keys over all chunks: a uniform sample
# of m distinct rows. Scaled as the fit's rows are.
sampled_landmarks <- function(scan, landmarks, features, scaling) {
  n <- scan$n
  m <- if (identical(landmarks, "auto")) auto_landmarks(min(n, .Machine$integer.max), features)
       else as.integer(landmarks)
  if (m > n)
    stop_argument(sprintf("'landmarks' (%d) must be at most the number of rows of 'x' (%.0f)", m, n))
  o <- order(scan$candidates$keys)[seq_len(m)]
  rows <- apply_scaling(scan$candidates$rows[o, , drop = FALSE], scaling$center,
                        scaling$scale)
  dimnames(rows) <- list(NULL, scan$columns)
  list(rows = rows, rule = "uniform", index = scan$candidates$index[o])
}

# ---- the Nystrom steps (R/nystrom.R) on chunks -------------------------------

# What a worker needs of a landmark basis for the sums (nystrom_statistics()):
# the landmark rows, their conformal weights and the shift; not the m x r
# basis, which only the caller's solve uses.
worker_basis <- function(basis) basis[c("rows", "weights", "shift")]

# The sufficient statistics of one chunk's rows (pass 1 of R/nystrom.R), or
# NULL for a chunk left without rows (after na.action).
chunk_statistics <- function(x, basis, kernel, threads) {
  if (nrow(x) == 0L) return(NULL)
  nystrom_statistics(x, basis, kernel, threads)
}

# The fold of the sums pass: nystrom_statistics_add(), with empty chunks.
add_chunk_statistics <- function(a, b) {
  if (is.null(a)) return(b)
  if (is.null(b)) return(a)
  nystrom_statistics_add(a, b)
}

# ---- the fit class ---------------------------------------------------------

# The small problem solved from the statistics (R/nystrom.R), and the fit.
nystrom_chunked_fit <- function(stats, basis, kernel, features, th, threads, scaling,
                                chosen, chunks, call) {
  res <- nystrom_solve(stats, basis, features, th)
  labels <- paste0("Comp.", seq_along(res$eig))
  names(res$eig) <- labels
  dimnames(res$alpha) <- list(NULL, labels)
  validate_fastkpca_nystrom_chunked(new_fastkpca_nystrom_chunked(
    alpha = res$alpha, eig = res$eig, kernel = kernel, kpar = kernel_kpar(kernel),
    features = features, th = th, threads = threads, variance_total = res$variance_total,
    center = scaling$center, scale = scaling$scale, call = call,
    landmarks = chosen$rows, landmark_rule = chosen$rule, landmark_rows = chosen$index,
    landmark_rank = basis$rank, kernel_weights = basis$weights, statistics = stats,
    chunks = chunks))
}

# A Nystrom fit from chunks: the fields of a Nystrom fit (R/fit_classes.R),
# without per-row scores (rotated and na.action NULL), and the number of
# chunks read.
new_fastkpca_nystrom_chunked <- function(alpha, eig, kernel, kpar, features, th, threads,
                                         variance_total, center, scale, call, landmarks,
                                         landmark_rule, landmark_rows, landmark_rank,
                                         kernel_weights, statistics, chunks) {
  fit <- new_fastkpca_nystrom(
    alpha = alpha, eig = eig, rotated = NULL, kernel = kernel, kpar = kpar,
    features = features, th = th, threads = threads, variance_total = variance_total,
    center = center, scale = scale, call = call, na.action = NULL, landmarks = landmarks,
    landmark_rule = landmark_rule, landmark_rows = landmark_rows,
    landmark_rank = landmark_rank, kernel_weights = kernel_weights, statistics = statistics)
  fit$chunks <- chunks
  class(fit) <- c("fastkpca_nystrom_chunked", class(fit))
  fit
}

validate_fastkpca_nystrom_chunked <- function(x) {
  validate_fastkpca_nystrom(x)
  if (!is.null(x$rotated)) invalid_fit("'rotated' must be NULL for a fit from chunks")
  if (!is.numeric(x$chunks) || length(x$chunks) != 1L || !(x$chunks >= 1))
    invalid_fit("'chunks' must be the number of chunks read")
  invisible(x)
}

#' @exportS3Method
check_fit.fastkpca_nystrom_chunked <- function(object)
  validate_fastkpca_nystrom_chunked(object)

#' @exportS3Method
fit_description.fastkpca_nystrom_chunked <- function(x) {
  d <- ncol(x$landmarks)
  sprintf(paste0("Kernel PCA (fastkpca, centered Nystr\u00f6m from %d chunk%s) on %.0f ",
                 "observations of %d variable%s"), x$chunks, if (x$chunks == 1L) "" else "s",
          fit_nobs(x), d, if (d == 1L) "" else "s")
}

#' @exportS3Method
print_fit_details.fastkpca_nystrom_chunked <- function(x) {
  NextMethod()
  cat_line("Scores:     ", "not kept; predict(fit, row_chunks(...)) computes them")
}

# ---- predict() and update() ------------------------------------------------

#' Scores of chunks of rows, and Nyström fits from chunks
#'
#' `predict()` on a Nyström fit ([kpca()] with `landmarks`) also accepts a
#' source of row chunks from [row_chunks()]: each chunk is projected where
#' it is read (on future's workers under a parallel [future::plan()]), and
#' its scores are returned, or handed to `writer`. A fit from chunks keeps
#' no training scores, so `predict()` without new data is an error for it.
#'
#' @param object A Nyström fit from [kpca()] with `landmarks`.
#' @param newdata New rows: a matrix or data frame (as for
#'   [predict.fastkpca()]), or a source from [row_chunks()].
#' @param writer For a source: `NULL` (the default) to return the scores,
#'   or a function `writer(scores, chunk)` called where each chunk is
#'   processed, with its scores and `chunk`, a list of the chunk's `index`,
#'   `label` and (for files) `file`; for example, to save the scores next to
#'   the chunk's file. Its results are returned.
#' @param ... Unused (an error if given).
#' @return For a matrix or data frame, as [predict.fastkpca()]. For a
#'   source: a list with one element per chunk (named by the file names for
#'   files, by labels such as `"list element 2"` or `"query rows 1 to
#'   1000"` otherwise): the chunk's score matrix, or what `writer` returned
#'   (invisibly).
#' @seealso [update.fastkpca_nystrom()] to add rows to a fit.
#' @examples
#' x <- as.matrix(iris[, 1:4])
#' parts <- row_chunks(split.data.frame(x, rep(1:3, each = 50)))
#' fit <- kpca(parts, kpar = list(sigma = 0.2), features = 2,
#'             landmarks = x[seq(1, 150, by = 5), ])
#' scores <- predict(fit, parts)
#' str(scores)
#' all.equal(do.call(rbind, scores), predict(fit, x), check.attributes = FALSE)
#' @export
predict.fastkpca_nystrom <- function(object, newdata, writer = NULL, ...) {
  if (!missing(newdata) && inherits(newdata, "fastkpca_row_chunks"))
    return(predict_chunks(object, newdata, writer, ...))
  if (!is.null(writer))
    stop_argument("'writer' applies to 'newdata' from row_chunks() only")
  NextMethod()
}

#' @export
predict.fastkpca_nystrom_chunked <- function(object, newdata, writer = NULL, ...) {
  if (missing(newdata) || is.null(newdata))
    stop_argument("a fit from chunks keeps no per-row scores: give 'newdata' (rows or ",
                  "row_chunks())")
  NextMethod()
}

# predict() chunk by chunk: each worker gets the fit without its training
# scores and its m x m cross-product (see light_fit()), reads its chunk and
# projects it with predict().
predict_chunks <- function(object, source, writer, ...) {
  check_no_dots(...)
  check_fit(object)
  if (!is.null(writer) && !is.function(writer))
    stop_argument("'writer' must be a function of the scores and the chunk, or NULL")
  light <- light_fit(object)
  if (chunks_in_parallel()) light$threads <- chunk_threads()
  args <- list(arg = "newdata", prepare = "raw", fit = light, writer = writer)
  passed <- chunk_map(source, "predict", args)
  out <- passed$value
  names(out) <- if (source$kind == "files") source$files[seq_along(out)]
                else vapply(seq_along(out), function(i) chunk_label(source, i), "")
  if (is.null(writer)) out else invisible(out)
}

#' Add rows to a Nyström fit
#'
#' A Nyström fit keeps its sufficient statistics (`statistics`: the number of
#' rows n, the sum of the kernel rows between the data and the landmarks,
#' \eqn{\sum_i k_m(x_i)}{sum_i k_m(x_i)}, and their m x m cross-product
#' \eqn{\sum_i k_m(x_i) k_m(x_i)'}{sum_i k_m(x_i) k_m(x_i)'}, both taken
#' around a fixed shift for accuracy), small and independent of n.
#' `update()` adds the statistics of new rows and solves the small problem
#' again, with the same landmarks, kernel, `features`, `th`, `center` and
#' `scale`: the result is the fit on all rows at once (with those
#' landmarks), up to rounding. New rows are prepared as [predict()]
#' prepares them (columns by name, the stored `center` and `scale`, so
#' `center = TRUE` keeps the means of the first rows), and rows with missing
#' values are left out.
#'
#' `newdata` may also be another Nyström fit with the same landmarks,
#' kernel, center and scale (for instance one fitted by another machine on
#' other chunks): the two sets of statistics are added.
#'
#' The stored training scores cannot be updated (their centering and
#' components change, and the old rows are not kept), so the result keeps
#' none: it is a fit of class `"fastkpca_nystrom_chunked"`, whose scores
#' come from `predict()`.
#'
#' @param object A Nyström fit from [kpca()] with `landmarks`.
#' @param newdata The rows to add: a matrix or data frame, a source from
#'   [row_chunks()], or a Nyström fit with the same landmarks and kernel.
#' @param threads Threads for the new rows (per worker under a parallel
#'   plan); defaults to those of the fit.
#' @param ... Unused (an error if given).
#' @return A fit of class `c("fastkpca_nystrom_chunked", "fastkpca_nystrom",
#'   "fastkpca")` on the rows of both.
#' @seealso [kpca()], [row_chunks()]
#' @examples
#' x <- as.matrix(iris[, 1:4])
#' L <- x[seq(1, 150, by = 5), ]
#' first <- kpca(row_chunks(list(x[1:100, ])), kpar = list(sigma = 0.2),
#'               features = 2, landmarks = L)
#' both <- update(first, x[101:150, ])
#' all.equal(both$eig, kpca(x, kpar = list(sigma = 0.2), features = 2,
#'                          landmarks = L)$eig)
#' @importFrom stats update
#' @export
update.fastkpca_nystrom <- function(object, newdata, threads = object$threads, ...) {
  check_no_dots(...)
  check_fit(object)
  if (inherits(object, "fastkpca_string"))
    stop_argument("'object' is a fit on strings: update() adds numeric rows only")
  stats <- object$statistics
  threads <- check_threads(threads)
  basis <- nystrom_landmark_basis(object$landmarks, object$kernel, object$features, threads)
  # the sums of the new rows are taken around the fit's own shift
  basis$shift <- stats$shift
  if (inherits(newdata, "fastkpca_nystrom")) {
    check_same_nystrom(object, newdata)
    added <- list(value = newdata$statistics, chunks = chunk_count(newdata))
  } else {
    source <- if (inherits(newdata, "fastkpca_row_chunks")) newdata
              else row_chunks(list(newdata))
    args <- list(arg = "newdata", prepare = "fit", fit = light_fit(object),
                 basis = worker_basis(basis), kernel = object$kernel, threads = threads)
    added <- chunk_map(source, "sums", args, add_chunk_statistics)
  }
  fit <- nystrom_chunked_fit(
    add_chunk_statistics(stats, added$value), basis, object$kernel, object$features,
    object$th, threads, list(center = object$center, scale = object$scale),
    list(rows = object$landmarks, rule = object$landmark_rule,
         index = object$landmark_rows),
    chunk_count(object) + added$chunks, object$call)
  fit$terms <- object$terms
  fit$xlevels <- object$xlevels
  fit
}

# What a worker needs of a fit to prepare and project rows: the fit
# without its training scores and its m x m cross-product.
light_fit <- function(object) {
  object["rotated"] <- list(NULL)
  object$statistics$cross <- NULL
  object
}

# Chunks behind a fit: those it counts, or 1 for a fit on one matrix.
chunk_count <- function(fit) if (is.null(fit$chunks)) 1L else fit$chunks

# Fits whose statistics can be added: same landmarks, kernel, scaling, shift.
check_same_nystrom <- function(object, other) {
  same <- is.list(other$statistics) &&
    identical(unname(object$landmarks), unname(other$landmarks)) &&
    identical(object$kernel, other$kernel, ignore.environment = TRUE) &&
    identical(object$center, other$center) && identical(object$scale, other$scale) &&
    identical(object$statistics$shift, other$statistics$shift)
  if (!same)
    stop_argument("'newdata' is a fit with other landmarks, kernel, center or scale than ",
                  "'object' (or without statistics): only fits that share them combine")
}
