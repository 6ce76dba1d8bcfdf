# kernlab's accessor functions (pcv(), eig(), rotated(), ...) for fastkpca
# fits, with fastkpca alone and with kernlab attached in either order.
#
# fastkpca exports S3 generics of the same names. kernlab's are S4 generics:
# when kernlab is loaded (before or after fastkpca, see R/zzz.R), S4 methods
# for fastkpca's S3 classes are put on kernlab's generics, so that whichever
# of the two masks the other, the call reaches the right method. fastkpca's
# generics hand objects they do not know (kernlab's S4 fits and kernels) to
# kernlab's generic of the same name.

#' kernlab's accessor functions
#'
#' kernlab reads its fits through accessor functions; fastkpca has the same
#' functions, so that kernlab code runs unchanged on fastkpca fits. They
#' work with fastkpca alone, and with kernlab attached before or after
#' fastkpca: when kernlab is loaded, fastkpca registers methods for its fits
#' on kernlab's generics, and fastkpca's functions pass kernlab's own
#' objects on to kernlab's, so `eig(kernlab_fit)` keeps working.
#'
#' @section What each accessor answers:
#' For a kernel PCA fit from [kpca()] (every kind: exact, precomputed,
#' Nyström):
#' \describe{
#'   \item{`pcv()`}{the principal component vectors in the dual form,
#'     `fit$alpha` without its column names (kernlab's `pcv()` has none):
#'     n x k for an exact or precomputed fit. For a Nyström fit it is the
#'     m x k matrix of coefficients on the m landmarks: a row \eqn{x}
#'     projects to \eqn{(k_m(x) - \mu)'\alpha}{(k_m(x) - mu)' alpha} (see
#'     the Nyström section of [kpca()]).}
#'   \item{`eig()`}{the eigenvalues of \eqn{K_c / n}, named `Comp.1`, ...,
#'     `fit$eig`.}
#'   \item{`rotated()`}{the training rows projected on the components,
#'     `fit$rotated` with the row names of the data and no column names,
#'     as kernlab's. A fit that keeps no scores is an error: use
#'     `predict()`.}
#'   \item{`kernelf()`}{the kernel, as a kernel object ([kern()]):
#'     fastkpca's kernel function in every session (kernlab loaded or
#'     not), which kernlab's functions take too; or
#'     `"precomputed"` for a fit on a kernel matrix (kernlab returns a
#'     sentence there).}
#'   \item{`kpar()`}{the kernel's parameters, all of them, defaults
#'     included (`fit$kpar`); `list()` for a precomputed fit and `NULL`
#'     for a combination of kernels, whose parameters are in the kernel
#'     object. On a kernel object, its parameters (`NULL` for a
#'     combination).}
#'   \item{`xmatrix()`}{the data as the kernel saw them (`fit$xmatrix`):
#'     after `na.action`, centered and scaled if `center` or `scale.` asked
#'     for it. For a Nyström fit, the m landmark rows (`fit$landmarks`): the
#'     n training rows are not kept. `NULL` for a precomputed fit, which
#'     keeps no copy of the kernel matrix (kernlab's returns it).}
#'   \item{`kcall()`}{the call, `fit$call`.}
#'   \item{`terms()`}{the terms of a formula fit; `NULL` for the other fits,
#'     as kernlab's `terms` slot.}
#' }
#' For a kernel canonical correlation fit from [kcca()], `kcor()`,
#' `xcoef()` and `ycoef()` give the canonical correlations and the dual
#' coefficients of the two views, and `kernelf()`, `kpar()` and `kcall()`
#' the kernel of `x`, its parameters and the call.
#'
#' @param object A fit from [kpca()] or [kcca()]; for `kpar()`, also a
#'   kernel object. kernlab's own objects are passed to kernlab's function
#'   of the same name.
#' @param x A fit from [kpca()].
#' @param ... Unused; an error if given.
#' @return See the section on what each accessor answers.
#' @seealso [kpca()], [kcca()], [kern()] and [rbfdot()] for kernels.
#' @examples
#' fit <- kpca(as.matrix(iris[, 1:4]), kernel = "rbfdot",
#'             kpar = list(sigma = 0.2), features = 2)
#' eig(fit)
#' head(pcv(fit), 3)
#' head(rotated(fit), 3)
#' kernelf(fit)
#' kpar(fit)
#' dim(xmatrix(fit))
#' kcall(fit)
#' # the same names and scale as kernlab's, up to the signs of the columns
#' if (requireNamespace("kernlab", quietly = TRUE)) {
#'   kfit <- kernlab::kpca(as.matrix(iris[, 1:4]), kernel = "rbfdot",
#'                         kpar = list(sigma = 0.2), features = 2)
#'   print(all.equal(eig(fit), kernlab::eig(kfit)))
#'   print(all.equal(abs(rotated(fit)), abs(kernlab::rotated(kfit))))
#' }
#' @name kernlab-accessors
NULL

#' @rdname kernlab-accessors
#' @export
pcv <- function(object, ...) UseMethod("pcv")

#' @rdname kernlab-accessors
#' @export
eig <- function(object, ...) UseMethod("eig")

#' @rdname kernlab-accessors
#' @export
rotated <- function(object, ...) UseMethod("rotated")

#' @rdname kernlab-accessors
#' @export
kernelf <- function(object, ...) UseMethod("kernelf")

#' @rdname kernlab-accessors
#' @export
kpar <- function(object, ...) UseMethod("kpar")

#' @rdname kernlab-accessors
#' @export
xmatrix <- function(object, ...) UseMethod("xmatrix")

#' @rdname kernlab-accessors
#' @export
kcall <- function(object, ...) UseMethod("kcall")

#' @rdname kernlab-accessors
#' @export
kcor <- function(object, ...) UseMethod("kcor")

#' @rdname kernlab-accessors
#' @export
xcoef <- function(object, ...) UseMethod("xcoef")

#' @rdname kernlab-accessors
#' @export
ycoef <- function(object, ...) UseMethod("ycoef")

# The accessors, by the fastkpca classes they serve (the parent classes;
# subclasses inherit), as registered on kernlab's generics in R/zzz.R.
accessor_classes <- list(
  pcv = "fastkpca", eig = "fastkpca", rotated = "fastkpca", xmatrix = "fastkpca",
  kernelf = c("fastkpca", "fastkpca_kcca"), kcall = c("fastkpca", "fastkpca_kcca"),
  kpar = c("fastkpca", "fastkpca_kcca", "fastkpca_kernel", kernel_function_s4_classes),
  kcor = "fastkpca_kcca", xcoef = "fastkpca_kcca", ycoef = "fastkpca_kcca"
)

# An accessor takes the object only; anything else is an error naming it.
check_accessor_dots <- function(name, ...) {
  if (...length() == 0L) return(invisible())
  nms <- names(list(...))
  nms <- if (is.null(nms)) rep("", ...length()) else nms
  shown <- ifelse(nms == "", "(unnamed)", nms)
  stop_argument(sprintf("%s() takes only 'object'; unknown argument%s %s", name,
                        if (...length() > 1L) "s" else "",
                        paste0("'", shown, "'", collapse = ", ")))
}

# The default method of every accessor: kernlab's objects (S4) go to
# kernlab's generic; anything else is an error naming 'object'.
accessor_default <- function(name, object, ...) {
  check_accessor_dots(name, ...)
  if (isS4(object) && identical(attr(class(object), "package"), "kernlab") &&
      requireNamespace("kernlab", quietly = TRUE))
    return(getExportedValue("kernlab", name)(object))
  wanted <- switch(name, kcor = , xcoef = , ycoef = "a fit from kcca()",
                   kpar = "a fit from kpca() or kcca(), or a kernel object",
                   kernelf = , kcall = "a fit from kpca() or kcca()",
                   "a fit from kpca()")
  stop_argument(sprintf("'object' must be %s, not an object of class \"%s\"", wanted,
                        class(object)[1L]))
}

#' @export
pcv.default <- function(object, ...) accessor_default("pcv", object, ...)
#' @export
eig.default <- function(object, ...) accessor_default("eig", object, ...)
#' @export
rotated.default <- function(object, ...) accessor_default("rotated", object, ...)
#' @export
kernelf.default <- function(object, ...) accessor_default("kernelf", object, ...)
#' @export
kpar.default <- function(object, ...) accessor_default("kpar", object, ...)
#' @export
xmatrix.default <- function(object, ...) accessor_default("xmatrix", object, ...)
#' @export
kcall.default <- function(object, ...) accessor_default("kcall", object, ...)
#' @export
kcor.default <- function(object, ...) accessor_default("kcor", object, ...)
#' @export
xcoef.default <- function(object, ...) accessor_default("xcoef", object, ...)
#' @export
ycoef.default <- function(object, ...) accessor_default("ycoef", object, ...)

#' @export
pcv.fastkpca <- function(object, ...) {
  check_accessor_dots("pcv", ...)
  unname(object$alpha)
}

#' @export
eig.fastkpca <- function(object, ...) {
  check_accessor_dots("eig", ...)
  object$eig
}

#' @export
rotated.fastkpca <- function(object, ...) {
  check_accessor_dots("rotated", ...)
  scores <- object$rotated
  if (is.null(scores))
    stop_argument("'object' keeps no scores of its training rows; use predict(object, newdata)")
  colnames(scores) <- NULL
  if (is.null(rownames(scores))) dimnames(scores) <- NULL
  scores
}

#' @export
kernelf.fastkpca <- function(object, ...) {
  check_accessor_dots("kernelf", ...)
  fit_kernel_function(object$kernel)
}

# A fit's kernel as kernelf() gives it: a kernel function
# (R/kernel_function.R), which kernlab's functions take as well, or
# "precomputed".
fit_kernel_function <- function(kernel) {
  if (is_precomputed(kernel)) kernel else kernel_function(kernel)
}

#' @export
kpar.fastkpca <- function(object, ...) {
  check_accessor_dots("kpar", ...)
  object$kpar
}

#' @export
kpar.fastkpca_kernel <- function(object, ...) {
  check_accessor_dots("kpar", ...)
  kernel_kpar(object)
}

#' @export
xmatrix.fastkpca <- function(object, ...) {
  check_accessor_dots("xmatrix", ...)
  object$xmatrix
}

# A Nystrom fit keeps its landmarks, not the training rows; a precomputed
# fit keeps no copy of the kernel matrix.
#' @export
xmatrix.fastkpca_nystrom <- function(object, ...) {
  check_accessor_dots("xmatrix", ...)
  object$landmarks
}

#' @export
xmatrix.fastkpca_precomputed <- function(object, ...) {
  check_accessor_dots("xmatrix", ...)
  NULL
}

#' @export
kcall.fastkpca <- function(object, ...) {
  check_accessor_dots("kcall", ...)
  object$call
}

#' @rdname kernlab-accessors
#' @export
terms.fastkpca <- function(x, ...) {
  check_accessor_dots("terms", ...)
  x$terms
}

# --- registration on kernlab's S4 generics --------------------------------

# The S3 classes of fastkpca's objects, for S4 dispatch (setOldClass). S4
# does not follow an unregistered S3 class to its parent, so each class a
# kpca fit can have first is registered as a child of "fastkpca": the S4
# method for "fastkpca" then calls fastkpca's S3 generic, which dispatches
# on the whole class vector (a chunked or string Nystrom fit reaches the
# Nystrom methods). A new first class of a kpca fit must be added here.
fastkpca_fit_classes <- c(
  "fastkpca_exact", "fastkpca_nystrom", "fastkpca_precomputed",
  "fastkpca_nystrom_chunked",   # issue 20
  "fastkpca_string"             # issue 19, string kernels
)

methods::setOldClass("fastkpca")
for (cls in fastkpca_fit_classes) methods::setOldClass(c(cls, "fastkpca"))
methods::setOldClass("fastkpca_kcca")
methods::setOldClass("fastkpca_kernel")
rm(cls)

# Where the methods put on kernlab's generics are recorded: fastkpca's
# namespace is locked by the time kernlab may be loaded.
kernlab_method_tables <- new.env()

# Put fastkpca's methods on kernlab's generics (kernlab is loaded): those
# of its kernel functions (R/kernlab_kernels.R), then the accessors. Each
# accessor's S4 method calls fastkpca's S3 generic, which dispatches on the
# subclass.
register_kernlab_methods <- function(...) {
  tryCatch({
    put_kernlab_kernel_methods(kernlab_method_tables)
    put_kernlab_methods()
  }, error = function(e)
    warn_dependency("fastkpca could not register its methods on kernlab's generics: ",
                    conditionMessage(e)))
}

put_kernlab_methods <- function() {
  for (name in names(accessor_classes)) {
    generic <- getExportedValue("kernlab", name)
    method <- local({
      ours <- get(name, mode = "function", envir = topenv())
      function(object) ours(object)
    })
    for (cls in accessor_classes[[name]])
      methods::setMethod(generic, cls, method, where = kernlab_method_tables)
  }
  invisible(TRUE)
}

#' @rdname kpca
#' @section kernlab's accessors:
#' The fit is a list, and kernlab's accessor functions read it too, with
#' fastkpca alone or with kernlab attached in either order (see
#' [kernlab-accessors]): `pcv()` is `alpha`, `eig()` is `eig`, `rotated()`
#' is `rotated` (without column names, as kernlab's), `kernelf()` is
#' `kernel`, `kpar()` is `kpar`, `xmatrix()` is `xmatrix`, `kcall()` is
#' `call` and `terms()` is `terms` (`NULL` unless the formula method made
#' the fit). kernlab's kernel generators ([rbfdot()], [polydot()], ...) make
#' kernels that `kpca()` takes (kernlab's own objects while kernlab is
#' attached), and a kernlab `kernelMatrix` as `x` is the
#' precomputed fit (whose `xmatrix()` is `NULL`: no copy of the kernel
#' matrix is kept). For a Nyström fit, `pcv()` is the m x k matrix of
#' coefficients on the m landmarks, with which a row \eqn{x} projects to
#' \eqn{(k_m(x) - \mu)'\alpha}{(k_m(x) - mu)' alpha}, and `xmatrix()` is the
#' m landmark rows, `landmarks` (the training rows are not kept);
#' `rotated()` and `eig()` mean what they mean for the exact fit.
#' @name kpca
NULL
