# The conditions fastkpca signals: every error has the class
# c("fastkpca_error_<kind>", "fastkpca_error", "error", "condition"), every
# warning c("fastkpca_warning_<kind>", "fastkpca_warning", "warning",
# "condition"), so that a caller's tryCatch() or withCallingHandlers() can
# tell one kind from another. stop_argument() and its siblings below are
# the only places that build them; engine_call() classes the errors of the
# C engine.

#' Conditions signalled by fastkpca
#'
#' Every error fastkpca raises is a condition of class
#' `c("fastkpca_error_<kind>", "fastkpca_error", "error", "condition")`, and
#' every warning one of class
#' `c("fastkpca_warning_<kind>", "fastkpca_warning", "warning", "condition")`,
#' so that `tryCatch()` (or tune, or any caller) can handle one kind and let
#' the others through. The message is the same as before the classes came,
#' and no call is attached (as with `stop(call. = FALSE)`).
#'
#' @section Error classes:
#' \describe{
#'   \item{`fastkpca_error_argument`}{an argument is invalid: a wrong type,
#'     length or range, an unknown kernel or kernel parameter, options that
#'     do not go together, new data that do not match the fit.}
#'   \item{`fastkpca_error_data`}{the arguments are valid but the data do not
#'     allow the fit: a constant column with `scale. = TRUE`, a centered kernel
#'     matrix with no positive eigenvalue, no eigenvalue above `th`, kernel
#'     values that are not finite, a singular covariance matrix (kica), too
#'     few distinct rows for the landmarks.}
#'   \item{`fastkpca_error_memory`}{the fit would need more memory than the
#'     system can give (refused before anything is allocated), or an
#'     allocation in the C engine failed.}
#'   \item{`fastkpca_error_chunk`}{a chunk of [row_chunks()] cannot be read,
#'     or its columns differ from those of chunk 1, or a query fails. The
#'     error of the reader or of the checks, where there is one, is kept in
#'     the field `parent`.}
#'   \item{`fastkpca_error_numerical`}{a LAPACK routine reported a failure
#'     (an eigensolver that did not converge, a factorisation that broke
#'     down), or a system to solve is singular (`preimage()`: increase
#'     `ridge`).}
#'   \item{`fastkpca_error_object`}{an object given as a fit is not a valid
#'     fastkpca fit (its fields are missing or inconsistent).}
#'   \item{`fastkpca_error_dependency`}{a suggested package the function needs
#'     (recipes, ggplot2, DBI) is not installed.}
#'   \item{`fastkpca_error_worker`}{a worker of a parallel [future::plan()]
#'     was lost more often than a batch is run again, or cannot read the
#'     data a matrix-free fit shares with it.}
#' }
#' An error that fastkpca raises on behalf of another one (a chunk's reader,
#' the function `g` of a conformal kernel, a step of a recipe) keeps the
#' original condition in the field `parent`; a step of a recipe keeps the
#' class of the error of [kpca()].
#'
#' @section Warning classes:
#' \describe{
#'   \item{`fastkpca_warning_convergence`}{the iterative solver, or the
#'     fixed-point iteration of `preimage()`, did not converge.}
#'   \item{`fastkpca_warning_data`}{the fit is returned but the data limit
#'     it: fewer positive eigenvalues than components asked for, or a flat
#'     kernel (this one also has its older class `fastkpca_flat_kernel`,
#'     which [kpca_cv()] quiets in its fold fits).}
#'   \item{`fastkpca_warning_argument`}{an argument is ignored or cut down
#'     (`kpar` with a precomputed kernel, more canonical pairs than exist).}
#'   \item{`fastkpca_warning_chunk`}{the reader of a chunk warned.}
#'   \item{`fastkpca_warning_dependency`}{the accessors could not be put on
#'     kernlab's generics.}
#' }
#'
#' @section Why base R's constructors:
#' The conditions are built with `errorCondition()` and
#' `warningCondition()`, which base R has had since 3.6.0, rather than with
#' `rlang::abort()`: the engine of the package depends on nothing beyond
#' base R and stats (rlang is only in Suggests, for the tidymodels
#' integration), and the classes are all a caller needs to tell the kinds
#' apart; `rlang::abort()` would add its formatting and backtraces but also
#' a hard dependency on every fit.
#'
#' @name fastkpca_conditions
#' @aliases fastkpca_error fastkpca_warning
#' @examples
#' # catch a bad argument, and only that
#' res <- tryCatch(kpca(matrix(rnorm(20), 10), features = -1),
#'                 fastkpca_error_argument = function(e) conditionMessage(e))
#' res
#' # the classes of a condition
#' e <- tryCatch(kpca(matrix(rnorm(20), 10), features = -1), error = identity)
#' class(e)
NULL

# The condition of one kind; parent: the condition it was raised on behalf
# of (a reader's error), or NULL.
fastkpca_condition <- function(type, kind, message, parent = NULL) {
  class <- c(paste0("fastkpca_", type, "_", kind), paste0("fastkpca_", type))
  if (type == "error") errorCondition(message, class = class, call = NULL, parent = parent)
  else warningCondition(message, class = class, call = NULL)
}

# stop_<kind>(...) pastes its arguments into the message as stop() does.
stop_kind <- function(kind, ..., parent = NULL)
  stop(fastkpca_condition("error", kind, .makeMessage(...), parent))
stop_argument <- function(...) stop_kind("argument", ...)
stop_data <- function(...) stop_kind("data", ...)
stop_memory <- function(...) stop_kind("memory", ...)
stop_chunk <- function(..., parent = NULL) stop_kind("chunk", ..., parent = parent)
stop_object <- function(...) stop_kind("object", ...)
stop_dependency <- function(...) stop_kind("dependency", ...)
stop_worker <- function(...) stop_kind("worker", ...)

# An error raised on behalf of the condition e, with a new message: it keeps
# e's class where e is fastkpca's own, else it is of the given kind.
stop_from <- function(e, message, kind = "argument") {
  if (inherits(e, "fastkpca_error"))
    kind <- sub("^fastkpca_error_", "", class(e)[1L])
  stop_kind(kind, message, parent = e)
}

warn_kind <- function(kind, ...)
  warning(fastkpca_condition("warning", kind, .makeMessage(...)))
warn_argument <- function(...) warn_kind("argument", ...)
warn_data <- function(...) warn_kind("data", ...)
warn_chunk <- function(...) warn_kind("chunk", ...)
warn_convergence <- function(...) warn_kind("convergence", ...)
warn_dependency <- function(...) warn_kind("dependency", ...)

# Errors that code outside fastkpca raises on the package's behalf (the
# user's na.action, stats::model.frame() on a formula's variables) as
# fastkpca errors of the given kind, with their message unchanged.
with_error_kind <- function(expr, kind) {
  tryCatch(expr, error = function(e) stop_from(e, conditionMessage(e), kind))
}

# Errors of the C engine (Rf_error) reach R as simple errors; this gives
# them fastkpca's classes by what the message reports. The argument checks
# in C re-check what R has checked, so they are arguments; R's own
# allocation failures ("cannot allocate vector of size ...") are memory.
engine_call <- function(expr) {
  engine_settings()
  tryCatch(expr, error = function(e) {
    if (inherits(e, "fastkpca_error")) stop(e)
    message <- conditionMessage(e)
    kind <- if (grepl("cannot allocate", message, fixed = TRUE)) "memory"
            else if (grepl("LAPACK|singular", message)) "numerical"
            else if (grepl("not finite|rounding level|too small to be decomposed", message)) "data"
            else "argument"
    stop_kind(kind, message, parent = e)
  })
}
