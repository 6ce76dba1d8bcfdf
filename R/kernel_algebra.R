# Kernels as values: the user's constructor kern(), the algebra (Ops, Math,
# kern_conformal()), printing, and the structural check of a kernel object.
# Resolving a kernel spec and compiling it for the C engine: R/kernel_spec.R.
#
# A kernel object, as kern() and the algebra return it, is a kernel
# function (R/kernel_function.R) that carries a tree of nodes, each a list
# of class "fastkpca_kernel" with `op`:
#   "base"      name, kpar        one of the eight named kernels
#   "sum"       args (2 kernels)  k1 + k2
#   "product"   args (2 kernels)  k1 * k2
#   "scale"     value, args (1)   c * k, c > 0
#   "power"     value, args (1)   k^p, whole p >= 1
#   "exp"       args (1)          exp(k)
#   "conformal" g, label, args(1) g(x) g(y) k(x, y)
# Each of these keeps a positive semidefinite kernel positive semidefinite.

#' Kernels as objects, and their algebra
#'
#' `kern()` makes a kernel object from one of the eight named kernels and its
#' parameters. Kernel objects combine with the operations that keep a kernel
#' positive semidefinite, and the result is again a kernel object that
#' [kpca()], [predict.fastkpca()] and [kernel_matrix()] take wherever they take
#' a kernel:
#' \describe{
#'   \item{`k1 + k2`, `k1 * k2`}{the sum and the product of two kernels;}
#'   \item{`c * k`, `k * c`}{scaling by a single finite number `c > 0`;}
#'   \item{`k ^ p`}{a whole power `p >= 1`;}
#'   \item{`exp(k)`}{the exponential of a kernel;}
#'   \item{`kern_conformal(k, g)`}{the conformal transformation
#'     \eqn{g(x) g(y) k(x, y)} for a real function `g`.}
#' }
#' Differences, division, negative or zero scales and non-whole powers are
#' errors: their results are not positive semidefinite kernels in general.
#' Combinations nest freely; `tanhdot`, which is not positive semidefinite,
#' may take part, and [kpca()] warns when the result has negative
#' eigenvalues on the data.
#'
#' A kernel object is a function of two points, `k(x, y)` (two numeric
#' vectors of one length, or two strings for a string kernel), as
#' kernlab's kernels are, and a kernlab kernel: a fastkpca kernel function,
#' the same object in every session, whether kernlab is loaded or attached
#' or not (so its `class()`, `print()` and `identical()` never depend on
#' it). kernlab's functions (`ksvm()`, `gausspr()`, `kernlab::kpca()`,
#' `kernelMatrix()`, ...) take it as a kernel written by hand, with its
#' kernel matrices computed by fastkpca's C code. Only the generators that
#' kernlab exports too ([rbfdot()] ... [stringdot()]) return kernlab's own
#' objects, and only while kernlab is attached (see the section "With
#' kernlab" of [rbfdot()]); `kern(rbfdot(1))` turns one back into a
#' fastkpca kernel function. Its parts read as `k$name`, `k$kpar` (or
#' `kpar(k)`); a fit's `kernel` field holds the expression itself, and
#' [kernelf()] gives the fit's kernel object. The algebra takes kernlab's
#' own kernels as operands too, in either order, as in
#' `kern("rbfdot") + kernlab::polydot(2)` or
#' `kernlab::rbfdot(1) + kernlab::polydot(2)`.
#'
#' The whole expression is evaluated in C for each tile of the kernel
#' matrix, so a combined kernel needs no n x n matrix per term and no matrix
#' arithmetic in R. The function `g` of a conformal kernel is called from R
#' once per set of rows: on the training rows when fitting, and on each
#' block of new rows in `predict()`. It must take a numeric matrix of rows
#' and return one finite number per row.
#'
#' @param kernel One of `"rbfdot"`, `"polydot"`, `"vanilladot"`,
#'   `"tanhdot"`, `"laplacedot"`, `"besseldot"`, `"anovadot"`,
#'   `"splinedot"` (see [kpca()] for their formulas), a kernlab kernel object
#'   such as `kernlab::rbfdot(0.5)` (made into fastkpca's kernel function),
#'   or a kernel object (returned as it is, as a kernel function).
#' @param ... The kernel's parameters by name, such as `sigma = 0.5`.
#'   Parameters left out take the kernel's own defaults (as kernlab's kernel
#'   generators do: `kern("rbfdot")` has `sigma = 1`).
#' @return A kernel object, in every session a kernel function of class
#'   `c("fastkpca_kernel_function", "fastkpca_kernel", "kernel")` (for
#'   string kernels, `"fastkpca_string_kernel_function"` first and
#'   `"stringkernel"` before `"kernel"`).
#' @seealso [kernel_matrix()] to evaluate a kernel; [kpca()].
#' @examples
#' k1 <- kern("rbfdot", sigma = 0.5)
#' k2 <- kern("polydot", degree = 2, scale = 0.5)
#' k <- 2 * k1 + k2
#' k
#' x <- as.matrix(iris[1:5, 1:4])
#' # the algebra evaluated in C equals the same algebra on the matrices
#' all.equal(kernel_matrix(k, x),
#'           2 * kernel_matrix(k1, x) + kernel_matrix(k2, x))
#' exp(k1) * k2^2
#' # a conformal kernel: g(x) g(y) k(x, y)
#' kern_conformal(k1, function(x) exp(-rowSums(x^2) / 100))
#' @export
kern <- function(kernel, ...) {
  if (is_kernel_spec_object(kernel)) {
    check_no_dots(...)
    return(kernel_function(as_kernel(kernel)))
  }
  kpar <- list(...)
  if (length(kpar) > 0L && (is.null(names(kpar)) || any(names(kpar) == "")))
    stop_argument("the parameters of 'kernel' must be named, such as kern(\"rbfdot\", sigma = 0.5)")
  kernel_function(as_kernel(kernel, kpar, kpar_arg = ""))
}

# An operation node over kernel objects.
kernel_node <- function(op, args, ...) {
  structure(c(list(op = op), list(...), list(args = args)), class = "fastkpca_kernel")
}

is_kernel <- function(x) inherits(x, "fastkpca_kernel")

#' @rdname kern
#' @param e1,e2 Kernel objects, or a positive number (for `*`) or a whole
#'   power (for `^`).
#' @export
Ops.fastkpca_kernel <- function(e1, e2) {
  if (missing(e2)) kernel_arith(.Generic, e1) else kernel_arith(.Generic, e1, e2)
}

# The algebra of kernels: operator `op` on e1 and e2 (e2 missing for a
# unary operator), each a kernel object, a kernlab kernel or a number. The
# S3 method above and the S4 methods on kernlab's "kernel" class
# (R/kernlab_kernels.R) both come here. The result is a kernel function
# (R/kernel_function.R), which kernlab takes too.
kernel_arith <- function(op, e1, e2) {
  not_psd <- function(what)
    stop_argument(what, ": the result would not be a positive semidefinite kernel")
  if (missing(e2)) {
    if (op == "+") return(kernel_function(e1))
    not_psd(sprintf("unary '%s' is not defined for kernels", op))
  }
  # the operands' trees (a kernlab kernel, which has no arithmetic of its
  # own, becomes one)
  tree <- function(e) if (is_kernel_spec_object(e)) as_kernel(e) else e
  node <- switch(op,
    "+" = {
      if (!is_kernel_spec_object(e1) || !is_kernel_spec_object(e2))
        stop_argument("'+' adds two kernel objects; a kernel plus a number is not supported")
      kernel_node("sum", list(tree(e1), tree(e2)))
    },
    "*" = {
      if (is_kernel_spec_object(e1) && is_kernel_spec_object(e2)) {
        kernel_node("product", list(tree(e1), tree(e2)))
      } else {
        if (is_kernel_spec_object(e1)) { k <- e1; c <- e2 } else { k <- e2; c <- e1 }
        kernel_node("scale", list(tree(k)), value = check_kernel_scale(c))
      }
    },
    "^" = {
      if (!is_kernel_spec_object(e1) || is_kernel_spec_object(e2))
        stop_argument("'^' raises a kernel object to a whole power, such as k^2")
      p <- check_kernel_power(e2)
      if (p == 1) tree(e1) else kernel_node("power", list(tree(e1)), value = p)
    },
    "-" = not_psd("kernels cannot be subtracted"),
    "/" = not_psd("kernels cannot be divided"),
    stop_argument(sprintf("'%s' is not defined for kernel objects; use +, *, ^, exp() or kern_conformal()",
                          op)))
  kernel_function(node)
}

check_kernel_scale <- function(c) {
  if (!is.numeric(c) || length(c) != 1L || is.na(c) || !is.finite(c) || c <= 0)
    stop_argument("a kernel can only be multiplied by a single finite number > 0: ",
                  "any other scale would not give a positive semidefinite kernel")
  as.double(c)
}

check_kernel_power <- function(p) {
  top <- engine_limits()$kernel_power
  if (!is.numeric(p) || length(p) != 1L || is.na(p) || !is.finite(p) || p < 1 ||
      p != round(p) || p > top)
    stop_argument("a kernel can only be raised to a whole power of at least 1 (at most ",
                  format_limit(top), "): other powers would not give a positive semidefinite kernel")
  as.double(p)
}

#' @rdname kern
#' @param x A kernel object.
#' @export
Math.fastkpca_kernel <- function(x, ...) kernel_math(.Generic, x)

# A math function of a kernel (a kernel object or a kernlab kernel): exp()
# only. The S3 method above and the S4 method on kernlab's "kernel" class
# come here.
kernel_math <- function(fun, x) {
  if (fun != "exp")
    stop_argument(sprintf("'%s' is not defined for kernel objects; of the math functions only exp() keeps a kernel positive semidefinite",
                          fun))
  kernel_function(kernel_node("exp", list(as_kernel(x))))
}

#' @rdname kern
#' @param k A kernel object, or anything `kern()` takes.
#' @param g A function of a numeric matrix of rows that returns one finite
#'   number per row.
#' @export
kern_conformal <- function(k, g) {
  k <- kernel_tree(kern(k))
  if (!is.function(g))
    stop_argument("'g' must be a function of a matrix of rows that returns one number per row")
  label <- paste(deparse(substitute(g), width.cutoff = 60L), collapse = " ")
  if (nchar(label) > 40L) label <- "g"
  kernel_function(kernel_node("conformal", list(k), g = g, label = label))
}

#' @rdname kern
#' @export
print.fastkpca_kernel <- function(x, ...) {
  cat_line("Kernel: ", format(x))
  invisible(x)
}

#' @rdname kern
#' @export
format.fastkpca_kernel <- function(x, ...) format_kernel(x, 0L)

# kernlab's kernel objects (the generators' while kernlab is loaded) format
# as fastkpca's kernels do, "rbfdot(sigma = 0.1)"; a kernel that fastkpca
# cannot read (one written by hand) as R formats it.
#' @export
format.kernel <- function(x, ...) {
  tree <- tryCatch(as_kernel(x), error = function(e) NULL)
  if (is.null(tree)) NextMethod() else format_kernel(tree, 0L)
}

# Readable infix form: sums bind loosest, then products and scales, then
# powers; parentheses only where precedence needs them.
format_kernel <- function(k, parent) {
  prec <- switch(k$op, sum = 1L, product = 2L, scale = 2L, power = 3L, 4L)
  text <- switch(k$op,
    base = paste0(k$name, "(", paste(names(k$kpar), vapply(k$kpar, format_number, ""),
                                     sep = " = ", collapse = ", "), ")"),
    sum = paste(format_kernel(k$args[[1L]], 1L), "+", format_kernel(k$args[[2L]], 1L)),
    product = paste(format_kernel(k$args[[1L]], 2L), "*", format_kernel(k$args[[2L]], 2L)),
    scale = paste(format_number(k$value), "*", format_kernel(k$args[[1L]], 2L)),
    power = paste0(format_kernel(k$args[[1L]], 4L), "^", format_number(k$value)),
    exp = paste0("exp(", format_kernel(k$args[[1L]], 0L), ")"),
    conformal = paste0("conformal(", format_kernel(k$args[[1L]], 0L), ", g = ",
                       k$label, ")"))
  if (prec < parent) paste0("(", text, ")") else text
}

format_number <- function(v) {
  if (is.character(v)) return(dQuote(v, FALSE))  # a string kernel's type
  if (is.logical(v)) return(format(v))
  format(signif(v, 7L))
}

# Check the structure of a kernel object (say, one edited by hand or read
# from an old file), so that a damaged one gives an R error, not a C one.
check_kernel_tree <- function(k) {
  k <- kernel_tree(k)
  if (!is_kernel(k) || !is.list(k) || !is.character(k$op) || length(k$op) != 1L ||
      !k$op %in% names(kernel_ops))
    stop_argument("'kernel' is not a valid kernel object")
  arity <- c(base = 0L, sum = 2L, product = 2L, scale = 1L, power = 1L, exp = 1L,
             conformal = 1L)[[k$op]]
  if (length(k$args) != arity) stop_argument("'kernel' is not a valid kernel object")
  switch(k$op,
    base = {
      if (identical(k$name, "stringdot")) return(invisible(resolve_string_kpar(k$kpar)))
      if (!is.character(k$name) || length(k$name) != 1L || !k$name %in% kernel_names)
        stop_argument("'kernel' has an unknown base kernel")
      resolve_kpar(k$name, k$kpar)
    },
    scale = check_kernel_scale(k$value),
    power = check_kernel_power(k$value),
    conformal = if (!is.function(k$g)) stop_argument("'g' must be a function"))
  for (a in k$args) check_kernel_tree(a)
  invisible(k)
}
