# Rows: the data points of a call, one per row, in one of three kinds:
#   a dense double matrix        (the default methods below)
#   sparse rows                  (class "fastkpca_sparse_rows", R/sparse.R)
#   strings, a character vector  (string kernels; only where callers meet them)
# Every computation whose code differs between the kinds is a generic here,
# with its methods beside it, so that callers never ask which kind they
# hold: S3 dispatch on the rows' class chooses. The kind is decided once, at
# the entrance (as_data_rows(), as_sparse_rows(), R/sparse.R); after it,
# inherits() on data is left to the refusals of sparse data (preimage(),
# kpca_cv(criterion = "reconstruction")). tests/testthat/test-rows.R
# checks that.
#
#   row_labels()          the names of the points
#   take_rows()           some of the points
#   stored_values()       the values the rows store
#   check_finite()        no NA, NaN or Inf (vectors and matrices too)
#   values_checked_in_c() whether C checks them as a call's fixed set
#   complete_rows()       which rows hold no NA (NULL: all of them)
#   apply_na_action()     the user's na.action, keeping its record
#   scale_columns()       prcomp's center and scale. of the columns
#   apply_scaling()       a fit's stored center and scale on new rows
#   column_moments()      column means and sums of squared deviations
#   rows_alike()          whether every point is the same
#   squared_distances()   the squared distances between the rows, as dist()
#   rows_like()           one set of rows in the kind of another
#   bind_rows()           sets of rows one after the other
#   rows_for_user()       the rows as a user's g() receives them
#   fit_rows_ok()         whether a fit's field holds m rows
# Sparse methods use the sparse class's helpers of R/sparse.R
# (tabulate_sums(), scale_sparse_columns(), dense_as_sparse_rows(),
# as_dgRMatrix()); nothing here makes sparse rows dense except
# rows_dense(), which checks the memory first (as.matrix()).

# ---- points ----

# The labels of the points: a matrix's (or sparse rows') row names, the
# names of a character vector of strings.
row_labels <- function(x) UseMethod("row_labels")
#' @exportS3Method
row_labels.default <- function(x) rownames(x)
#' @exportS3Method
row_labels.character <- function(x) if (is.null(dim(x))) names(x) else rownames(x)

# The points index: rows of a data matrix or of sparse rows (their own `[`
# method, R/sparse.R), strings of a character vector.
take_rows <- function(x, index) UseMethod("take_rows")
#' @exportS3Method
take_rows.default <- function(x, index) x[index, , drop = FALSE]
#' @exportS3Method
take_rows.character <- function(x, index) {
  if (is.null(dim(x))) x[index] else x[index, , drop = FALSE]
}

# The values the rows store: all of a data matrix's, the nonzeros of
# sparse rows (the zeros are finite: a check of these is a check of all).
stored_values <- function(x) UseMethod("stored_values")
#' @exportS3Method
stored_values.default <- function(x) x
#' @exportS3Method
stored_values.fastkpca_sparse_rows <- function(x) unclass(x)$x

# ---- missing and infinite values ----

# No NA, NaN or Inf in x: data rows, or any numeric vector or matrix (the
# default method). NA and NaN are left to na.action before this check.
check_finite <- function(x, arg, threads = 1L) UseMethod("check_finite")
#' @exportS3Method
check_finite.default <- function(x, arg, threads = 1L) {
  # a double vector in one pass (value_flags(), R/validate.R); others
  # cannot be infinite
  flags <- if (is.double(x)) value_flags(x, threads) else c(anyNA(x), FALSE)
  if (flags[1L])
    stop_argument(sprintf("'%s' must not contain missing values (NA or NaN)", arg))
  if (flags[2L])
    stop_argument(sprintf("'%s' must not contain infinite values", arg))
  invisible(x)
}
#' @exportS3Method
check_finite.fastkpca_sparse_rows <- function(x, arg, threads = 1L) {
  check_finite.default(unclass(x)$x, arg, threads)
  invisible(x)
}

# Whether C checks these rows' values itself as a kernel call's fixed set
# (check_point_values(), src/kernel_points.c: from the squared norms it
# sums over every value of dense rows), so that a caller may leave the
# check to it (kernel_matrix(k, x)); sparse rows' stored values are
# checked in R (check_finite()).
values_checked_in_c <- function(x) UseMethod("values_checked_in_c")
#' @exportS3Method
values_checked_in_c.default <- function(x) TRUE
#' @exportS3Method
values_checked_in_c.fastkpca_sparse_rows <- function(x) FALSE

# NULL when no row of z has a missing value (the usual case: no scan of
# rows, no copy), else whether each row is complete.
complete_rows <- function(z) UseMethod("complete_rows")
#' @exportS3Method
complete_rows.default <- function(z) {
  if (!anyNA(z)) return(NULL)
  rowSums(is.na(z)) == 0
}
#' @exportS3Method
complete_rows.fastkpca_sparse_rows <- function(z) {
  s <- unclass(z)
  bad <- which(is.na(s$x))
  if (!length(bad)) return(NULL)
  complete <- rep(TRUE, s$dim[1L])
  complete[findInterval(bad - 1L, s$p)] <- FALSE
  complete
}

# x without the "na.action" attribute apply_na_action() may have set (the
# caller keeps it as the record of the removed rows); set only where it is
# there, as setting an attribute, even to NULL, copies an x shared with
# the caller.
drop_na_action <- function(x) {
  if (!is.null(attr(x, "na.action"))) attr(x, "na.action") <- NULL
  x
}

# The user's na.action on the rows, keeping its record of the removed rows
# (attribute "na.action").
apply_na_action <- function(x, na.action) UseMethod("apply_na_action")
#' @exportS3Method
apply_na_action.default <- function(x, na.action) {
  if (!anyNA(x)) return(x)
  out <- with_error_kind(na_action_function(na.action)(x), "data")
  if (!is.matrix(out) || ncol(out) != ncol(x))
    stop_argument("'na.action' must return the data as a matrix")
  out
}
# The user's function sees one column per row, NA where the row holds an
# NA or NaN (a dense copy could not fit), and the rows it keeps (and its
# record of those it removed) are taken.
#' @exportS3Method
apply_na_action.fastkpca_sparse_rows <- function(x, na.action) {
  s <- unclass(x)
  bad <- which(is.na(s$x))
  if (!length(bad)) return(x)
  n <- s$dim[1L]
  flag <- rep(0, n)
  flag[findInterval(bad - 1L, s$p)] <- NA
  proxy <- matrix(flag, ncol = 1L, dimnames = list(as.character(seq_len(n)), NULL))
  out <- with_error_kind(na_action_function(na.action)(proxy), "data")
  if (!is.matrix(out) || ncol(out) != 1L)
    stop_argument("'na.action' must return the data as a matrix")
  keep <- as.integer(rownames(out))
  removed <- attr(out, "na.action")
  if (anyNA(out))
    stop_argument("'x' must not contain missing values (NA or NaN) after 'na.action'")
  x <- x[keep, ]
  if (!is.null(removed)) {
    rn <- s$dimnames[[1L]]
    names(removed) <- if (is.null(rn)) as.character(removed) else rn[removed]
    attr(x, "na.action") <- removed
  }
  x
}

# ---- the columns: scaling and moments ----

# prcomp's center and scale. (each TRUE, FALSE or a checked vector,
# scale_data(), R/scaling.R) applied to the columns: list(x, center, scale),
# the settings as prcomp stores them (the vectors used, or FALSE).
scale_columns <- function(x, center, scale.) UseMethod("scale_columns")
# Through base::scale(), so that TRUE, FALSE and vectors mean exactly what
# they mean there.
#' @exportS3Method
scale_columns.default <- function(x, center, scale.) {
  if (isFALSE(center) && isFALSE(scale.))
    return(list(x = x, center = FALSE, scale = FALSE))
  x <- scale(x, center = center, scale = scale.)
  cen <- attr(x, "scaled:center")
  sc <- attr(x, "scaled:scale")
  attr(x, "scaled:center") <- NULL
  attr(x, "scaled:scale") <- NULL
  if (isTRUE(scale.) && any(!(sc > 0))) {
    # prcomp refuses these too ("cannot rescale a constant/zero column")
    which_cols <- if (is.null(colnames(x))) which(!(sc > 0)) else colnames(x)[!(sc > 0)]
    stop_data(sprintf("'scale.' = TRUE cannot rescale a constant column to unit variance: %s",
                      paste(which_cols, collapse = ", ")))
  }
  if (any(!is.finite(x)))
    stop_data("'x' is not finite after centering and scaling: check 'center' and 'scale.'")
  list(x = x, center = if (is.null(cen)) FALSE else cen,
       scale = if (is.null(sc)) FALSE else sc)
}
# Each column divided by its scale (TRUE: its root mean square,
# sqrt(sum(x^2) / (n - 1)), as base::scale() without centering), which
# keeps the zeros. center must be FALSE: centering would make the rows
# dense.
#' @exportS3Method
scale_columns.fastkpca_sparse_rows <- function(x, center, scale.) {
  if (!isFALSE(center))
    stop_argument("'center' must be FALSE for sparse 'x': centering the columns would make it dense (kernel PCA centers in feature space anyway)")
  if (isFALSE(scale.)) return(list(x = x, center = FALSE, scale = FALSE))
  s <- unclass(x)
  if (isTRUE(scale.)) {
    scale. <- sqrt(tabulate_sums(s$j + 1L, s$x^2, s$dim[2L]) / max(1, s$dim[1L] - 1L))
    if (any(!(scale. > 0))) {
      cols <- if (is.null(colnames(x))) which(!(scale. > 0)) else colnames(x)[!(scale. > 0)]
      stop_data(sprintf("'scale.' = TRUE cannot rescale a zero column to unit root mean square: %s",
                        paste(utils::head(cols, 10L), collapse = ", ")))
    }
  }
  names(scale.) <- colnames(x)
  list(x = scale_sparse_columns(x, scale.), center = FALSE, scale = scale.)
}

# A fit's stored center and scale (FALSE or one number per column, in the
# training columns' order) applied to new rows.
apply_scaling <- function(z, center, scale) UseMethod("apply_scaling")
# The same sweep() steps as base::scale(), so the training rows come out
# exactly as the fit saw them.
#' @exportS3Method
apply_scaling.default <- function(z, center, scale) {
  if (is.numeric(center)) z <- sweep(z, 2L, center, check.margin = FALSE)
  if (is.numeric(scale)) z <- sweep(z, 2L, scale, "/", check.margin = FALSE)
  z
}
# (a sparse fit has no center: scale_columns())
#' @exportS3Method
apply_scaling.fastkpca_sparse_rows <- function(z, center, scale) {
  if (is.numeric(scale)) scale_sparse_columns(z, scale) else z
}

# Column means and sums of squared deviations from them (the first pass
# over chunks adds these up).
column_moments <- function(x) UseMethod("column_moments")
#' @exportS3Method
column_moments.default <- function(x) {
  n <- nrow(x)
  mean <- if (n > 0L) colMeans(x) else rep(0, ncol(x))
  list(mean = mean, m2 = colSums(sweep(x, 2L, mean)^2))
}
# From the sums of the stored values and of their squares (the zeros add
# nothing to either).
#' @exportS3Method
column_moments.fastkpca_sparse_rows <- function(x) {
  n <- nrow(x)
  s <- unclass(x)
  col <- s$j + 1L
  d <- s$dim[2L]
  sums <- numeric(d)
  sq <- numeric(d)
  if (length(col)) {
    sums <- tabulate_sums(col, s$x, d)
    sq <- tabulate_sums(col, s$x^2, d)
  }
  mean <- if (n > 0L) sums / n else rep(0, d)
  names(mean) <- colnames(x)
  m2 <- pmax(sq - n * mean^2, 0)
  list(mean = mean, m2 = m2)
}

# ---- between the rows ----

# Whether every point of x is the same (then the centered kernel is zero
# whatever the kernel: the matrix-free solver stops before any pass).
rows_alike <- function(x) UseMethod("rows_alike")
#' @exportS3Method
rows_alike.default <- function(x) all(x == rep(x[1L, ], each = nrow(x)))
#' @exportS3Method
rows_alike.character <- function(x) all(x == x[[1L]])
# The same columns and values in every row: compared as the stored
# vectors, without a dense copy.
#' @exportS3Method
rows_alike.fastkpca_sparse_rows <- function(x) {
  s <- unclass(x)
  len <- diff(s$p)
  first <- seq_len(len[1L])
  all(len == len[1L]) && all(s$j == s$j[first]) && all(s$x == s$x[first])
}

# The squared distances between the rows of x, as dist() gives them (a
# vector of the lower triangle's pairs).
squared_distances <- function(x) UseMethod("squared_distances")
#' @exportS3Method
squared_distances.default <- function(x) as.vector(stats::dist(x))^2
# ||a||^2 + ||b||^2 - 2 a'b from the Gram matrix of the rows, which
# src/sparse_tiles.c computes on the sparse rows
#' @exportS3Method
squared_distances.fastkpca_sparse_rows <- function(x) {
  G <- kernel_matrix("vanilladot", x)
  nrm <- diag(G)
  D <- outer(nrm, nrm, "+") - 2 * G
  pmax(D[lower.tri(D)], 0)
}

# ---- one kind from another ----

# Points z in the kind of x, whose rows they meet in a kernel (the engine
# takes both sides sparse or both dense): sparse rows when x is sparse; a
# dense matrix when x is dense (the data of a dense fit are dense, so the
# other side's dense copy is of their size; as.matrix() checks it against
# the memory first).
rows_like <- function(z, x) UseMethod("rows_like", x)
#' @exportS3Method
rows_like.default <- function(z, x) rows_dense(z)
#' @exportS3Method
rows_like.fastkpca_sparse_rows <- function(z, x) rows_sparse(z)

# z as a dense matrix, z as sparse rows (the two halves of rows_like()).
rows_dense <- function(z) UseMethod("rows_dense")
#' @exportS3Method
rows_dense.default <- function(z) z
#' @exportS3Method
rows_dense.fastkpca_sparse_rows <- function(z) as.matrix(z)
rows_sparse <- function(z) UseMethod("rows_sparse")
#' @exportS3Method
rows_sparse.default <- function(z) dense_as_sparse_rows(z)
#' @exportS3Method
rows_sparse.fastkpca_sparse_rows <- function(z) z

# The rows of several data matrices or sparse rows, one after the other:
# sparse rows if any of them is (rows_kind_of_both() folded over the parts
# finds one of the kind they are bound in; each part is brought to it by
# rows_like(), then rows_bind() dispatches on it).
bind_rows <- function(parts) {
  parts <- Filter(Negate(is.null), parts)
  if (!length(parts)) return(NULL)
  kind <- Reduce(rows_kind_of_both, parts)
  rows_bind(kind, lapply(parts, rows_like, kind))
}

# Of two sets of rows, one of the kind both are bound in: a if it is
# sparse rows, else b.
rows_kind_of_both <- function(a, b) UseMethod("rows_kind_of_both")
#' @exportS3Method
rows_kind_of_both.default <- function(a, b) b
#' @exportS3Method
rows_kind_of_both.fastkpca_sparse_rows <- function(a, b) a

# parts, all of the kind of `kind`, bound by rows.
rows_bind <- function(kind, parts) UseMethod("rows_bind")
#' @exportS3Method
rows_bind.default <- function(kind, parts) do.call(rbind, parts)
# The stored vectors one after the other; row names kept where any part
# has them, the columns' names of the first part.
#' @exportS3Method
rows_bind.fastkpca_sparse_rows <- function(kind, parts) {
  parts <- lapply(parts, unclass)
  lens <- unlist(lapply(parts, function(p) diff(p$p)))
  rn <- lapply(parts, function(p) {
    r <- p$dimnames[[1L]]
    if (is.null(r)) character(p$dim[1L]) else r
  })
  rn <- unlist(rn)
  new_sparse_rows(list(p = c(0L, cumsum(lens)), j = unlist(lapply(parts, `[[`, "j")),
                       x = unlist(lapply(parts, `[[`, "x")),
                       dim = c(length(lens), parts[[1L]]$dim[2L])),
                  list(if (all(rn == "")) NULL else rn, parts[[1L]]$dimnames[[2L]]))
}

# ---- the user's view and the fit's fields ----

# The rows as a user's function receives them (g() of a conformal kernel):
# a dense matrix or strings as they are, sparse rows as Matrix's dgRMatrix
# (the same vectors, no conversion).
rows_for_user <- function(x) UseMethod("rows_for_user")
#' @exportS3Method
rows_for_user.default <- function(x) x
#' @exportS3Method
rows_for_user.fastkpca_sparse_rows <- function(x) as_dgRMatrix(x)

# Whether a fit's rows (training data, landmarks) are m rows: an m x d
# double matrix, m sparse rows, or m strings (a fit on strings).
fit_rows_ok <- function(rows, m) UseMethod("fit_rows_ok")
#' @exportS3Method
fit_rows_ok.default <- function(rows, m) is.matrix(rows) && is.double(rows) && nrow(rows) == m
#' @exportS3Method
fit_rows_ok.character <- function(rows, m) {
  is.null(dim(rows)) && length(rows) == m && !anyNA(rows)
}
#' @exportS3Method
fit_rows_ok.fastkpca_sparse_rows <- function(rows, m) nrow(rows) == m
