# Do two builds of fastkpca give the same bits? Runs one set of fits and
# products (every solver of kpca(), Nystrom, predict(), kernel_matrix() of
# every kernel and of kernel expressions, the string kernels of every type,
# kica(), kcca(formulation = "centered"), preimage() both ways, and
# fastkpca:::tile_product() of every op) under every vector path this CPU
# runs (simd_path(available = TRUE)), in one child R process per build
# (R_LIBS naming its library), saves the results as RDS and compares them
# with identical().
#   Rscript scripts/bitwise-compare.R LIB_A LIB_B [MARKER.so]
# With MARKER.so, a shared object exporting openblas_get_config (made by
# this script when MARKER.so is "make"), every build runs a second time
# with it in LD_PRELOAD: blas.c then takes the loaded BLAS for an
# optimized one and sends the products its rule gives to the BLAS (R's
# reference BLAS still computes them), so the branches of an optimized
# BLAS are compared too.
# Prints one line per case, BLAS and path: "same" or "DIFFERENT"; exits 1
# when any result differs.
args <- commandArgs(trailingOnly = TRUE)

# ---- the cases: each a function of nothing, returning what to compare ----

# What a result holds that can be compared across processes: its numbers,
# strings and logicals with their dimensions and names (functions,
# environments and calls dropped; S3 classes kept).
comparable <- function(x) {
  if (is.function(x) || is.environment(x) || is.language(x) || isS4(x)) return(NULL)
  if (is.list(x)) {
    out <- lapply(x, comparable)
    attributes(out) <- attributes(x)[intersect(names(attributes(x)), c("names", "class", "dim"))]
    return(out)
  }
  x
}

cases <- function() {
  library(fastkpca)
  set.seed(1)
  x <- matrix(rnorm(600 * 5), 600, 5)
  x70 <- matrix(rnorm(300 * 70), 300, 70)
  new <- matrix(rnorm(40 * 5), 40, 5)
  dna <- vapply(1:60, function(i) paste(sample(c("a", "c", "g", "t"), sample(20:60, 1),
                                               replace = TRUE), collapse = ""), "")
  fit_exact <- kpca(x, features = 6, solver = "exact", threads = 2L)
  kernels <- list(
    vanilladot = kern("vanilladot"), polydot = kern("polydot", degree = 3, scale = 0.2),
    rbfdot = kern("rbfdot", sigma = 0.2), laplacedot = kern("laplacedot", sigma = 0.3),
    tanhdot = kern("tanhdot", scale = 0.1, offset = 0.5),
    besseldot = kern("besseldot", order = 2, sigma = 0.5),
    anovadot = kern("anovadot", sigma = 0.4, degree = 2), splinedot = kern("splinedot"),
    expression = exp(0.1 * kern("vanilladot")) * kern("rbfdot", sigma = 0.2) +
      kern("polydot", degree = 2))
  out <- list(
    exact = fit_exact,
    exact_1thread = kpca(x, features = 6, solver = "exact", threads = 1L),
    exact_all = kpca(x[1:300, ], kernel = "laplacedot", kpar = list(sigma = 0.5)),
    iterative = kpca(x, features = 6, solver = "iterative", threads = 2L),
    randomized = kpca(x, features = 6, solver = "randomized", threads = 2L),
    matrix_free = kpca(x, features = 6, solver = "matrix_free", threads = 2L),
    nystrom = kpca(x, features = 6, landmarks = 80, threads = 2L),
    predict_exact = predict(fit_exact, new),
    kernel_matrix = lapply(kernels, function(k) kernel_matrix(k, x[1:150, ], threads = 2L)),
    kernel_cross = lapply(kernels, function(k) kernel_matrix(k, x[1:90, ], new)),
    kernel_matrix_d70 = lapply(kernels[c("rbfdot", "laplacedot", "polydot")],
                               function(k) kernel_matrix(k, x70, threads = 2L)),
    strings = lapply(c("spectrum", "boundrange", "constant", "exponential", "string",
                       "fullstring", "sequence"), function(type)
      kernel_matrix(stringdot(length = 3, lambda = 1.1 + (type == "sequence") * -0.6,
                              type = type), dna)),
    strings_long = lapply(c("boundrange", "fullstring"), function(type)
      kernel_matrix(stringdot(length = 20, lambda = 0.9, type = type), dna)),
    kpca_strings = kpca(dna, kernel = stringdot(length = 2, type = "constant"),
                        features = 4),
    kica = { set.seed(2); S <- cbind(runif(500), rexp(500), rt(500, 5))
             kica(S %*% matrix(c(1, 0.5, 0.2, 0.3, 1, 0.4, 0.1, 0.6, 1), 3)) },
    kica_kcca = { set.seed(2); S <- cbind(runif(300), rexp(300))
                  kica(S %*% matrix(c(1, 0.5, 0.3, 1), 2), contrast = "kcca") },
    kcca_centered = kcca(x[, 1:2], x[, 3:5] + x[, 1:3] / 2, kpar = list(sigma = 0.5),
                         ncomps = 3, formulation = "centered"),
    preimage_ridge = preimage(fit_exact, ridge = 0.5),
    preimage_fixed_point = preimage(kpca(x[1:200, ], features = 3),
                                    method = "fixed-point")
  )
  # sparse rows: every kernel (the sparse tiles, the 8-column products and
  # the interpreter), the fits and predict()
  sx <- Matrix::rsparsematrix(300, 40, density = 0.1, rand.x = function(n) rnorm(n))
  snew <- Matrix::rsparsematrix(25, 40, density = 0.1, rand.x = function(n) rnorm(n))
  sfit <- kpca(sx, features = 4)
  out$sparse <- list(
    kernel_matrix = lapply(kernels, function(k) kernel_matrix(k, sx[1:120, ], threads = 2L)),
    kernel_cross = lapply(kernels, function(k) kernel_matrix(k, sx[1:90, ], snew)),
    exact = sfit, predict = predict(sfit, snew),
    matrix_free = kpca(sx, features = 4, solver = "matrix_free", threads = 2L),
    nystrom = kpca(sx, features = 4, landmarks = 40, threads = 2L),
    kmeanspp = kpca(sx, features = 3, landmarks = 30, landmark_rule = "kmeans++"))
  # the tiles, every op, partial tiles, transposes, 1 and 2 threads
  a <- matrix(rnorm(61 * 37), 61, 37); b <- matrix(rnorm(37 * 29), 37, 29)
  s <- crossprod(matrix(rnorm(83 * 83), 83)); v <- matrix(rnorm(83 * 5), 83, 5)
  tp <- function(...) fastkpca:::tile_product(...)
  out$tiles <- list(
    gemm = tp(a, b), gemm_ta = tp(t(a), b, trans_a = TRUE),
    gemm_tb = tp(a, t(b), trans_b = TRUE, threads = 2L),
    gemm_tt = tp(t(a), t(b), trans_a = TRUE, trans_b = TRUE),
    symv = tp(s, v, op = "symv", threads = 2L),
    syrk = tp(a, matrix(colMeans(a), 1), op = "syrk", threads = 2L),
    gemv = tp(a, b, op = "gemv"), gemv_t = tp(a, matrix(rnorm(61 * 3), 61), op = "gemv_t"),
    symm = tp(s, v, op = "symm", threads = 2L))
  out
}

# ---- child: every path of this CPU, one RDS --------------------------------
if (length(args) && args[1L] == "child") {
  suppressPackageStartupMessages(library(fastkpca))
  # small products on their threads too (the tuning of builds from issue 51
  # on, the option of those before, so that the two can be compared)
  if (exists("set_tuning", asNamespace("fastkpca"))) {
    fastkpca:::set_tuning(tile_thread_work = 0)
  } else {
    options(fastkpca.tile_thread_work = 0)
  }
  paths <- simd_path(available = TRUE)
  res <- lapply(setNames(paths, paths), function(p) {
    options(fastkpca.simd = p)
    stopifnot(simd_path() == p)
    comparable(cases())
  })
  blas <- attr(fastkpca:::tile_product(diag(1), diag(1)), "blas")
  saveRDS(list(paths = paths, blas = blas, library = find.package("fastkpca"),
               results = res), args[2L])
  quit(save = "no")
}

# ---- parent ----------------------------------------------------------------
if (length(args) < 2L) stop("usage: Rscript scripts/bitwise-compare.R LIB_A LIB_B [MARKER.so]")
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
libs <- normalizePath(args[1:2])
marker <- if (length(args) >= 3L) args[3L] else NULL
if (identical(marker, "make")) {
  src <- tempfile(fileext = ".c")
  writeLines('const char *openblas_get_config(void) { return "marker"; }', src)
  marker <- tempfile(fileext = ".so")
  if (system2("cc", c("-shared", "-fPIC", "-o", marker, src)) != 0) stop("cc failed")
}
blases <- c(reference = "", if (!is.null(marker)) c(marker = normalizePath(marker)))

run_child <- function(lib, preload) {
  out <- tempfile(fileext = ".rds")
  env <- c(sprintf("R_LIBS=%s", lib), if (nzchar(preload)) sprintf("LD_PRELOAD=%s", preload))
  status <- system2(file.path(R.home("bin"), "Rscript"), c(shQuote(script), "child", out),
                    env = env)
  if (status != 0) stop("the child for ", lib, " failed")
  readRDS(out)
}

differ <- 0L
cat(sprintf("A: %s\nB: %s\n", libs[1], libs[2]))
for (bl in names(blases)) {
  r <- lapply(libs, run_child, preload = blases[[bl]])
  stopifnot(r[[1]]$library != r[[2]]$library, identical(r[[1]]$paths, r[[2]]$paths))
  cat(sprintf("\nBLAS as blas.c sees it: A %s, B %s; paths: %s\n", r[[1]]$blas, r[[2]]$blas,
              paste(r[[1]]$paths, collapse = ", ")))
  for (p in r[[1]]$paths) {
    a <- r[[1]]$results[[p]]; b <- r[[2]]$results[[p]]
    for (case in names(a)) {
      same <- identical(a[[case]], b[[case]])
      if (!same) differ <- differ + 1L
      cat(sprintf("  %-8s %-7s %-22s %s\n", bl, p, case, if (same) "same" else "DIFFERENT"))
    }
  }
  # the paths do differ from each other (the cases see the switch)
  ps <- r[[1]]$paths
  if (length(ps) > 1L)
    cat(sprintf("  (A: plain and %s give %s results for kernel_matrix$rbfdot)\n",
                ps[length(ps)],
                if (identical(r[[1]]$results[[1]]$kernel_matrix$rbfdot,
                              r[[1]]$results[[length(ps)]]$kernel_matrix$rbfdot))
                  "the same" else "different"))
}
cat(sprintf("\n%d result(s) differ\n", differ))
quit(save = "no", status = if (differ > 0L) 1L else 0L)
