# Sources of row chunks for fits beyond one R matrix: files, a list of
# matrices, a database query fetched by rows, a function of the chunk
# number. A source is a small description; R/chunked_nystrom.R sends each
# chunk's description (never its data, unless the chunks are in memory
# already) to where the chunk is read.

#' Rows in chunks: files, a list, a database query or a function
#'
#' Describes data that come in chunks of rows, for [kpca()] with
#' `landmarks` (centered Nyström kernel PCA), `predict()` and `update()` on
#' such fits. Nothing is read when the source is made (except the row count
#' of a database query): each pass of a fit reads every chunk once, in the
#' calling R process or, under a parallel [future::plan()], on the workers
#' (see the section Parallel passes in [kpca()]).
#'
#' @param x Where the chunks are:
#'   \describe{
#'     \item{a character vector of file names}{one chunk per file, read by
#'       `reader`; by default `.rds` files ([readRDS()], a matrix or a data
#'       frame) and `.csv` files ([utils::read.csv()]).}
#'     \item{a list of matrices or data frames}{one chunk per element.}
#'     \item{a DBI connection}{with `query`: the query's result, fetched
#'       `rows` rows at a time ([DBI::dbSendQuery()], [DBI::dbFetch()]) in
#'       the calling process (a connection cannot travel to other
#'       processes).}
#'     \item{a function with no arguments that opens a DBI connection}{with
#'       `query`: each chunk is read by its own connection, as the query's
#'       rows `offset + 1` to `offset + rows` (`LIMIT` and `OFFSET`), so
#'       future's workers read their chunks themselves. Give the query an
#'       `ORDER BY` where the database does not guarantee the order of its
#'       rows.}
#'     \item{a function of the chunk number}{`x(i)` returns chunk `i` (a
#'       matrix or data frame) for `i = 1, 2, ...`, and `NULL` past the
#'       last chunk. Under a parallel plan the function travels to the
#'       workers with its environment: let it read the chunk from where it
#'       is stored rather than from large objects of the session.}
#'   }
#' @param reader For files: a function of a file name that returns its
#'   chunk as a matrix or data frame. `NULL` (the default) reads `.rds` and
#'   `.csv` files by their extension.
#' @param query For a database: the SQL query whose rows are the data.
#' @param rows For a database: the number of rows per chunk.
#' @param chunks For a function of the chunk number: the number of chunks,
#'   if known (it lets the passes run on all workers at once); `NULL` (the
#'   default) calls the function until it returns `NULL`.
#'
#' @return An object of class `"fastkpca_row_chunks"`: a list with `kind`
#'   (`"files"`, `"list"`, `"dbi"`, `"dbi_connect"` or `"function"`),
#'   `chunks` (the number of chunks, `NA` when not known yet) and what is
#'   needed to read them.
#' @seealso [kpca()] for fits on chunks, with `landmarks`.
#' @examples
#' x <- as.matrix(iris[, 1:4])
#' parts <- row_chunks(split.data.frame(x, rep(1:3, each = 50)))
#' parts
#' fit <- kpca(parts, kpar = list(sigma = 0.2), features = 2,
#'             landmarks = x[seq(1, 150, by = 5), ])
#' one <- kpca(x, kpar = list(sigma = 0.2), features = 2,
#'             landmarks = x[seq(1, 150, by = 5), ])
#' all.equal(fit$eig, one$eig)
#'
#' # a function of the chunk number, NULL past the last
#' by_species <- function(i) {
#'   if (i > 3) return(NULL)
#'   iris[iris$Species == levels(iris$Species)[i], 1:4]
#' }
#' row_chunks(by_species)
#'
#' # a database table, read 40 rows at a time
#' if (requireNamespace("RSQLite", quietly = TRUE)) {
#'   con <- DBI::dbConnect(RSQLite::SQLite(), ":memory:")
#'   DBI::dbWriteTable(con, "flowers", iris[, 1:4])
#'   db <- row_chunks(con, query = "SELECT * FROM flowers", rows = 40)
#'   print(db)
#'   fit_db <- kpca(db, kpar = list(sigma = 0.2), features = 2,
#'                  landmarks = x[seq(1, 150, by = 5), ])
#'   print(all.equal(fit_db$eig, one$eig, check.attributes = FALSE))
#'   DBI::dbDisconnect(con)
#' }
#' @export
row_chunks <- function(x, reader = NULL, query = NULL, rows = 1e5, chunks = NULL) {
  if (inherits(x, "fastkpca_row_chunks")) return(x)
  if (!is.null(reader) && !is.function(reader))
    stop_argument("'reader' must be a function of a file name, or NULL")
  if (inherits(x, "DBIConnection") || (is.function(x) && !is.null(query)))
    return(new_row_chunks_dbi(x, query, rows))
  if (!is.null(query))
    stop_argument("'query' needs 'x' to be a DBI connection or a function that opens one")
  if (is.character(x)) return(new_row_chunks_files(x, reader))
  if (!is.null(reader))
    stop_argument("'reader' applies to files only: 'x' must be a character vector of file names")
  if (is.data.frame(x) || is.matrix(x))
    stop_argument("'x' is one matrix or data frame: give it to kpca() directly, or split it ",
                  "into a list of chunks")
  if (is.list(x)) {
    if (length(x) == 0L) stop_argument("'x' must hold at least one chunk")
    return(new_row_chunks(list(kind = "list", chunks = length(x), data = x)))
  }
  if (is.function(x)) {
    if (!is.null(chunks)) chunks <- check_whole(chunks, "chunks", 1, .Machine$integer.max)
    return(new_row_chunks(list(kind = "function", chunks = if (is.null(chunks)) NA_integer_
                                                           else chunks, read = x)))
  }
  stop_argument("'x' must be file names, a list of matrices or data frames, a DBI connection ",
                "with 'query', or a function of the chunk number")
}

# The one constructor of the source class.
new_row_chunks <- function(fields) {
  structure(fields, class = "fastkpca_row_chunks")
}

# The extension of file names, lower case ("" for none).
file_extension <- function(files) {
  base <- basename(files)
  tolower(ifelse(grepl(".", base, fixed = TRUE), sub(".*[.]", "", base), ""))
}

# File extensions with a default reader.
chunk_readers <- list(rds = function(path) readRDS(path),
                      csv = function(path) utils::read.csv(path))

new_row_chunks_files <- function(files, reader) {
  if (length(files) == 0L || anyNA(files) || any(!nzchar(files)))
    stop_argument("'x' must name at least one file, with no empty or missing names")
  if (is.null(reader)) {
    ext <- file_extension(files)
    unknown <- unique(files[!ext %in% names(chunk_readers)])
    if (length(unknown) > 0L)
      stop_argument(sprintf(paste0("'x' has files that are neither .rds nor .csv (%s): give ",
                                   "a 'reader'"), paste(utils::head(unknown, 3L), collapse = ", ")))
  }
  # the files are not checked for existence here: under a cluster plan they
  # may exist only where the workers run
  new_row_chunks(list(kind = "files", chunks = length(files), files = files,
                      reader = reader))
}

# A database query read in chunks of `rows` rows, through a connection (read
# in the caller, by dbFetch) or a function that opens one (read anywhere, by
# LIMIT and OFFSET). The row count is asked once here, so the chunks are known.
new_row_chunks_dbi <- function(x, query, rows) {
  if (!requireNamespace("DBI", quietly = TRUE))
    stop_dependency("reading chunks from a database needs the package DBI")
  if (!is.character(query) || length(query) != 1L || is.na(query) || !nzchar(query))
    stop_argument("'query' must be a single SQL query")
  rows <- check_whole(rows, "rows", 1, .Machine$integer.max)
  con <- if (is.function(x)) x() else x
  if (!inherits(con, "DBIConnection"))
    stop_argument("'x' must be a DBI connection, or a function that returns one")
  if (is.function(x)) on.exit(DBI::dbDisconnect(con))
  count <- tryCatch(
    DBI::dbGetQuery(con, sprintf("SELECT COUNT(*) AS n FROM (%s) fastkpca_rows", query)),
    error = function(e) stop_from(e, paste0("'query' failed: ", conditionMessage(e)), "chunk"))
  total <- as.double(count[[1L]][1L])
  if (!is.finite(total) || total < 1)
    stop_chunk("'query' returns no rows")
  fields <- list(kind = if (is.function(x)) "dbi_connect" else "dbi",
                 chunks = as.integer(ceiling(total / rows)), query = query, rows = rows,
                 total = total, dbms = class(con)[1L])
  if (is.function(x)) fields$connect <- x else fields$con <- x
  new_row_chunks(fields)
}

#' @export
print.fastkpca_row_chunks <- function(x, ...) {
  n <- x$chunks
  count <- if (is.na(n)) "Row chunks (number not known until read)"
           else sprintf("Row chunks: %d chunk%s", n, if (n == 1L) "" else "s")
  where <- switch(x$kind,
    files = {
      ext <- unique(file_extension(x$files))
      sprintf("from %s file%s (%s%s), first %s", if (n == 1L) "one" else n,
              if (n == 1L) "" else "s",
              if (is.null(x$reader)) "" else "own reader, ",
              paste0(".", ext, collapse = " "), x$files[1L])
    },
    list = "from a list in memory",
    dbi = sprintf("from a %s query, %.0f rows fetched %d at a time in this process",
                  x$dbms, x$total, x$rows),
    dbi_connect = sprintf("from a %s query, %.0f rows read %d at a time (LIMIT/OFFSET) by its own connection",
                          x$dbms, x$total, x$rows),
    "function" = "from a function of the chunk number")
  cat_line("", count, " ", where)
  if (x$kind == "dbi" || x$kind == "dbi_connect") cat_line("Query: ", x$query)
  invisible(x)
}

# What a worker needs to read chunk i: a small list (the data themselves
# only for chunks held in memory). The live connection of kind "dbi" never
# goes into a task: those chunks are fetched in the caller.
chunk_task <- function(source, i) {
  task <- list(index = i, label = chunk_label(source, i), kind = source$kind)
  switch(source$kind,
    files = { task$file <- source$files[i]; task$reader <- source$reader },
    list = task$data <- source$data[[i]],
    dbi_connect = {
      task$connect <- source$connect
      task$query <- source$query
      task$rows <- source$rows
    },
    "function" = task$read <- source$read)
  task
}

chunk_label <- function(source, i) {
  switch(source$kind,
    files = sprintf("file %s", source$files[i]),
    list = {
      nm <- names(source$data)[i]
      if (is.null(nm) || is.na(nm) || !nzchar(nm)) sprintf("list element %d", i)
      else sprintf("list element %s", nm)
    },
    dbi = , dbi_connect = sprintf("query rows %.0f to %.0f", (i - 1) * source$rows + 1,
                                  min(source$total, i * source$rows)),
    "function" = sprintf("x(%d)", i))
}

# The chunk a task describes, as it was read (a matrix or data frame), or
# NULL past the last chunk of a function source. Runs where the chunk is read.
read_chunk <- function(task) {
  switch(task$kind,
    files = {
      reader <- task$reader
      if (is.null(reader)) reader <- chunk_readers[[file_extension(task$file)]]
      reader(task$file)
    },
    list = , dbi = task$data,
    dbi_connect = {
      con <- task$connect()
      on.exit(DBI::dbDisconnect(con))
      DBI::dbGetQuery(con, sprintf("SELECT * FROM (%s) fastkpca_rows LIMIT %d OFFSET %.0f",
                                   task$query, task$rows, (task$index - 1) * task$rows))
    },
    "function" = task$read(task$index))
}

# A chunk as the fit's double matrix: the training columns taken by name
# where both have names (other columns are ignored, as predict() does), by
# position otherwise; rows with missing values handled by na_action (NULL:
# kept, for predict(), which gives them NA scores).
chunk_matrix <- function(data, columns, d, na_action) {
  if (is_sparse_data(data)) data <- as_sparse_rows(data, "chunk")
  if (is.null(dim(data)) && !is.null(data) && !is.list(data))
    data <- matrix(data, ncol = if (is.null(d)) 1L else d)
  if (length(dim(data)) != 2L)
    stop_argument("is not a matrix or data frame")
  have <- colnames(data)
  if (!is.null(columns) && !is.null(have)) {
    absent <- setdiff(columns, have)
    if (length(absent) > 0L)
      stop_argument(sprintf("lacks column%s %s", if (length(absent) > 1L) "s" else "",
                            paste(absent, collapse = ", ")))
    data <- data[, columns, drop = FALSE]
  }
  x <- as_data_rows(data, "chunk")
  if (!is.null(d) && ncol(x) != d)
    stop_argument(sprintf("has %d columns, not %d as the training data", ncol(x), d))
  if (!is.null(na_action)) {
    x <- apply_na_action(x, na_action)
    x <- drop_na_action(x)
    check_finite(x, "chunk")
  } else {
    check_no_infinite(x, "chunk")
  }
  x
}
