# Progress of long work, through progressr (in Suggests). fastkpca only
# signals progress; the user's handlers (progressr::handlers(),
# progressr::with_progress()) decide what to show and after how long, and
# with no handler nothing is shown. Without progressr, or with
# options(fastkpca.progress = FALSE), nothing is signalled at all. The
# signals: exact fits (the kernel fill, the reduction's panels, the
# back-transformation's blocks, reported from C at the interrupt
# checkpoints: progress_at() in src/args.c), kpca_cv() (per setting and
# fold), kica() (per Jacobi sweep and start) and preimage() (per block of
# rows and fixed-point iteration). Each call signals at least three times
# whatever its size: when it starts, at each step, when it ends. The chunked
# passes have their own progressor, one step per chunk (R/chunk_passes.R).

#' Progress reports
#'
#' Exact fits of [kpca()], [kpca_cv()], [kica()] and [preimage()] report
#' their progress through the progressr package, as the chunked Nyström fits
#' do: wrap the call in [progressr::with_progress()] or set
#' [progressr::handlers()] (with `global = TRUE` to see every call) to see
#' it. Nothing is shown without a handler, and nothing at all is signalled
#' without progressr or with `options(fastkpca.progress = FALSE)`.
#'
#' What is reported:
#' \describe{
#'   \item{exact fits}{the kernel fill (by blocks of columns), the centering,
#'     the panels of the tridiagonal reduction and the blocks of the
#'     back-transformation, as a fraction of the estimated work of the fit
#'     (intermediate reports at least 1% apart); the iterative and randomized
#'     solvers report the fill, the centering and their end.}
#'   \item{[kpca_cv()]}{one step per setting of the grid and fold, and the
#'     final fit.}
#'   \item{[kica()]}{one step per start (and the polish), with a message per
#'     Jacobi sweep.}
#'   \item{[preimage()]}{the coefficients of the map, each block of rows it
#'     is applied to, and each fixed-point iteration.}
#' }
#' As progressr's convention goes, every call signals whatever its size (at
#' least three times: at its start, its steps and its end), and the handlers
#' decide what to show and after how long. The overhead is below a few
#' percent (`bench/progress.R` in the package's repository measures it).
#'
#' @name fastkpca_progress
#' @examplesIf requireNamespace("progressr", quietly = TRUE)
#' x <- as.matrix(iris[, 1:4])
#' progressr::with_progress(
#'   fit <- kpca(x, kpar = list(sigma = 0.2), features = 2),
#'   handlers = progressr::handler_txtprogressbar(), enable = TRUE)
NULL

# The number of steps of the progressor of an exact fit, which reports the
# fraction of its work done.
progress_resolution <- 1000L

# Calls under way that report their own progress for the work they run
# (kpca_cv()'s fits): the fits inside them stay quiet.
progress_state <- new.env(parent = emptyenv())
progress_state$quiet <- 0L

# A progressr progressor of `steps` steps, finished when the frame envir
# exits, that has signalled its start; NULL when nothing is to be signalled.
progress_for <- function(steps, message, envir = parent.frame()) {
  if (progress_state$quiet > 0L || !isTRUE(getOption("fastkpca.progress", TRUE)) ||
      !requireNamespace("progressr", quietly = TRUE))
    return(NULL)
  p <- progressr::progressor(steps = steps, envir = envir)
  p(message = message, amount = 0)
  p
}

# The progress function of an exact fit, given to the C engine: it is
# called with the fraction of the fit done (0 to 1). NULL: no progress.
progress_fraction <- function(message, envir = parent.frame()) {
  p <- progress_for(progress_resolution, message, envir)
  if (is.null(p)) return(NULL)
  done <- 0L
  function(fraction) {
    now <- max(done, as.integer(round(fraction * progress_resolution)))
    p(message = message, amount = now - done)
    done <<- now
    invisible(NULL)
  }
}

# Signal one step (amount 1) or a message without advancing (amount 0) of a
# progressor from progress_for(), which may be NULL.
progress_signal <- function(p, message, amount = 1) {
  if (!is.null(p)) p(message = message, amount = amount)
  invisible(NULL)
}

# expr with the progress of the fits it runs silenced: the caller reports
# the progress of the whole.
with_quiet_progress <- function(expr) {
  progress_state$quiet <- progress_state$quiet + 1L
  on.exit(progress_state$quiet <- progress_state$quiet - 1L)
  expr
}
