# Benchmark of issue 27, product by product: each product the package's
# register tiles (src/tiles.c) compute in place of the BLAS, at the shapes
# the solvers give it, against R's BLAS (the one this R loads; run it with
# the reference BLAS, R's default, for the issue's question): the tiles
# through fastkpca:::C_tile_product, the BLAS through %*%, crossprod() and
# tcrossprod() (dgemm), and the reference dsymv through a small C function
# compiled here into tempdir() with R CMD SHLIB (R has no dsymv of its own).
#   Rscript bench/tile-products.R
# Printed: G multiply-adds per second (wall time, one thread, best of 3)
# and the ratio BLAS time / tiles time. The issue's rule: where the tiles
# beat the reference BLAS by less than 1.2x, keep the BLAS. The tiles'
# timings include the copy of C that the entry point returns (the BLAS's
# include their result's allocation).
suppressPackageStartupMessages(library(fastkpca))
cat(sprintf("BLAS: %s; load average %s\n", basename(extSoftVersion()[["BLAS"]]),
            paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")))
best <- function(f) min(vapply(1:3, function(i) system.time(f())[[3]], numeric(1)))

general <- function(label, m, n, k, ta = FALSE, tb = FALSE) {
  set.seed(1)
  a <- if (ta) matrix(rnorm(k * m), k, m) else matrix(rnorm(m * k), m, k)
  b <- if (tb) matrix(rnorm(n * k), n, k) else matrix(rnorm(k * n), k, n)
  c0 <- matrix(0, m, n)
  madds <- as.double(m) * n * k
  reps <- max(3, round(3e9 / madds))
  tiles <- best(function() for (i in seq_len(reps))
    .Call(fastkpca:::C_tile_product, a, b, c0, ta, tb, 1L, 0L, 0L))
  blas <- best(function() for (i in seq_len(reps)) {
    if (ta && !tb) crossprod(a, b) else if (!ta && tb) tcrossprod(a, b) else a %*% b
  })
  d <- max(abs(.Call(fastkpca:::C_tile_product, a, b, c0, ta, tb, 1L, 0L, 0L) -
                 (if (ta) t(a) else a) %*% (if (tb) t(b) else b)))
  data.frame(product = label, tiles = reps * madds / tiles / 1e9,
             blas = reps * madds / blas / 1e9, ratio = blas / tiles, max_diff = d)
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
    reps <- max(3, round(4e9 / n^2))
    tiles <- best(function() for (i in seq_len(reps))
      .Call(fastkpca:::C_tile_product, A, v, c0, FALSE, FALSE, 1L, 0L, 1L))
    ref <- best(function() .Call("ref_symv", A, v, as.integer(reps)))
    d <- max(abs(.Call(fastkpca:::C_tile_product, A, v, c0, FALSE, FALSE, 1L, 0L, 1L) -
                   .Call("ref_symv", A, v, 1L)))
    rows[[length(rows) + 1L]] <- data.frame(
      product = sprintf("symmetric A x, lower triangle (n = %d)", n),
      tiles = reps * as.double(n)^2 / tiles / 1e9, blas = reps * as.double(n)^2 / ref / 1e9,
      ratio = ref / tiles, max_diff = d)
    rm(A)
    invisible(gc())
  }
} else {
  cat("R CMD SHLIB failed: the symmetric product is not compared\n")
}
cat("\nG multiply-adds per second, one thread (ratio: the BLAS's time / the tiles'):\n")
print(do.call(rbind, rows), row.names = FALSE, digits = 3)
