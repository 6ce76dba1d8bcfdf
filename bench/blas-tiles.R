# Benchmark of issue 27 (the hot products on the package's register tiles,
# src/tiles.c): four cases, each against its peer, on R's reference BLAS
# and with OpenBLAS preloaded, all in one run.
#   Rscript bench/blas-tiles.R                   # the issue's sizes
#   Rscript bench/blas-tiles.R quick             # modest sizes (a check)
#   Rscript bench/blas-tiles.R quick reference   # one BLAS: reference or openblas
#   Rscript bench/blas-tiles.R reps=3            # best of 3 runs per case
#   Rscript bench/blas-tiles.R cases=nystrom,kica # some cases only (kpca3000,
#                                                # kpca1000, kica, nystrom, iterative)
# The builds: this one (the fastkpca that this R loads), "main" (the build
# of main before issue 27) and "old" (commit 7af43b0, before issue 18),
# each installed into its own library, named by
#   FASTKPCA_BENCH_MAIN_LIB (default /tmp/lib-i27main) and
#   FASTKPCA_BENCH_OLD_LIB  (default /tmp/lib-i27old), made with e.g.
#   git worktree add /tmp/old 7af43b0
#   R CMD INSTALL --no-test-load --library=/tmp/lib-i27old /tmp/old
# The cases and their goals (ratios on the reference BLAS):
#   kpca3000, kpca1000: kpca(x) (features = 0, th = 1e-4, rbfdot sigma = 0.1,
#     x n x 5 Gaussian) against kernlab::kpca(x): 4x at n = 3000, 3x at 1000;
#   kica: kica(X), 4 sources of 4 densities (uniform, Laplace, Student t5,
#     a two-normal mixture), N = 1000, 3 mixtures: 3x the old build, with
#     the same Amari distance (printed);
#   nystrom: kpca(x, features = 10, landmarks = 200) on 10^6 rows of
#     bench/nystrom.R's data (200 is what landmarks = "auto" takes there;
#     the old build has no "auto"): 3x the old build;
#   iterative: kpca(x, features = 10, solver = "iterative") at n = 20000:
#     1.5x main.
# With OpenBLAS, the goal is that this build is nowhere slower than main.
# quick: kpca at 3000 and 1000 as above, nystrom on 2 x 10^5 rows,
# iterative at n = 8000.
# Each run is its own child R process (this script with "child"), on the
# BLAS that bench/blas.R's LD_PRELOAD selects (the system's setting is not
# changed), with the library of its build first on R_LIBS. Printed: seconds
# per case and build (wall time), the ratios of wall and of CPU time (user +
# system, all threads: on a shared machine the steadier), the load average before each
# BLAS, and what each child's fastkpca found (the BLAS R reports, and for
# this build whether blas.c saw an optimized BLAS and where its large
# general products go, "tiles" or "blas", by its rule on their size).
args <- commandArgs(trailingOnly = TRUE)

bench_x <- function(n, d, seed) {
  set.seed(seed)
  matrix(rnorm(n * d), n, d)
}

# ---- child: one case, one build; prints "seconds amari" ---------------------
if (length(args) && args[1L] == "child") {
  case <- args[2L]; size <- as.integer(args[3L]); impl <- args[4L]
  if (impl == "kernlab") {
    suppressPackageStartupMessages(library(kernlab))
  } else {
    suppressPackageStartupMessages(library(fastkpca))
  }
  run <- switch(case,
    kpca = {
      x <- bench_x(size, 5L, 42)
      if (impl == "kernlab") function() kernlab::kpca(x) else function() fastkpca::kpca(x)
    },
    kica = {
      set.seed(4)
      mixtures <- lapply(1:3, function(r) {
        S <- cbind(runif(size, -1, 1), rexp(size) * sample(c(-1, 1), size, TRUE),
                   rt(size, 5), rnorm(size, sample(c(-2, 2), size, TRUE)))
        repeat { A <- matrix(rnorm(16), 4); if (kappa(A, exact = TRUE) <= 2) break }
        list(X = S %*% t(A), A = A)
      })
      function() vapply(mixtures, function(m) {
        set.seed(1)
        fit <- fastkpca::kica(m$X)
        100 * fastkpca::amari_distance(fit$W, m$A)
      }, numeric(1))
    },
    nystrom = {
      x <- sweep(bench_x(size, 10L, 1), 2L, 2^(-(0:9) / 4), "*")
      function() {
        set.seed(2)
        fastkpca::kpca(x, kpar = list(sigma = 0.05), features = 10L, landmarks = 200L)
      }
    },
    iterative = {
      x <- sweep(bench_x(size, 10L, 1), 2L, 2^(-(0:9) / 4), "*")
      function() fastkpca::kpca(x, kpar = list(sigma = 0.05), features = 10L,
                                solver = "iterative")
    },
    stop("unknown case ", case))
  reps <- as.integer(args[5L])
  best <- Inf
  best_cpu <- Inf
  value <- NULL
  for (r in seq_len(reps)) {
    t0 <- proc.time()
    value <- run()
    t1 <- proc.time() - t0
    best <- min(best, t1[["elapsed"]])
    best_cpu <- min(best_cpu, t1[["user.self"]] + t1[["sys.self"]])
  }
  amari <- if (case == "kica") mean(value) else NA
  optimized <- if (impl == "this") {
    r <- fastkpca:::tile_product(diag(1), diag(1))
    paste0(attr(r, "blas"), "/", attr(r, "large_products"))
  } else {
    NA
  }
  cat(sprintf("RESULT %.4f %.4f %s %s %.4f\n", best, amari, optimized,
              basename(unname(extSoftVersion()["BLAS"])), best_cpu))
  quit(save = "no")
}

# ---- parent -----------------------------------------------------------------
here <- tryCatch(dirname(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE)))), error = function(e) "bench")
script <- file.path(here, "blas-tiles.R")
source(file.path(here, "blas.R"))
quick <- "quick" %in% args
blases <- intersect(args, c("reference", "openblas"))
if (!length(blases)) blases <- c("reference", "openblas")
reps_arg <- grep("^reps=", args, value = TRUE)
reps <- if (length(reps_arg)) as.integer(sub("reps=", "", reps_arg[1L])) else 1L

libs <- c(this = dirname(find.package("fastkpca")),
          main = Sys.getenv("FASTKPCA_BENCH_MAIN_LIB", "/tmp/lib-i27main"),
          old = Sys.getenv("FASTKPCA_BENCH_OLD_LIB", "/tmp/lib-i27old"),
          kernlab = "")
for (b in c("main", "old"))
  if (!dir.exists(file.path(libs[[b]], "fastkpca")))
    stop(sprintf("no fastkpca in %s (set FASTKPCA_BENCH_%s_LIB)", libs[[b]], toupper(b)),
         call. = FALSE)

cases <- data.frame(
  case = c("kpca", "kpca", "kica", "nystrom", "iterative"),
  label = c("kpca(x) n=3000", "kpca(x) n=1000", "kica m=4 N=1000", "Nystrom fit",
            "iterative 10 feat."),
  size = c(3000L, 1000L, 1000L, if (quick) 200000L else 1000000L,
           if (quick) 8000L else 20000L),
  peer = c("kernlab", "kernlab", "old", "old", "main"),
  goal = c(4, 3, 3, 3, 1.5))
cases$key <- c("kpca3000", "kpca1000", "kica", "nystrom", "iterative")
cases_arg <- grep("^cases=", args, value = TRUE)
if (length(cases_arg)) {
  wanted <- strsplit(sub("^cases=", "", cases_arg[1L]), ",")[[1]]
  if (!all(wanted %in% cases$key))
    stop("cases= takes some of ", paste(cases$key, collapse = ", "), call. = FALSE)
  cases <- cases[cases$key %in% wanted, , drop = FALSE]
}

load_average <- function() {
  l <- tryCatch(readLines("/proc/loadavg", warn = FALSE), error = function(e) "?")
  paste(strsplit(l, " ")[[1]][1:3], collapse = " ")
}

run_child <- function(blas, case, size, impl) {
  lib <- if (impl == "kernlab") libs[["this"]] else libs[[impl]]
  env <- blas_env(blas, sprintf("R_LIBS='%s'", paste(c(lib, .libPaths()), collapse = ":")))
  out <- system2(file.path(R.home("bin"), "Rscript"),
                 c(shQuote(script), "child", case, size,
                   if (impl %in% c("main", "old")) "fastkpca" else impl, reps),
                 stdout = TRUE, stderr = FALSE, env = env)
  hit <- strsplit(grep("^RESULT", out, value = TRUE), " ")[[1]]
  if (!length(hit)) stop(sprintf("child %s %s %s failed", blas, case, impl), call. = FALSE)
  list(seconds = as.double(hit[2]), amari = suppressWarnings(as.double(hit[3])),
       optimized = hit[4],
       blas = hit[5], cpu = as.double(hit[6]))
}

rows <- list()
for (blas in blases) {
  cat(sprintf("== %s BLAS (load average %s on %d cores)\n", blas, load_average(),
              parallel::detectCores()))
  for (i in seq_len(nrow(cases))) {
    cs <- cases[i, ]
    builds <- unique(c("this", "main", cs$peer))
    t <- lapply(builds, function(b) run_child(blas, cs$case, cs$size, b))
    names(t) <- builds
    sec <- vapply(t, `[[`, numeric(1), "seconds")
    cpu <- vapply(t, `[[`, numeric(1), "cpu")
    row <- data.frame(
      blas = blas, case = cs$label, n = cs$size,
      this = sec[["this"]], main = sec[["main"]],
      peer = if (cs$peer == "main") "main" else cs$peer,
      peer_s = sec[[cs$peer]],
      ratio = sec[[cs$peer]] / sec[["this"]],
      ratio_cpu = cpu[[cs$peer]] / cpu[["this"]],
      goal = if (blas == "reference") cs$goal else NA,
      vs_main = sec[["main"]] / sec[["this"]],
      vs_main_cpu = cpu[["main"]] / cpu[["this"]],
      amari = if (cs$case == "kica")
        sprintf("%.2f/%.2f", t$this$amari, t[[cs$peer]]$amari) else "",
      tiles_blas = t$this$optimized, loaded = t$this$blas)
    print(row, row.names = FALSE, digits = 3)
    rows[[length(rows) + 1L]] <- row
  }
}
cat("\nThe ratio table (seconds: wall time; ratio: peer's seconds / this build's;",
    "vs_main: main's / this build's;\n*_cpu: the same with CPU time (user + system,",
    "all threads), steadier on a shared machine;\namari: Amari x 100 of this build /",
    "the peer, kica only):\n")
print(do.call(rbind, rows), row.names = FALSE, digits = 3)
