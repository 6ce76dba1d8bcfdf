# Benchmark: centered Nystrom kernel PCA over chunks of rows (issue 20),
# sequential against future's multisession workers, from files and from a
# SQLite table, with the single-process matrix fit for comparison.
#   R_LIBS=... Rscript bench/chunked.R            # n = 10^7 (about 40 min on 2 idle cores)
#   R_LIBS=... Rscript bench/chunked.R 2e6        # a smaller n, same layout
# Data: n rows, d = 10, Gaussian columns with standard deviations 2^(-(j-1)/4)
# (as bench/nystrom.R), rbfdot with sigma = 0.05, written by this script
# into a temporary directory as 20 .rds files (n / 20 rows each,
# uncompressed) and one SQLite table; all deleted at the end.
# Every fit runs in its own R process, so that its peak resident memory
# (VmHWM from /proc/self/status) is its own:
#   seq:    plan(sequential), threads = 1, 500 landmarks drawn by number
#           (set.seed(42)), 10 features;
#   multi:  plan(multisession, workers = 2), threads = 1 per worker, same
#           seed (so the same landmarks);
#   sqlite: the same rows as one SQLite table, read by one connection in
#           the caller, 10^5 rows per chunk, threads = 2, with the landmarks
#           of seq (so the eigenvalues compare);
#   matrix: kpca() on the first 10^6 rows (n / 10 for a smaller n) as one
#           matrix, threads = 1.
# Goals (issue 20): multi at least 1.7x faster than seq; the caller's peak
# memory at most 0.5 GB; the eigenvalues of seq and multi equal to 1e-10.
# The load average is printed with each fit: on a machine shared with other
# work, wall times (and the speed-up) are only as good as the idle cores.
args <- commandArgs(trailingOnly = TRUE)
script <- tryCatch(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE))), error = function(e) "bench/chunked.R")
suppressPackageStartupMessages(library(fastkpca))
d <- 10L
files_n <- 20L
sigma <- 0.05
features <- 10L
m <- 500L

vm_hwm <- function() {
  line <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
  as.double(gsub("[^0-9]", "", line)) * 1024
}

load_average <- function() {
  l <- tryCatch(readLines("/proc/loadavg", warn = FALSE), error = function(e) "")
  paste(strsplit(l, " ")[[1]][1:3], collapse = " ")
}

# A child: Rscript bench/chunked.R child PART DIR; saves DIR/PART.rds.
if (length(args) >= 1L && args[1L] == "child") {
  part <- args[2L]
  dir <- args[3L]
  files <- file.path(dir, sprintf("chunk%02d.rds", seq_len(files_n)))
  load0 <- load_average()
  fit_chunks <- function(source, threads) {
    set.seed(42)
    kpca(source, kpar = list(sigma = sigma), features = features, landmarks = m,
         threads = threads)
  }
  t0 <- proc.time()
  fit <- switch(part,
    seq = fit_chunks(row_chunks(files), 1L),
    multi = {
      future::plan(future::multisession, workers = 2L)
      # the CPU time of each worker process (two futures at once land on
      # the two idle workers), before and after the fit
      worker_cpu <- function() {
        t <- future.apply::future_lapply(1:2, function(i) {
          p <- proc.time()
          c(pid = Sys.getpid(), cpu = p[["user.self"]] + p[["sys.self"]])
        }, future.scheduling = Inf)
        t <- do.call(rbind, t)
        stats::setNames(t[, "cpu"], t[, "pid"])
      }
      cpu_before <- worker_cpu()
      # the workers start with the plan; time the fit alone
      t0 <- proc.time()
      f <- fit_chunks(row_chunks(files), 1L)
      t_fit <- proc.time() - t0
      cpu_after <- worker_cpu()
      workers_cpu <- cpu_after[names(cpu_before)] - cpu_before
      t0 <- proc.time() - t_fit
      f
    },
    sqlite = {
      # the landmarks of the sequential fit, so that the eigenvalues compare
      con <- DBI::dbConnect(RSQLite::SQLite(), file.path(dir, "rows.sqlite"))
      db <- row_chunks(con, query = "SELECT * FROM rows", rows = 1e5)
      t0 <- proc.time()
      kpca(db, kpar = list(sigma = sigma), features = features,
           landmarks = readRDS(file.path(dir, "seq.rds"))$landmarks, threads = 2L)
    },
    matrix = {
      x <- do.call(rbind, lapply(files[seq_len(max(1L, files_n / 10L))], readRDS))
      t0 <- proc.time()
      set.seed(42)
      kpca(x, kpar = list(sigma = sigma), features = features, landmarks = m,
           threads = 1L)
    })
  t1 <- proc.time() - t0
  out <- list(part = part, seconds = t1[["elapsed"]],
              cpu = t1[["user.self"]] + t1[["sys.self"]], peak = vm_hwm(),
              eig = fit$eig, landmark_rows = fit$landmark_rows, landmarks = fit$landmarks,
              n = fit$statistics$n,
              load = paste(load0, "->", load_average()),
              workers_cpu = if (part == "multi") workers_cpu)
  if (part == "seq") {
    # what travels per pass: the arguments every worker gets (landmarks,
    # kernel, shift), one chunk's description, one batch's sums
    out$bytes_args <- length(serialize(list(fit$landmarks, fit$kernel, fit$statistics$shift),
                                       NULL))
    out$bytes_task <- length(serialize(list(file = files[1L], index = 1L), NULL))
    out$bytes_sums <- length(serialize(fit$statistics, NULL))
    out$bytes_sample <- length(serialize(matrix(0, m, d), NULL))
  }
  saveRDS(out, file.path(dir, paste0(part, ".rds")))
  quit(save = "no")
}

n <- if (length(args) >= 1L) as.numeric(args[1L]) else 1e7
stopifnot(n %% files_n == 0)
rows_per_file <- n / files_n
dir <- tempfile("fastkpca-chunked-")
dir.create(dir)
cat(sprintf("n = %.0f, d = %d, %d .rds files of %.0f rows, %d landmarks, %d features, rbfdot(sigma = %g)\n",
            n, d, files_n, rows_per_file, m, features, sigma))

t0 <- proc.time()[["elapsed"]]
set.seed(1)
scales <- 2^(-(seq_len(d) - 1) / 4)
con <- DBI::dbConnect(RSQLite::SQLite(), file.path(dir, "rows.sqlite"))
for (i in seq_len(files_n)) {
  x <- matrix(rnorm(rows_per_file * d), rows_per_file, d,
              dimnames = list(NULL, paste0("x", seq_len(d))))
  x <- sweep(x, 2L, scales, "*")
  saveRDS(x, file.path(dir, sprintf("chunk%02d.rds", i)), compress = FALSE)
  DBI::dbWriteTable(con, "rows", as.data.frame(x), append = i > 1L)
}
DBI::dbDisconnect(con)
rm(x)
cat(sprintf("data written in %.0f s: %.0f MB of .rds files, %.0f MB of SQLite\n",
            proc.time()[["elapsed"]] - t0,
            sum(file.size(list.files(dir, "[.]rds$", full.names = TRUE))) / 2^20,
            file.size(file.path(dir, "rows.sqlite")) / 2^20))

rscript <- file.path(R.home("bin"), "Rscript")
res <- list()
for (part in c("seq", "multi", "sqlite", "matrix")) {
  status <- system2(rscript, c(shQuote(script), "child", part, shQuote(dir)))
  path <- file.path(dir, paste0(part, ".rds"))
  if (status != 0L || !file.exists(path)) {
    cat(sprintf("%s: failed (exit status %d)\n", part, status))
    next
  }
  res[[part]] <- readRDS(path)
  r <- res[[part]]
  cat(sprintf("%-7s n = %9.0f  wall %7.1f s  caller CPU %7.1f s  caller peak %6.0f MB  load %s\n",
              part, r$n, r$seconds, r$cpu, r$peak / 2^20, r$load))
}

if (!is.null(res$seq) && !is.null(res$multi)) {
  s <- res$seq
  mu <- res$multi
  cat(sprintf("\nspeed-up multisession (2 workers x 1 thread) / sequential (1 thread): %.2fx (goal >= 1.7x)\n",
              s$seconds / mu$seconds))
  cat(sprintf("same landmarks under both plans: %s; largest relative eig difference: %.2e (goal <= 1e-10)\n",
              identical(s$landmark_rows, mu$landmark_rows),
              max(abs(s$eig - mu$eig) / abs(s$eig))))
  cat(sprintf("caller peak memory: sequential %.0f MB, multisession %.0f MB (goal <= 512 MB)\n",
              s$peak / 2^20, mu$peak / 2^20))
  cat(sprintf(paste0("CPU time: sequential %.1f s; multisession workers %s s (caller %.1f s): ",
                     "with a core for each worker, the speed-up would be about %.2fx\n"),
              s$cpu, paste(sprintf("%.1f", mu$workers_cpu), collapse = " and "), mu$cpu,
              s$cpu / max(mu$workers_cpu)))
  # a cluster of k machines: each machine runs the sequential work of n / k
  # rows (time and memory of one worker, which is what the sequential
  # caller does); per pass, the caller sends every worker the arguments and
  # each chunk's description, and gets one m x m sum per worker back
  # CPU time, not wall time: on a machine shared with other work the wall
  # time is that of a fraction of a core
  per_row <- s$cpu / s$n
  cat("\nA cluster of k machines, from these measurements (2 passes: the scan for the landmarks, then the sums):\n")
  cat(sprintf("  time ~ %.3g s of CPU per 10^6 rows per core (n m^2 work); at n = 10^9 and 1 core per machine: %.1f / k hours\n",
              per_row * 1e6, per_row * 1e9 / 3600))
  cat(sprintf("  memory per machine ~ the sequential caller's peak, %.0f MB per worker process (one chunk of %.0f rows plus the kernel blocks)\n",
              s$peak / 2^20, rows_per_file))
  cat(sprintf(paste0("  traffic per worker and pass: %.0f kB out (landmarks, kernel, shift) + %.0f bytes ",
                     "per chunk description; back: %.0f kB per chunk (its sampled rows, first pass) ",
                     "and %.1f MB per worker (its sums, second pass); whatever n\n"),
              s$bytes_args / 2^10, s$bytes_task, s$bytes_sample / 2^10, s$bytes_sums / 2^20))
}
if (!is.null(res$sqlite))
  cat(sprintf("\nSQLite, chunks of 1e5 rows read in the caller (threads = 2, the landmarks of seq): wall %.1f s, caller peak %.0f MB; largest relative eig difference to seq %.2e\n",
              res$sqlite$seconds, res$sqlite$peak / 2^20,
              if (is.null(res$seq)) NA else max(abs(res$seq$eig - res$sqlite$eig) / res$seq$eig)))
if (!is.null(res$matrix))
  cat(sprintf("matrix fit of the first %.0f rows in one process (threads = 1): wall %.1f s, peak %.0f MB\n",
              res$matrix$n, res$matrix$seconds, res$matrix$peak / 2^20))
unlink(dir, recursive = TRUE)
