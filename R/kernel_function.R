# Kernel functions: what kern(), the kernel algebra and kernelf() return,
# and what the kernel generators (rbfdot() ... splinedot(), stringdot())
# return (generator_kernel()).
#   - kern(), the algebra and kernelf() always return fastkpca's kernel
#     function: an R function of two points, k(x, y), as kernlab's kernels
#     are, that carries its kernel object (the tree of R/kernel_algebra.R)
#     in the attribute "kernel". Its class makes it a fastkpca kernel
#     ("fastkpca_kernel": its fields read as the tree's, k$name, k$kpar;
#     the algebra and printing apply) and a kernlab user kernel ("kernel",
#     and "stringkernel" for string kernels): kernlab's functions test
#     is(kernel, "kernel") and call kernel(x, y), and the methods fastkpca
#     puts on kernlab's generics when kernlab is loaded
#     (R/kernlab_kernels.R) give them whole kernel matrices from the C
#     fill. It does not depend on kernlab, so its class, print() and
#     identical() are the same in every session.
#   - a generator that kernlab exports too returns, while kernlab is
#     attached (library(kernlab), before or after fastkpca), kernlab's own
#     object, of kernlab's class for that kernel ("rbfkernel", ...) with
#     kernlab's kpar, made by kernlab's generator: kernlab's functions then
#     take their native paths for it (ksvm()'s solvers of every type, its
#     kernelMatrix() methods), exactly as in a kernlab script; fastkpca
#     reads it back as a tree (kern_from_kernlab()). Attached, not merely
#     loaded: kernlab's namespace is also loaded by a kernlab:: call, by
#     packages that use kernlab (caret), and by readRDS() of a file that
#     holds a kernlab object, none of which may change what rbfdot()
#     returns.

kernel_function_classes <- c("fastkpca_kernel_function", "fastkpca_kernel", "kernel")
string_kernel_function_classes <- c("fastkpca_string_kernel_function",
                                    "fastkpca_kernel_function", "fastkpca_kernel",
                                    "stringkernel", "kernel")
# The first of each, as S4 classes when kernlab is loaded (R/kernlab_kernels.R).
kernel_function_s4_classes <- c("fastkpca_kernel_function", "fastkpca_string_kernel_function")

# fastkpca's kernel function of a kernel object (a tree, a kernel function
# or a kernlab kernel), in every session.
kernel_function <- function(k) {
  k <- kernel_tree(k)
  classes <- if (uses_strings(k)) string_kernel_function_classes else kernel_function_classes
  structure(kernel_function_body, kernel = k, class = classes)
}

# What a kernel generator returns for its base kernel k (a tree): kernlab's
# own object while kernlab is attached, fastkpca's kernel function
# otherwise.
generator_kernel <- function(k) {
  if (kernlab_attached()) kernlab_base_kernel(k) else kernel_function(k)
}

kernlab_attached <- function() "package:kernlab" %in% search()

# kernlab's object for a base kernel, from kernlab's generator: kernlab's
# class, kpar and kernel function (so k(x, y) gives what kernlab's gives).
# The tree's kpar is complete and checked; kernlab's generators take the
# same names.
kernlab_base_kernel <- function(k) {
  generator <- getExportedValue("kernlab", k$name)
  do.call(generator, k$kpar)
}

# The body every kernel function shares; its kernel is its own attribute,
# so that two kernel functions of the same kernel are identical().
kernel_function_body <- function(x, y = NULL) kernel_pair_value(sys.function(), x, y)

# The tree of a kernel function or of a kernlab kernel; a tree (or anything
# else) as it is.
kernel_tree <- function(k) {
  if (!is.function(k)) return(k)
  tree <- attr(k, "kernel", exact = TRUE)
  if (is.null(tree) && inherits(k, "kernel")) kern_from_kernlab(k) else tree
}

#' @export
`$.fastkpca_kernel_function` <- function(x, name) kernel_tree(x)[[name]]

# k(x, y) of one pair of points, x and y numeric vectors of one length (or
# two strings, for a string kernel; a character vector is pasted into one
# string, as kpca() does with a list of tokens); y = NULL is k(x, x). kernlab
# calls it point by point (the diagonal in kkmeans() and the incomplete
# Cholesky of lssvm(), for example). A base kernel's value of two vectors
# has the shape kernlab's kernel of that name gives: a 1 x 1 matrix for the
# kernels kernlab computes through crossprod(), a number for anovadot,
# splinedot and the string kernels; an expression's value is a number.
kernel_pair_value <- function(f, x, y = NULL) {
  k <- kernel_tree(f)
  pair <- !is.null(y)
  if (!pair) y <- x
  value <- if (uses_strings(k)) {
    kernel_matrix(k, list(x), list(y), threads = 1L)
  } else {
    if (!is.numeric(x) || !is.numeric(y) || length(x) != length(y))
      stop_argument("'x' and 'y' must be numeric vectors of the same length")
    kernel_matrix(k, matrix(x, 1L), matrix(y, 1L), threads = 1L)
  }
  if (pair && identical(k$op, "base") && k$name %in% kernlab_matrix_valued) matrix(value[[1L]], 1L, 1L)
  else value[[1L]]
}

# The kernels whose kernlab function returns a 1 x 1 matrix for two vectors.
kernlab_matrix_valued <- c("rbfdot", "polydot", "vanilladot", "tanhdot", "laplacedot",
                           "besseldot")
