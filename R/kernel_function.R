# Kernel functions: what kern(), the kernel generators (rbfdot() ...
# stringdot()) and the kernel algebra return. A kernel function is an R
# function of two points, k(x, y), as kernlab's kernels are, that carries
# its kernel object (the tree of R/kernel_algebra.R) in the attribute
# "kernel". Its class makes it two things at once:
#   - a fastkpca kernel ("fastkpca_kernel"): its fields read as the tree's
#     (k$name, k$kpar), the algebra and printing apply, and every function
#     of the package takes it (as_kernel() keeps the tree);
#   - a kernlab kernel ("kernel", and "stringkernel" for string kernels):
#     kernlab's functions test is(kernel, "kernel") and call kernel(x, y);
#     the methods fastkpca puts on kernlab's generics when kernlab is loaded
#     (R/kernlab_kernels.R) give them whole kernel matrices from the C fill.
# The object does not depend on whether kernlab is loaded, so a kernel made
# before library(kernlab) works after it too.

kernel_function_classes <- c("fastkpca_kernel_function", "fastkpca_kernel", "kernel")
string_kernel_function_classes <- c("fastkpca_string_kernel_function",
                                    "fastkpca_kernel_function", "fastkpca_kernel",
                                    "stringkernel", "kernel")
# The first of each, as S4 classes when kernlab is loaded (R/kernlab_kernels.R).
kernel_function_s4_classes <- c("fastkpca_kernel_function", "fastkpca_string_kernel_function")

# The kernel function of a kernel object (a tree, or a kernel function).
kernel_function <- function(k) {
  k <- kernel_tree(k)
  classes <- if (uses_strings(k)) string_kernel_function_classes else kernel_function_classes
  structure(kernel_function_body, kernel = k, class = classes)
}

# The body every kernel function shares; its kernel is its own attribute,
# so that two kernel functions of the same kernel are identical().
kernel_function_body <- function(x, y = NULL) kernel_pair_value(sys.function(), x, y)

# The tree of a kernel function; a tree (or anything else) as it is.
kernel_tree <- function(k) if (is.function(k)) attr(k, "kernel", exact = TRUE) else k

#' @export
`$.fastkpca_kernel_function` <- function(x, name) kernel_tree(x)[[name]]

# k(x, y) of one pair of points, x and y numeric vectors of one length (or
# two strings, for a string kernel; a character vector is pasted into one
# string, as kpca() does with a list of tokens); y = NULL is k(x, x), as in
# kernlab. kernlab calls it point by point (the diagonal in kkmeans() and
# the incomplete Cholesky of lssvm(), for example).
kernel_pair_value <- function(f, x, y = NULL) {
  k <- kernel_tree(f)
  if (is.null(y)) y <- x
  value <- if (uses_strings(k)) {
    kernel_matrix(k, list(x), list(y), threads = 1L)
  } else {
    if (!is.numeric(x) || !is.numeric(y) || length(x) != length(y))
      stop_argument("'x' and 'y' must be numeric vectors of the same length")
    kernel_matrix(k, matrix(x, 1L), matrix(y, 1L), threads = 1L)
  }
  value[[1L]]
}
