# Benchmark: sparse data (issue 38), each peer in the same run.
#   R_LIBS=... Rscript bench/sparse.R              # every part
#   R_LIBS=... Rscript bench/sparse.R austen       # chosen parts
#   FASTKPCA_BASE_LIB=/path/to/lib ...             # the densifying path
# Every fit runs in its own process (R or Python), so that its peak
# resident memory (VmHWM, or Python's ru_maxrss) is its own; "above data"
# subtracts the process's peak once the data are read.
# Parts:
#   austen: Jane Austen's six novels (janeaustenr) in passages of 10
#           lines, as TF-IDF rows of unit length (austen_tfidf() of
#           tests/testthat/helper-sparse.R), kpca(x, "rbfdot", kpar =
#           list(sigma = 0.5), features = 5), solver "auto", 2 threads:
#           - fastkpca on the sparse matrix (this library);
#           - the densifying path: the same call to the fastkpca in
#             FASTKPCA_BASE_LIB (a build before sparse support, which made
#             the matrix dense first), or, without it, kpca(as.matrix(x))
#             on this library;
#           - scikit-learn's KernelPCA(n_components = 5, kernel = "rbf",
#             gamma = 0.5, eigen_solver = "arpack") on the same matrix,
#             written by Matrix::writeMM and read as CSR by scipy (the
#             reading not timed);
#           wall time, peak memory, the ratios, and the eigenvalues' largest
#           relative difference (scikit-learn's eigenvalues_ / n).
#           Goals: at least 20x the densifying path, at most a third of
#           its peak memory; at least 2x scikit-learn; eigenvalues to 1e-8.
#   zipf:   10^5 rows by 10^5 columns, 50 stored values per row, columns
#           drawn with Zipf frequencies (the k-th column with probability
#           proportional to 1 / k), values uniform on [0.5, 1.5], rows of
#           unit length; kpca(x, "rbfdot", kpar = list(sigma = 1),
#           features = 10), solver "auto" (the matrix-free one), 2
#           threads: wall time, passes, time per pass, kernel values per
#           second (n^2 / 2 per pass), peak memory above the data; beside
#           it the dense d = 10 case (rbfdot sigma 0.05, bench/matrix-free.R's
#           data) at the same n. Goal: at most 15 minutes and 1.5 GB above
#           the data. "zipf N" sets the rows (and columns).
# The load average is printed with each fit.
args <- commandArgs(trailingOnly = TRUE)
script <- tryCatch(normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE))), error = function(e) "bench/sparse.R")
root <- dirname(dirname(script))

vm_hwm <- function() {
  line <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
  as.double(gsub("[^0-9]", "", line)) * 1024
}
load_average <- function() {
  l <- tryCatch(readLines("/proc/loadavg", warn = FALSE), error = function(e) "")
  paste(strsplit(l, " ")[[1]][1:3], collapse = " ")
}
zipf_rows <- function(n, d, per_row, seed = 1) {
  set.seed(seed)
  cdf <- cumsum(1 / seq_len(d))
  cdf <- cdf / cdf[d]
  draws <- per_row + 20L
  i <- rep(seq_len(n), each = draws)
  j <- pmin(findInterval(stats::runif(n * draws), cdf) + 1L, d)
  keep <- !duplicated(i * (d + 1) + j)   # the same pairs as duplicated(cbind(i, j))
  i <- i[keep]
  j <- j[keep]
  keep <- stats::ave(i, i, FUN = seq_along) <= per_row
  i <- i[keep]
  j <- j[keep]
  x <- stats::runif(length(i), 0.5, 1.5)
  norms <- sqrt(as.vector(tapply(x^2, i, sum)))
  Matrix::sparseMatrix(i = i, j = j, x = x / norms[i], dims = c(n, d))
}
dense_rows <- function(n, d = 10L) {
  set.seed(1)
  matrix(stats::rnorm(n * d), n, d) %*% diag(2^(-(seq_len(d) - 1) / 4))
}

# A child: Rscript bench/sparse.R child CASE DATA OUT [N]; saves OUT (.rds).
if (length(args) >= 1L && args[1L] == "child") {
  # Matrix attached before the clock starts, as in a session that has a
  # dgCMatrix: otherwise the first S3 dispatch on one (kpca()'s) attaches it
  # (R's .extendsForS3() -> getClassDef() -> require()), 0.9 s once per
  # session, which the clock would give to whichever fit came first
  suppressPackageStartupMessages({ library(fastkpca); library(Matrix) })
  case <- args[2L]
  if (case == "zipfdata") {
    # the Zipf rows made in a process of their own and saved: the fit's
    # process reads them, so its peak memory is not that of their making
    # (duplicated() and friends on 10^7 draws)
    saveRDS(zipf_rows(as.integer(args[5L]), as.integer(args[5L]), 50L), args[3L])
    quit(save = "no")
  }
  x <- switch(case,
    dense10 = dense_rows(as.integer(args[5L])),
    readRDS(args[3L]))
  invisible(gc())
  base <- vm_hwm()
  load0 <- load_average()
  t0 <- proc.time()
  fit <- switch(case,
    sparse = kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 5, threads = 2L),
    densify = kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 5, threads = 2L),
    as_matrix = kpca(as.matrix(x), kernel = "rbfdot", kpar = list(sigma = 0.5), features = 5,
                     threads = 2L),
    zipf = { set.seed(2); kpca(x, kernel = "rbfdot", kpar = list(sigma = 1), features = 10,
                               threads = 2L) },
    dense10 = { set.seed(2); kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.05),
                                  features = 10, threads = 2L) })
  t1 <- proc.time() - t0
  saveRDS(list(eig = unname(fit$eig), solver = fit$solver,
               passes = if (is.null(fit$passes)) NA_integer_ else fit$passes,
               n = nrow(x), seconds = t1[["elapsed"]],
               cpu = t1[["user.self"]] + t1[["sys.self"]], peak = vm_hwm(),
               above_data = vm_hwm() - base, load = paste(load0, "->", load_average()),
               residual = max(fit$eig_residuals)), args[4L])
  quit(save = "no")
}

run_child <- function(case, data, n = "", lib = NULL) {
  out <- tempfile(fileext = ".rds")
  env <- if (is.null(lib)) character() else paste0("R_LIBS=", lib, ":", Sys.getenv("R_LIBS"))
  status <- system2("Rscript", c(shQuote(script), "child", case, shQuote(data), shQuote(out), n),
                    env = env)
  if (status != 0L || !file.exists(out)) stop("the child ", case, " failed")
  readRDS(out)
}
# The first python3 or python on the PATH that imports scikit-learn.
sklearn_python <- function() {
  for (py in Sys.which(c("python3", "python"))) {
    for (cand in unique(c(py, file.path(strsplit(Sys.getenv("PATH"), ":")[[1]],
                                         basename(py))))) {
      if (file.exists(cand) && system2(cand, c("-c", shQuote("import sklearn, scipy")),
                                        stdout = FALSE, stderr = FALSE) == 0L) return(cand)
    }
  }
  stop("no python on the PATH imports scikit-learn (Debian: python3-sklearn)")
}
mb <- function(bytes) sprintf("%.0f MB", bytes / 2^20)
rel <- function(a, b) max(abs(a - b) / abs(b))

parts <- if (length(args)) args else c("austen", "zipf")
suppressPackageStartupMessages(library(fastkpca))
cat(sprintf("fastkpca %s, %s, %d cores\n", utils::packageVersion("fastkpca"), R.version.string,
            parallel::detectCores()))

if ("austen" %in% parts) {
  source(file.path(root, "tests", "testthat", "helper-sparse.R"))
  a <- austen_tfidf()
  x <- a$x
  cat(sprintf("\n== Austen: %d passages x %d terms, %d stored values (%.2f%%): %s sparse, %s dense\n",
              nrow(x), ncol(x), length(x@x), 100 * length(x@x) / prod(dim(x)),
              mb(object.size(x)), mb(8 * prod(dim(x)))))
  data <- tempfile(fileext = ".rds")
  saveRDS(x, data)
  mm <- tempfile(fileext = ".mtx")
  Matrix::writeMM(x, mm)
  sp <- run_child("sparse", data)
  base_lib <- Sys.getenv("FASTKPCA_BASE_LIB")
  dn <- if (nzchar(base_lib)) run_child("densify", data, lib = base_lib)
        else run_child("as_matrix", data)
  py <- tempfile(fileext = ".py")
  writeLines(c(
    "import sys, time, resource, numpy as np",
    "from scipy.io import mmread",
    "from sklearn.decomposition import KernelPCA",
    "X = mmread(sys.argv[1]).tocsr()",
    "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss",
    "t0 = time.time()",
    "k = KernelPCA(n_components=5, kernel='rbf', gamma=0.5, eigen_solver='arpack').fit(X)",
    "t = time.time() - t0",
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss",
    "print(t, peak * 1024, (peak - base) * 1024, *k.eigenvalues_)"), py)
  sk <- as.numeric(strsplit(system2(sklearn_python(), c(py, mm), stdout = TRUE), " ")[[1]])
  sk_eig <- sk[-(1:3)] / nrow(x)
  tab <- data.frame(
    run = c("fastkpca, sparse", if (nzchar(base_lib)) "fastkpca before (dense copy)"
            else "fastkpca on as.matrix(x)", "scikit-learn KernelPCA (arpack)"),
    seconds = round(c(sp$seconds, dn$seconds, sk[1]), 2),
    peak_MB = round(c(sp$peak, dn$peak, sk[2]) / 2^20),
    above_data_MB = round(c(sp$above_data, dn$above_data, sk[3]) / 2^20),
    eig_vs_sparse = signif(c(0, rel(dn$eig, sp$eig), rel(sk_eig, sp$eig)), 2))
  print(tab, row.names = FALSE)
  cat(sprintf("solver %s; load %s (sparse), %s (dense)\n", sp$solver, sp$load, dn$load))
  cat(sprintf("speed-up: %.1fx the densifying path (goal 20x), %.1fx scikit-learn (goal 2x)\n",
              dn$seconds / sp$seconds, sk[1] / sp$seconds))
  cat(sprintf("peak memory: %.2f of the densifying path's (goal at most 1/3)\n",
              sp$peak / dn$peak))
}

if ("zipf" %in% parts) {
  i <- match("zipf", args)
  n <- if (!is.na(i) && length(args) > i && grepl("^[0-9]+$", args[i + 1L]))
    as.integer(args[i + 1L]) else 100000L
  cat(sprintf("\n== Zipf rows: %d x %d, 50 values per row, features = 10, 2 threads\n", n, n))
  data <- tempfile(fileext = ".rds")
  system2("Rscript", c(shQuote(script), "child", "zipfdata", shQuote(data), "none", n))
  z <- run_child("zipf", data, n = n)
  d <- run_child("dense10", "", n = n)
  per_pass <- function(r) r$seconds / max(1, r$passes)
  values <- function(r) r$passes * n^2 / 2 / r$seconds
  tab <- data.frame(
    data = c("sparse, Zipf columns (d = 10^5, 50 per row)", "dense, d = 10"),
    solver = c(z$solver, d$solver), seconds = round(c(z$seconds, d$seconds), 1),
    passes = c(z$passes, d$passes),
    seconds_per_pass = round(c(per_pass(z), per_pass(d)), 1),
    values_per_second = signif(c(values(z), values(d)), 3),
    above_data_MB = round(c(z$above_data, d$above_data) / 2^20),
    residual = signif(c(z$residual, d$residual), 2))
  print(tab, row.names = FALSE)
  cat(sprintf("load %s (sparse), %s (dense)\n", z$load, d$load))
  cat(sprintf("goal: at most 900 s and 1536 MB above the data: %.0f s, %.0f MB\n", z$seconds,
              z$above_data / 2^20))
}
