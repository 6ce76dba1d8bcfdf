# Nystrom over chunks of rows (R/row_chunks.R, R/chunk_passes.R,
# R/chunked_nystrom.R): the fit from chunks against the fit on rbind() of
# the chunks (which test-nystrom.R checks against a plain-R oracle), for
# every kind of source, chunking, order and plan; update(); errors that name
# the chunk; landmarks reproducible with set.seed().

chunk_fixture <- function() {
  set.seed(11)
  x <- matrix(rnorm(700 * 5), 700, 5, dimnames = list(NULL, paste0("v", 1:5)))
  sweep(x, 2L, c(1, 0.8, 0.6, 0.5, 0.4), "*")
}
chunk_kpar <- list(sigma = 0.3)

# x split into pieces of the given sizes (in row order), as a list
split_rows <- function(x, sizes) {
  ends <- cumsum(sizes)
  lapply(seq_along(sizes), function(i) x[(ends[i] - sizes[i] + 1L):ends[i], , drop = FALSE])
}

expect_chunked_equal <- function(fit, ref, label = "") {
  expect_s3_class(fit, "fastkpca_nystrom_chunked")
  expect_lt(rel_diff(unname(fit$eig), unname(ref$eig)), 1e-10, label = paste(label, "eig"))
  expect_equal(fit$statistics$n, nrow(ref$rotated), label = paste(label, "n"))
  expect_null(fit$rotated)
}

test_that("chunks in any number and order give the fit on rbind() of them", {
  x <- chunk_fixture()
  L <- x[seq(3, 700, by = 14), ]
  ref <- kpca(x, kpar = chunk_kpar, features = 5, landmarks = L)
  # a plain-R check of the reference's eigenvalues: the covariance of the
  # centered Nystrom features
  Kmm <- plain_kernel(L, L, "rbfdot", chunk_kpar)
  e <- eigen(Kmm, symmetric = TRUE)
  Z <- plain_kernel(x, L, "rbfdot", chunk_kpar) %*% e$vectors %*% diag(1 / sqrt(e$values))
  oracle <- eigen(stats::cov(Z) * (nrow(x) - 1) / nrow(x), symmetric = TRUE)$values[1:5]
  expect_lt(rel_diff(unname(ref$eig), oracle), 1e-8)

  chunkings <- list(one = 700, equal = rep(100, 7), unequal = c(1, 350, 2, 47, 300),
                    many = rep(35, 20))
  for (nm in names(chunkings)) {
    parts <- split_rows(x, chunkings[[nm]])
    fit <- kpca(row_chunks(parts), kpar = chunk_kpar, features = 5, landmarks = L)
    expect_chunked_equal(fit, ref, nm)
    expect_equal(fit$chunks, length(parts))
    # reversed order: the same sums
    rev_fit <- kpca(row_chunks(rev(parts)), kpar = chunk_kpar, features = 5, landmarks = L)
    expect_chunked_equal(rev_fit, ref, paste(nm, "reversed"))
    scores <- predict(fit, row_chunks(parts))
    expect_length(scores, length(parts))
    expect_cols_equal_up_to_sign(do.call(rbind, scores), ref$rotated, 1e-8, label = nm)
  }
  # a data frame chunk with its columns in another order and an extra column
  parts <- split_rows(x, c(300, 400))
  df <- as.data.frame(parts[[2]][, 5:1])
  df$id <- letters[seq_len(nrow(df)) %% 26 + 1]
  fit <- kpca(row_chunks(list(parts[[1]], df)), kpar = chunk_kpar, features = 5,
              landmarks = L)
  expect_chunked_equal(fit, ref, "data frame")
  expect_equal(fit$landmark_rule, "given")
  expect_output(print(fit), "from 2 chunks\\) on 700 observations of 5 variables", width = 200)
  expect_equal(summary(fit)$n, 700)
})

test_that("center and scale. = TRUE come from all chunks, as prcomp() means them", {
  x <- chunk_fixture() * 3 + 5
  for (args in list(list(TRUE, TRUE), list(FALSE, TRUE), list(TRUE, FALSE))) {
    # given landmarks are rows as the kernel sees them (scaled), as in kpca()
    L <- scale(x, center = args[[1]], scale = args[[2]])[seq(1, 700, by = 20), ]
    ref <- kpca(x, kpar = chunk_kpar, features = 4, landmarks = L,
                center = args[[1]], scale. = args[[2]])
    fit <- kpca(row_chunks(split_rows(x, c(200, 1, 499))), kpar = chunk_kpar,
                features = 4, landmarks = L, center = args[[1]], scale. = args[[2]])
    expect_equal(fit$center, ref$center, tolerance = 1e-12)
    expect_equal(fit$scale, ref$scale, tolerance = 1e-12)
    expect_lt(rel_diff(unname(fit$eig), unname(ref$eig)), 1e-10)
  }
  # chunks with an extra column, given landmarks: the moments of their columns
  L <- scale(x)[1:30, ]
  extra <- lapply(split_rows(x, c(300, 400)), function(p) data.frame(p, id = "a"))
  fit <- kpca(row_chunks(extra), kpar = chunk_kpar, features = 4, landmarks = L,
              center = TRUE, scale. = TRUE)
  ref <- kpca(x, kpar = chunk_kpar, features = 4, landmarks = L, center = TRUE,
              scale. = TRUE)
  expect_lt(rel_diff(unname(fit$eig), unname(ref$eig)), 1e-10)
})

test_that("files: .rds, .csv and any reader; a file that cannot be read is named", {
  x <- chunk_fixture()
  L <- x[seq(5, 700, by = 10), ]
  ref <- kpca(x, kpar = chunk_kpar, features = 3, landmarks = L)
  dir <- tempfile("chunks")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  parts <- split_rows(x, c(250, 250, 200))
  files <- file.path(dir, c("a.rds", "b.csv", "c.rds"))
  saveRDS(parts[[1]], files[1])
  utils::write.csv(as.data.frame(parts[[2]]), files[2], row.names = FALSE)
  saveRDS(as.data.frame(parts[[3]]), files[3])
  src <- row_chunks(files)
  expect_output(print(src), "3 chunks from 3 files \\(.rds .csv\\)")
  expect_chunked_equal(kpca(src, kpar = chunk_kpar, features = 3, landmarks = L), ref)
  txt <- file.path(dir, sprintf("part%d.txt", 1:3))
  for (i in 1:3) utils::write.table(parts[[i]], txt[i])
  expect_error(row_chunks(txt), "neither .rds nor .csv .*give a 'reader'")
  fit <- kpca(row_chunks(txt, reader = utils::read.table), kpar = chunk_kpar,
              features = 3, landmarks = L)
  expect_chunked_equal(fit, ref, "reader")
  gone <- file.path(dir, "gone.rds")
  expect_error(suppressWarnings(kpca(row_chunks(c(files, gone)), kpar = chunk_kpar,
                                     features = 3, landmarks = L)),
               "chunk 4 \\(file .*gone.rds\\) of 'x' cannot be read")
  # scores written next to each file, by the writer, where the chunk is read
  fit <- kpca(src, kpar = chunk_kpar, features = 3, landmarks = L)
  written <- predict(fit, src, writer = function(scores, chunk) {
    out <- paste0(chunk$file, ".scores.rds")
    saveRDS(scores, out)
    out
  })
  expect_equal(names(written), files)
  expect_equal(unname(unlist(written)), paste0(files, ".scores.rds"))
  expect_cols_equal_up_to_sign(do.call(rbind, lapply(unlist(written), readRDS)),
                               ref$rotated, 1e-8)
})

test_that("a SQLite query, by a connection in this process or one per chunk", {
  skip_if_not_installed("RSQLite")
  x <- chunk_fixture()
  L <- x[seq(2, 700, by = 25), ]
  ref <- kpca(x, kpar = chunk_kpar, features = 4, landmarks = L)
  path <- tempfile(fileext = ".sqlite")
  on.exit(unlink(path))
  con <- DBI::dbConnect(RSQLite::SQLite(), path)
  DBI::dbWriteTable(con, "pts", data.frame(id = seq_len(nrow(x)), x))
  query <- "SELECT * FROM pts ORDER BY id"
  db <- row_chunks(con, query = query, rows = 128)
  expect_equal(db$chunks, 6L)
  expect_output(print(db), "700 rows fetched 128 at a time", width = 200)
  fit <- kpca(db, kpar = chunk_kpar, features = 4, landmarks = L)
  expect_chunked_equal(fit, ref, "connection")
  expect_equal(fit$chunks, 6L)
  DBI::dbDisconnect(con)
  connect <- function() DBI::dbConnect(RSQLite::SQLite(), path)
  db2 <- row_chunks(connect, query = query, rows = 300)
  expect_output(print(db2), "LIMIT/OFFSET")
  expect_chunked_equal(kpca(db2, kpar = chunk_kpar, features = 4, landmarks = L), ref,
                       "connect")
  expect_cols_equal_up_to_sign(do.call(rbind, predict(ref, db2)), ref$rotated, 1e-8)
  expect_error(row_chunks(connect, query = "SELECT * FROM nowhere", rows = 10),
               "'query' failed")
  expect_error(row_chunks(connect, query = query, rows = 0), "'rows' must be a whole number")
})

test_that("a function of the chunk number, with or without the count", {
  x <- chunk_fixture()
  L <- x[seq(1, 700, by = 35), ]
  ref <- kpca(x, kpar = chunk_kpar, features = 3, landmarks = L)
  parts <- split_rows(x, c(100, 300, 300))
  read <- function(i) if (i <= length(parts)) parts[[i]]
  expect_output(print(row_chunks(read)), "number not known")
  fit <- kpca(row_chunks(read), kpar = chunk_kpar, features = 3, landmarks = L)
  expect_chunked_equal(fit, ref, "unknown count")
  expect_equal(fit$chunks, 3L)
  expect_chunked_equal(kpca(row_chunks(read, chunks = 3), kpar = chunk_kpar,
                            features = 3, landmarks = L), ref, "known count")
  expect_error(kpca(row_chunks(function(i) NULL), kpar = chunk_kpar, features = 3,
                    landmarks = L), "'x' has no chunks")
})

test_that("a bad chunk stops the fit with an error naming it", {
  x <- chunk_fixture()
  L <- x[1:30, ]
  parts <- split_rows(x, c(300, 400))
  fit_on <- function(chunks, ...)
    kpca(row_chunks(chunks), kpar = chunk_kpar, features = 3, landmarks = L, ...)
  expect_error(fit_on(list(a = parts[[1]], b = parts[[2]][, 1:4])),
               "chunk 2 \\(list element b\\) of 'x': lacks column v5")
  expect_error(fit_on(list(parts[[1]], unname(parts[[2]][, 1:4]))),
               "chunk 2 \\(list element 2\\) of 'x': has 4 columns, not 5")
  bad <- as.data.frame(parts[[2]])
  bad$v3 <- as.character(bad$v3)
  expect_error(fit_on(list(parts[[1]], bad)), "chunk 2 .* non-numeric column: v3",
               class = "fastkpca_error_chunk")
  expect_error(fit_on(list(parts[[1]], NULL)), "chunk 2 .* is NULL")
  na <- parts[[2]]
  na[5, 2] <- NA
  expect_error(fit_on(list(parts[[1]], na), na.action = na.fail),
               "chunk 2 \\(list element 2\\) of 'x': missing values", class = "fastkpca_error_chunk")
  # na.omit (the default) leaves the row out, as on one matrix
  ref <- kpca(x[-305, ], kpar = chunk_kpar, features = 3, landmarks = L)
  expect_chunked_equal(fit_on(list(parts[[1]], na)), ref, "na.omit")
  failing <- function(i) if (i == 2) stop("disk on fire") else if (i < 4) parts[[1]]
  expect_error(fit_on(failing), "chunk 2 \\(x\\(2\\)\\) of 'x' cannot be read: disk on fire",
               class = "fastkpca_error_chunk")
  # landmarks drawn by number: columns must agree across chunks
  renamed <- parts[[2]]
  colnames(renamed)[1] <- "w1"
  expect_error(kpca(row_chunks(list(parts[[1]], renamed)), kpar = chunk_kpar,
                    features = 3, landmarks = 30),
               "chunk 2 \\(list element 2\\) of 'x' has columns w1, .* not those of chunk 1")
  expect_error(kpca(row_chunks(parts), kpar = chunk_kpar, features = 3, landmarks = 701),
               "'landmarks' \\(701\\) must be at most the number of rows of 'x' \\(700\\)")
  expect_error(kpca(row_chunks(parts), landmarks = NULL), "'landmarks' must be given")
  expect_error(kpca(row_chunks(parts), landmarks = 30, landmark_rule = "kmeans++"),
               "'landmark_rule' must be \"uniform\"")
  expect_error(row_chunks(x), "'x' is one matrix or data frame")
  expect_error(row_chunks(list()), "at least one chunk")
  expect_error(row_chunks(42), "'x' must be file names")
})

test_that("landmarks drawn by number are rows of the data, reproducible with set.seed()", {
  x <- chunk_fixture()
  parts <- split_rows(x, c(123, 77, 500))
  draw <- function(seed, chunks = parts) {
    set.seed(seed)
    kpca(row_chunks(chunks), kpar = chunk_kpar, features = 3, landmarks = 40)
  }
  a <- draw(1)
  b <- draw(1)
  expect_identical(a$landmark_rows, b$landmark_rows)
  expect_identical(a$eig, b$eig)
  expect_equal(a$landmark_rule, "uniform")
  expect_equal(anyDuplicated(a$landmark_rows), 0L)
  expect_equal(unname(a$landmarks), unname(x[a$landmark_rows, ]))
  expect_false(identical(draw(2)$landmark_rows, a$landmark_rows))
  # the fit with those landmarks on one matrix
  ref <- kpca(x, kpar = chunk_kpar, features = 3, landmarks = a$landmarks)
  expect_chunked_equal(a, ref, "sampled")
  # the caller's random-number stream moves on by the same draw each time
  set.seed(3)
  invisible(kpca(row_chunks(parts), kpar = chunk_kpar, features = 3, landmarks = 40))
  after <- runif(1)
  set.seed(3)
  invisible(kpca(row_chunks(parts), kpar = chunk_kpar, features = 3, landmarks = 40))
  expect_identical(runif(1), after)
  # "auto": R/nystrom.R's rule on the row count
  set.seed(4)
  auto <- kpca(row_chunks(parts), kpar = chunk_kpar, features = 3, landmarks = "auto")
  expect_equal(nrow(auto$landmarks), 200L)
})

test_that("update() adds rows, sources or fits: the fit on all rows at once", {
  x <- chunk_fixture()
  L <- x[seq(4, 700, by = 15), ]
  ref <- kpca(x, kpar = chunk_kpar, features = 4, landmarks = L)
  first <- kpca(row_chunks(list(x[1:250, ])), kpar = chunk_kpar, features = 4, landmarks = L)
  expect_chunked_equal(update(first, x[251:700, ]), ref, "matrix")
  upd <- update(first, row_chunks(split_rows(x[251:700, ], c(200, 250))))
  expect_chunked_equal(upd, ref, "source")
  expect_equal(upd$chunks, 3L)
  expect_cols_equal_up_to_sign(predict(upd, x), ref$rotated, 1e-8)
  # a fit on one matrix keeps its statistics too; its scores are dropped
  plain <- kpca(x[1:250, ], kpar = chunk_kpar, features = 4, landmarks = L)
  from_plain <- update(plain, x[251:700, ])
  expect_chunked_equal(from_plain, ref, "matrix fit")
  expect_equal(from_plain$chunks, 2L)
  rest <- kpca(row_chunks(list(x[251:700, ])), kpar = chunk_kpar, features = 4,
               landmarks = L)
  expect_chunked_equal(update(plain, rest), ref, "matrix fit + fit")
  # fits on other chunks, with the same landmarks, combine
  second <- kpca(row_chunks(list(x[251:500, ], x[501:700, ])), kpar = chunk_kpar,
                 features = 4, landmarks = L)
  expect_chunked_equal(update(first, second), ref, "fits")
  expect_chunked_equal(update(second, first), ref, "fits, other order")
  # several updates in a row, from one row at a time
  step <- kpca(row_chunks(list(x[1:690, ])), kpar = chunk_kpar, features = 4, landmarks = L)
  for (i in 691:700) step <- update(step, x[i, ])
  expect_chunked_equal(step, ref, "row by row")
  # with center and scale: the stored ones apply to the new rows
  sc <- kpca(row_chunks(list(x[1:300, ])), kpar = chunk_kpar, features = 4,
             landmarks = L, center = TRUE, scale. = TRUE)
  ref_sc <- kpca(x, kpar = chunk_kpar, features = 4, landmarks = L,
                 center = sc$center, scale. = sc$scale)
  expect_chunked_equal(update(sc, x[301:700, ]), ref_sc, "scaled")
  other <- kpca(row_chunks(list(x[251:700, ])), kpar = chunk_kpar, features = 4,
                landmarks = L[-1, ])
  expect_error(update(first, other), "'newdata' is a fit with other landmarks")
  expect_error(update(first, x[, 1:3]), "chunk 1 .* of 'newdata'")
  expect_error(predict(first), "keeps no per-row scores")
  strings <- vapply(1:30, function(i) paste(rep(letters[i %% 5 + 1], i %% 7 + 3),
                                              collapse = ""), "")
  on_strings <- kpca(strings, kernel = stringdot(length = 2), features = 2, landmarks = 10)
  expect_error(update(on_strings, strings[1:3]), "'object' is a fit on strings")
  expect_error(predict(ref, x, writer = identity), "'writer' applies to")
})

test_that("interrupting between chunks stops the fit", {
  skip_on_cran()
  # 50 chunks, read one after the other, interrupted as the third is read:
  # the fit stops before it reads more than one other
  # (interrupted_at_step(), helper-work.R), however long a read takes
  res <- interrupted_at_step(quote(
    kpca(row_chunks(reader, chunks = 50), kpar = list(sigma = 0.3), features = 2,
         landmarks = x[1:20, ])), at = 3L, setup = quote({
    set.seed(11)
    x <- matrix(rnorm(100 * 5), 100, 5)
    reader <- function(i) {
      step()
      if (i <= 50) x
    }
  }))
  expect_identical(res$status, "interrupted", info = child_output(res))
  expect_lte(res$after, 1L)
})

test_that("a 2-worker multisession plan gives the same numbers and landmarks", {
  skip_on_cran()
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  x <- chunk_fixture()
  dir <- tempfile("chunks")
  dir.create(dir)
  files <- file.path(dir, sprintf("part%d.rds", 1:5))
  parts <- split_rows(x, c(100, 200, 50, 150, 200))
  for (i in 1:5) saveRDS(parts[[i]], files[i])
  L <- x[seq(7, 700, by = 20), ]
  ref <- kpca(x, kpar = chunk_kpar, features = 4, landmarks = L)
  set.seed(21)
  seq_drawn <- kpca(row_chunks(files), kpar = chunk_kpar, features = 4, landmarks = 50)
  old <- future::plan(future::multisession, workers = 2)
  on.exit({
    future::plan(old)
    unlink(dir, recursive = TRUE)
  })
  fit <- kpca(row_chunks(files), kpar = chunk_kpar, features = 4, landmarks = L)
  expect_chunked_equal(fit, ref, "multisession")
  expect_equal(fit$threads, max(1L, kpca_threads() %/% 2L))
  expect_chunked_equal(kpca(row_chunks(rev(parts)), kpar = chunk_kpar, features = 4,
                            landmarks = L), ref, "multisession, list reversed")
  set.seed(21)
  par_drawn <- kpca(row_chunks(files), kpar = chunk_kpar, features = 4, landmarks = 50)
  expect_identical(par_drawn$landmark_rows, seq_drawn$landmark_rows)
  # and the caller's stream has moved on as under the sequential plan
  par_next <- runif(1)
  future::plan(future::sequential)
  set.seed(21)
  invisible(kpca(row_chunks(files), kpar = chunk_kpar, features = 4, landmarks = 50))
  expect_identical(runif(1), par_next)
  future::plan(future::multisession, workers = 2)
  expect_lt(rel_diff(unname(par_drawn$eig), unname(seq_drawn$eig)), 1e-10)
  read <- function(i) if (i <= 5) readRDS(files[i])
  expect_chunked_equal(kpca(row_chunks(read), kpar = chunk_kpar, features = 4,
                            landmarks = L), ref, "multisession, function")
  expect_cols_equal_up_to_sign(do.call(rbind, predict(fit, row_chunks(files))),
                               ref$rotated, 1e-8)
  expect_chunked_equal(update(kpca(row_chunks(files[1:2]), kpar = chunk_kpar,
                                   features = 4, landmarks = L),
                              row_chunks(files[3:5])), ref, "multisession, update")
  expect_error(kpca(row_chunks(c(files, file.path(dir, "gone.rds"))), kpar = chunk_kpar,
                    features = 4, landmarks = L),
               "chunk 6 \\(file .*gone.rds\\) of 'x' cannot be read")
})

test_that("progress is signalled through progressr, one step per chunk", {
  skip_if_not_installed("progressr")
  x <- chunk_fixture()
  parts <- split_rows(x, rep(100, 7))
  # progressr reports only in interactive sessions unless enabled
  old <- options(progressr.enable = TRUE)
  on.exit(options(old))
  steps <- 0
  withCallingHandlers(
    kpca(row_chunks(parts), kpar = chunk_kpar, features = 2, landmarks = x[1:20, ]),
    progression = function(p) if (identical(p$type, "update")) steps <<- steps + p$amount)
  expect_equal(steps, 7)
})
