# Step 3 of the algorithm, on the R side: choosing the solver and turning
# the eigenpairs from C (src/eigen.c) into components.

# Solver codes passed to C (src/fastkpca.h).
solver_codes <- c(exact = 1L, iterative = 2L, randomized = 3L)

# Every solver a user can name ("matrix_free" runs in R/matrix_free.R, not
# on the n x n buffer).
solver_names <- c("auto", "exact", "iterative", "randomized", "matrix_free")

# The solver that `solver` means for this fit. fits: whether the n x n
# buffer fits in memory (buffer_fits()); where it does not, "auto" goes on
# without it (features > 0) and the others stop, naming the ways on.
choose_solver <- function(solver, n, features, fits = TRUE) {
  solver <- check_choice(solver, solver_names, "solver")
  if (solver %in% c("iterative", "randomized", "matrix_free") && features == 0L)
    stop_argument(sprintf("'solver = \"%s\"' needs 'features' > 0; with 'features = 0' ", solver),
                  "use \"exact\" or \"auto\"")
  if (solver == "auto" && !fits && features > 0L) return("matrix_free")
  if (solver != "matrix_free" && !fits) check_memory(n, features)
  if (solver != "auto") return(solver)
  if (auto_prefers_iterative(n, features)) "iterative" else "exact"
}

# The rule behind solver = "auto" (see ?kpca), from bench/auto-rule.R: the
# exact solver costs O(n^3) whatever the number of components, the
# iterative one about O(n^2) per matrix-vector product, with a few products
# per component. Measured, the iterative solver is faster from n = 200 up
# to features of about n / 4; below n / 8 it is faster by 1.2x (n = 800) to
# 6x (n = 1600) and more as n grows. Below 200 rows both take milliseconds.
auto_prefers_iterative <- function(n, features) {
  features > 0L && n >= 200L && features <= n / 8
}

# Codes of the exact solver's tridiagonal methods (src/fastkpca.h).
exact_method_codes <- c(bisection = 1L, mrrr = 2L)

# The tridiagonal method of the exact solver (src/eigen.c, exact_eigen).
# Both reduce Kc to tridiagonal form (dsytrd) and map the wanted vectors
# back (dormtr); they differ in how the tridiagonal problem is solved:
# "mrrr" (dstemr, what R's eigen() and so kernlab use for every vector)
# costs O(n k) for k vectors, "bisection" (dstebz + dstein, what dsyevr
# runs for a subset) up to O(n k^2) where eigenvalues cluster, as they do
# in the tail a threshold keeps. Measured with bench/exact-rule.R, MRRR is
# as fast or faster from a few components on, on the reference BLAS and on
# OpenBLAS; for a handful of components both cost the same (dsytrd is
# everything) and the dsyevr call is kept. The unexported option
# fastkpca.exact_method ("mrrr" or "bisection") overrides the rule, for the
# tests and benchmarks that compare the two; results agree to rounding.
exact_method <- function(n, features) {
  forced <- getOption("fastkpca.exact_method")
  if (!is.null(forced)) {
    if (!is.character(forced) || length(forced) != 1L ||
        !forced %in% names(exact_method_codes))
      stop_argument("option 'fastkpca.exact_method' must be \"mrrr\" or \"bisection\"")
    return(forced)
  }
  if (features == 0L || features > exact_bisection_max) "mrrr" else "bisection"
}
# The most components for which the exact solver keeps dsyevr (bisection).
exact_bisection_max <- 10L

# Settings of the solvers as the double vector C expects (src/fastkpca.h):
# for the iterative one control$tol (relative residual, default 1e-10),
# control$maxit (restarts, default 1000) and control$ncv (basis size,
# default max(20, 2 * features + 10), at most n); for the exact one the
# code of its tridiagonal method (exact_method()); for the randomized one
# control$oversample (columns beyond features, default
# randomized_oversample) and control$power (power iterations, default
# randomized_power).
solver_control <- function(control, n, features, tol = 1e-10, maxit = 1000) {
  if (is.null(control)) control <- list()
  if (!is.list(control))
    stop_argument("'control' must be a list with entries tol, maxit, ncv, oversample, power, block, landmarks")
  known <- c("tol", "maxit", "ncv", "oversample", "power", "block", "landmarks")
  unknown <- setdiff(names(control), known)
  if (length(control) > 0L && (is.null(names(control)) || any(names(control) == "")))
    stop_argument("'control' must be a named list")
  if (length(unknown) > 0L)
    stop_argument("'control' has unknown entr", if (length(unknown) > 1L) "ies " else "y ",
                  paste(dQuote(unknown, FALSE), collapse = ", "),
                  " (known: ", paste(known, collapse = ", "), ")")
  single <- function(v, what) {
    if (!is.numeric(v) || length(v) != 1L || !is.finite(v))
      stop_argument(sprintf("'control$%s' must be a single finite number", what))
    as.double(v)
  }
  tol <- single(if (is.null(control$tol)) tol else control$tol, "tol")
  if (tol <= 0 || tol >= 1)
    stop_argument("'control$tol' must be between 0 and 1")
  maxit <- single(if (is.null(control$maxit)) maxit else control$maxit, "maxit")
  top <- engine_limits()$solver_iterations
  if (maxit < 1 || maxit != round(maxit) || maxit > top)
    stop_argument("'control$maxit' must be a whole number between 1 and ", format_limit(top))
  ncv <- if (is.null(control$ncv)) min(n, max(20, 2 * features + 10))
         else single(control$ncv, "ncv")
  if (ncv != round(ncv) || ncv < min(n, features + 1) || ncv > n)
    stop_argument(sprintf("'control$ncv' must be a whole number between features + 1 and nrow(x) (%d)", n))
  whole <- function(v, default, what, upper) {
    v <- single(if (is.null(v)) default else v, what)
    if (v < 0 || v != round(v) || v > upper)
      stop_argument(sprintf("'control$%s' must be a whole number between 0 and %d", what, upper))
    v
  }
  oversample <- whole(control$oversample, min(randomized_oversample, n), "oversample", n)
  power <- whole(control$power, randomized_power, "power", 1000L)
  c(tol, maxit, ncv, exact_method_codes[[exact_method(n, features)]], oversample, power)
}

# Defaults of the randomized solver (src/randomized.c): scikit-learn's
# oversampling (10), and 7 power iterations (scikit-learn's choice for few
# components), which bring the test cases' eigenvalues within 1e-6
# relative of the exact ones (tests/testthat/test-randomized.R).
randomized_oversample <- 10L
randomized_power <- 7L

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
    stop_data("the centered kernel matrix has no positive eigenvalue: the data ",
              "are constant in feature space, or the kernel is not positive ",
              "semidefinite")
  keep <- values > zero_eigen_rtol * top
  if (!all(keep)) {
    negative <- any(values < -negative_eigen_rtol * top)
    warn_data(sprintf(
      "only %d of the %d requested components have positive eigenvalues; %s",
      sum(keep), length(keep),
      if (negative) "the kernel is not positive semidefinite on these data"
      else "the centered kernel matrix has lower rank than requested"))
  }
  # subset only when something is dropped: vectors may hold hundreds of
  # columns in threshold mode, and a subset is a copy
  if (all(keep)) return(list(values = values, vectors = vectors))
  list(values = values[keep], vectors = vectors[, keep, drop = FALSE])
}
