# Evaluating kernels from R: the exported kernel_matrix(), and the internal
# cross-kernel and diagonal that predict(), kpca_cv() and preimage() use.
# All of them are one .Call into src/kernel.c on a kernel object resolved
# by R/kernel_spec.R, on rows of numbers or, for a string kernel, strings.

#' Kernel matrices
#'
#' Evaluates a kernel on the rows of a matrix: the symmetric n x n matrix of
#' \eqn{k(x_i, x_j)}, or the n x m matrix of \eqn{k(x_i, y_j)} between the
#' rows of `x` and those of `y`. The kernel is computed in C (the same code
#' as [kpca()]'s), with the same checks on the data.
#'
#' For the named kernels the values equal those of `kernlab::kernelMatrix()`
#' (which rounds the squared distances of `laplacedot` and `besseldot` to 9
#' decimals; fastkpca does not).
#'
#' @param kernel A kernel: a name (with `kpar`), a kernel object from
#'   [kern()], or a kernlab kernel.
#' @param x A numeric matrix or data frame (rows are points); a numeric
#'   vector is one column.
#' @param y Optional second set of points, with the columns of `x`.
#' @param kpar With a kernel name, its parameters as a named list; missing
#'   ones take the kernel's defaults.
#' @param threads Number of threads; the result does not depend on it.
#' @return A plain double matrix, with the row names of `x` (and of `y`).
#' @seealso [kern()]
#' @examples
#' x <- as.matrix(iris[1:4, 1:4])
#' kernel_matrix("rbfdot", x, kpar = list(sigma = 0.5))
#' kernel_matrix(kern("polydot", degree = 2) + kern("vanilladot"), x,
#'               as.matrix(iris[5:6, 1:4]))
#' @export
kernel_matrix <- function(kernel, x, y = NULL, kpar = list(), threads = kpca_threads()) {
  strings <- is_string_kernel_spec(kernel)  # R/string_kernels.R
  if (strings) {
    x <- kernel_matrix_strings(x, "x")
    k <- resolve_string_kernel(kernel, kpar, missing(kpar))
  } else {
    k <- as_kernel(kernel, kpar, kpar_given = !missing(kpar))
  }
  threads <- check_threads(threads)
  # alone, x is the call's fixed set: C checks its values from the norms it
  # sums (check_point_values(), src/kernel_points.c); with y, x is the
  # moving set, whose values C does not check
  if (!strings) x <- kernel_data(x, "x", threads = threads, check = !is.null(y))
  # the names set where the matrix is made: set on the value engine_call()
  # returned, whose promise still refers to it, they would copy it
  labels <- list(row_labels(x), if (is.null(y)) row_labels(x))
  if (is.null(y)) {
    return(engine_call({
      out <- .Call(C_kernel_matrix, x, kernel_program(k), kernel_weights(k, x), threads)
      dimnames(out) <- labels
      out
    }))
  }
  y <- if (strings) kernel_matrix_strings(y, "y") else kernel_data(y, "y", x, threads)
  labels[[2L]] <- row_labels(y)
  kernel_cross(x, y, k, threads, dimnames = labels)
}

# Points given to a kernel, as a checked double matrix; `like`: the points
# they are paired with, whose columns they must have; check = FALSE: the
# values left to C where it checks them (values_checked_in_c(), R/rows.R),
# as the call's fixed set.
kernel_data <- function(x, arg, like = NULL, threads = 1L, check = TRUE) {
  x <- as_data_rows(x, arg)
  if (check || !values_checked_in_c(x)) check_finite(x, arg, threads)
  if (!is.null(like)) x <- rows_like(x, like)
  if (!is.null(like) && ncol(x) != ncol(like))
    stop_argument(sprintf("'%s' must have %d columns, as 'x', not %d", arg, ncol(like), ncol(x)))
  if (ncol(x) == 0L) stop_argument(sprintf("'%s' must have at least one column", arg))
  x
}

# The cross-kernel matrix k(z_i, x_j) (nrow(z) x nrow(x)) of a kernel
# object, computed in C; x is the training data (its column means shift the
# distance kernels, which does not change them). xweights: the conformal
# weights of x, when the caller has them already (a fit stores its own);
# program: the kernel's program, when the caller has it already.
kernel_cross <- function(z, x, kernel, threads = 1L, xweights = kernel_weights(kernel, x),
                         program = kernel_program(kernel), dimnames = NULL) {
  engine_call({
    out <- .Call(C_kernel_cross, z, x, program, kernel_weights(kernel, z), xweights,
                 as.integer(threads))
    if (!is.null(dimnames)) dimnames(out) <- dimnames
    out
  })
}

# k(z_i, z_i) for each row of z, one kernel value per row (in C).
kernel_self <- function(z, kernel, program = kernel_program(kernel)) {
  engine_call(.Call(C_kernel_self, z, program, kernel_weights(kernel, z)))
}
