# Batches on future's workers (R/workers.R): a worker killed from outside
# (SIGKILL from another process, at a random moment of a fit) loses
# nothing. The plan's workers are made again and the lost batch runs on a
# live one; the fit is the one of the sequential plan, to the last bit,
# for the matrix-free passes and the chunked Nystrom passes alike.

# The kill tests run in a child R process (callr) with a time limit: a
# regression that leaves a fit waiting for ever fails the test instead of
# hanging the suite. The child sets the plan, fits, kills and returns the
# fits; the comparisons are made here.

# In the child: kill_fits(). plan is a call that sets the plan; pattern a
# call that gives the extended regular expression of the command lines of
# the plan's worker processes ("[.]" or "[d]" keeps it from matching the
# killer's own command line), evaluated before each kill (a plan renewed
# has new workers); setup a call made first. For each fit: the sequential
# plan's fit (ref), the undisturbed one under the plan, and the fits with
# a worker killed at a random moment (a fraction of the time of an
# undisturbed fit). A few attempts, as a kill can land after the fit's end
# (the next fit then meets the dead worker at its first launch); lost
# counts the workers the fits saw lost (fastkpca_worker_lost conditions),
# killed the processes the kills reached. (Eight attempts, not four: a
# matrix-free worker is busy in about a tenth of a fit's time, and one CI
# run saw four attempts' kills all miss; an attempt that loses a worker
# ends the loop, so the spare attempts cost nothing when the first one
# hits.)
kill_fits <- function(plan, pattern, setup, maxit, attempts) {
  with_seed <- function(seed, expr) {
    old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
    on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv())
            else assign(".Random.seed", old, globalenv()))
    set.seed(seed)
    expr
  }
  # (not this frame: the readers' closures take their environments along)
  environment(with_seed) <- globalenv()
  # Kill one of the processes whose command line matches pattern while it
  # is running (state R: in the middle of a batch, not idle between two),
  # chosen at random, from a shell of its own: from delay seconds on, it
  # looks up to 500 times, 10 ms apart (and the time ps takes). The pid
  # killed is appended to the file record.
  kill_later <- function(pattern, delay, record) {
    pick <- "awk 'BEGIN { srand() } { p[NR] = $0 } END { if (NR) print p[int(rand() * NR) + 1] }'"
    busy <- sprintf("ps -eo pid=,stat=,args= | awk '$2 ~ /^R/ && /%s/ { print $1 }'",
                    gsub("/", "\\\\/", pattern))
    script <- sprintf(paste("sleep %.3f; i=0; while [ $i -lt 500 ]; do",
                            "pid=$(%s | %s);",
                            "if [ -n \"$pid\" ]; then kill -9 $pid && echo $pid >> '%s'; exit 0; fi;",
                            "sleep 0.01; i=$((i + 1)); done"),
                      delay, busy, pick, record)
    # (without a preloaded library: under scripts/sanitizers.sh, ps and awk
    # inherited libasan and hung; and with its output away from this
    # process's, which callr reads to the end)
    system2("env", c("-u", "LD_PRELOAD", "sh", "-c", shQuote(script)), wait = FALSE,
            stdout = FALSE, stderr = FALSE)
  }
  # the fits: a matrix-free one of maxit passes (tol out of reach: the
  # number of passes is fixed), and a chunked Nystrom one of 8 chunks; in
  # an environment of their own, which the reader's closure takes along
  fits <- local({
    x <- with_seed(1, matrix(rnorm(2000 * 4), 2000, 4))
    parts <- lapply(1:8, function(i) with_seed(i, matrix(rnorm(100 * 3), 100, 3)))
    landmarks <- parts[[1]][1:30, ]
    list(
      matrix_free = function() with_seed(6, suppressWarnings(
        fastkpca::kpca(x, kpar = list(sigma = 0.2), features = 3, solver = "matrix_free",
                       threads = 1, control = list(tol = 1e-15, maxit = maxit)))),
      nystrom = function() {
        reader <- function(i) {
          # a tenth of a second of work (a running worker, for the killer)
          t0 <- proc.time()[["elapsed"]]
          while (proc.time()[["elapsed"]] - t0 < 0.1) NULL
          parts[[i]]
        }
        fastkpca::kpca(fastkpca::row_chunks(reader, chunks = 8), kpar = list(sigma = 0.2),
                       features = 2, landmarks = landmarks, threads = 1)
      })
  }, envir = list2env(list(with_seed = with_seed, maxit = maxit), parent = globalenv()))
  numbers <- function(fit) list(eig = fit$eig, alpha = fit$alpha)
  eval(setup)
  future::plan(future::sequential)
  refs <- lapply(fits, function(f) numbers(f()))
  eval(plan)
  on.exit(future::plan(future::sequential))
  # (after the plan: future.mirai's daemons() turns the caller's generator
  # to L'Ecuyer-CMRG itself)
  kind <- RNGkind()
  out <- list()
  for (what in names(fits)) {
    seconds <- system.time(undisturbed <- numbers(fits[[what]]()))[["elapsed"]]
    lost <- 0L
    record <- tempfile()
    killed <- list()
    for (attempt in seq_len(attempts)) {
      delay <- with_seed(attempt, stats::runif(1, 0.1, 0.9)) * seconds
      kill_later(eval(pattern), delay, record)
      fit <- withCallingHandlers(fits[[what]](),
                                 fastkpca_worker_lost = function(c) lost <<- lost + 1L)
      killed[[attempt]] <- numbers(fit)
      # (the killer has fired by now, whenever the fit ended)
      Sys.sleep(delay + 0.5)
      if (lost > 0L) break
    }
    out[[what]] <- list(ref = refs[[what]], undisturbed = undisturbed, killed = killed,
                        lost = lost,
                        reached = if (file.exists(record)) length(readLines(record)) else 0L)
  }
  list(fits = out, kind = kind, kind_after = RNGkind())
}

# kill_fits() in a child process, at most timeout seconds, and its fits
# checked: the undisturbed fit equals the sequential plan's (the chunked
# passes add the batches' sums in another order: to rounding), each fit
# with a kill equals the undisturbed one to the last bit, at least one
# kill was seen as a lost batch (must_lose) or reached a worker process
# (the others), and the futures' streams left the generator's kind as it
# was.
killed_on_plan <- function(plan, pattern, label, setup = NULL, maxit = 12L, attempts = 8L,
                           must_lose = c(matrix_free = TRUE, nystrom = TRUE), timeout = 300) {
  res <- callr::r(kill_fits, args = list(plan = plan, pattern = pattern, setup = setup,
                                         maxit = maxit, attempts = attempts),
                  libpath = .libPaths(), env = c(callr::rcmd_safe_env(), R_TESTS = ""),
                  timeout = timeout)
  for (what in names(res$fits)) {
    r <- res$fits[[what]]
    what_label <- paste(label, what)
    expect_lt(rel_diff(r$undisturbed$eig, r$ref$eig), 1e-12,
              label = paste(what_label, "undisturbed"))
    expect_cols_equal_up_to_sign(r$undisturbed$alpha, r$ref$alpha, 1e-10, label = what_label)
    for (attempt in seq_along(r$killed)) {
      expect_identical(r$killed[[attempt]]$eig, r$undisturbed$eig,
                       label = paste(what_label, "eig, attempt", attempt))
      expect_identical(r$killed[[attempt]]$alpha, r$undisturbed$alpha,
                       label = paste(what_label, "alpha, attempt", attempt))
    }
    if (must_lose[[what]]) {
      expect_gt(r$lost, 0L, label = sprintf("%s workers lost (kills that reached a worker: %d, in %d attempts)",
                                            what_label, r$reached, length(r$killed)))
    } else {
      expect_gt(r$reached, 0L, label = paste(what_label, "workers killed"))
    }
  }
  expect_identical(res$kind_after, res$kind)
}

test_that("a multisession worker killed from outside loses nothing", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("future")
  skip_if_not_installed("callr")
  killed_on_plan(quote(future::plan(future::multisession, workers = 2)),
                 quote(sprintf("exec/R.*parallelly[.]parent=%d", Sys.getpid())), "multisession")
})

test_that("a cluster worker killed from outside loses nothing", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("future")
  skip_if_not_installed("callr")
  killed_on_plan(quote(future::plan(future::cluster, workers = 2)),
                 quote(sprintf("exec/R.*parallelly[.]parent=%d", Sys.getpid())), "cluster")
})

test_that("a batchtools_local job killed from outside loses nothing", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("future.batchtools")
  skip_if_not_installed("batchtools")
  skip_if_not_installed("callr")
  # the jobs' registries under a future cache path in the child's own
  # temporary directory, which names the jobs' processes; each batch is a
  # job run by a new Rscript: fewer passes
  killed_on_plan(quote(future::plan(future.batchtools::batchtools_local)),
                 quote(sprintf("exec/R.*batchtools::[d]oJobCollection.*%s",
                               basename(tempdir()))),
                 "batchtools_local", maxit = 3L, timeout = 600,
                 setup = quote(options(future.cache.path = tempfile("future-cache"))))
})

test_that("a mirai daemon killed from outside loses nothing", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("future.mirai")
  skip_if_not_installed("callr")
  # the daemons of this plan, named by the address they dial (a renewed
  # plan has another)
  killed_on_plan(quote(future::plan(future.mirai::mirai_multisession, workers = 2)),
                 quote(sprintf("mirai::[d]aemon.*%s",
                               gsub("[^A-Za-z0-9]", ".", sub("^.*//", "", mirai::status()$daemons)))),
                 "mirai")
})

test_that("a dead worker of a cluster the user made, which cannot be renewed: batches run here", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("future")
  skip_if_not_installed("callr")
  # in a child process with a time limit, as the kills above
  res <- callr::r(function() {
    x <- local({
      set.seed(1)
      matrix(rnorm(2000 * 4), 2000, 4)
    })
    fit <- function() {
      set.seed(6)
      suppressWarnings(fastkpca::kpca(x, kpar = list(sigma = 0.2), features = 3,
                                      solver = "matrix_free", threads = 1,
                                      control = list(tol = 1e-15, maxit = 12L)))
    }
    ref <- fit()
    cl <- parallel::makePSOCKcluster(2L)
    on.exit(try(parallel::stopCluster(cl), silent = TRUE))
    future::plan(future::cluster, workers = cl)
    pids <- unlist(parallel::clusterCall(cl, Sys.getpid))
    tools::pskill(pids[1L], tools::SIGKILL)
    Sys.sleep(0.3)
    lost <- 0L
    killed <- withCallingHandlers(fit(), fastkpca_worker_lost = function(c) lost <<- lost + 1L)
    future::plan(future::sequential)
    list(ref = ref[c("eig", "alpha")], killed = killed[c("eig", "alpha")], lost = lost)
  }, libpath = .libPaths(), env = c(callr::rcmd_safe_env(), R_TESTS = ""), timeout = 300)
  expect_gt(res$lost, 0L)
  expect_identical(res$killed$eig, res$ref$eig)
  expect_identical(res$killed$alpha, res$ref$alpha)
})

test_that("under batchtools_local, an error of a batch's own code stops the fit at once", {
  skip_on_cran()
  skip_if_not_installed("future.batchtools")
  skip_if_not_installed("batchtools")
  # (not an expired job: the error is caught in the job, which ends done;
  # future.delete: its registry removed all the same, without a warning)
  old <- options(future.cache.path = tempfile("future-cache"), future.delete = TRUE)
  on.exit(options(old))
  old_plan <- future::plan(future.batchtools::batchtools_local)
  on.exit(future::plan(old_plan), add = TRUE)
  parts <- lapply(1:3, function(i) with_seed(i, matrix(rnorm(40 * 3), 40, 3)))
  failing <- function(i) if (i == 2L) stop("disk on fire") else parts[[i]]
  lost <- 0L
  expect_error(withCallingHandlers(
    kpca(row_chunks(failing, chunks = 3), kpar = list(sigma = 0.2), features = 2,
         landmarks = parts[[1]][1:10, ]),
    fastkpca_worker_lost = function(c) lost <<- lost + 1L),
    "chunk 2 .* cannot be read: disk on fire", class = "fastkpca_error_chunk")
  expect_identical(lost, 0L)
})
