# kernlab's kernel generators, returning kernlab's own objects while kernlab
# is attached and fastkpca kernel functions otherwise (R/kernel_function.R);
# the methods that kernlab's kernel generics get for fastkpca's kernel
# functions, and the algebra's methods on kernlab's kernel class. Defaults
# are kernlab's.

#' kernlab's kernel generators
#'
#' The kernel generators of kernlab, with kernlab's arguments and defaults.
#' Each returns a kernel: a function of two points, `k(x, y)`, as kernlab's
#' kernels are, that every fastkpca function takes ([kpca()],
#' [predict.fastkpca()], [kernel_matrix()], [kcca()] and the kernel algebra;
#' `rbfdot(0.5)` is the kernel of `kern("rbfdot", sigma = 0.5)`), so kernlab
#' code such as `kpca(x, kernel = vanilladot())` runs with fastkpca alone.
#' The formulas are in the Kernels section of [kpca()]; [stringdot()] makes
#' string kernels the same way.
#'
#' @section With kernlab:
#' While kernlab is attached (`library(kernlab)`, before or after
#' fastkpca: what counts is whether it is attached when the generator is
#' called), each generator
#' returns kernlab's own object for its kernel: of kernlab's class
#' (`rbfkernel`, `polykernel`, `vanillakernel`, `tanhkernel`,
#' `laplacekernel`, `besselkernel`, `anovakernel`, `splinekernel`,
#' `stringkernel`), with kernlab's `kpar` and kernlab's kernel function, so
#' that `k(x, y)` returns what kernlab's returns (a 1 x 1 matrix for
#' `rbfdot`) and kernlab's functions take their native paths for it, as in
#' a kernlab script: `ksvm()`'s solvers of every type (`"C-bsvc"` included,
#' which crashes R on a kernel it does not know), kernlab's `kernelMatrix()`
#' methods, and the rest. kernlab's help-page examples give kernlab's
#' numbers with fastkpca attached in either order. fastkpca's functions
#' read such an object back as its kernel and parameters. Otherwise,
#' the generators return fastkpca's kernel functions, with the same
#' `k(x, y)`.
#'
#' Attached, not loaded: kernlab's namespace is also loaded, without
#' being attached, by a `kernlab::` call, by packages that use kernlab
#' (caret, for example), and by `readRDS()` of a file that holds a kernlab
#' object, such as a kernel saved in a session with kernlab attached. None
#' of these changes what the generators return, nor anything else of
#' fastkpca: [kern()], the kernel algebra and [kernelf()] return fastkpca's
#' kernel functions in every session, and [kcca()] never calls kernlab. So
#' only `class()`, `print()` and `identical()` of a generator's kernel
#' depend on the session that made it; what the kernel computes does not: a
#' kernel or a fit saved with `saveRDS()` in a session with kernlab
#' attached and read in one without it (or the other way round) gives the
#' same [kernel_matrix()] and `predict()` results, bit for bit (a fit keeps
#' its kernel as fastkpca's kernel object, whichever kind it was given).
#'
#' The kernel algebra works in both orders: on these kernels and on
#' kernlab's own objects (`kernlab::rbfdot(0.1) + kernlab::polydot(degree =
#' 2)`, `2 * kernlab::rbfdot(1)`, `exp(kernlab::rbfdot(1))`, through S4
#' methods that fastkpca puts on kernlab's `kernel` class when kernlab is
#' loaded), mixed with fastkpca's kernel objects too. An expression, such as
#' `rbfdot(0.1) + 0.5 * polydot(degree = 2)`, is a fastkpca kernel function,
#' which fastkpca's functions take and kernlab's take as a kernel written by
#' hand: `ksvm()`, `gausspr()`, `rvm()`, `lssvm()`, `kkmeans()`, `specc()`,
#' `kqr()`, `kha()`, `kfa()`, `kcca()`, `kpca()`, and `kernelMatrix()`,
#' `kernelMult()`, `kernelPol()`, `kernelFast()` give the results they give
#' with the same kernel written as an R function
#' (`ksvm(x, y, kernel = rbfdot(0.1) + polydot(degree = 2))` fits the sum
#' kernel). kernlab asks such a kernel for kernel matrices, and fastkpca
#' gives `kernelMatrix()`, `kernelFast()`, `kernelMult()` (by blocks of
#' rows) and `kernelPol()` (as a conformal kernel) for it from its C code,
#' where kernlab would loop over the pairs of points in R: on `n = 2000`
#' points, `kernelMatrix()` of `rbfdot(0.1) + 0.5 * polydot(degree = 2)` is
#' about 70 times faster than the same kernel written as an R function
#' (`bench/kernlab-both-ways.R`). `ksvm()` then works from the whole kernel
#' matrix of each pair of classes (n x n memory). Its types `"C-bsvc"`,
#' `"kbb-svc"`, `"spoc-svc"` and `"eps-bsvr"` have solvers that crash R on
#' any kernel not of kernlab's own classes (kernlab alone too, with a
#' kernel written by hand): there an expression, or a kernel made while
#' kernlab was not attached, stops with an error that names the type and
#' the kernel, before kernlab's C code runs.
#'
#' What a user sees in each session:
#' \describe{
#'   \item{fastkpca alone, or kernlab loaded but not attached}{these
#'     generators, returning fastkpca's kernel functions.}
#'   \item{`library(kernlab)`, then `library(fastkpca)`}{fastkpca's
#'     generators mask kernlab's and return kernlab's objects, as kernlab's
#'     do; the algebra on them gives fastkpca kernel functions.}
#'   \item{`library(fastkpca)`, then `library(kernlab)`}{kernlab's generators
#'     mask these; `fastkpca::rbfdot()` gives the same objects as
#'     `kernlab::rbfdot()`, and the algebra works on both.}
#' }
#' A kernel made before kernlab was attached stays fastkpca's kernel
#' function, which kernlab's functions take as a kernel written by hand.
#'
#' @param sigma The inverse width of `rbfdot`, `laplacedot`, `besseldot` and
#'   `anovadot`, a positive number.
#' @param degree A whole number of at least 1.
#' @param scale,offset The scale and offset of the inner product in
#'   `polydot` and `tanhdot`.
#' @param order The order of the Bessel function, between 0 and 50.
#' @return While kernlab is attached, kernlab's object for the kernel (see
#'   the section "With kernlab"). Otherwise a kernel function, of class
#'   `c("fastkpca_kernel_function", "fastkpca_kernel", "kernel")`. Either
#'   way, called on two numeric vectors it gives their kernel value, as
#'   kernlab's kernel does (a 1 x 1 matrix, or a number for `anovadot` and
#'   `splinedot`), and `kpar(k)` reads its parameters.
#' @seealso [kern()], [kernel_matrix()], [kpca()], [stringdot()].
#' @examples
#' k <- rbfdot(sigma = 0.5)
#' k
#' kpar(k)
#' x <- as.matrix(iris[1:5, 1:4])
#' all.equal(kernel_matrix(k, x), kernel_matrix("rbfdot", x, kpar = list(sigma = 0.5)))
#' fit <- kpca(as.matrix(iris[, 1:4]), kernel = polydot(degree = 2), features = 2)
#' kernelf(fit)
#' # a kernel function, as kernlab's kernels are
#' k(x[1, ], x[2, ])
#' # the algebra takes them
#' 2 * vanilladot() + rbfdot(0.1)
#' # kernlab's functions take them, and their algebra
#' if (requireNamespace("kernlab", quietly = TRUE)) {
#'   # kernlab loaded, not attached: still fastkpca's kernel functions (with
#'   # library(kernlab), the generators would give kernlab's own objects)
#'   print(class(rbfdot(0.1)))
#'   k2 <- rbfdot(0.1) + 0.5 * polydot(degree = 2)
#'   K <- kernlab::kernelMatrix(k2, x)
#'   print(all.equal(K@.Data, kernel_matrix(k2, x), check.attributes = FALSE))
#'   m <- kernlab::ksvm(as.matrix(iris[, 1:4]), iris$Species, kernel = k2)
#'   kernlab::error(m)   # its training error
#' }
#' @name kernlab-kernels
NULL

#' @rdname kernlab-kernels
#' @export
rbfdot <- function(sigma = 1) generate_kernel("rbfdot", sigma = sigma)

#' @rdname kernlab-kernels
#' @export
polydot <- function(degree = 1, scale = 1, offset = 1)
  generate_kernel("polydot", degree = degree, scale = scale, offset = offset)

#' @rdname kernlab-kernels
#' @export
vanilladot <- function() generate_kernel("vanilladot")

#' @rdname kernlab-kernels
#' @export
tanhdot <- function(scale = 1, offset = 1)
  generate_kernel("tanhdot", scale = scale, offset = offset)

#' @rdname kernlab-kernels
#' @export
laplacedot <- function(sigma = 1) generate_kernel("laplacedot", sigma = sigma)

#' @rdname kernlab-kernels
#' @export
besseldot <- function(sigma = 1, order = 1, degree = 1)
  generate_kernel("besseldot", sigma = sigma, order = order, degree = degree)

#' @rdname kernlab-kernels
#' @export
anovadot <- function(sigma = 1, degree = 1)
  generate_kernel("anovadot", sigma = sigma, degree = degree)

#' @rdname kernlab-kernels
#' @export
splinedot <- function() generate_kernel("splinedot")

# A generator's kernel: the parameters checked as kern() checks them (named
# 'sigma', ... in errors), then kernlab's object while kernlab is attached
# (generator_kernel(), R/kernel_function.R).
generate_kernel <- function(name, ...) {
  generator_kernel(as_kernel(name, list(...), kpar_arg = ""))
}

# ---- kernlab's kernel generics on fastkpca's kernels ----------------------
#
# kernlab's functions ask their kernel for whole matrices through four S4
# generics: kernelMatrix() (K(x, y)), kernelFast() (the same, with the
# squared norms of x at hand), kernelMult() (K(x, y) z, by blocks of rows)
# and kernelPol() (z_i k_j K(x_i, y_j)). When kernlab is loaded (R/zzz.R),
# fastkpca puts methods for its kernel functions (R/kernel_function.R) on
# them, so that these come from the C fill instead of kernlab's loop over
# pairs of points in R. The S4 classes mirror the first S3 classes of a
# kernel function and extend kernlab's "kernel" and "stringkernel": then
# kernlab's checks (is(kernel, "kernel")) pass, its slots of class
# "kfunction" take the kernel, and S4 dispatch reaches these methods.

# Define the S4 classes and put the methods on kernlab's generics; where:
# the environment that records them (fastkpca's namespace is locked by the
# time kernlab may be loaded).
put_kernlab_kernel_methods <- function(where) {
  methods::setClass("fastkpca_kernel_function", contains = "kernel", where = where)
  methods::setClass("fastkpca_string_kernel_function",
                    contains = c("fastkpca_kernel_function", "stringkernel"), where = where)
  generic <- function(name) getExportedValue("kernlab", name)
  # each class gets every method, so that the string class, which extends
  # kernlab's "stringkernel" too, never finds two equally close ones
  for (cls in kernel_function_s4_classes) {
    methods::setMethod(generic("kernelMatrix"), cls, kernlab_kernel_matrix, where = where)
    methods::setMethod(generic("kernelFast"), cls, kernlab_kernel_fast, where = where)
    methods::setMethod(generic("kernelMult"), cls, kernlab_kernel_mult, where = where)
    methods::setMethod(generic("kernelPol"), cls, kernlab_kernel_pol, where = where)
    methods::setMethod("show", cls, function(object) print(object), where = where)
  }
  # kernlab's ksvm() on strings (its list method) takes its user-kernel path
  # for every string kernel, kernlab's own stringdot() too, and so crashes R
  # with the types of kernlab_native_only_types: a method for kernlab's
  # string kernels on lists stops those fits first and otherwise hands the
  # call on to kernlab's own method (fastkpca's string kernels keep theirs;
  # kernlab's method is called as found here: callNextMethod() cannot find
  # its way from a method recorded outside a package's namespace)
  kernlab_strings <- methods::getMethod(generic("kernelMatrix"), "stringkernel")
  methods::setMethod(generic("kernelMatrix"), c("stringkernel", "list"), function(kernel, x, y = NULL) {
    check_kernlab_solver(kernel)
    kernlab_strings(kernel, x, y)
  }, where = where)
  methods::setMethod(generic("kernelMatrix"), c("fastkpca_string_kernel_function", "list"),
                     kernlab_kernel_matrix, where = where)
  # the algebra on kernlab's own kernels, in either order and mixed with
  # fastkpca's: S4 dispatch of the arithmetic operators and exp() on
  # kernlab's "kernel" class, which has no arithmetic of its own (kernlab's
  # objects are S4, so S4 methods are what R finds for them)
  arith <- function(e1, e2) kernel_arith(.Generic, e1, e2)
  for (signature in list(c("kernel", "kernel"), c("kernel", "ANY"), c("ANY", "kernel")))
    methods::setMethod("Arith", signature, arith, where = where)
  methods::setMethod("Arith", c("kernel", "missing"), function(e1, e2) kernel_arith(.Generic, e1),
                     where = where)
  methods::setMethod("Math", "kernel", function(x) kernel_math(.Generic, x), where = where)
  # k$name, k$kpar (and an expression's k$op, k$args) on kernlab's objects,
  # which the generators return while kernlab is loaded, as on fastkpca's
  # kernel functions
  methods::setMethod("$", "kernel", function(x, name) kernel_tree(x)[[name]], where = where)
  invisible(TRUE)
}

# kernelMatrix(kernel, x, y): K(x) or K(x, y) from the C fill, as kernlab's
# "kernelMatrix" class.
kernlab_kernel_matrix <- function(kernel, x, y = NULL) {
  check_kernlab_solver(kernel)
  # nested calls, no binding in between: the matrix is never shared, so
  # neither the class nor asS4() copies it (kernlab's as.kernelMatrix()
  # copies it three times)
  asS4(with_kernel_matrix_class(kernel_matrix_na_rows(kernel_tree(kernel), x, y)))
}

# kernlab's ksvm() types whose solvers crash R on a kernel that is not one
# of kernlab's own classes (a kernel written as an R function, in kernlab
# alone, too), and on strings with any kernel (its list method treats every
# string kernel as a user kernel): kernlab asks such a kernel for its kernel
# matrix before it calls the solver, so that is where the fit stops.
kernlab_native_only_types <- c("C-bsvc", "kbb-svc", "spoc-svc", "eps-bsvr")

# Stop a kernelMatrix() asked for by one of those ksvm() fits: the nearest
# frame of the call stack that holds ksvm()'s fit under way (`ret`, of
# kernlab's class "ksvm") and its kernel type (`ktype`) is ksvm()'s own.
check_kernlab_solver <- function(kernel) {
  for (env in rev(sys.frames())) {
    fit <- get0("ret", envir = env, inherits = FALSE)
    if (!isS4(fit) || !methods::is(fit, "ksvm") ||
        !exists("ktype", envir = env, inherits = FALSE)) next
    type <- methods::slot(fit, "type")
    if (!type %in% kernlab_native_only_types) return(invisible())
    if (uses_strings(kernel_tree(kernel)))
      stop_argument(sprintf(paste0(
        "kernlab's ksvm() of type \"%s\" cannot take the string kernel %s: on strings ",
        "kernlab computes every kernel, its own stringdot() too, as a user kernel, on which ",
        "the solver of this type crashes R. Use type = \"C-svc\" or \"nu-svc\" ",
        "(\"eps-svr\" for regression)"), type, format(kernel_tree(kernel))))
    stop_argument(sprintf(paste0(
        "kernlab's ksvm() of type \"%s\" cannot take the kernel %s: its solver for ",
        "this type handles only kernlab's own kernel classes, and crashes R on any other ",
        "kernel (a kernel function written in R too). Use a single kernel made by a ",
        "generator while kernlab is attached (such as rbfdot(0.1) after library(kernlab), ",
        "which is then kernlab's own), or ",
        "another type (\"C-svc\", \"nu-svc\"; \"eps-svr\" for regression)"),
        type, format(kernel_tree(kernel))))
  }
  invisible()
}

with_kernel_matrix_class <- function(m) {
  class(m) <- structure("kernelMatrix", package = "kernlab")
  m
}

# Threads for a kernel matrix of `values` entries asked for by kernlab:
# one for small ones, which kernlab asks for by the hundred (a column per
# pivot in csi(), a row per step in kha()), where waking threads costs more
# than the fill; fastkpca's default for the others.
kernlab_threads <- function(values) if (values < 2^16) 1L else kpca_threads()

# kernelFast(kernel, x, y, a): a = rowSums(x^2) only saves kernlab's own
# kernels a step; the C fill has no use for it.
kernlab_kernel_fast <- function(kernel, x, y, a) kernlab_kernel_matrix(kernel, x, y)

# kernel_matrix(), with NA for the points that have a missing value, as
# kernlab's own kernels give: kernlab counts on it (csi(), which lssvm()
# uses, asks past its last pivot for the rows x[NA, ] and drops them).
kernel_matrix_na_rows <- function(k, x, y = NULL) {
  threads <- kernlab_threads(NROW(x) * NROW(if (is.null(y)) x else y))
  with_na <- function(d) is.numeric(d) && anyNA(d)
  if (!with_na(x) && !with_na(y)) return(kernel_matrix(k, x, y, threads = threads))
  x <- as_data_matrix(x, "x")
  xna <- rowSums(is.na(x)) > 0
  x[xna, ] <- 0
  yna <- xna
  if (!is.null(y)) {
    y <- as_data_matrix(y, "y")
    yna <- rowSums(is.na(y)) > 0
    y[yna, ] <- 0
  }
  out <- kernel_matrix(k, x, y, threads = threads)
  out[xna, ] <- NA
  out[, yna] <- NA
  out
}

# kernelMult(kernel, x, y, z): K(x, y) z (y = NULL: K(x) z), one block of
# rows of K at a time (block_size(), R/predict.R; kernlab's `blocksize` is
# its own rule for its own kernels, and does not change the result).
kernlab_kernel_mult <- function(kernel, x, y = NULL, z, blocksize = 256) {
  k <- kernel_tree(kernel)
  x <- kernlab_points(k, x, "x")
  other <- if (is.null(y)) x else kernlab_points(k, y, "y", x)
  z <- kernlab_weights(z, NROW(other), "z", if (is.null(y)) "x" else "y",
                       columns = TRUE)
  out <- matrix(0, NROW(x), ncol(z))
  for (rows in row_blocks(NROW(x), NROW(other)))
    out[rows, ] <- kernel_matrix(k, take_rows(x, rows), other,
                                 threads = kernlab_threads(length(rows) * NROW(other))) %*% z
  out
}

# kernelPol(kernel, x, y, z, k): z_i z_j k(x_i, x_j), or z_i k_j k(x_i, y_j)
# with y. That is the conformal kernel with weights z on the rows of x
# (and k on those of y), so the C fill computes it in one pass.
kernlab_kernel_pol <- function(kernel, x, y = NULL, z, k = NULL) {
  tree <- kernel_tree(kernel)
  x <- kernlab_points(tree, x, "x")
  zw <- kernlab_weights(z, NROW(x), "z", "x")
  weighted <- kernel_node("conformal", list(tree), g = function(points) zw, label = "z")
  if (is.null(y)) return(kernel_matrix(weighted, x, threads = kernlab_threads(NROW(x)^2)))
  if (is.null(k)) stop_argument("'k' must be given with 'y': the weights of the rows of 'y'")
  y <- kernlab_points(tree, y, "y", x)
  kw <- kernlab_weights(k, NROW(y), "k", "y")
  threads <- kernlab_threads(NROW(x) * NROW(y))
  # strings or rows: one kernel path (R/kernel_matrix.R)
  out <- kernel_cross(x, y, weighted, threads, xweights = c(kernel_weights(tree, y), list(kw)))
  dimnames(out) <- list(row_labels(x), row_labels(y))
  out
}

# The points given to a kernel generic, checked once: a double matrix, or
# for a string kernel a character vector (a list of tokens pasted, as
# kpca() does). like: the points they are paired with.
kernlab_points <- function(k, x, arg, like = NULL) {
  if (!uses_strings(k)) return(kernel_data(x, arg, like))
  x <- as_strings(x, arg)
  if (anyNA(x)) stop_argument(sprintf("'%s' must not contain missing strings", arg))
  x
}


# kernelMult's z or kernelPol's z and k: one weight per point of `of` (a
# vector, or the first column of a matrix, as kernlab reads them), or with
# columns = TRUE a matrix of as many rows.
kernlab_weights <- function(w, n, arg, of, columns = FALSE) {
  w <- as.matrix(w)
  if (!is.numeric(w) || nrow(w) != n || ncol(w) == 0L)
    stop_argument(sprintf("'%s' must be a numeric vector or matrix with %d rows, one per point of '%s'",
                          arg, n, of))
  check_finite(w, arg)
  storage.mode(w) <- "double"
  if (columns) w else w[, 1L]
}
