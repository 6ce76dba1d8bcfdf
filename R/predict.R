# Step 4 of the algorithm: projecting new data onto the components.

#' Project new data onto kernel principal components
#'
#' Computes the kernel between the new rows and the training rows, centers
#' it with the centering terms stored at fit time, and multiplies by the
#' component vectors. For every kernel, `tanhdot` included, new rows are
#' centered exactly as the training rows were, so `predict(fit, x)` on the
#' training data `x` equals `fit$rotated`.
#'
#' The centered cross-kernel is never formed: with \eqn{K_z} the kernel
#' between new and training rows, \eqn{c} the column means and \eqn{g} the
#' mean of the training kernel matrix, the projection is
#' \eqn{K_z \alpha - r (1'\alpha) - 1 (c'\alpha) + g 1 (1'\alpha)} with
#' \eqn{r} the row means of \eqn{K_z}. New rows are processed in blocks, so
#' memory stays proportional to the block size times the training size.
#'
#' @param object A `"fastkpca"` fit from [kpca()].
#' As [stats::predict.prcomp()] does, `predict()` first takes the columns
#' the fit needs, by name, when the training data had column names (fits on
#' a named matrix or a data frame; formula fits take the variables of the
#' formula): other columns of `newdata`, numeric or not, are ignored. It
#' then applies the fit's `center` and `scale` (see [kpca()]) to the new
#' rows. A row with a missing value (`NA` or `NaN`) gets `NA` scores; the
#' other rows are projected as usual. Infinite values are an error.
#'
#' @param newdata New data with the training data's columns: a matrix, a
#'   data frame (for formula fits, holding the variables of the formula) or
#'   a numeric vector (one new row). Columns are matched by name when both
#'   have names (and the training names are neither empty, `NA` nor
#'   repeated), and by position otherwise. For `kernel = "precomputed"`,
#'   the kernel matrix between the new and the training rows
#'   (`nrow(newdata)` x n). If missing, the training projections
#'   `object$rotated` are returned (with `na.action = na.exclude`, one row
#'   per row of the training data, `NA` for those left out).
#' @param ... Unused (an error if given).
#' @return A matrix with one row per new row and one column per component,
#'   `NA` in the rows of `newdata` that have missing values.
#' @seealso [kpca()]
#' @examples
#' train <- as.matrix(iris[seq(1, 150, by = 2), 1:4])
#' test <- as.matrix(iris[seq(2, 150, by = 2), 1:4])
#' fit <- kpca(train, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 2)
#' head(predict(fit, test))
#' # on the training rows, predict() gives the fitted projections
#' all.equal(predict(fit, train), fit$rotated)
#'
#' # columns are taken by name, as predict.prcomp() does, and rows with
#' # missing values give NA scores
#' fit2 <- kpca(as.matrix(iris[, 1:4]), kpar = list(sigma = 0.2), features = 2,
#'              center = TRUE, scale. = TRUE)
#' head(predict(fit2, iris), 3)        # Species is ignored
#' predict(fit2, data.frame(Petal.Width = c(0.2, NA), Petal.Length = 1.4,
#'                          Sepal.Width = 3, Sepal.Length = 5))
#' @export
predict.fastkpca <- function(object, newdata, ...) {
  check_no_dots(...)
  check_fit(object)
  if (missing(newdata) || is.null(newdata)) return(object$rotated)
  z <- predict_data_matrix(object, newdata)
  alpha <- object$alpha
  out <- matrix(NA_real_, nrow(z), ncol(alpha),
                dimnames = list(rownames(z), colnames(alpha)))
  # rows with a missing value get NA scores, as in predict.prcomp()
  complete <- complete_rows(z)
  if (is.null(complete)) {        # the usual case: no scan, no copy
    out[] <- project_rows(object, z)
    return(out)
  }
  if (any(complete))
    out[complete, ] <- project_rows(object, z[complete, , drop = FALSE])
  out
}

# The projections of complete new rows (already scaled), block by block.
project_rows <- function(object, z) UseMethod("project_rows")
#' @exportS3Method
project_rows.fastkpca_nystrom <- function(object, z) nystrom_project_rows(object, z)

# Exact and precomputed fits: the centered cross-kernel times alpha,
# Kz alpha - r (1'alpha) - 1 (c'alpha - g 1'alpha), with r the row means of
# Kz, c the training kernel's column means and g its mean, without forming
# the centered Kz.
#' @exportS3Method
project_rows.fastkpca_exact <- function(object, z) {
  terms <- exact_centering_terms(object)
  kernel_project_rows(z, object$xmatrix, object$kernel, object$kernel_weights,
                      object$alpha, terms$offset, terms$alpha_sums, object$threads)
}

# A precomputed fit: z is the kernel with the training rows already.
#' @exportS3Method
project_rows.fastkpca_precomputed <- function(object, z) {
  terms <- exact_centering_terms(object)
  proj <- z %*% object$alpha - outer(rowMeans(z), terms$alpha_sums)
  sweep(proj, 2L, terms$offset, "-")
}

exact_centering_terms <- function(object) {
  alpha_sums <- colSums(object$alpha)
  list(alpha_sums = alpha_sums,
       offset = drop(crossprod(object$kernel_colmeans, object$alpha)) -
         object$kernel_mean * alpha_sums)
}

# The projections of the rows of z onto components alpha on the rows x (a
# fit's training rows or landmarks; strings, for a string kernel), in C, block by block, with the kernel
# program and x prepared once: K_z alpha - r alpha_sums' - 1 offset', r the
# row means of K_z (no r term when alpha_sums is NULL). step: NULL, or a
# function called after each block.
kernel_project_rows <- function(z, x, kernel, xweights, alpha, offset, alpha_sums,
                                threads, program = kernel_program(kernel), step = NULL) {
  if (NROW(z) == 0L) return(matrix(0, 0L, ncol(alpha)))
  engine_call(.Call(C_kernel_project_rows, z, x, program, kernel_weights(kernel, z), xweights,
                    alpha, as.double(offset), alpha_sums, block_size(NROW(z), NROW(x)),
                    threads, step))
}

# The one rule for blocks of rows: a block's kernel with m rows (training
# rows or landmarks) holds about 2^22 doubles (32 MB). The tuning setting
# block_rows (R/tuning.R) sets another size (the tests use it to check
# that sums and scores over many blocks equal those of one block).
block_size <- function(n, m) {
  size <- tuning("block_rows")
  if (is.na(size)) size <- floor(2^22 / max(1, m))
  as.integer(max(1, min(n, size)))
}

# Blocks of rows as vectors of row numbers (C takes the size itself).
row_blocks <- function(nz, m) {
  size <- block_size(nz, m)
  split(seq_len(nz), ceiling(seq_len(nz) / size))
}


# newdata as a double matrix of the training data's columns, in their order,
# centered and scaled as the training data were. Missing values stay (they
# give NA scores); infinite ones are an error.
predict_data_matrix <- function(object, newdata) UseMethod("predict_data_matrix")

# A precomputed fit: newdata is the kernel between new and training rows.
#' @exportS3Method
predict_data_matrix.fastkpca_precomputed <- function(object, newdata) {
  m <- nrow(object$alpha)
  z <- as_data_matrix(newdata, "newdata")
  if (ncol(z) != m)
    stop_argument(sprintf("'newdata' must be the kernel matrix between new and training rows, with %d columns, not %d",
                          m, ncol(z)))
  check_no_infinite(z, "newdata")
  z
}

#' @exportS3Method
predict_data_matrix.fastkpca <- function(object, newdata) {
  train <- fit_columns(object)
  if (!is.null(object$terms)) {
    z <- formula_data_matrix(object, newdata)
  } else {
    vector_row <- is.atomic(newdata) && is.null(dim(newdata)) &&
      ncol(train) > 1L && length(newdata) == ncol(train)
    train_names <- colnames(train)
    # names that are empty, NA or repeated do not say which column is which:
    # then the columns are taken by position
    if (!names_identify_columns(train_names)) train_names <- NULL
    # take the needed columns by name first, as predict.prcomp() does, so
    # that other columns (a factor, say) are ignored
    if (!is.null(train_names) && length(dim(newdata)) == 2L &&
        !is.null(colnames(newdata))) {
      check_has_columns(colnames(newdata), train_names)
      # (in the training order already: no copy)
      if (!identical(colnames(newdata), train_names))
        newdata <- newdata[, train_names, drop = FALSE]
    }
    z <- as_data_rows(newdata, "newdata")   # sparse input stays sparse (R/sparse.R)
    if (vector_row) z <- matrix(z, nrow = 1L, dimnames = list(NULL, names(newdata)))
    # a named vector (one row) is matched by name too
    if (!is.null(train_names) && !is.null(colnames(z))) {
      check_has_columns(colnames(z), train_names)
      if (!identical(colnames(z), train_names)) z <- z[, train_names, drop = FALSE]
    }
  }
  # sparse for a sparse fit, dense for a dense one (rows_like(), R/rows.R)
  if (ncol(z) == ncol(train)) z <- rows_like(z, train)
  if (ncol(z) != ncol(train))
    stop_argument(sprintf("'newdata' must have %d columns, as the training data, not %d",
                          ncol(train), ncol(z)))
  # one pass over new rows as wide as the data, on the fit's threads
  threads <- object$threads
  check_no_infinite(z, "newdata", threads)
  if (!is.numeric(object[["center"]]) && !is.numeric(object[["scale"]])) return(z)
  z <- apply_scaling(z, object[["center"]], object[["scale"]])
  if (any_infinite(stored_values(z), threads))
    stop_data("'newdata' is not finite after centering and scaling by the fit's 'center' and 'scale'")
  z
}

# newdata of a formula fit: the variables of the formula, through its terms
# and factor levels, as a model matrix.
formula_data_matrix <- function(object, newdata) {
  if (!is.data.frame(newdata) && !is.list(newdata))
    newdata <- as.data.frame(as_data_matrix(newdata, "newdata"))
  tt <- stats::delete.response(object$terms)
  vars <- all.vars(tt)
  missing_vars <- setdiff(vars, names(newdata))
  if (length(missing_vars) > 0L)
    stop_argument("'newdata' lacks variable", if (length(missing_vars) > 1L) "s" else "",
                  " of the formula: ", paste(missing_vars, collapse = ", "))
  classes <- attr(tt, "dataClasses")
  for (v in intersect(names(classes)[classes == "numeric"], names(newdata))) {
    # a column of NA only is logical: make it a numeric column of NA
    if (is.logical(newdata[[v]]) && all(is.na(newdata[[v]])))
      newdata[[v]] <- as.double(newdata[[v]])
  }
  mf <- with_error_kind(stats::model.frame(tt, newdata, na.action = stats::na.pass,
                                           xlev = object$xlevels), "argument")
  if (!is.null(classes))
    tryCatch(stats::.checkMFClasses(classes, mf), error = function(e)
      stop_from(e, paste0("'newdata' does not match the training data: ",
                          conditionMessage(e))))
  z <- stats::model.matrix(tt, mf)
  attr(z, "assign") <- NULL
  attr(z, "contrasts") <- NULL
  z
}

names_identify_columns <- function(names) {
  !is.null(names) && !anyNA(names) && all(nzchar(names)) && !anyDuplicated(names)
}

check_has_columns <- function(have, need) {
  absent <- setdiff(need, have)
  if (length(absent) > 0L)
    stop_argument("'newdata' lacks column", if (length(absent) > 1L) "s" else "", " ",
                  paste(absent, collapse = ", "))
}
