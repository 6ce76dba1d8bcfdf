# Step 3 of the algorithm, on the R side: the eigensolvers and their one
# interface. Every solver takes the operator of the fit (kernel_operator():
# Kc / n, as the rows and kernel C builds its n x n buffer from, and as
# products with the kernel matrix) and returns certified eigenpairs:
#   list(values (decreasing), vectors (unit, signs fixed), residuals,
#        angles (eigen_certificate()), colmeans, grand_mean, variance_total
#        (the centering terms), iterations, passes, history)
#   solve_eigen()         picks the solver: dense_eigen() on the buffer
#                         (exact, iterative, randomized; src/eigen.c,
#                         src/lanczos.c, src/randomized.c) or
#                         matrix_free_eigen() (R/matrix_free.R)
#   eigen_certificate()   the certificate of every fit: residuals and
#                         bounds on the eigenvectors' angles
#   positive_components() the pairs whose eigenvalues are safely positive

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
exact_method_codes <- c(bisection = 1L, mrrr = 2L, dstemr = 3L)

# The tridiagonal method of the exact solver (src/eigen.c, exact_eigen).
# Both reduce Kc to tridiagonal form (dsytrd) and map the wanted vectors
# back (dormtr); they differ in how the tridiagonal problem is solved:
# "mrrr" (dstemr's steps, what R's eigen() and so kernlab use for every
# vector, run by src/tridiagonal.c on the threads) costs O(n k) for k vectors, "bisection" (dstebz + dstein, what dsyevr
# runs for a subset) up to O(n k^2) where eigenvalues cluster, as they do
# in the tail a threshold keeps. Measured with bench/exact-rule.R, MRRR is
# as fast or faster from a few components on, on the reference BLAS and on
# OpenBLAS; for a handful of components both cost the same (dsytrd is
# everything) and the dsyevr call is kept. The tuning setting exact_method
# ("mrrr" or "bisection", R/tuning.R) overrides the rule, for the tests and
# benchmarks that compare the two; results agree to rounding. Its third
# value, "dstemr" (LAPACK's own, in one call on one thread), is the oracle
# of "mrrr"'s steps in the tests.
exact_method <- function(n, features) {
  forced <- tuning("exact_method")
  if (!is.na(forced)) return(forced)
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

# The error of a centered kernel matrix that is zero, or has no positive
# eigenvalue: the same words from every solver. detail: what showed it.
stop_no_positive_eigenvalue <- function(detail = NULL) {
  stop_data("the centered kernel matrix has no positive eigenvalue: the data ",
            "are constant in feature space, or the kernel is not positive ",
            "semidefinite", detail)
}

# Keep the leading components whose eigenvalues are safely positive. values
# (decreasing) and vectors come from a solver. Components with non-positive
# or negligible eigenvalues are dropped with a warning: dividing by them
# would give meaningless or infinite alphas. Returns list(values, vectors,
# keep), keep the indices kept.
positive_components <- function(values, vectors) {
  top <- if (length(values)) max(values) else 0
  if (!(top > 0)) stop_no_positive_eigenvalue()
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
  if (all(keep)) return(list(values = values, vectors = vectors, keep = seq_along(values)))
  list(values = values[keep], vectors = vectors[, keep, drop = FALSE], keep = which(keep))
}

# ---- the operator ----

# The operator of a fit, Kc / n with Kc = H K H and H = I - 11'/n, as the
# solvers take it:
#   x, kernel, program, weights, threads, precomputed: what C builds the
#     n x n buffer from (the dense solvers), and the rows and kernel of the
#     matrix-free solver's start and diagonal;
#   product(V): K V, the user's kernel matrix times V, or the kernel's tile
#     by tile (src/matrix_free.c), never stored: in this process, or on
#     future's workers by batches of rows when `batches` (matrix_free.R);
#   apply(V): Kc V / n, the centering implicit (centered_product());
#   close(): removes what the operator left behind (the workers' data file).
# threads is the fit's setting; on workers, by default kpca_threads()
# shared among them (chunk_threads()), unless the user gave it.
kernel_operator <- function(x, kernel, threads, batches = FALSE, threads_given = TRUE) {
  n <- NROW(x)
  if (is_precomputed(kernel)) {
    product <- function(V) x %*% V
    return(list(n = n, x = x, kernel = kernel, program = NULL, weights = NULL,
                threads = threads, precomputed = TRUE, product = product,
                apply = function(V) centered_product(product, V, threads), close = function() NULL))
  }
  weights <- kernel_weights(kernel, x)
  program <- kernel_program(kernel)
  parallel <- batches && chunks_in_parallel() && n >= 2L * matrix_free_batch_rows
  if (parallel && !threads_given) threads <- chunk_threads()
  passes <- if (parallel) matrix_free_worker_product(x, program, weights, threads)
            else list(product = function(V) kernel_block_product(x, 0L, n, program, weights,
                                                                  V, threads),
                      close = function() NULL)
  # in one process, the pass centers (centered_product()'s numbers): the
  # fit's R heap spared two n x b copies a pass, and R's collector the runs
  # they would cost
  apply <- if (parallel) function(V) centered_product(passes$product, V, threads)
           else function(V) kernel_block_product(x, 0L, n, program, weights, V, threads,
                                                 center = TRUE)
  list(n = n, x = x, kernel = kernel, program = program, weights = weights, threads = threads,
       precomputed = FALSE, product = passes$product, apply = apply, close = passes$close)
}

# Kc V / n = H K H V / n from product(V) = K V: the centering costs two
# column means, never a matrix (center_columns(), in C on the threads).
centered_product <- function(product, V, threads = 1L) {
  center_columns(product(center_columns(V, threads = threads)), nrow(V), threads)
}

# ---- the solvers ----

# The eigenpairs of the fit's Kc / n by `solver` (choose_solver()'s
# answer): `features` leading ones, or (features = 0) those above th, or
# those reaching `variance`; certified (eigen_certificate()).
solve_eigen <- function(op, solver, features, th, control, variance) {
  if (solver == "matrix_free") return(matrix_free_eigen(op, features, control))
  dense_eigen(op, solver, features, th, control, variance)
}

# The solvers on the n x n buffer (src/fit.c), in one engine call: C reads
# the points once, fills the buffer, centers it, finds the eigenpairs and
# measures each pair's residual for the certificate with one product with
# the kernel matrix: from the buffer, for the iterative and randomized
# solvers, which leave it as it was; recomputed tile by tile from the same
# points for the exact solver, whose reduction overwrote the buffer. One
# pair beyond those asked is computed when there is one: its
# value and residual bound the rest of the spectrum, which the angles of
# the last pairs need; it is not returned. step: the function C calls with
# the fraction of the fit done, at its interrupt checks (a progress bar;
# the tests count the work done after an interrupt), or NULL.
dense_eigen <- function(op, solver, features, th, control, variance,
                        step = progress_fraction(sprintf("kpca: exact fit on %d rows", op$n))) {
  n <- op$n
  settings <- solver_control(control, n, features)
  extra <- as.integer(features > 0L && features < n)
  # (the randomized solver keeps its features + oversample random columns)
  settings[[5L]] <- max(0, settings[[5L]] - extra)
  res <- engine_call(.Call(C_dense_eigen, op$x, op$program, op$weights,
                           features + extra, th, solver_codes[[solver]], op$threads,
                           settings, if (is.null(variance)) 0 else variance, step))
  stage_record$seconds <- attr(res, "stage_seconds")
  if (!res$converged)
    warn_convergence(sprintf(paste0("the iterative solver did not converge in %d restarts ",
                                    "(largest relative residual %.2g); increase control$maxit ",
                                    "or use solver = \"exact\""),
                             res$restarts, res$residual))
  if (features == 0L && length(res$values) == 0L)
    stop_data(sprintf("no eigenvalue of the centered kernel matrix exceeds 'th' (%g); ", th),
              "lower 'th', set 'features', or check the kernel parameters")
  V <- res$vectors
  # the rest of the spectrum: below the extra pair (the default), below th
  # (a threshold fit has every eigenvalue above it), or nothing (all n)
  rest <- if (extra == 0L && features == n) -Inf
          else if (features == 0L && is.null(variance)) th
  cert <- eigen_certificate(res$values, res$residual_norms, n, rest)
  asked <- seq_len(length(res$values) - (extra == 1L && length(res$values) > features))
  # (a subset is a copy of the n x k vectors: only when the extra pair is there)
  if (length(asked) < ncol(V)) V <- V[, asked, drop = FALSE]
  list(values = res$values[asked], vectors = V,
       residuals = cert$residuals[asked], angles = cert$angles[asked],
       colmeans = res$colmeans, grand_mean = res$grand_mean,
       variance_total = res$variance_total,
       iterations = if (solver == "iterative") res$restarts, passes = NULL, history = NULL)
}

# The wall seconds of each step of this process's last fit on the buffer
# (dense_eigen()'s stage clock, src/args.c: fill, center, stage1, stage2,
# tridiagonal, back_stage2, back_stage1, certificate, other), or NULL
# before the first. Internal: the benchmarks read it (bench/two-stage.R,
# bench/run.R); no fit keeps it.
stage_seconds <- function() stage_record$seconds
stage_record <- new.env(parent = emptyenv())

# ||A v - value v|| of each column of V, from AV = A V.
residual_norms <- function(V, AV, values) sqrt(colSums((AV - sweep(V, 2L, values, "*"))^2))

# ---- the certificate ----

# The certificate of eigenpairs of a symmetric n x n A (here Kc / n):
# values (decreasing; Ritz values or eigenvalues) of unit vectors v with
# residual norms ||A v - value v|| (norms), and rest, an upper bound on the
# eigenvalues of A that none of these approximates. Returns
#   residuals: norms relative to the largest |value|, which bound each
#     eigenvalue's error (relative to the largest);
#   angles: bounds on the sine of the angle between each v and the
#     eigenvector of A it approximates (Davis and Kahan's sin-theta
#     theorem: at most ||r|| / gap, gap the distance from the value to
#     every other eigenvalue of A). Every other pair's eigenvalue lies
#     within its residual of its value, and the rest lie below `rest`, so
#     gap >= min(|value - other value| - other residual, value - rest);
#     where that is not positive, the vector is not pinned down and the
#     bound is 1. Each residual counts the rounding of the product it came
#     from (eigen_rounding()) on top of its computed value: near a multiple
#     eigenvalue, where the gap is tiny, that rounding is the residual.
# rest: NULL for the smallest value plus its residual, which holds when
# the pairs approximate the leading eigenvalues, none above them missed
# (every Krylov solver's standing assumption; the dense solvers compute
# all of the leading ones); -Inf when there is no other eigenvalue.
eigen_certificate <- function(values, norms, n, rest = NULL) {
  p <- length(values)
  if (p == 0L) return(list(residuals = numeric(), angles = numeric()))
  scale <- max(abs(values), .Machine$double.xmin)
  bounds <- norms + eigen_rounding(n) * scale
  if (is.null(rest)) rest <- values[p] + bounds[p]
  gaps <- vapply(seq_len(p), function(i)
    min(abs(values[i] - values[-i]) - bounds[-i], values[i] - rest), numeric(1))
  angles <- ifelse(gaps > 0, pmin(1, bounds / pmax(gaps, .Machine$double.xmin)), 1)
  list(residuals = norms / scale, angles = angles, n = n)
}

# The rounding of a product with an n x n kernel matrix, relative to its
# largest eigenvalue: a sum of n terms per entry, with errors of random
# signs, over n entries (measured residuals of exact eigenpairs: 1e-15 to
# 1e-14 at n = 400 to 3000).
eigen_rounding <- function(n) 4 * sqrt(n) * .Machine$double.eps

# Whether each certified pair meets the tolerance: its residual does, and
# its angle does, or its residual is already at the rounding of a product
# (eigen_rounding()), where no further work can pin its vector down (its
# eigenvalue is within rounding / tol of another: the vectors of a
# multiple eigenvalue are any basis of its space, in every solver).
certificate_met <- function(cert, tol) {
  cert$residuals <= tol & (cert$angles <= tol | cert$residuals <= eigen_rounding(cert$n))
}
