# The register-tile products of src/tiles.c and src/tiles_vector.c, for the
# tests and benchmarks, through the kernels of one vector path
# (simd_path_names, R/simd.R; "auto" is the session's, simd_path(); a path
# the CPU lacks gives the widest below it that it runs). op:
#   "gemm": c + op(a) op(b) (op(a) = t(a) when trans_a, op(b) = t(b) when
#     trans_b);
#   "symv": c + A b for the symmetric A whose lower triangle is a's (the
#     solvers' matrix-vector product, column by column of b);
#   "syrk": c + the lower triangle of crossprod(a - 1 b) for the 1-row
#     shift b (the Nystrom statistics' rank-k update; c's upper triangle is
#     kept; attribute "sums": colSums(a - 1 b));
#   "gemv": c + a b, column by column of b; "gemv_t": c + t(a) b, likewise;
#   "symm": c + A b as "symv", all columns at once (the randomized solver);
#   "gemm_transposed": c + t(a) b, as "gemm" with trans_a, computed as
#     t(t(b) a) with the tiles' c read and written transposed (the
#     matrix-free pipeline's transposed tiles).
# The result's attribute "path" names the kernel that ran, "blas" says
# whether blas.c found an optimized BLAS loaded ("optimized") or not
# ("reference"), "large_products" where general products of 10^9
# multiply-adds go ("tiles" or "blas").
tile_ops <- c("gemm", "symv", "syrk", "gemv", "gemv_t", "symm", "gemm_transposed")

tile_product <- function(a, b, c = NULL, trans_a = FALSE, trans_b = FALSE,
                         threads = 1L, path = "auto", symmetric = FALSE,
                         op = if (symmetric) "symv" else "gemm") {
  # (coerced only where needed: storage.mode<- on the caller's double
  # matrix copied it, which was most of the time of a benchmark's product)
  a <- as.matrix(a)
  b <- as.matrix(b)
  if (!is.double(a)) storage.mode(a) <- "double"
  if (!is.double(b)) storage.mode(b) <- "double"
  op <- match.arg(op, tile_ops)
  if (is.null(c)) {
    c <- switch(op,
      syrk = matrix(0, ncol(a), ncol(a)),
      gemv_t = , gemm_transposed = matrix(0, ncol(a), ncol(b)),
      matrix(0, if (trans_a) ncol(a) else nrow(a), if (trans_b) nrow(b) else ncol(b)))
  }
  if (!is.double(c)) storage.mode(c) <- "double"
  engine_call(.Call(C_tile_product, a, b, c, trans_a, trans_b, as.integer(threads),
                    match(match.arg(path, simd_path_names), simd_path_names) - 1L,
                    match(op, tile_ops) - 1L))
}
