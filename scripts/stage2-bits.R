# Do the builds of every compiler give the two-stage reduction the same
# bits? One build's fits: the exact fit of kpca(x) (rbfdot, the default
# threshold; x 2100 x 10 Gaussian) in two stages (fastkpca.band_min_rows
# = 0), on two threads, under every vector path this CPU runs
# (simd_path(available = TRUE)); then the builds' fits compared with
# identical(), path by path (scripts/stage2-bits.sh runs both on the
# builds of scripts/compilers.sh).
#   R_LIBS=LIB Rscript scripts/stage2-bits.R fit OUT.rds
#   Rscript scripts/stage2-bits.R compare A.rds B.rds ...
# compare prints, per path, each build's verdict against the first
# ("same" or "DIFFERENT"), and whether the paths differ from each other
# (they should: fused or not); it exits 1 when any build differs.
args <- commandArgs(trailingOnly = TRUE)

if (length(args) == 2L && args[1L] == "fit") {
  suppressPackageStartupMessages(library(fastkpca))
  set.seed(42)
  x <- matrix(rnorm(2100 * 10), 2100, 10)
  options(fastkpca.band_min_rows = 0)
  paths <- simd_path(available = TRUE)
  fits <- lapply(setNames(paths, paths), function(p) {
    options(fastkpca.simd = p)
    stopifnot(simd_path() == p)
    f <- kpca(x, solver = "exact", threads = 2L)
    list(eig = eig(f), alpha = f$alpha)
  })
  saveRDS(list(library = find.package("fastkpca"), fits = fits), args[2L])
  cat(sprintf("stage2-bits: %s: %d components on %s\n", args[2L], length(fits[[1]]$eig),
              paste(paths, collapse = ", ")))
  quit(save = "no")
}

if (length(args) < 3L || args[1L] != "compare")
  stop("usage: Rscript scripts/stage2-bits.R fit OUT.rds | compare A.rds B.rds ...")
files <- args[-1L]
builds <- sub("[.]rds$", "", basename(files))
res <- lapply(setNames(files, builds), function(f) readRDS(f)$fits)
paths <- names(res[[1]])
differ <- 0L
cat(sprintf("stage2-bits: against %s\n", builds[1]))
for (p in paths) {
  verdict <- vapply(builds[-1], function(b) {
    same <- identical(res[[b]][[p]], res[[1]][[p]])
    if (!same) differ <<- differ + 1L
    if (same) "same" else "DIFFERENT"
  }, "")
  cat(sprintf("  %-7s %s\n", p, paste(sprintf("%s %s", builds[-1], verdict), collapse = ", ")))
}
# the paths see the switch: each pair that gives the same bits
first <- res[[1]]
for (i in seq_along(paths)) for (j in seq_along(paths)) if (i < j)
  if (identical(first[[i]], first[[j]]))
    cat(sprintf("  (%s and %s give the same bits)\n", paths[i], paths[j]))
cat(sprintf("stage2-bits: %d build-path pair(s) differ\n", differ))
quit(save = "no", status = if (differ > 0L) 1L else 0L)
