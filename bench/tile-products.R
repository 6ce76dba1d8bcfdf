# Benchmark of issues 27 and 32, product by product: each product the
# package's register tiles (src/tiles.c) compute in place of the BLAS, at
# the shapes the solvers give it, on every vector path this CPU runs
# (plain loops, SSE2, AVX2, AVX-512; NEON on aarch64), against R's BLAS
# (the one this R loads; run it with the reference BLAS, R's default, for
# the issue's question): the tiles through fastkpca:::C_tile_product, the
# BLAS through %*%, crossprod() and tcrossprod() (dgemm), and the reference
# dsymv through a small C function compiled here into tempdir() with R CMD
# SHLIB (R has no dsymv of its own).
#   Rscript bench/tile-products.R               # the fastkpca library() finds
#   Rscript bench/tile-products.R LIB [LIB ...] # each build in a child process,
#                                               # in turn, in one run
# Printed: G multiply-adds per CPU-second (one thread, best of 3) of
# each path ("auto": the session's path, the widest), the BLAS's, and the
# ratio BLAS time / tiles time on the auto path. The issue's rule: where
# the tiles beat the reference BLAS by less than 1.2x, keep the BLAS. The
# tiles' timings include the copy of C that the entry point returns (the
# BLAS's include their result's allocation). With LIBs, the auto path's
# figures of every build side by side (best of 3 rounds of child
# processes, the builds in turn), and each build's over the first's.
args <- commandArgs(trailingOnly = TRUE)
load_average <- function()
  paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")

if (length(args) && args[1L] != "child") {
  # ---- parent: one child process per build, two rounds, best of each -----
  script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                     value = TRUE)))
  libs <- normalizePath(args)
  run <- function(lib) {
    out <- tempfile(fileext = ".rds")
    status <- system2(file.path(R.home("bin"), "Rscript"), c(shQuote(script), "child", out),
                      env = sprintf("R_LIBS=%s", paste(c(lib, .libPaths()), collapse = ":")),
                      stdout = FALSE, stderr = FALSE)
    if (status != 0) stop("the child for ", lib, " failed", call. = FALSE)
    readRDS(out)
  }
  cat(sprintf("BLAS: %s; load average %s\n", basename(extSoftVersion()[["BLAS"]]),
              load_average()))
  rounds <- lapply(1:3, function(r) lapply(libs, run))
  best <- lapply(seq_along(libs), function(i) {
    a <- rounds[[1]][[i]]
    for (r in rounds[-1]) {
      a$auto <- pmax(a$auto, r[[i]]$auto)
      a$blas <- pmax(a$blas, r[[i]]$blas)
    }
    a
  })
  table <- data.frame(product = best[[1]]$product)
  for (i in seq_along(libs)) table[[basename(libs[i])]] <- best[[i]]$auto
  for (i in seq_along(libs)[-1])
    table[[paste0(basename(libs[i]), "/", basename(libs[1]))]] <- best[[i]]$auto / best[[1]]$auto
  table$blas <- best[[1]]$blas
  cat("\nG multiply-adds per CPU-second on the auto path, one thread, best of 3 runs x 3",
      "(last columns: each build over the first):\n")
  print(table, row.names = FALSE, digits = 3)
  cat(sprintf("load average after: %s\n", load_average()))
  quit(save = "no")
}

suppressPackageStartupMessages(library(fastkpca))
child_out <- if (length(args) >= 2L) args[2L] else NULL
if (is.null(child_out))
  cat(sprintf("BLAS: %s; load average %s\n", basename(extSoftVersion()[["BLAS"]]),
              load_average()))
# CPU time (user + system) of this one-threaded process: on a shared,
# oversubscribed machine the steadier measure (wall time moved by 2x
# between two runs of the same code)
best <- function(f) min(vapply(1:3, function(i) sum(system.time(f())[1:2]), numeric(1)))

# The paths this build and CPU run, with their codes for C_tile_product (0
# is the session's path; builds before issue 32 knew plain, sse2, avx2 and
# avx512, with the same codes, and had no simd_path())
path_names <- c("auto", "plain", "sse2", "avx2", "avx512", "neon")
paths <- if (exists("simd_path", asNamespace("fastkpca"))) {
  c("auto", fastkpca::simd_path(available = TRUE))
} else {
  c("auto", "plain", "sse2", "avx2", "avx512")
}
code <- function(path) match(path, path_names) - 1L

tiles_rate <- function(a, b, c0, ta, tb, op, madds, reps, path)
  reps * madds / best(function() for (i in seq_len(reps))
    .Call(fastkpca:::C_tile_product, a, b, c0, ta, tb, 1L, code(path), op)) / 1e9

general <- function(label, m, n, k, ta = FALSE, tb = FALSE) {
  set.seed(1)
  a <- if (ta) matrix(rnorm(k * m), k, m) else matrix(rnorm(m * k), m, k)
  b <- if (tb) matrix(rnorm(n * k), n, k) else matrix(rnorm(k * n), k, n)
  c0 <- matrix(0, m, n)
  madds <- as.double(m) * n * k
  reps <- max(3, round(3e9 / madds))
  rates <- vapply(paths, function(p) tiles_rate(a, b, c0, ta, tb, 0L, madds, reps, p), 0)
  blas <- best(function() for (i in seq_len(reps)) {
    if (ta && !tb) crossprod(a, b) else if (!ta && tb) tcrossprod(a, b) else a %*% b
  })
  d <- max(abs(.Call(fastkpca:::C_tile_product, a, b, c0, ta, tb, 1L, 0L, 0L) -
                 (if (ta) t(a) else a) %*% (if (tb) t(b) else b)))
  row <- data.frame(product = label, as.list(rates), blas = reps * madds / blas / 1e9)
  row$ratio <- row$auto / row$blas
  row$max_diff <- d
  row
}

rows <- list(
  general("rank-2k update A B' (3000 x 3000 x 32)", 3000, 3000, 32, tb = TRUE),
  general("back-transformation V' C (32 x 126 x 3000)", 32, 126, 3000, ta = TRUE),
  general("back-transformation V W (3000 x 126 x 32)", 3000, 126, 32),
  general("Nystrom scoring K alpha (5242 x 10 x 200)", 5242, 10, 200),
  general("kica Gram G G' (1000 x 1000 x 40)", 1000, 1000, 40, tb = TRUE),
  general("kica cross G' H (40 x 40 x 1000)", 40, 40, 1000, ta = TRUE),
  general("matrix-free tile K V (256 x 20 x 2048)", 256, 20, 2048))

# the symmetric matrix-vector product of the iterative solver and the
# panel reduction, against the reference dsymv on the lower triangle
src <- file.path(tempdir(), "ref_symv.c")
writeLines(c(
  "#include <R.h>", "#include <Rinternals.h>", "#include <R_ext/BLAS.h>",
  "SEXP ref_symv(SEXP A, SEXP x, SEXP reps) {",
  "  int n = nrows(A), inc = 1; double one = 1.0, zero = 0.0;",
  "  SEXP y = PROTECT(allocVector(REALSXP, n));",
  "  for (int r = 0; r < asInteger(reps); r++)",
  "    F77_CALL(dsymv)(\"L\", &n, &one, REAL(A), &n, REAL(x), &inc, &zero, REAL(y), &inc FCONE);",
  "  UNPROTECT(1); return y;", "}"), src)
so <- sub("\\.c$", .Platform$dynlib.ext, src)
status <- system2(file.path(R.home("bin"), "R"), c("CMD", "SHLIB", shQuote(src), "-o", shQuote(so)),
                  stdout = FALSE, stderr = FALSE)
if (status == 0) {
  dyn.load(so)
  for (n in c(2000L, 8000L, 20000L)) {
    set.seed(2)
    A <- matrix(runif(n * n), n, n)
    A <- A + t(A)
    v <- matrix(rnorm(n), n, 1)
    c0 <- matrix(0, n, 1)
    madds <- as.double(n)^2
    reps <- max(3, round(4e9 / madds))
    rates <- vapply(paths, function(p) tiles_rate(A, v, c0, FALSE, FALSE, 1L, madds, reps, p), 0)
    ref <- best(function() .Call("ref_symv", A, v, as.integer(reps)))
    d <- max(abs(.Call(fastkpca:::C_tile_product, A, v, c0, FALSE, FALSE, 1L, 0L, 1L) -
                   .Call("ref_symv", A, v, 1L)))
    row <- data.frame(product = sprintf("symmetric A x, lower triangle (n = %d)", n),
                      as.list(rates), blas = reps * madds / ref / 1e9)
    row$ratio <- row$auto / row$blas
    row$max_diff <- d
    rows[[length(rows) + 1L]] <- row
    rm(A)
    invisible(gc())
  }
} else {
  cat("R CMD SHLIB failed: the symmetric product is not compared\n")
}
table <- do.call(rbind, rows)
if (!is.null(child_out)) {
  saveRDS(table, child_out)
} else {
  cat("\nG multiply-adds per CPU-second, one thread, by vector path and for the BLAS",
      "(ratio: the BLAS's time / the auto path's):\n")
  print(table, row.names = FALSE, digits = 3)
}
