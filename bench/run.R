# Benchmark: kernlab::kpca against fastkpca, on R's reference BLAS and on
# OpenBLAS, all in one run.
#   Rscript bench/run.R                  # every case, on both BLASes
#   Rscript bench/run.R quick            # n = 1000 and 3000 only
#   Rscript bench/run.R quick openblas   # one BLAS: reference, openblas, default
#   Rscript bench/run.R quick n=1000 reps=3  # one n; median of 3 runs per case
#   Rscript bench/run.R n=6000 reference     # the default call at n = 6000
#   Rscript bench/run.R quick reference sklearn  # scikit-learn's KernelPCA too
# The BLAS's own settings pass through to the children, e.g.
#   OPENBLAS_NUM_THREADS=1 Rscript bench/run.R quick openblas
# Each case runs in its own child process (bench/case.R), so that its peak
# memory (VmHWM) is measured alone, with the BLAS and LAPACK switched for
# that process by LD_PRELOAD (bench/blas.R says how they are found; the
# system's setting is not changed). For each BLAS, kernlab and fastkpca run
# one after the other at each n, and speeds are ratios within the BLAS.
# Printed per case: the BLAS, the call ("kpca(x)" is the default call,
# features = 0 and th = 1e-4, which keeps hundreds of components; "5 comp."
# is rbfdot with sigma = 0.05 and features = 5), the number of components,
# wall time, speed relative to kernlab (same BLAS, call and n), the peak
# memory added by the fit as a multiple of 8 n^2 bytes (one n x n double
# matrix), the largest relative difference of the eigenvalues from
# kernlab's (n/a where kernlab is not run), and for the calls that find
# eigenpairs of the whole n x n matrix (the default call, and kernlab's
# every call) the floor: the reduction's 4/3 n^3 flops and the
# back-transformation's 2 n^2 k (k the components kept) at the machine's
# product rate, measured in the same run (bench/product-rate.R: a 400 x
# 60000 by 60000 x 400 product into a preallocated result on the run's
# threads, the median of three), and the
# time as a multiple of it; for fastkpca's fits on the n x n buffer, the
# wall seconds of each step of the fit (the stage clock of src/args.c,
# fastkpca:::stage_seconds(): fill, center, stage1 (dense to band, or the
# one-stage reduction), stage2 (band to tridiagonal), tridiag (MRRR),
# back2 and back1 (the vectors through stage 2, then stage 1), cert (the
# certificate's residuals), other), the median of the runs. With "sklearn", scikit-learn's dense KernelPCA
# (bench/sklearn_kpca.py, on the same BLAS: LD_PRELOAD reaches numpy's
# too) with the components the default call kept, on the same data, after
# each default call.
args <- commandArgs(trailingOnly = TRUE)
quick <- "quick" %in% args
sklearn <- "sklearn" %in% args
blases <- intersect(args, c("reference", "openblas", "default"))
if (!length(blases)) blases <- c("reference", "openblas")
arg_value <- function(name, default) {
  hit <- grep(sprintf("^%s=", name), args, value = TRUE)
  if (length(hit)) as.integer(sub(".*=", "", hit[1])) else default
}
reps <- arg_value("reps", 1L)
only_n <- arg_value("n", NA_integer_)
here <- tryCatch(dirname(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE)))), error = function(e) "bench")
case_script <- file.path(here, "case.R")
source(file.path(here, "blas.R"))

# "matrix" is no fit: R's matrix(0, n, n), the memory of one n x n matrix as
# this measure sees it (a calibration row)
one_n <- function(n) rbind(
  data.frame(impl = c("matrix", "kernlab", "auto"), n = n, features = "default"),
  data.frame(impl = c("kernlab", "exact", "auto"), n = n, features = "5"))
# n = 6000: the default call against its floor (kernlab would take minutes)
cases <- rbind(one_n(1000L), one_n(3000L),
               data.frame(impl = c("matrix", "auto"), n = 6000L, features = "default"),
               data.frame(impl = "auto", n = c(10000L, 20000L, 40000L), features = "10"))
if (!is.na(only_n)) {
  cases <- cases[cases$n == only_n, ]
} else if (quick) {
  cases <- cases[cases$n <= 3000L, ]
}
d <- 10L
sigma <- 0.05

run_case <- function(impl, n, features, env) {
  out <- tempfile(fileext = ".rds")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c(case_script, impl, n, d, features, sigma, out), env = env)
  if (status != 0 || !file.exists(out)) return(NULL)
  readRDS(out)
}

fmt_ratio <- function(x) if (is.na(x)) "n/a" else sprintf("%.1fx", x)

# scikit-learn's KernelPCA on the rows of bench/case.R (seed 42, d = 10) with
# k components, gamma = sigma = 0.1 (the default call's kernel), on the BLAS
# of env; NULL without a python that has scikit-learn.
sklearn_python <- local({
  found <- NULL
  function() {
    if (is.null(found)) {
      candidates <- unique(c(Sys.which(c("python3", "python")), "/usr/bin/python3"))
      candidates <- candidates[nzchar(candidates) & file.exists(candidates)]
      ok <- vapply(candidates, function(p) suppressWarnings(system2(p,
        c("-c", shQuote("import sklearn")), stdout = FALSE, stderr = FALSE)) == 0, TRUE)
      found <<- c(candidates[ok], NA)[1]
    }
    found
  }
})
run_sklearn <- function(n, k, env) {
  python <- sklearn_python()
  if (is.na(python)) return(NULL)
  set.seed(42)
  x <- matrix(rnorm(n * d), n, d)
  data_file <- tempfile(fileext = ".f64")
  on.exit(unlink(data_file))
  writeBin(as.vector(t(x)), data_file)
  out <- suppressWarnings(system2(python, c(file.path(here, "sklearn_kpca.py"), data_file, n,
                                            d, 0.1, k), stdout = TRUE, env = env))
  line <- grep("^seconds", out, value = TRUE)
  if (length(line) != 1L) return(NULL)
  list(time = as.double(sub("^seconds ", "", line)), added_bytes = NA_real_,
       eig = as.double(strsplit(sub("^eig ", "", grep("^eig", out, value = TRUE)), " ")[[1]]),
       solver = "sklearn dense")
}

# the product rate: the floor's unit
source(file.path(here, "product-rate.R"))
rate_threads <- as.integer(Sys.getenv("FASTKPCA_BENCH_THREADS", "2"))
rate <- product_rate(rate_threads)
cat(sprintf("product rate: %.1f GFLOP/s (tile_product, 3000 x 3000, %d threads)\n",
            rate / 1e9, rate_threads))
floor_seconds <- function(n, k) (4 / 3 * n^3 + 2 * n^2 * k) / rate
# A fit's stage seconds as the table's columns ("" where there are none).
stage_labels <- c(fill = "fill", center = "center", stage1 = "stage1", stage2 = "stage2",
                  tridiagonal = "tridiag", back_stage2 = "back2", back_stage1 = "back1",
                  certificate = "cert", other = "other")
stage_columns <- function(stages) {
  v <- if (is.null(stages)) rep("", length(stage_labels))
       else sprintf("%.2f", stages[names(stage_labels)])
  as.data.frame(setNames(as.list(v), stage_labels))
}
tables <- list()
sklearn_runs <- list()
for (blas in blases) {
  env <- blas_env(blas)
  # with reps > 1 the cases run in turn, reps times, and each keeps its
  # median time (and the largest memory)
  runs <- matrix(list(), nrow(cases), reps)
  for (r in seq_len(reps)) for (i in seq_len(nrow(cases))) {
    cat(sprintf("[%s] running %s (%s) at n = %d (run %d of %d) ...\n", blas,
                cases$impl[i], cases$features[i], cases$n[i], r, reps))
    res <- run_case(cases$impl[i], cases$n[i], cases$features[i], env)
    if (!is.null(res)) runs[[i, r]] <- res
    if (sklearn && !is.null(res) && cases$impl[i] == "auto" && cases$features[i] == "default") {
      cat(sprintf("[%s] running scikit-learn with %d components at n = %d ...\n", blas,
                  length(res$eig), cases$n[i]))
      sk <- run_sklearn(cases$n[i], length(res$eig), env)
      if (!is.null(sk)) sklearn_runs[[length(sklearn_runs) + 1L]] <-
        list(blas = blas, n = cases$n[i], res = sk)
    }
  }
  results <- lapply(seq_len(nrow(cases)), function(i) {
    ok <- Filter(Negate(is.null), runs[i, ])
    if (!length(ok)) return(NULL)
    out <- ok[[1]]
    out$time <- median(vapply(ok, `[[`, numeric(1), "time"))
    out$added_bytes <- max(vapply(ok, `[[`, numeric(1), "added_bytes"))
    stages <- Filter(Negate(is.null), lapply(ok, `[[`, "stages"))
    out$stages <- if (length(stages)) apply(do.call(rbind, stages), 2L, median)
    out
  })
  ran <- Filter(Negate(is.null), results)
  if (length(ran))
    cat(sprintf("[%s] children ran on BLAS %s, LAPACK %s\n", blas, ran[[1]]$blas,
                ran[[1]]$lapack))
  tables[[blas]] <- do.call(rbind, lapply(seq_len(nrow(cases)), function(i) {
    r <- results[[i]]
    n <- cases$n[i]
    call <- if (cases$features[i] == "default") "kpca(x)"
            else sprintf("%s comp.", cases$features[i])
    if (is.null(r)) return(data.frame(blas = blas, call = call, n = n,
                                      case = cases$impl[i], solver = "failed",
                                      comps = NA, seconds = NA, speedup = "n/a",
                                      memory = "n/a", eig_vs_kernlab = "n/a",
                                      floor = "n/a", x_floor = "n/a", stage_columns(NULL)))
    peer <- which(cases$n == n & cases$features == cases$features[i] &
                  cases$impl == "kernlab")
    kl <- if (length(peer)) results[[peer[1]]]
    speed <- if (!is.null(kl) && cases$impl[i] != "matrix") kl$time / r$time else NA
    agree <- if (!is.null(kl) && length(r$eig) && length(kl$eig) >= length(r$eig)) {
      ref <- kl$eig[seq_along(r$eig)]
      sprintf("%.1e", max(abs(r$eig - ref) / abs(ref)))
    } else "n/a"
    whole <- cases$impl[i] == "kernlab" || (call == "kpca(x)" && cases$impl[i] != "matrix")
    fl <- if (whole) floor_seconds(n, length(r$eig)) else NA
    data.frame(blas = blas, call = call, n = n, case = cases$impl[i],
               solver = r$solver, comps = length(r$eig),
               seconds = round(r$time, 2), speedup = fmt_ratio(speed),
               memory = sprintf("%.2f", r$added_bytes / (8 * n^2)),
               eig_vs_kernlab = agree,
               floor = if (is.na(fl)) "n/a" else sprintf("%.2f", fl),
               x_floor = if (is.na(fl)) "n/a" else sprintf("%.2f", r$time / fl),
               stage_columns(r$stages))
  }))
}
cat("\nGaussian data, d = 10. kpca(x): the default call (rbfdot, sigma = 0.1,\n")
cat("features = 0, th = 1e-4); k comp.: rbfdot, sigma = 0.05, features = k\n")
cat("speedup: kernlab's time / this case's time, same BLAS, call and n\n")
if (reps > 1) cat(sprintf("seconds: the median of %d runs, taken in turn\n", reps))
cat("memory: peak resident memory added by the fit / (8 n^2 bytes);\n")
cat("        the 'matrix' rows measure R's matrix(0, n, n) the same way\n")
cat("floor: (4/3 n^3 + 2 n^2 k) flops at the product rate above, in seconds;\n")
cat("x_floor: seconds / floor\n")
cat("fill ... other: the wall seconds of each step of a fit on the n x n buffer (the stage\n")
cat("        clock): kernel, centering, stage 1 (dense to band; one stage: dsytrd's steps),\n")
cat("        stage 2 (band to tridiagonal), the tridiagonal's vectors (MRRR), the vectors\n")
cat("        back through stage 2 and stage 1, the certificate, the rest\n\n")
options(width = 200)
print(do.call(rbind, tables), row.names = FALSE)
if (length(sklearn_runs)) {
  all <- do.call(rbind, tables)
  sk <- do.call(rbind, lapply(split(sklearn_runs, vapply(sklearn_runs, function(s)
    paste(s$blas, s$n), "")), function(runs) {
      s <- runs[[1]]
      secs <- median(vapply(runs, function(r) r$res$time, 0))
      fk <- all[all$blas == s$blas & all$n == s$n & all$case == "auto" &
                  all$call == "kpca(x)", ]
      kl <- all[all$blas == s$blas & all$n == s$n & all$case == "kernlab" &
                  all$call == "kpca(x)", ]
      data.frame(blas = s$blas, n = s$n, sklearn_seconds = round(secs, 2),
                 fastkpca_seconds = fk$seconds[1],
                 fastkpca_vs_sklearn = fmt_ratio(secs / fk$seconds[1]),
                 kernlab_seconds = if (nrow(kl)) kl$seconds[1] else NA,
                 floor = fk$floor[1], sklearn_x_floor = sprintf("%.2f",
                   secs / as.double(fk$floor[1])))
    }))
  cat("\nscikit-learn's dense KernelPCA with the components of the default call:\n")
  print(sk, row.names = FALSE)
}
