# Benchmark: the same fits under several builds of fastkpca, in one run
# (issue 40's regressions), each fit in its own R process, the builds
# alternating within each round; the median of the rounds.
#   Rscript bench/builds.R LABEL=LIB [LABEL=LIB ...] [rounds=3] [cases=auto5,mf20k,...]
# LIB: a library holding that build of fastkpca (R CMD INSTALL
# --library=LIB on a checkout, e.g. of a339451 or 35cb1f2); the first
# build is the one the others are compared with. Cases:
#   auto5:  kpca(x, features = 5) at n = 3000, d = 10, rbfdot sigma =
#           0.05, solver "auto" (the iterative one), bench/case.R;
#   mf20k:  the matrix-free fit at n = 20000, 10 features, 2 threads
#           (bench/matrix-free.R's child "mf2");
#   default2k, default3k: the default call kpca(x) at n = 2000 and 3000
#           (d = 10, default threads; bench/case.R; issue 50);
#   sparse_predict, sparse_nystrom, dense_kernel, dense_predict:
#           bench/sparse-case.R's (issue 46: predict() and Nystrom on sparse
#           rows, whose sets are read once per call, and a dense kernel
#           matrix; issue 52: predict() on dense rows, one thread).
# Prints seconds per build and case and each build's ratio to the first
# (above 1: slower than the first).
args <- commandArgs(trailingOnly = TRUE)
script <- tryCatch(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE))), error = function(e) "bench/builds.R")
bench <- dirname(script)
rounds <- 3L
if (any(grepl("^rounds=", args))) rounds <- as.integer(sub("^rounds=", "", grep("^rounds=", args, value = TRUE)))
builds <- grep("=", grep("^(rounds|cases)=", args, value = TRUE, invert = TRUE), value = TRUE)
if (!length(builds)) stop("give at least one LABEL=LIB")
libs <- setNames(sub("^[^=]*=", "", builds), sub("=.*$", "", builds))

run_case <- function(case, lib) {
  out <- tempfile(fileext = ".rds")
  env <- paste0("R_LIBS=", lib)
  cmd <- switch(case,
    auto5 = c(file.path(bench, "case.R"), "auto", "3000", "10", "5", "0.05", out),
    mf20k = c(file.path(bench, "matrix-free.R"), "child", "mf2", "20000", out),
    default2k = c(file.path(bench, "case.R"), "exact", "2000", "10", "default", "0.1", out),
    default3k = c(file.path(bench, "case.R"), "exact", "3000", "10", "default", "0.1", out),
    c(file.path(bench, "sparse-case.R"), case, out))
  if (system2("Rscript", shQuote(cmd), env = env, stdout = FALSE) != 0L || !file.exists(out))
    stop("the case ", case, " failed under ", lib)
  r <- readRDS(out)
  if (!is.null(r$seconds)) r$seconds else r$time
}

load_average <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
cat(sprintf("load before: %s\n", load_average()))
cases <- c("auto5", "default2k", "default3k", "mf20k", "sparse_predict", "sparse_nystrom",
           "dense_kernel", "dense_predict")
if (any(grepl("^cases=", args)))
  cases <- strsplit(sub("^cases=", "", grep("^cases=", args, value = TRUE)), ",")[[1]]
times <- array(NA_real_, c(length(cases), length(libs), rounds),
               dimnames = list(cases, names(libs), NULL))
for (r in seq_len(rounds)) {
  for (case in cases) {
    order <- if (r %% 2L == 1L) seq_along(libs) else rev(seq_along(libs))
    for (b in order) times[case, b, r] <- run_case(case, libs[[b]])
  }
  cat(sprintf("round %d done, load %s\n", r, load_average()))
}
med <- apply(times, c(1, 2), stats::median)
print(round(med, 3))
cat("\nratio to", names(libs)[1], "(seconds of the build / seconds of the first):\n")
print(round(sweep(med, 1L, med[, 1L], "/"), 3))
cat(sprintf("load after: %s\n", load_average()))
