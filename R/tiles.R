# The register-tile products of src/tiles.c, for the tests: c + op(a) op(b)
# (op(a) = t(a) when trans_a, op(b) = t(b) when trans_b), or with
# symmetric = TRUE, c + A b for the symmetric A whose lower triangle is a's
# (the solvers' matrix-vector product), through the kernels of one path
# ("auto": this CPU's widest; a path the CPU lacks falls back to the widest
# below it). The result's attribute "path" names the kernel that ran, and
# "blas" says whether tiles.c found an optimized BLAS loaded ("optimized")
# or not ("reference"), "large_products" where the general products of
# 2^20 multiply-adds or more go ("tiles" or "blas", by the probe).
tile_paths <- c("auto", "plain", "sse2", "avx2", "avx512")

tile_product <- function(a, b, c = NULL, trans_a = FALSE, trans_b = FALSE,
                         threads = 1L, path = "auto", symmetric = FALSE) {
  a <- as.matrix(a)
  b <- as.matrix(b)
  storage.mode(a) <- "double"
  storage.mode(b) <- "double"
  if (is.null(c)) {
    c <- matrix(0, if (trans_a) ncol(a) else nrow(a), if (trans_b) nrow(b) else ncol(b))
  }
  storage.mode(c) <- "double"
  .Call(C_tile_product, a, b, c, trans_a, trans_b, as.integer(threads),
        match(match.arg(path, tile_paths), tile_paths) - 1L, as.integer(symmetric))
}
