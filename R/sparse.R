# Sparse data: the user's Matrix or slam object turned once into the rows
# the engine reads (compressed sparse rows, src/sparse.c), the class of
# those rows, and base R's methods that let the rest of the package treat
# them as it treats a data matrix (dim(), dimnames(), rows and columns by
# `[`). What the package computes on rows of either kind (na.action,
# scaling, moments, binding, ...) is a generic of R/rows.R, whose sparse
# methods use the helpers at the end of this file. Nothing here makes
# sparse rows dense, except as.matrix(), which a user asks for, after a
# memory check.
#
#   is_sparse_data()      a sparse matrix of Matrix or slam, or sparse rows
#   as_sparse_rows()      any of them as sparse rows (one O(nnz) conversion)
#   as_data_rows()        sparse input as sparse rows, anything else as
#                         as_data_matrix() makes it (which refuses sparse
#                         input: the steps without a sparse path)
#   is_rows_input()       whether an argument is data rows (a matrix, a
#                         data frame or sparse), not a number or a rule

# The sparse row class: list(p, j, x, dim) (0-based, as src/sparse.c reads
# it) with dimnames; a fit's xmatrix keeps it, so a saved fit stays small.
new_sparse_rows <- function(rows, dimnames = NULL) {
  rows$dim <- as.integer(rows$dim)
  if (!is.null(dimnames) && !all(vapply(dimnames, is.null, logical(1))))
    rows$dimnames <- lapply(dimnames, function(v) if (is.null(v)) NULL else as.character(v))
  structure(rows, class = "fastkpca_sparse_rows")
}

is_sparse_data <- function(x) {
  inherits(x, "fastkpca_sparse_rows") || inherits(x, "simple_triplet_matrix") ||
    (isS4(x) && methods::is(x, "sparseMatrix"))
}

# .Call: the CSR layout of a sparse matrix from its columns (layout 0:
# index = row of each value, second = column starts) or triplets (layout 1).
sparse_rows <- function(index, second, values, dim, layout) {
  engine_call(.Call(C_sparse_rows, index, second, values, as.integer(dim),
                    as.integer(layout)))
}

# Any sparse input as sparse rows. Matrix's dgC, dgR and dgT (and their
# subclasses, such as quanteda's dfm) and slam's simple_triplet_matrix
# (tm's DocumentTermMatrix) are read directly; other Matrix classes
# (pattern, symmetric, triangular, diagonal, logical) are first expanded
# to a general double matrix by Matrix itself.
as_sparse_rows <- function(x, arg = "x") {
  if (inherits(x, "fastkpca_sparse_rows")) return(x)
  if (inherits(x, "simple_triplet_matrix")) {
    if (!is.numeric(x$v) && !is.logical(x$v))
      stop_argument(sprintf("'%s' must be numeric, not %s", arg, typeof(x$v)))
    rows <- sparse_rows(as.integer(x$i) - 1L, as.integer(x$j) - 1L, as.double(x$v),
                        c(x$nrow, x$ncol), 1L)
    # (its own element: slam's dimnames() method needs slam loaded)
    return(new_sparse_rows(rows, x$dimnames))
  }
  if (!requireNamespace("Matrix", quietly = TRUE))
    stop_dependency(sprintf("'%s' is a Matrix object: install the Matrix package to read it", arg))
  if (!methods::is(x, "dgCMatrix") && !methods::is(x, "dgRMatrix") &&
      !methods::is(x, "dgTMatrix"))
    x <- tryCatch(
      methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix"),
      error = function(e) stop_from(e, sprintf(
        "'%s' is a sparse matrix of class %s that fastkpca cannot read: %s", arg,
        class(x)[1L], conditionMessage(e)), kind = "argument"))
  dims <- x@Dim
  rows <- if (methods::is(x, "dgRMatrix")) {
    list(p = x@p, j = x@j, x = x@x, dim = dims)
  } else if (methods::is(x, "dgCMatrix")) {
    sparse_rows(x@i, x@p, x@x, dims, 0L)
  } else {
    sparse_rows(x@i, x@j, x@x, dims, 1L)
  }
  new_sparse_rows(rows, x@Dimnames)
}

# Data given to a kernel: sparse input as sparse rows, anything else as a
# double matrix (as_data_matrix()).
as_data_rows <- function(x, arg = "x") {
  if (is_sparse_data(x)) as_sparse_rows(x, arg) else as_data_matrix(x, arg)
}

# Whether an argument that takes rows or something else (Nystrom's
# `landmarks`: rows, a number of rows, "auto") holds rows: a matrix, a
# data frame, or sparse data.
is_rows_input <- function(x) is.matrix(x) || is.data.frame(x) || is_sparse_data(x)

#' @export
dim.fastkpca_sparse_rows <- function(x) unclass(x)$dim

#' @export
dimnames.fastkpca_sparse_rows <- function(x) {
  dn <- unclass(x)$dimnames
  if (is.null(dn)) NULL else dn
}

# Rows (and columns) of sparse rows, as of a matrix with drop = FALSE:
# x[i, ], x[i, j], x[, j]; the result is sparse rows.
#' @export
`[.fastkpca_sparse_rows` <- function(x, i, j, ..., drop = FALSE) {
  if (!missing(j)) {
    cols <- seq_len(ncol(x))
    names(cols) <- colnames(x)
    cols <- unname(cols[j])
    if (anyNA(cols)) stop_argument("columns of sparse rows out of range")
    x <- sparse_columns(x, cols)
  }
  if (missing(i)) return(x)
  s <- unclass(x)
  n <- s$dim[1L]
  index <- seq_len(n)
  if (!missing(i)) {
    names(index) <- s$dimnames[[1L]]
    index <- unname(index[i])
    if (anyNA(index)) stop_argument("rows of sparse rows out of range")
  }
  starts <- s$p[index]
  lens <- s$p[index + 1L] - starts
  take <- sequence(lens, from = starts + 1L)
  dn <- s$dimnames
  if (!is.null(dn) && !is.null(dn[[1L]])) dn[[1L]] <- dn[[1L]][index]
  new_sparse_rows(list(p = c(0L, cumsum(lens)), j = s$j[take], x = s$x[take],
                       dim = c(length(index), s$dim[2L])), dn)
}

#' @export
`dimnames<-.fastkpca_sparse_rows` <- function(x, value) {
  attrs <- attributes(x)
  s <- unclass(x)
  if (!is.null(value) && (!is.list(value) || length(value) != 2L))
    stop_argument("the dimnames of sparse rows must be a list of two")
  new_sparse_rows(s[c("p", "j", "x", "dim")], value)
}

# Sums of values by their column index (1-based), one per column of d.
tabulate_sums <- function(index, values, d) {
  out <- numeric(d)
  s <- rowsum(values, index, reorder = TRUE)
  out[as.integer(rownames(s))] <- s[, 1L]
  out
}

#' @export
print.fastkpca_sparse_rows <- function(x, ...) {
  d <- dim(x)
  nnz <- length(unclass(x)$x)
  cat_line("", sprintf("<%d x %d sparse rows, %d stored values (%s)>", d[1L], d[2L], nnz,
                       format_share(nnz / max(1, prod(as.double(d))))))
  invisible(x)
}

format_share <- function(p) paste0(trimws(formatC(100 * p, format = "fg", digits = 2)), "%")

# as.matrix() of sparse rows: the dense copy, if it fits in memory.
#' @export
as.matrix.fastkpca_sparse_rows <- function(x, ...) {
  d <- dim(x)
  bytes <- 8 * prod(as.double(d))
  budget <- memory_budget()
  if (!is.na(budget) && bytes > budget)
    stop_memory(sprintf("the dense copy of 'x' (%d x %d) needs %s, more than the %s available",
                        d[1L], d[2L], format_bytes(bytes), format_bytes(budget)))
  s <- unclass(x)
  out <- matrix(0, d[1L], d[2L], dimnames = s$dimnames)
  rows <- rep.int(seq_len(d[1L]), diff(s$p))
  out[cbind(rows, s$j + 1L)] <- s$x
  out
}

# A dense double matrix as sparse rows (its nonzeros): the other side of a
# kernel when one side is sparse.
dense_as_sparse_rows <- function(x) {
  nz <- which(x != 0 | is.na(x))   # NA kept: the rows with NA are found later
  rows <- sparse_rows(as.integer((nz - 1) %% nrow(x)), as.integer((nz - 1) %/% nrow(x)),
                      as.double(x[nz]), dim(x), 1L)
  new_sparse_rows(rows, dimnames(x))
}

# Sparse rows with each column divided by scale (one number per column).
scale_sparse_columns <- function(x, scale) {
  attrs <- attributes(x)
  s <- unclass(x)
  s$x <- s$x / scale[s$j + 1L]
  attributes(s) <- attrs
  s
}

# Sparse rows as Matrix's dgRMatrix (the same vectors, no conversion): what
# a conformal kernel's g() receives for sparse data.
as_dgRMatrix <- function(x) {
  if (!requireNamespace("Matrix", quietly = TRUE))
    stop_dependency("the Matrix package is needed to pass sparse rows to 'g'")
  s <- unclass(x)
  methods::new("dgRMatrix", p = s$p, j = s$j, x = s$x, Dim = s$dim,
               Dimnames = if (is.null(s$dimnames)) list(NULL, NULL) else s$dimnames)
}

# The columns cols (indices into x's columns, in their new order) of sparse
# rows: the stored values of other columns dropped, the rest renumbered.
sparse_columns <- function(x, cols) {
  s <- unclass(x)
  if (identical(cols, seq_len(s$dim[2L]))) return(x)
  new_col <- match(s$j + 1L, cols)
  keep <- !is.na(new_col)
  rows <- rep.int(seq_len(s$dim[1L]), diff(s$p))[keep]
  out <- sparse_rows(rows - 1L, new_col[keep] - 1L, s$x[keep], c(s$dim[1L], length(cols)), 1L)
  dn <- s$dimnames
  if (!is.null(dn)) dn[[2L]] <- dn[[2L]][cols]
  new_sparse_rows(out, dn)
}
