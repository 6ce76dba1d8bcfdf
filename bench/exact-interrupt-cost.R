# Does driving dsytrd's and dormtr's loops from C (with interrupt checks
# between blocks, src/eigen.c) slow the default call kpca(x) (features = 0,
# th = 1e-4, the exact solver)? Times it with two builds of fastkpca in the
# same run, alternating, each in a fresh R process:
#   Rscript bench/exact-interrupt-cost.R LIB_BEFORE LIB_AFTER [N ...] [--reps=R]
# (LIB_*: libraries where the two builds are installed). Prefix
# LD_PRELOAD=<libopenblas.so.0> to time OpenBLAS. Prints seconds and the
# after/before ratio per n, and checks that the two fits agree.
args <- commandArgs(TRUE)
reps <- 1L
if (any(grepl("^--reps=", args))) {
  reps <- as.integer(sub("^--reps=", "", grep("^--reps=", args, value = TRUE)))
  args <- args[!grepl("^--reps=", args)]
}
libs <- c(before = args[1], after = args[2])
ns <- if (length(args) > 2) as.integer(args[-(1:2)]) else c(3000L, 5000L, 8000L)
child <- tempfile(fileext = ".R")
writeLines(c(
  'a <- commandArgs(TRUE); n <- as.integer(a[1])',
  'suppressPackageStartupMessages(library(fastkpca))',
  'set.seed(1); x <- matrix(rnorm(n * 10), n, 10)',
  't <- system.time(fit <- kpca(x))[["elapsed"]]',
  'saveRDS(list(t = t, eig = fit$eig, rot = fit$rotated[, 1:min(5, ncol(fit$rotated))]), a[2])'),
  child)
run <- function(lib, n) {
  out <- tempfile(fileext = ".rds")
  old <- Sys.getenv("R_LIBS"); Sys.setenv(R_LIBS = lib); on.exit(Sys.setenv(R_LIBS = old))
  system2(file.path(R.home("bin"), "Rscript"), c(child, n, out))
  readRDS(out)
}
for (n in ns) {
  times <- list(before = numeric(), after = numeric())
  for (r in seq_len(reps)) for (b in names(libs)) {
    res <- run(libs[[b]], n)
    times[[b]] <- c(times[[b]], res$t)
    if (b == "before") ref <- res
    else {
      k <- min(length(ref$eig), length(res$eig))
      agree <- max(abs(ref$eig[1:k] - res$eig[1:k]) / ref$eig[1])
      rot <- max(abs(abs(ref$rot) - abs(res$rot))) / max(abs(ref$rot))
    }
  }
  cat(sprintf("n = %d: before %s s, after %s s, ratio of medians %.3f; components %d vs %d, eig rel diff %.1e, |rotated| rel diff %.1e\n",
              n, paste(sprintf("%.1f", times$before), collapse = "/"),
              paste(sprintf("%.1f", times$after), collapse = "/"),
              median(times$after) / median(times$before), length(ref$eig), length(res$eig),
              agree, rot))
}
