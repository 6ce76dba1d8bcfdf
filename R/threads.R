# Threads: the default count (kpca_threads()), the cap of every `threads`
# (check_threads()), and the process's limits they are read from
# (thread_limits(), src/threads.c).

#' Default number of threads
#'
#' The number of threads fastkpca uses when `threads` is not given: every
#' core this process may use, within the limits its user, its scheduler
#' and OpenMP set.
#'
#' @section The default:
#' `getOption("fastkpca.threads")` if set (a whole number). Otherwise the
#' smallest of:
#' * the cores this process may use, by the rules of
#'   `parallelly::availableCores()`, read by fastkpca itself (parallelly
#'   would cost every call with the default `threads` milliseconds): the
#'   system's cores online, the CPUs the process is bound to (its affinity
#'   mask on Linux: `taskset`, cgroup CPU sets, Slurm), its cgroup's CPU
#'   quota (read once per process), `getOption("mc.cores")`, the job
#'   schedulers' settings (Slurm's `SLURM_CPUS_PER_TASK`, PBS's `NCPUS`,
#'   SGE's `NSLOTS`, LSF's `LSB_DJOB_NUMPROC`), and at most 2 under
#'   `R CMD check`, where `_R_CHECK_LIMIT_CORES_` is set, as CRAN requires;
#' * the first number of the environment variable `OMP_NUM_THREADS`, where
#'   set;
#' * the limits below.
#'
#' @section Limits: forked processes and OpenMP:
#' Every count of threads, the default and any `threads` a function is
#' given (and `getOption("fastkpca.threads")`), is cut to what the process
#' may run, and a fit records the count after the cut:
#' * **A forked process computes on one thread.** R forks in
#'   `parallel::mclapply()`, `parallel::mcparallel()`, doMC and future's
#'   `multicore` plan. GNU OpenMP (libgomp, which gcc builds use) cannot
#'   start threads in a process forked after its parent ran threads: the
#'   child would wait forever. fastkpca knows its forked children by their
#'   process id, and runs them on one thread, with the same results. (LLVM's
#'   OpenMP, which clang builds use, starts threads in a child, but
#'   fastkpca runs its children on one thread there too: a forked worker
#'   usually has one core of its own.) To have threads in each worker,
#'   start fresh processes: future's `multisession` or `cluster` plan, or
#'   `parallel::makePSOCKcluster()`, and pass `threads` to the calls made on
#'   them.
#' * **OpenMP's thread limit**, `OMP_THREAD_LIMIT`, is never exceeded. When
#'   OpenMP gives fewer threads than asked (`OMP_DYNAMIC=true`, a limit, a
#'   nested region), the work is dealt among the threads it gave, and the
#'   results are the same bits.
#' * Built without OpenMP, fastkpca computes on one thread.
#'
#' @section A busy machine:
#' When other processes keep the cores busy, threads that must meet often
#' cost more than they give: a thread the system holds back for a time
#' slice holds up the others, and OpenMP's idle threads spin for a few
#' milliseconds after each parallel step, on cores the busy processes
#' want. So, on Linux, fastkpca looks at the machine between the steps of
#' a call (the kernel's blocks of columns, the centering, each panel and
#' group of sweeps of the exact solver's reduction, each band of the
#' matrix-free solver's tiles, `predict()`'s blocks): it runs on at most
#' the cores that other processes leave free (the system's running
#' threads, less this process's own, against the cores online), and on
#' all the threads it was given again once they are free. Threads that
#' wait for one another spin for a few microseconds, then give their core
#' away. The results are the same bits whatever it finds; a fit records
#' the count it was given. Measured on 2 cores beside two busy processes
#' (`bench/busy.R` in the package's repository), the default call took
#' the time of one thread, where it had taken twice as long. To leave
#' cores to other work for good, set `options(fastkpca.threads = )` or
#' `OMP_NUM_THREADS`.
#'
#' @section BLAS threads:
#' These threads compute the kernel matrix, its centering and the exact
#' solver's own steps. The steps that call LAPACK (and the products given
#' to an optimized BLAS) run on the threads of the BLAS R is linked to,
#' never at the same time as fastkpca's, and results do not depend on
#' either. fastkpca does not change the BLAS's thread count: a
#' multithreaded BLAS such as OpenBLAS reads its own setting, for example
#' the environment variable `OPENBLAS_NUM_THREADS` (or `OMP_NUM_THREADS`),
#' set before R starts, or `RhpcBLASctl::blas_set_num_threads()` from R.
#' Measured with OpenBLAS on 2 cores (`bench/openblas-threads.R` in the package's
#' repository), two BLAS threads were 1.5 times as fast as one when the
#' machine was nearly idle (load about 1), and one was twice as fast as two when other
#' busy processes oversubscribed the cores, for fastkpca and kernlab alike.
#'
#' @return An integer of at least 1.
#' @examples
#' kpca_threads()
#' old <- options(fastkpca.threads = 1)
#' kpca_threads()
#' options(old)
#' @export
kpca_threads <- function() {
  opt <- getOption("fastkpca.threads")
  if (!is.null(opt)) return(check_threads(opt, "getOption(\"fastkpca.threads\")"))
  limits <- thread_limits()
  counts <- c(available_cores(limits = limits), omp_num_threads(), limits$cap)
  max(1L, as.integer(min(counts, na.rm = TRUE)))
}

# A count of threads checked (a whole number from 1 to the engine's limit),
# then cut to what the process may run: one in a forked child, at most
# OpenMP's thread limit (src/threads.c cuts it again, for every call).
check_threads <- function(threads, arg = "threads") {
  threads <- check_whole(threads, arg, 1, engine_limits()$threads)
  min(threads, thread_cap())
}

# thread_limits()$cap, read once per process: it is 1 in a fork of the
# process that loaded the package and OpenMP's thread limit (read by the
# runtime once, at its start) otherwise, so a process id has one cap (a
# forked child has its own id, and reads its own).
thread_cap <- local({
  pid <- NA_integer_
  cap <- NA_integer_
  function() {
    if (!identical(pid, Sys.getpid())) {
      cap <<- thread_limits()$cap
      pid <<- Sys.getpid()
    }
    cap
  }
})

# What src/threads.c reads of the process, at each call (a fork or a
# changed affinity shows at once): cap (the most threads a call may run),
# online (the system's cores online, NA where it does not say),
# forked (a fork of the process that loaded the package), openmp (built
# with it), thread_limit (OMP_THREAD_LIMIT, NA when none), affinity (the
# CPUs the process may run on, NA where the system does not say),
# free_cores (with look = TRUE: the cores other processes leave free now,
# as the steps of a call see it; NA off Linux, or not looked at).
thread_limits <- function(look = FALSE) engine_call(.Call(C_thread_limits, isTRUE(look)))

# The cores the process may use, by parallelly::availableCores()'s rules
# (the smallest of the counts it finds), read here: parallelly itself costs
# about 90 ms to load and first call, and 8 ms a call after that, which
# every call with the default `threads` would pay (test-thread-limits.R
# checks that the two agree). The counts: the system's cores online, the
# CPUs the process is bound to, its cgroup's CPU quota (read once per
# process), mc.cores, R CMD check's limit, and the job schedulers'
# settings. env: a function of a variable's name giving its value.
available_cores <- function(env = Sys.getenv, mc_cores = getOption("mc.cores"),
                            limits = thread_limits()) {
  counts <- c(
    system = if (is.na(limits$online)) detected_cores() else limits$online,
    affinity = limits$affinity,
    cgroup = process_cgroup_quota(),
    mc.cores = if (identical(suppressWarnings(as.numeric(mc_cores)), 0)) 1L
               else positive_count(mc_cores),  # 0 is 1, as parallelly reads it
    check = if (limit_cores_for_check(env)) 2L else NA,
    slurm = positive_count(env("SLURM_CPUS_PER_TASK")),
    pbs = positive_count(env("NCPUS")),
    sge = positive_count(env("NSLOTS")),
    lsf = positive_count(env("LSB_DJOB_NUMPROC")))
  if (all(is.na(counts))) return(1L)
  max(1L, as.integer(min(counts, na.rm = TRUE)))
}

# parallel::detectCores(), asked once per session, where the system does
# not give its cores online (thread_limits()): it may run a shell command.
detected_cores <- local({
  cores <- NULL
  function() {
    if (is.null(cores)) cores <<- parallel::detectCores()
    cores
  }
})

# cgroup_cpu_quota() of this process, read once per process (a fork reads
# it again).
process_cgroup_quota <- local({
  pid <- NULL
  quota <- NA_integer_
  function() {
    if (!identical(pid, Sys.getpid())) {
      quota <<- cgroup_cpu_quota()
      pid <<- Sys.getpid()
    }
    quota
  }
})

# A whole number of at least 1 from an option or a variable's text; NA
# otherwise.
positive_count <- function(value) {
  if (is.null(value) || length(value) != 1L) return(NA_integer_)
  v <- suppressWarnings(as.numeric(value))
  if (is.na(v) || v < 1 || v != round(v)) NA_integer_ else as.integer(v)
}

# R CMD check --as-cran sets _R_CHECK_LIMIT_CORES_ (to "TRUE", or
# "warn"): a check may use 2 cores.
limit_cores_for_check <- function(env = Sys.getenv) {
  value <- tolower(env("_R_CHECK_LIMIT_CORES_"))
  nzchar(value) && value != "false"
}

# The first count of OMP_NUM_THREADS ("4" or "4,2" for nested levels); NA
# where unset.
omp_num_threads <- function(env = Sys.getenv) {
  positive_count(sub(",.*$", "", trimws(env("OMP_NUM_THREADS"))))
}

# The cgroup's CPU quota, rounded to the nearest count (as parallelly
# rounds it), at least 1: cgroup v2's cpu.max ("max 100000" or
# "200000 100000"), else v1's cpu.cfs_quota_us over cpu.cfs_period_us, for
# the process's own cgroup (/proc/self/cgroup); NA without a quota, or
# off Linux.
cgroup_cpu_quota <- function(root = "/sys/fs/cgroup", self = "/proc/self/cgroup") {
  lines <- tryCatch(suppressWarnings(readLines(self, warn = FALSE)),
                    error = function(e) character())
  if (!length(lines)) return(NA_integer_)
  v2 <- sub("^0::", "", grep("^0::", lines, value = TRUE))
  quota <- function(q, p) {
    q <- suppressWarnings(as.numeric(q)); p <- suppressWarnings(as.numeric(p))
    if (length(q) != 1L || length(p) != 1L || is.na(q) || is.na(p) || q <= 0 || p <= 0)
      return(NA_integer_)
    max(1L, as.integer(floor(q / p + 0.5)))
  }
  read_one <- function(path) tryCatch(suppressWarnings(readLines(path, n = 1L, warn = FALSE)),
                                      error = function(e) character())
  if (length(v2)) {
    for (dir in unique(c(file.path(root, v2[[1]]), root))) {
      line <- read_one(file.path(dir, "cpu.max"))
      if (length(line)) {
        parts <- strsplit(trimws(line), "\\s+")[[1]]
        return(if (length(parts) == 2L) quota(parts[1], parts[2]) else NA_integer_)
      }
    }
    return(NA_integer_)
  }
  v1 <- sub("^[0-9]+:[^:]*\\bcpu\\b[^:]*:", "", grep("^[0-9]+:[^:]*\\bcpu\\b[^:]*:", lines, value = TRUE))
  for (dir in unique(c(file.path(root, "cpu", v1), file.path(root, "cpu,cpuacct", v1),
                       file.path(root, "cpu"), file.path(root, "cpu,cpuacct")))) {
    q <- read_one(file.path(dir, "cpu.cfs_quota_us"))
    if (length(q)) return(quota(q, read_one(file.path(dir, "cpu.cfs_period_us"))))
  }
  NA_integer_
}
