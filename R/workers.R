# Batches of work on future's workers, one future per batch, with lost
# workers retried: the passes of the chunked Nystrom fit
# (R/chunk_passes.R) and of the matrix-free exact solver
# (R/matrix_free.R) both run here under a parallel future::plan().
#
# A future whose worker dies (its process killed, the machine gone) ends
# in a FutureError when its value is collected; its batch is then launched
# again, on whichever worker the backend gives, up to worker_retries
# times. An error raised by the batch's own code (a chunk that cannot be
# read, bad data) is not a lost worker and stops the pass at once, as it
# would in this process. Values come back in batch order, so the results
# do not depend on which worker ran what.

# Launches of a batch after its first, when its worker is lost.
worker_retries <- 2L

# fun(batch, args) for each batch, on the workers: the list of values.
# label(i) names batch i in the error when it is lost too often.
run_on_workers <- function(batches, fun, args, label) {
  # a future, or the FutureError of a launch that found its worker gone
  # (future before 1.40 does not replace a dead multisession worker)
  launch <- function(i) {
    batch <- batches[[i]]
    # the engine's options (R/simd.R) go with the batch: a worker is
    # another R process
    settings <- engine_options()
    tryCatch(future::future(with_engine_options(settings, fun(batch, args)),
                            globals = list(fun = fun, batch = batch, args = args,
                                           settings = settings,
                                           with_engine_options = with_engine_options),
                            packages = "fastkpca", seed = TRUE),
             FutureError = identity)
  }
  futures <- lapply(seq_along(batches), launch)
  values <- vector("list", length(batches))
  for (i in seq_along(batches)) {
    lost <- 0L
    repeat {
      value <- if (inherits(futures[[i]], "FutureError")) futures[[i]]
               else tryCatch(future::value(futures[[i]]), FutureError = identity)
      if (!inherits(value, "FutureError")) break
      lost <- lost + 1L
      if (lost > worker_retries)
        stop_worker(sprintf(paste0("%s was lost %d times: its worker stopped before it ended ",
                                   "(%s); nothing was returned"),
                            label(i), lost, conditionMessage(value)))
      futures[[i]] <- launch(i)
    }
    futures[i] <- list(NULL)
    values[i] <- list(value)
  }
  values
}
