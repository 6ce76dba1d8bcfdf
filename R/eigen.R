# Step 3 of the algorithm, on the R side: choosing the solver and turning
# the eigenpairs from C (src/eigen.c) into components.

# Solver codes passed to C (src/fastkpca.h).
solver_codes <- c(exact = 1L, iterative = 2L)

# The solver that `solver` means for this fit.
choose_solver <- function(solver, n, features) {
  solver <- match.arg(solver, c("auto", "exact", "iterative"))
  if (solver == "iterative")
    stop("'solver = \"iterative\"' is not available yet; use \"auto\" or \"exact\"",
         call. = FALSE)
  "exact"
}

# Relative tolerance below which an eigenvalue counts as zero (the
# positive-semidefinite check of scikit-learn's KernelPCA uses the same).
zero_eigen_rtol <- 1e-12
# Relative size of a negative eigenvalue that marks a kernel as not
# positive semidefinite.
negative_eigen_rtol <- 1e-5

# Keep the leading components whose eigenvalues are safely positive. values
# (decreasing) and vectors come from C. Components with non-positive or
# negligible eigenvalues are dropped with a warning: dividing by them would
# give meaningless or infinite alphas.
positive_components <- function(values, vectors) {
  top <- if (length(values)) max(values) else 0
  if (!(top > 0))
    stop("the centered kernel matrix has no positive eigenvalue: the data ",
         "are constant in feature space, or the kernel is not positive ",
         "semidefinite", call. = FALSE)
  keep <- values > zero_eigen_rtol * top
  if (!all(keep)) {
    negative <- any(values < -negative_eigen_rtol * top)
    warning(sprintf(
      "only %d of the %d requested components have positive eigenvalues; %s",
      sum(keep), length(keep),
      if (negative) "the kernel is not positive semidefinite on these data"
      else "the centered kernel matrix has lower rank than requested"),
      call. = FALSE)
  }
  list(values = values[keep], vectors = vectors[, keep, drop = FALSE])
}

# Deterministic signs: the largest-magnitude entry of each column positive
# (the first such entry where several tie).
orient_signs <- function(vectors) {
  if (ncol(vectors) == 0L) return(vectors)
  idx <- apply(abs(vectors), 2L, which.max)
  flip <- vectors[cbind(idx, seq_len(ncol(vectors)))] < 0
  vectors[, flip] <- -vectors[, flip]
  vectors
}
