# The chunked Nystrom fit (R/chunk_passes.R) and the passes of the
# matrix-free exact solver (R/matrix_free.R) on future's backends beyond
# multisession (which test-chunks.R covers): batchtools (each batch a job of
# a batchtools registry, run by Rscript), a PSOCK cluster on localhost, and
# mirai's daemons. Each gives the numbers of the sequential plan: the
# eigenvalues, the landmarks drawn by number after set.seed(), the scores of
# predict() on chunks, and the matrix-free fit (the same to the last bit:
# every row's sum is taken in one order whatever the batches). A reader that records its process id shows that the
# chunks were read on the workers, not here. Small data and 3 chunks: most
# of the time is the backends' start-up.

backend_fixture <- function() {
  set.seed(12)
  x <- matrix(rnorm(300 * 4), 300, 4, dimnames = list(NULL, paste0("v", 1:4)))
  dir <- tempfile("backend")
  dir.create(dir)
  parts <- split(seq_len(300), rep(1:3, c(80, 120, 100)))
  files <- file.path(dir, sprintf("part%d.rds", 1:3))
  for (i in 1:3) saveRDS(x[parts[[i]], ], files[i])
  # the matrix-free passes go to the workers from 2 x 256 rows on
  big <- matrix(rnorm(600 * 3), 600)
  list(x = x, dir = dir, files = files, L = x[seq(5, 300, by = 10), ], big = big)
}

# A matrix-free fit of a few passes (3: the numbers of each pass are
# compared, not the convergence, which test-matrix-free.R checks).
matrix_free_fit <- function(d) {
  set.seed(41)
  suppressWarnings(kpca(d$big, kpar = list(sigma = 0.3), features = 2, solver = "matrix_free",
                        control = list(tol = 1e-6, maxit = 3)))
}

# The fits of one plan: landmarks given, landmarks drawn (unless drawn is
# FALSE), the scores of predict() on chunks, and the processes that read the
# chunks.
backend_fits <- function(d, drawn = TRUE) {
  pids <- file.path(d$dir, "pids")
  unlink(pids)
  files <- d$files
  # a reader run where the chunk is processed: it notes its process
  reader <- function(i) {
    if (i > length(files)) return(NULL)
    cat(Sys.getpid(), "\n", file = pids, append = TRUE)
    readRDS(files[i])
  }
  given <- kpca(row_chunks(reader, chunks = 3L), kpar = list(sigma = 0.3), features = 3,
                landmarks = d$L)
  sampled <- NULL
  if (drawn) {
    set.seed(31)
    sampled <- kpca(row_chunks(files), kpar = list(sigma = 0.3), features = 3, landmarks = 25)
  }
  list(given = given, drawn = sampled, after = if (drawn) runif(1),
       scores = do.call(rbind, predict(given, row_chunks(files))),
       matrix_free = matrix_free_fit(d),
       pids = unique(scan(pids, quiet = TRUE)))
}

expect_same_as_sequential <- function(fits, ref, backend) {
  expect_s3_class(fits$given, "fastkpca_nystrom_chunked")
  expect_lt(rel_diff(unname(fits$given$eig), unname(ref$given$eig)), 1e-10,
            label = paste(backend, "eigenvalues"))
  expect_equal(fits$given$statistics$n, 300)
  if (!is.null(fits$drawn)) {
    expect_identical(fits$drawn$landmark_rows, ref$drawn$landmark_rows)
    expect_lt(rel_diff(unname(fits$drawn$eig), unname(ref$drawn$eig)), 1e-10,
              label = paste(backend, "eigenvalues, drawn landmarks"))
    # the caller's random-number stream moves on as under the sequential plan
    expect_identical(fits$after, ref$after)
  }
  expect_cols_equal_up_to_sign(fits$scores, ref$scores, 1e-8, label = backend)
  expect_identical(fits$matrix_free$eig, ref$matrix_free$eig, label = paste(backend, "matrix-free"))
  expect_identical(fits$matrix_free$alpha, ref$matrix_free$alpha)
  expect_identical(fits$matrix_free$passes, ref$matrix_free$passes)
  # the chunks were read by the backend's workers, not by this process
  expect_false(Sys.getpid() %in% fits$pids, label = paste(backend, "read here"))
}

# The sequential fits, once per file, and the plan put back after each test.
backend_reference <- local({
  ref <- NULL
  function(d) {
    if (is.null(ref)) {
      old <- future::plan(future::sequential)
      on.exit(future::plan(old))
      ref <<- backend_fits(d)
      # (sequential: the reader ran here)
      stopifnot(identical(ref$pids, as.double(Sys.getpid())))
    }
    ref
  }
})
backend_data <- local({
  d <- NULL
  function() {
    if (is.null(d)) d <<- backend_fixture()
    d
  }
})

with_plan <- function(strategy, code, ...) {
  old <- future::plan(strategy, ...)
  on.exit(future::plan(old), add = TRUE)
  code
}

test_that("future.batchtools' batchtools_local gives the sequential numbers", {
  skip_on_cran()
  skip_if_not_installed("future.apply")
  skip_if_not_installed("future.batchtools")
  d <- backend_data()
  ref <- backend_reference(d)
  # batchtools keeps its registries under future's cache path: a temporary one
  old <- options(future.cache.path = file.path(d$dir, "future-cache"))
  on.exit(options(old))
  # (each batch is a job run by a new Rscript: the landmarks drawn by number
  # are left to the faster backends below)
  fits <- with_plan(future.batchtools::batchtools_local, backend_fits(d, drawn = FALSE))
  expect_same_as_sequential(fits, ref, "batchtools_local")
})

test_that("plan(cluster, workers = 2) on localhost gives the sequential numbers", {
  skip_on_cran()
  skip_if_not_installed("future.apply")
  d <- backend_data()
  ref <- backend_reference(d)
  fits <- with_plan(future::cluster, backend_fits(d), workers = 2)
  expect_same_as_sequential(fits, ref, "cluster")
  expect_length(fits$pids, 2L)
})

test_that("future.mirai's mirai_multisession gives the sequential numbers", {
  skip_on_cran()
  skip_if_not_installed("future.apply")
  skip_if_not_installed("future.mirai")
  d <- backend_data()
  ref <- backend_reference(d)
  fits <- with_plan(future.mirai::mirai_multisession, backend_fits(d), workers = 2)
  expect_same_as_sequential(fits, ref, "mirai_multisession")
})
