# Batches of work on future's workers, one future per batch, with lost
# workers replaced: the passes of the chunked Nystrom fit
# (R/chunk_passes.R) and of the matrix-free exact solver
# (R/matrix_free.R) both run here under a parallel future::plan().
#
# A future whose worker dies (its process killed, the machine gone) ends
# in a FutureError when its value is collected, or when it is launched on
# a worker that died before. Two backends need help to tell: a
# future.batchtools job killed from outside ends in a plain error, and is
# known lost by batchtools' status of the job (expired); a future.mirai
# future can stay unresolved for ever, and is waited for by polling, lost
# once mirai's dispatcher holds no task that could resolve it. Once every
# batch of the round has come back or been lost (nothing is in flight),
# the plan's workers are made again (renew_workers()): future before 1.40
# keeps a dead multisession or cluster worker in its pool and would send
# the batch to it again, and from 1.40 on a plan set again as it was
# keeps its stopped backend. The
# lost batches are then launched again, up to worker_retries times each;
# a batch whose launch fails even on the renewed workers (a cluster the
# user made, which cannot be renewed) runs in this process, as the last
# resort. A batch lost more often than that is taken to kill its worker
# (a reader that crashes R) and stops the pass with an error naming it.
# An error raised by the batch's own code (a chunk that cannot be read,
# bad data) is not a lost worker and stops the pass at once, as it would
# in this process. Values come back in batch order, and a batch gives the
# same numbers wherever it runs, so the results do not depend on which
# worker ran what, nor on a worker being lost.

# Launches of a batch after its first, when its worker is lost.
worker_retries <- 2L

# fun(batch, args) for each batch, on the workers: the list of values.
# fun is the name of a function of this package, which each worker finds
# in its own copy (no function's code travels). label(i) names batch i in
# the error when it is lost too often. A lost
# worker is signalled (signalCondition(), silent unless handled) as a
# condition of class "fastkpca_worker_lost".
run_on_workers <- function(batches, fun, args, label) {
  # future's seed = TRUE turns this process's generator to L'Ecuyer-CMRG
  # to draw the futures' streams: put the caller's kind and state back, so
  # that the next set.seed() means what it did (the batches draw nothing
  # from the caller's stream)
  rng <- rng_state()
  on.exit(restore_rng(rng))
  values <- vector("list", length(batches))
  lost <- integer(length(batches))
  todo <- seq_along(batches)
  while (length(todo) > 0L) {
    futures <- lapply(todo, function(i) launch_batch(batches[[i]], fun, args))
    outcomes <- round_values(futures)
    rm(futures)
    gone <- integer()
    for (j in seq_along(todo)) {
      i <- todo[j]
      value <- outcomes[[j]]
      outcomes[j] <- list(NULL)
      if (!inherits(value, "FutureError")) {
        values[i] <- list(value)
        next
      }
      signal_worker_lost(label(i), value)
      if (lost[i] > 0L && isTRUE(attr(value, "at_launch"))) {
        # the workers were renewed and still none takes it: here
        values[i] <- list(run_job(batch_job(batches[[i]], fun, args)))
        next
      }
      lost[i] <- lost[i] + 1L
      if (lost[i] > worker_retries)
        stop_worker(sprintf(paste0("%s was lost %d times: its worker stopped before it ended ",
                                   "(%s); nothing was returned"),
                            label(i), lost[i], conditionMessage(value)))
      gone <- c(gone, i)
    }
    if (length(gone) > 0L) renew_workers()
    todo <- gone
  }
  values
}

# A future of fun(batch, args), or the FutureError of a launch that found
# its worker gone (marked "at_launch"). Everything travels as one global,
# the job: a cluster future exports each global by a call of its own that
# waits for the worker's answer, and on a socket without TCP_NODELAY
# (the calling side of future's multisession and cluster workers) a
# message of 4 to 100 kB waits up to 40 ms for the worker's delayed
# acknowledgement; a function's code is such a message. The worker finds
# run_job() and fun in its own copy of the package.
launch_batch <- function(batch, fun, args) {
  job <- batch_job(batch, fun, args)
  tryCatch(future::future(quote(asNamespace("fastkpca")$run_job(job)), substitute = FALSE,
                          globals = list(job = job), packages = "fastkpca", seed = TRUE),
           FutureError = function(e) structure(e, at_launch = TRUE))
}

# A batch as it travels: the function's name, its batch and arguments, and
# the engine's options (R/simd.R: a worker is another R process).
batch_job <- function(batch, fun, args)
  list(fun = fun, batch = batch, args = args, settings = engine_options())

# A job run, on a worker or here.
run_job <- function(job) {
  fun <- get(job$fun, envir = asNamespace("fastkpca"), mode = "function", inherits = FALSE)
  with_engine_options(job$settings, fun(job$batch, job$args))
}

# The values of a round's futures, in batch order: each a batch's value or
# the FutureError of its lost worker. An error of a batch's own code is
# raised at once. Futures whose backend can leave a lost batch unresolved
# (future.mirai's) are waited for by polling (poll_values()); the others
# by future's value(), in order, which returns when the batch ends or its
# worker is found gone.
round_values <- function(futures) {
  if (any(vapply(futures, inherits, NA, "MiraiFuture"))) return(poll_values(futures))
  values <- vector("list", length(futures))
  for (j in seq_along(futures)) {
    values[j] <- list(batch_value(futures[[j]]))
    futures[j] <- list(NULL)
  }
  values
}

# The value of a launched batch, or the FutureError of a lost worker.
batch_value <- function(f) {
  if (inherits(f, "FutureError")) return(f)
  if (inherits(f, "BatchtoolsFuture")) return(batchtools_value(f))
  tryCatch(future::value(f), FutureError = identity)
}

# The same for a batchtools future. A job killed from outside never wrote
# its log, and future.batchtools 0.12 fails reading it, with a plain error
# ("cannot open the connection") that cannot be told from one of the
# batch's own code by its wording: batchtools is asked what became of the
# job. An expired job is lost: its FutureError is returned, the warnings
# of the failed reading are dropped, and its registry is removed (else
# future.batchtools' finalizer fails on the missing log again, and prints
# it). Otherwise the warnings are signalled and the error raised, as
# value() would.
batchtools_value <- function(f) {
  warnings <- list()
  out <- withCallingHandlers(
    tryCatch(list(value = future::value(f)), error = function(e) list(error = e)),
    warning = function(w) {
      warnings[[length(warnings) + 1L]] <<- w
      invokeRestart("muffleWarning")
    })
  error <- out$error
  if (inherits(error, "FutureError")) return(error)
  if (!is.null(error) && batchtools_job_expired(f)) {
    unlink(f[["config"]]$reg$file.dir, recursive = TRUE)
    return(future::FutureError(sprintf("its batchtools job ended without a result (%s)",
                                       conditionMessage(error))))
  }
  for (w in warnings) warning(w)
  if (!is.null(error)) stop(error)
  out$value
}

# Whether f is a batchtools future whose job was submitted and ended
# neither done nor in error, and is no longer running: batchtools calls it
# expired (a job killed from outside, or by the scheduler). A batch's own
# error is caught inside the job, which then ends done. batchtools'
# getStatus() may draw random numbers: this process's stream is kept.
batchtools_job_expired <- function(f) {
  if (!inherits(f, "BatchtoolsFuture") || !requireNamespace("batchtools", quietly = TRUE))
    return(FALSE)
  config <- f[["config"]]
  reg <- config$reg
  if (!inherits(reg, "Registry") || is.null(config$jobid)) return(FALSE)
  rng <- rng_state()
  on.exit(restore_rng(rng))
  status <- tryCatch(suppressMessages(batchtools::getStatus(ids = config$jobid, reg = reg)),
                     error = function(e) NULL)
  !is.null(status) && isTRUE(status$expired > 0L)
}

# The values of a round's futures, as round_values() gives them, waited for
# by polling resolved(): under future.mirai 1.1.0 (mirai 2.7), a daemon
# killed just as a batch reaches it can leave that batch's future
# unresolved for ever, and value() would wait for it. The futures are
# collected as they resolve; those still unresolved when the backend has
# held no task of any kind (none executing on a daemon, none waiting for
# one that can take it) for lost_after seconds are lost. A slow batch is
# never taken for lost: its task is executing all the while.
poll_values <- function(futures, lost_after = 2) {
  values <- vector("list", length(futures))
  pending <- seq_along(futures)
  idle_since <- NULL
  pause <- 0.001
  while (length(pending) > 0L) {
    done <- vapply(futures[pending], future_done, NA)
    for (j in pending[done]) {
      values[j] <- list(batch_value(futures[[j]]))
      futures[j] <- list(NULL)
    }
    pending <- pending[!done]
    if (length(pending) == 0L) break
    if (any(done)) {
      idle_since <- NULL
      pause <- 0.001
      next
    }
    now <- proc.time()[["elapsed"]]
    if (!backend_holds_tasks(futures[[pending[1L]]])) {
      if (is.null(idle_since)) {
        idle_since <- now
      } else if (now - idle_since >= lost_after) {
        for (j in pending)
          values[j] <- list(future::FutureError(sprintf(
            "its future stayed unresolved with no task left on the backend for %g s",
            lost_after)))
        break
      }
    } else {
      idle_since <- NULL
    }
    # (from 1 ms up to 10 ms between looks: a short pass is not held up
    # by much more than it takes)
    Sys.sleep(pause)
    pause <- min(1.5 * pause, 0.01)
  }
  values
}

# Whether a launched batch needs no more waiting: resolved, lost at launch,
# or its state unknown (an error, which value() then raises or reports).
future_done <- function(f) {
  if (inherits(f, "FutureError")) return(TRUE)
  tryCatch(isTRUE(future::resolved(f)), error = function(e) TRUE)
}

# Whether the backend of future f may still resolve it: for a mirai future,
# whether mirai's dispatcher has a task executing on a daemon, or waiting
# with a daemon connected to take it. TRUE whenever this cannot be told.
backend_holds_tasks <- function(f) {
  if (!inherits(f, "MiraiFuture") || !requireNamespace("mirai", quietly = TRUE)) return(TRUE)
  counts <- tryCatch(mirai::info(), error = function(e) NULL)
  need <- c("connections", "awaiting", "executing")
  if (!is.numeric(counts) || !all(need %in% names(counts)) || anyNA(counts[need])) return(TRUE)
  counts[["executing"]] > 0L || (counts[["awaiting"]] > 0L && counts[["connections"]] > 0L)
}

# The plan's workers made again, so that a dead one is replaced: future's
# resetWorkers() where it has a method for the plan's backend (future
# 1.31 has one for multicore only), else the plan set again (plan() shuts
# the old workers down and starts new ones). Called only when no future of
# the pass is in flight.
renew_workers <- function() {
  strategy <- future::plan()
  if (has_reset_method(strategy)) {
    done <- tryCatch({
      future::resetWorkers(strategy)
      TRUE
    }, error = function(e) FALSE)
    if (done) return(invisible())
  }
  # (plan() substitutes its argument: the stack is given as a value). The
  # sequential plan first, so that the old workers are shut down and new
  # ones started: setting the same plan again left future.mirai's dead
  # daemons in place, and the next batch waited for them forever
  stack <- fresh_strategies(future::plan("list"))
  tryCatch({
    future::plan(future::sequential)
    future::plan(stack, substitute = FALSE)
  }, error = function(e) NULL)
  invisible()
}

# The plan's stack, its strategies to be set up anew: from future 1.40 on,
# a strategy made by a backend factory keeps the backend it started (and
# stopped, when the plan changed) with its setup marked done, and setting
# it again would reuse that stopped backend (future.mirai's then has no
# daemon, and each batch starts an ephemeral process); without the two,
# the plan starts a new backend, with new workers.
fresh_strategies <- function(stack) {
  cls <- class(stack)
  stack <- lapply(stack, function(strategy) {
    if (!is.null(attr(strategy, "factory", exact = TRUE))) {
      attr(strategy, "backend") <- NULL
      attr(strategy, "init") <- TRUE
    }
    strategy
  })
  class(stack) <- cls
  stack
}

# Whether future's resetWorkers() has a method of its own for the
# strategy's class (the default one does nothing).
has_reset_method <- function(strategy) {
  ns <- asNamespace("future")
  if (!"resetWorkers" %in% getNamespaceExports(ns)) return(FALSE)
  any(vapply(setdiff(class(strategy), "default"), function(cls)
    !is.null(utils::getS3method("resetWorkers", cls, optional = TRUE, envir = ns)), NA))
}

# A lost worker, for those who listen (tests, logs): a condition of class
# "fastkpca_worker_lost" naming the batch; nothing is printed.
signal_worker_lost <- function(what, error) {
  signalCondition(structure(
    class = c("fastkpca_worker_lost", "condition"),
    list(message = sprintf("%s: its worker was lost (%s)", what, conditionMessage(error)),
         call = NULL)))
}

# The kind and state of this process's random-number generator, and their
# restoration (with no .Random.seed when there was none).
rng_state <- function() {
  list(kind = RNGkind(),
       seed = if (exists(".Random.seed", globalenv(), inherits = FALSE))
         get(".Random.seed", globalenv()))
}
restore_rng <- function(state) {
  if (!identical(RNGkind(), state$kind)) suppressWarnings(do.call(RNGkind, as.list(state$kind)))
  if (is.null(state$seed)) {
    if (exists(".Random.seed", globalenv(), inherits = FALSE))
      rm(".Random.seed", envir = globalenv())
  } else {
    assign(".Random.seed", state$seed, globalenv())
  }
}
