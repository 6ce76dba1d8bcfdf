# The conditions fastkpca signals: every error has the class
# c("fastkpca_error_<kind>", "fastkpca_error", "error", "condition"), every
# warning c("fastkpca_warning_<kind>", "fastkpca_warning", "warning",
# "condition"), and every message c("fastkpca_message_<kind>",
# "fastkpca_message", "message", "condition"), so that a caller's
# tryCatch() or withCallingHandlers() can tell one kind from another.
# stop_argument() and its siblings below are the only places that build
# them (the C engine's errors too, through stop_kind(): src/errors.c);
# engine_call() classes R's own errors raised inside the C engine.

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
#' The errors of the C engine come with their kind from the engine itself,
#' whatever the message says and whatever the language R's messages are
#' in. R's own errors raised inside the engine have no kind there: a failed
#' allocation (R's "cannot allocate vector of size ..." or "vector memory
#' exhausted", in whatever language R translates them to) is
#' `fastkpca_error_memory`, any other `fastkpca_error_argument`, and both
#' keep R's error in the field `parent`.
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
#' @section Message classes:
#' \describe{
#'   \item{`fastkpca_message_memory`}{the memory the system can still give
#'     cannot be read from the operating system (on Linux, /proc/meminfo or
#'     else `sysconf()`; on macOS, the VM statistics and `sysctl`; on Windows,
#'     `GlobalMemoryStatusEx()`). It is said once per session, at the first
#'     fit that needs to know, and the fit goes on: with the memory unknown,
#'     a fit takes its n x n buffer as if it fit, so `solver = "auto"` never
#'     turns to the matrix-free solver, and an allocation that fails is an
#'     error of class `fastkpca_error_memory`.
#'     `options(fastkpca.memory_limit = )` (in bytes) sets the budget
#'     instead, and then nothing is read or said.}
#' }
#' A message has the class
#' `c("fastkpca_message_<kind>", "fastkpca_message", "message", "condition")`;
#' `suppressMessages()` quiets it.
#'
#' @section Signals:
#' A worker lost during a parallel pass (matrix-free or chunked Nyström)
#' signals a condition of class `c("fastkpca_worker_lost", "condition")`
#' naming the batch, with `signalCondition()`: nothing is printed, and the
#' fit goes on (the batch runs again); `withCallingHandlers()` sees it.
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
#' @aliases fastkpca_error fastkpca_warning fastkpca_message
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
  else if (type == "warning") warningCondition(message, class = class, call = NULL)
  else structure(class = c(class, "message", "condition"),
                 list(message = message, call = NULL))
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

# Every call into the C engine: engine_call(.Call(C_<entry>, ...)). It
# first passes the engine's settings from R options (engine_settings(),
# R/simd.R: the vector path and the rest), so that each call runs with the
# options of the moment; the only .Call made without it are those of
# engine_settings() itself. tests/testthat/test-engine-call.R checks both
# that every .Call in the package's code is written so and that each C
# entry point, called from R, runs on the path the option names.
#
# Errors raised inside the C engine. The engine's own come as fastkpca
# conditions already: fastkpca_error() in src/errors.c raises each through
# stop_kind() with the kind its check gives (error_argument(),
# error_data(), error_memory(), error_numerical()), and they pass through.
# R's own errors inside C have no kind: a failed allocation is memory,
# recognised by R's message templates in the language R speaks (see
# is_allocation_failure()); anything else is argument (the engine's
# arguments are what R's API checks there, such as a vector too long), with
# its message unchanged and the original error kept in 'parent'.
engine_call <- function(expr) {
  engine_settings()
  tryCatch(expr, error = function(e) {
    if (inherits(e, "fastkpca_error")) stop(e)
    message <- conditionMessage(e)
    kind <- if (is_allocation_failure(message)) "memory" else "argument"
    stop_kind(kind, message, parent = e)
  })
}

# R's messages of a failed allocation (its C memory manager's errors, in
# the "R" message domain), which it translates: matched against each
# template in English and in the current language, the numbers in them
# matching anything.
allocation_templates <- c(
  "cannot allocate vector of size %0.1f Gb",
  "cannot allocate vector of size %0.1f Mb",
  "cannot allocate vector of size %0.f Kb",
  "cannot allocate vector of length %d",
  "cannot allocate memory block of size %0.1f Gb",
  "cannot allocate memory block of size %0.f Tb",
  "vector memory exhausted (limit reached?)",
  "cons memory exhausted (limit reached?)",
  "memory exhausted (limit reached?)",
  "vector is too large")

is_allocation_failure <- function(message) {
  templates <- unique(c(allocation_templates,
                        gettext(allocation_templates, domain = "R", trim = FALSE)))
  patterns <- vapply(templates, template_pattern, "")
  any(vapply(patterns, grepl, NA, x = trimws(message)))
}

# A printf template as a regular expression of the whole message: its text
# literal, each conversion (%d, %0.1f, %s, ...) any text.
template_pattern <- function(template) {
  conversion <- "%[-+ #0-9.$]*[a-zA-Z]"
  parts <- strsplit(template, conversion)[[1L]]
  if (grepl(paste0(conversion, "$"), template)) parts <- c(parts, "")
  literal <- gsub("([\\[\\].|()\\\\^{}+$*?])", "\\\\\\1", parts, perl = TRUE)
  paste0("^", paste(literal, collapse = ".*"), "$")
}
