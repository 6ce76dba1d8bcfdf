# Threads as R users run them (issue 50; ?kpca_threads): forked children
# compute on one thread (GNU OpenMP cannot start a team in a child forked
# after its parent ran one: the child hung), OpenMP's thread limit and
# dynamic teams are respected (the band reduction dealt its sweeps to
# threads OpenMP had not given, and hung), and the default count is the
# cores the process may use. Each case runs in a child R process under a
# time limit (run_child_r(), helper-child.R), so that a hang fails the
# test instead of stopping the suite; its results are compared with
# threads = 1's, computed here.

skip_if(nzchar(Sys.getenv("FASTKPCA_MEMCHECK")), "under a memory checker")

# The data and the work of every export the issue lists, as code that a
# child and this process both run: x (2500 rows: the default kpca() takes
# the exact solver's two-stage reduction, which has threads that wait on
# one another), the jobs by name, each returning what it computed.
thread_jobs_code <- c(
  "set.seed(50)",
  "x <- matrix(rnorm(2500 * 6), 2500)",
  "small <- x[1:400, ]",
  "fit_small <- kpca(small, kernel = 'rbfdot', kpar = list(sigma = 0.2), features = 4, threads = 1)",
  "jobs <- list(",
  "  kernel_matrix = function() unclass(kernel_matrix(rbfdot(0.1), x[1:1500, ])),",
  "  kpca = function() { f <- kpca(x); list(eig(f), rotated(f)) },",
  "  predict = function() predict(fit_small, x[2001:2500, ]),",
  "  nystrom = function() { set.seed(1); f <- kpca(x, landmarks = 300, features = 5); list(eig(f), rotated(f)) },",
  "  kpca_cv = function() { set.seed(2); cv <- kpca_cv(small, 'rbfdot', grid = list(sigma = c(0.2, 1)),",
  "                          features = c(2, 4), folds = 3); cv$results },",
  "  kica = function() { set.seed(3); s <- cbind(runif(300), rexp(300)); f <- kica(s %*% matrix(c(1, 1, -1, 2), 2)); f$W }",
  ")")

thread_references <- local({
  refs <- NULL
  function() {
    if (is.null(refs)) {
      old <- options(fastkpca.threads = 1)
      on.exit(options(old))
      env <- new.env()
      eval(parse(text = thread_jobs_code), env)
      refs <<- lapply(env$jobs, function(job) job())
    }
    refs
  }
})

# Runs code (lines, after the jobs are defined) in a child R process, which
# saves `results` (a list by job name) to a file; returns them, or the
# child's output when it saved none (a hang, an error).
child_results <- function(code, env = character(), timeout = 300) {
  out <- tempfile(fileext = ".rds")
  on.exit(unlink(out))
  lines <- run_child_r(c("suppressPackageStartupMessages(library(fastkpca))",
                         thread_jobs_code, code,
                         sprintf("saveRDS(results, %s)", deparse(out))),
                       env = env, timeout = timeout)
  if (!file.exists(out)) return(structure(list(), output = lines))
  readRDS(out)
}

expect_thread_one_results <- function(results) {
  refs <- thread_references()
  expect_setequal(names(results), names(refs))
  for (job in names(refs)) {
    expect_identical(results[[job]]$value, refs[[job]], label = job)
  }
}

test_that("children forked by mclapply() after threaded work finish, with threads = 1's results", {
  skip_on_os("windows")
  results <- child_results(c(
    "invisible(kernel_matrix(rbfdot(0.1), x[1:1000, ], threads = 2))  # the parent's team",
    "runs <- parallel::mclapply(names(jobs), function(j)",
    "  list(value = jobs[[j]](), threads = kpca_threads(),",
    "       forked = fastkpca:::thread_limits()$forked), mc.cores = 2)",
    "results <- setNames(runs, names(jobs))"))
  expect_gt(length(results), 0, label = paste(attr(results, "output"), collapse = "\n"))
  expect_thread_one_results(results)
  for (r in results) {
    expect_true(r$forked)
    expect_identical(r$threads, 1L)
  }
})

test_that("future's multicore workers forked after threaded work finish, with threads = 1's results", {
  skip_on_os("windows")
  skip_if_not_installed("future")
  results <- child_results(c(
    "invisible(kernel_matrix(rbfdot(0.1), x[1:1000, ], threads = 2))  # the parent's team",
    "future::plan(future::multicore, workers = 2)",
    "fs <- lapply(names(jobs), function(j) future::future(",
    "  list(value = jobs[[j]](), threads = kpca_threads()), seed = NULL))",
    "results <- setNames(future::value(fs), names(jobs))"))
  expect_gt(length(results), 0, label = paste(attr(results, "output"), collapse = "\n"))
  expect_thread_one_results(results)
  for (r in results) expect_identical(r$threads, 1L)
})

test_that("OMP_THREAD_LIMIT=1: the default count is 1, and threads = 2 runs on one thread with its results", {
  results <- child_results(c(
    "results <- lapply(jobs[c('kernel_matrix', 'kpca')], function(job)",
    "  list(value = job(), threads = kpca_threads(), cap = fastkpca:::thread_limits()$cap))",
    "results$kpca_two <- list(value = { f <- kpca(x, threads = 2); list(eig(f), rotated(f)) },",
    "                         recorded = kpca(x[1:300, ], threads = 2)$threads)"),
    env = "OMP_THREAD_LIMIT=1")
  expect_gt(length(results), 0, label = paste(attr(results, "output"), collapse = "\n"))
  refs <- thread_references()
  expect_identical(results$kernel_matrix$value, refs$kernel_matrix)
  expect_identical(results$kpca$value, refs$kpca)
  expect_identical(results$kpca_two$value, refs$kpca)
  expect_identical(results$kpca$threads, 1L)
  expect_identical(results$kpca$cap, 1L)
  # the fit records the count it ran on
  expect_identical(results$kpca_two$recorded, 1L)
})

test_that("OMP_DYNAMIC=true: whatever teams OpenMP gives, the default kpca() has threads = 1's bits", {
  results <- child_results(c(
    "results <- list(kpca = list(value = { f <- kpca(x, threads = 2); list(eig(f), rotated(f)) }))"),
    env = "OMP_DYNAMIC=true")
  expect_gt(length(results), 0, label = paste(attr(results, "output"), collapse = "\n"))
  expect_identical(results$kpca$value, thread_references()$kpca)
})

# What kpca_threads() and the rules without parallelly say in a child run
# with env (and, with cpus, bound to those CPUs by taskset).
child_default_count <- function(env = character(), cpus = NULL) {
  code <- c("suppressPackageStartupMessages(library(fastkpca))",
            "cat('count', kpca_threads(), fastkpca:::available_cores(),",
            "    if (requireNamespace('parallelly', quietly = TRUE)) parallelly::availableCores() else NA,",
            "    '\\n')")
  lines <- run_child_r(code, env = env, timeout = 60,
                       prefix = if (!is.null(cpus)) c("taskset", "-c", cpus))
  line <- grep("^count ", lines, value = TRUE)
  if (length(line) != 1L) stop(paste(lines, collapse = "\n"))
  as.integer(strsplit(trimws(line), " ")[[1]][-1])
}

test_that("the default count follows the process's limits, with parallelly and without", {
  skip_on_os("windows")
  no_check <- "_R_CHECK_LIMIT_CORES_=false"
  # OpenMP's limit, and OMP_NUM_THREADS's first count
  expect_identical(child_default_count(c(no_check, "OMP_THREAD_LIMIT=1"))[1], 1L)
  expect_identical(child_default_count(c(no_check, "OMP_NUM_THREADS=1,2"))[1], 1L)
  # R CMD check's limit: at most 2, by both rules
  expect_true(all(child_default_count("_R_CHECK_LIMIT_CORES_=TRUE") <= 2L, na.rm = TRUE))
  # one CPU of the affinity mask: one thread, by both rules
  skip_if(!nzchar(Sys.which("taskset")), "no taskset")
  skip_if(!identical(Sys.info()[["sysname"]], "Linux"), "affinity is read on Linux")
  counts <- child_default_count(no_check, cpus = "0")
  expect_identical(counts[1:2], c(1L, 1L))
  # and parallelly agrees, where installed
  if (!is.na(counts[3])) expect_identical(counts[3], 1L)
})

test_that("the default's rules read what parallelly reads", {
  env_of <- function(...) {
    values <- c(...)
    function(name) if (name %in% names(values)) values[[name]] else ""
  }
  no_check <- c("_R_CHECK_LIMIT_CORES_" = "false")
  expect_identical(fastkpca:::available_cores(env = env_of(no_check), mc_cores = 1), 1L)
  expect_identical(fastkpca:::available_cores(env = env_of(no_check), mc_cores = 0), 1L)
  expect_identical(fastkpca:::available_cores(env = env_of(no_check, SLURM_CPUS_PER_TASK = "1"),
                                              mc_cores = NULL), 1L)
  expect_identical(fastkpca:::available_cores(env = env_of(no_check, NSLOTS = "1"),
                                              mc_cores = NULL), 1L)
  expect_true(fastkpca:::available_cores(env = env_of("_R_CHECK_LIMIT_CORES_" = "TRUE"),
                                         mc_cores = NULL) <= 2L)
  expect_identical(fastkpca:::omp_num_threads(env_of(OMP_NUM_THREADS = "3,1")), 3L)
  expect_identical(fastkpca:::omp_num_threads(env_of()), NA_integer_)
  # cgroup quotas: v2's cpu.max and v1's pair of files, for the process's
  # own cgroup
  root <- tempfile()
  dir.create(file.path(root, "job"), recursive = TRUE)
  self <- tempfile()
  writeLines("0::/job", self)
  writeLines("150000 100000", file.path(root, "job", "cpu.max"))
  expect_identical(fastkpca:::cgroup_cpu_quota(root, self), 2L)
  writeLines("120000 100000", file.path(root, "job", "cpu.max"))
  expect_identical(fastkpca:::cgroup_cpu_quota(root, self), 1L)
  writeLines("max 100000", file.path(root, "job", "cpu.max"))
  expect_identical(fastkpca:::cgroup_cpu_quota(root, self), NA_integer_)
  v1 <- tempfile()
  dir.create(file.path(v1, "cpu", "job"), recursive = TRUE)
  writeLines("4:cpu,cpuacct:/job", self)
  writeLines("100000", file.path(v1, "cpu", "job", "cpu.cfs_quota_us"))
  writeLines("100000", file.path(v1, "cpu", "job", "cpu.cfs_period_us"))
  expect_identical(fastkpca:::cgroup_cpu_quota(v1, self), 1L)
  writeLines("-1", file.path(v1, "cpu", "job", "cpu.cfs_quota_us"))
  expect_identical(fastkpca:::cgroup_cpu_quota(v1, self), NA_integer_)
  # parallelly's own answer, on this process and with mc.cores set
  skip_if_not_installed("parallelly")
  expect_identical(fastkpca:::available_cores(), as.integer(parallelly::availableCores()))
  old <- options(mc.cores = 1)
  on.exit(options(old))
  expect_identical(fastkpca:::available_cores(), as.integer(parallelly::availableCores()))
})

test_that("every resolved count is cut to the process's cap, and bad counts are errors", {
  cap <- fastkpca:::thread_limits()$cap
  expect_identical(fastkpca:::check_threads(1), 1L)
  expect_identical(fastkpca:::check_threads(min(cap, 2L)), as.integer(min(cap, 2L)))
  expect_error(fastkpca:::check_threads(0), "threads")
  expect_error(kernel_matrix(rbfdot(1), matrix(1:4, 2), threads = 1.5), "threads")
  old <- options(fastkpca.threads = "two")
  on.exit(options(old))
  expect_error(kpca_threads(), "fastkpca.threads")
})

test_that("beside processes that take every core, the steps run on one thread, with the same bits", {
  skip_on_os("windows")
  skip_if(!identical(Sys.info()[["sysname"]], "Linux"), "the machine is read on Linux")
  cores <- parallel::detectCores()
  skip_if(is.na(cores) || cores > 8L, "more cores than busy processes to start")
  # one busy shell loop per core: the system's running threads then
  # leave no core free, whatever else runs
  pids <- vapply(seq_len(cores), function(i) {
    f <- tempfile()
    system(sprintf("sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $! > %s", f))
    as.integer(readLines(f))
  }, 0L)
  on.exit(tools::pskill(pids), add = TRUE)
  Sys.sleep(0.2)
  expect_identical(fastkpca:::thread_limits(look = TRUE)$free_cores, 1L)
  set.seed(7)
  x <- matrix(rnorm(2100 * 4), 2100)
  busy <- kpca(x, threads = 2)
  tools::pskill(pids)
  one <- kpca(x, threads = 1)
  expect_identical(eig(busy), eig(one))
  expect_identical(rotated(busy), rotated(one))
  # the fit records the count it was given
  expect_identical(busy$threads, min(2L, fastkpca:::thread_limits()$cap))
})
