# One pass over the chunks of a row source (R/row_chunks.R): in this
# process, or on future's workers (R/workers.R) when a parallel
# plan is set. Each chunk is read where it is processed, turned into a
# small result by one of the chunk operations below, and the results of a
# batch are added up (by `fold`) before they travel back. Errors name the
# chunk; progress is signalled through progressr, one step per chunk.

# The pass: list(value = the folded results (fold given) or the list of
# per-chunk results in chunk order, chunks = how many chunks were read).
# seeds: NULL, or chunk_seeds() for an operation that draws random numbers.
# args: the operation's arguments (what every worker needs: landmarks,
# kernel, columns, ...), with arg, the user's name for the source.
chunk_map <- function(source, op, args, fold = NULL, seeds = NULL) {
  if (source$kind == "dbi") return(chunk_map_stream(source, op, args, fold, seeds))
  if (is.na(source$chunks)) return(chunk_map_unknown(source, op, args, fold, seeds))
  n <- source$chunks
  tasks <- lapply(seq_len(n), function(i) {
    task <- chunk_task(source, i)
    task$seed <- if (!is.null(seeds)) seeds(i)
    task
  })
  progress <- chunk_progressor(n)
  values <- run_batches(tasks, op, args, fold, progress)
  list(value = if (is.null(fold)) values else Reduce(fold, values), chunks = n)
}

# The tasks in batches, one per worker under a parallel plan (folded there
# when fold is given: one result per worker travels back), or all in this
# process. Returns the list of batch results (fold given) or of chunk results.
run_batches <- function(tasks, op, args, fold, progress) {
  if (!chunks_in_parallel())
    return(if (is.null(fold)) run_batch(tasks, op, args, fold, progress)
           else list(run_batch(tasks, op, args, fold, progress)))
  workers <- max(1L, min(length(tasks), future::nbrOfWorkers()))
  batch <- if (is.null(fold)) seq_along(tasks)
           else ceiling(seq_along(tasks) * workers / length(tasks))
  batches <- unname(split(tasks, batch))
  # each chunk sets its own random-number stream (task$seed, the same under
  # every plan); each future's seed = TRUE keeps anything else random in a
  # reader parallel-safe. It advances the caller's stream by an amount that depends
  # on the batches, so that stream is put back: after a fit, it has moved
  # by chunk_seeds()'s one draw under every plan.
  had <- exists(".Random.seed", globalenv(), inherits = FALSE)
  old <- if (had) get(".Random.seed", globalenv())
  # one future per batch, a batch whose worker is lost run again
  # (R/workers.R)
  out <- run_on_workers(batches, "run_batch_on_worker",
                        list(op = op, args = args, fold = fold, progress = progress),
                        function(i) chunk_batch_label(batches[[i]], args$arg))
  if (had) assign(".Random.seed", old, globalenv())
  if (is.null(fold)) unlist(out, recursive = FALSE) else out
}

# run_batch() as run_on_workers() calls it: fun(batch, args).
run_batch_on_worker <- function(tasks, args)
  run_batch(tasks, args$op, args$args, args$fold, args$progress)

# A batch of chunks, named in the error when its worker is lost too often.
chunk_batch_label <- function(batch, arg) {
  first <- batch[[1L]]
  last <- batch[[length(batch)]]
  if (length(batch) == 1L)
    return(sprintf("chunk %d (%s) of '%s'", first$index, first$label, arg))
  sprintf("the batch of chunks %d (%s) to %d (%s) of '%s'", first$index, first$label,
          last$index, last$label, arg)
}

# Chunks one after another, on a worker or here: their results folded, or
# listed.
run_batch <- function(tasks, op, args, fold, progress) {
  out <- vector("list", length(tasks))
  acc <- NULL
  for (j in seq_along(tasks)) {
    value <- run_chunk(tasks[[j]], op, args)
    if (is.null(fold) || inherits(value, "fastkpca_chunk_end")) out[j] <- list(value)
    else acc <- if (is.null(acc)) value else fold(acc, value)
    progress()
  }
  if (is.null(fold)) out else acc
}

# A connection held by this process: the query's result fetched `rows` rows
# at a time (dbSendQuery / dbFetch), each chunk processed as it arrives.
chunk_map_stream <- function(source, op, args, fold, seeds) {
  result <- DBI::dbSendQuery(source$con, source$query)
  on.exit(DBI::dbClearResult(result))
  progress <- chunk_progressor(source$chunks)
  acc <- NULL
  values <- list()
  i <- 0L
  while (!DBI::dbHasCompleted(result)) {
    data <- DBI::dbFetch(result, n = source$rows)
    if (nrow(data) == 0L) break
    i <- i + 1L
    task <- chunk_task(source, i)
    task$data <- data
    task$seed <- if (!is.null(seeds)) seeds(i)
    rm(data)
    value <- run_chunk(task, op, args)
    if (is.null(fold)) values[i] <- list(value)
    else acc <- if (is.null(acc)) value else fold(acc, value)
    progress()
  }
  list(value = if (is.null(fold)) values else acc, chunks = i)
}

# A function source whose number of chunks is not known: waves of as many
# chunks as there are workers, until a chunk is NULL. Results are folded
# wave by wave, so memory does not grow with the number of chunks.
chunk_map_unknown <- function(source, op, args, fold, seeds) {
  wave <- if (chunks_in_parallel()) max(1L, future::nbrOfWorkers()) else 1L
  values <- list()
  acc <- NULL
  count <- 0L
  repeat {
    tasks <- lapply(count + seq_len(wave), function(i) {
      task <- chunk_task(source, i)
      task$seed <- if (!is.null(seeds)) seeds(i)
      task
    })
    got <- run_batches(tasks, op, args, NULL, function(...) invisible(NULL))
    ended <- vapply(got, inherits, logical(1), what = "fastkpca_chunk_end")
    if (any(ended)) got <- got[seq_len(which(ended)[1L] - 1L)]
    count <- count + length(got)
    if (is.null(fold)) values <- c(values, got)
    else for (value in got) acc <- if (is.null(acc)) value else fold(acc, value)
    if (any(ended)) break
  }
  if (count == 0L)
    stop_chunk(sprintf("'%s' has no chunks: its function returned NULL for chunk 1", args$arg))
  list(value = if (is.null(fold)) values else acc, chunks = count)
}

# A progressr progressor with one step per chunk, or a function that does
# nothing without progressr. It is made here, in the caller, and signalled
# from wherever the chunks are processed.
chunk_progressor <- function(steps, envir = parent.frame()) {
  if (is.na(steps) || steps < 1L || !requireNamespace("progressr", quietly = TRUE))
    return(function(...) invisible(NULL))
  progressr::progressor(steps = steps, envir = envir)
}

# One chunk: read it, prepare its matrix, apply the operation. Every error
# names the chunk; a function source's NULL past its last chunk is
# returned as the marker chunk_end.
run_chunk <- function(task, op, args) {
  # a reader's warnings (such as gzfile's reason for failing) join its error
  warned <- character()
  data <- tryCatch(
    withCallingHandlers(read_chunk(task), warning = function(w) {
      warned <<- c(warned, conditionMessage(w))
      invokeRestart("muffleWarning")
    }),
    error = function(e) chunk_stop(task, args$arg, "cannot be read: ",
                                   paste(c(conditionMessage(e), warned), collapse = "; "), e))
  for (w in warned)
    warn_chunk(sprintf("chunk %d (%s) of '%s': %s", task$index, task$label, args$arg, w))
  if (is.null(data)) {
    if (task$kind == "function") return(chunk_end)
    chunk_stop(task, args$arg, "", "is NULL, not a matrix or data frame")
  }
  tryCatch({
    x <- prepare_chunk(data, args)
    rm(data)
    if (is.null(task$seed)) chunk_ops[[op]](x, args, task)
    else with_rng_seed(task$seed, chunk_ops[[op]](x, args, task))
  }, error = function(e) chunk_stop(task, args$arg, "", conditionMessage(e), e))
}

chunk_end <- structure(list(), class = "fastkpca_chunk_end")

chunk_stop <- function(task, arg, what, message, parent = NULL) {
  # messages of the shared checks name the chunk as an argument: drop that
  message <- sub("^'(chunk|newdata)' ", "", message)
  stop_chunk(sprintf("chunk %d (%s) of '%s'%s%s", task$index, task$label, arg,
                     if (nzchar(what)) paste0(" ", what) else ": ", message), parent = parent)
}

# The chunk as the operation's matrix: "columns" takes the training columns
# and applies na_action and the scaling (fits); "fit" prepares rows as
# predict() does for args$fit, without the incomplete ones (update());
# "raw" leaves the chunk to predict().
prepare_chunk <- function(data, args) {
  switch(args$prepare,
    columns = apply_scaling(chunk_matrix(data, args$columns, args$d, args$na_action),
                            args$center, args$scale),
    fit = {
      x <- predict_data_matrix(args$fit, data)
      complete <- complete_rows(x)
      if (is.null(complete)) x else x[complete, , drop = FALSE]
    },
    raw = data)
}

# The operations on one prepared chunk x; task gives its number and label.
chunk_ops <- list(
  # the first pass: rows, columns, column moments, and the rows with the
  # smallest random keys as landmark candidates
  scan = function(x, args, task) {
    n <- nrow(x)
    keep <- if (n > 0L && args$cap > 0L) {
      keys <- stats::runif(n)
      o <- order(keys)[seq_len(min(args$cap, n))]
      list(keys = keys[o], index = o, rows = x[o, , drop = FALSE])
    }
    moments <- column_moments(x)
    list(n = n, columns = colnames(x), mean = moments$mean, m2 = moments$m2, sample = keep)
  },
  # pass 1 of Nystrom: the sufficient statistics of the chunk's rows
  sums = function(x, args, task) {
    chunk_statistics(x, args$basis, args$kernel, args$threads)
  },
  # scores through predict(), returned or handed to the writer
  predict = function(x, args, task) {
    scores <- stats::predict(args$fit, x)
    if (is.null(args$writer)) return(scores)
    args$writer(scores, list(index = task$index, label = task$label, file = task$file))
  }
)

# Random-number streams for the chunks, one per chunk, from one draw of
# R's generator (so set.seed() fixes them): chunk i's stream is the i-th
# L'Ecuyer-CMRG stream after a seed made from that draw. Returns a function
# of i (streams are made on demand and kept).
chunk_seeds <- function() {
  start <- sample.int(.Machine$integer.max, 1L)
  had <- exists(".Random.seed", globalenv(), inherits = FALSE)
  old <- if (had) get(".Random.seed", globalenv())
  kind <- RNGkind()
  on.exit({
    RNGkind(kind[1L], kind[2L], kind[3L])
    if (had) assign(".Random.seed", old, globalenv())
  })
  RNGkind("L'Ecuyer-CMRG")
  set.seed(start)
  streams <- list(get(".Random.seed", globalenv()))
  function(i) {
    while (length(streams) <= i)
      streams[[length(streams) + 1L]] <<- parallel::nextRNGStream(streams[[length(streams)]])
    streams[[i + 1L]]
  }
}

# expr evaluated with the random-number state seed, the previous state
# restored afterwards.
with_rng_seed <- function(seed, expr) {
  had <- exists(".Random.seed", globalenv(), inherits = FALSE)
  old <- if (had) get(".Random.seed", globalenv())
  on.exit(if (had) assign(".Random.seed", old, globalenv())
          else rm(".Random.seed", envir = globalenv()))
  assign(".Random.seed", seed, globalenv())
  expr
}
