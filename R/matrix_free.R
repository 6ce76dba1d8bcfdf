# Exact kernel PCA without the n x n matrix: solver = "matrix_free".
#
# The leading eigenpairs of Kc / n come from a block Krylov method with
# thick restarts (a block Davidson iteration on residuals, which spans the
# same space as block Lanczos), whose one heavy step is a pass: the kernel
# matrix times a block of vectors, computed tile by tile in C and never
# stored (kernel_block_product(), src/matrix_free.c), in this process or
# by row batches on future's workers (matrix_free_operator()). The steps:
#   matrix_free_start()     a Nystrom subspace (or random vectors) to start from
#   matrix_free_operator()  the passes: A V = H K H V / n, centering implicit
#   matrix_free_eigen()     Rayleigh-Ritz on the basis, residuals, expansion,
#                           restarts, and a last pass that certifies
#   kpca_matrix_free()      the fit, with the same fields as the exact one

#' @rdname kpca
#' @section Exact beyond memory: `solver = "matrix_free"`:
#' The exact solvers hold the n x n kernel matrix (8 n^2 bytes: 75 GiB at
#' n = 10^5). `solver = "matrix_free"` computes the same leading eigenpairs
#' of the centered kernel matrix without ever storing it. Each *pass*
#' computes the kernel matrix tile by tile and multiplies each tile by a
#' block of vectors at once. In one R process, each tile of the lower
#' triangle is computed once and used for both of its blocks of rows (the
#' kernel matrix is symmetric), so a pass costs \eqn{n^2 / 2} kernel
#' evaluations plus a small product; on future's workers, each computes the
#' rows of its batch, its own square by the same tiles. The results are
#' the same to the last bit either way. Memory is \eqn{O(n b)} for a
#' basis of b vectors (`control$ncv`) plus the tiles. Centering is
#' implicit: \eqn{K_c V = H K H V} with \eqn{H = I - 11'/n}.
#'
#' The method is a block Krylov iteration with thick restarts: starting
#' from the leading directions of a centered Nyström fit on
#' `control$landmarks` rows (cheap, and already close), it keeps
#' `control$block` Ritz vectors, adds the residuals of those not yet
#' converged as the next block (one pass each), takes Rayleigh-Ritz
#' approximations on the whole basis, and restarts from the Ritz vectors
#' when the basis reaches `control$ncv` columns. Block Lanczos-type
#' iterations converge far faster than subspace iteration for the same
#' number of passes, and a residual block needs no orthogonal polynomial
#' recurrences (LOBPCG's instability) nor a stored tridiagonal matrix.
#' It stops when every requested eigenpair's residual is at most
#' `control$tol` (default `1e-8`), then makes one more pass on the
#' returned vectors and measures the residuals there: these are stored as
#' `eig_residuals`. If that last pass does not confirm them, it goes on;
#' after `control$maxit` passes (default 100) it warns by how much it
#' missed.
#'
#' Under a parallel [future::plan()], the rows of each pass are split into
#' one batch per worker; the data go to each worker once per fit, as a file
#' in [tempdir()] (on other machines, set
#' `options(fastkpca.shared_dir = )` to a folder they all see), and the
#' block of vectors once per pass. A worker that is lost during a pass
#' (its process killed) has its batch run again, up to twice. Every row's
#' result is summed in the same order whatever the batches, so the fit is
#' the same under every plan and number of workers. `threads` is the
#' number of threads per worker (by default `kpca_threads()` divided by the
#' number of workers). One process with all the rows computes half the
#' kernel matrix; workers compute their rows less half of their own square
#' (three quarters of the matrix for 2 workers), so on one machine the
#' threads of one process are the faster way (n = 10^5: 40 s on 2 threads,
#' 49 s on 2 workers of 1 thread each); workers pay off across machines. Progress (passes and the
#' largest residual) goes through progressr.
#'
#' `solver = "auto"` chooses `"matrix_free"` when `features > 0` and the
#' n x n buffer does not fit in the available memory
#' (`options(fastkpca.memory_limit = )`, in bytes, sets that budget). With
#' `features = 0`, every eigenvalue is needed and the fit still needs the
#' buffer. The fit has `solver = "matrix_free"`, `passes` (the passes over
#' the kernel matrix, the last one included) and `residual_history` (the
#' largest residual of the requested eigenpairs after each pass); predict()
#' works as for any exact fit.
#' @name kpca
NULL

# Passes a matrix-free fit may take by default, and its default tolerance
# (the largest residual of a requested eigenpair, relative to the largest
# eigenvalue).
matrix_free_maxit <- 100L
matrix_free_tol <- 1e-8

# The settings of the matrix-free solver: tol, maxit (passes), block (Ritz
# vectors kept: features plus a few that speed up the convergence of the
# last requested ones), ncv (the largest basis) and landmarks (of the
# Nystrom start; 0 for random vectors).
matrix_free_control <- function(control, n, features) {
  shared <- solver_control(control, n, features, tol = matrix_free_tol,
                           maxit = matrix_free_maxit)
  block <- if (is.null(control$block)) min(n - 1L, features + max(5L, min(features, 20L)))
           else check_whole(control$block, "control$block", features, n - 1L,
                            lo_label = "features", hi_label = "nrow(x) - 1")
  ncv <- if (is.null(control$ncv)) min(n - 1L, 4L * block)
         else check_whole(control$ncv, "control$ncv", block + 1L, n - 1L,
                          lo_label = "control$block + 1", hi_label = "nrow(x) - 1")
  landmarks <- if (is.null(control$landmarks)) min(n, max(300L, 10L * block))
               else check_whole(control$landmarks, "control$landmarks", 0, n,
                                hi_label = "nrow(x)")
  if (shared[[2L]] < 2)
    stop_argument("'control$maxit' must be at least 2 for solver = \"matrix_free\" (the last ",
                  "pass certifies the eigenpairs)")
  list(tol = shared[[1L]], maxit = as.integer(shared[[2L]]), block = as.integer(block),
       ncv = as.integer(ncv), landmarks = as.integer(landmarks))
}

# The fit: the eigenpairs from matrix_free_eigen(), the centering terms
# from the first pass, the components and the fit as the exact solver's.
kpca_matrix_free <- function(x, kernel, features, th, threads, control, call, removed,
                             scaling, threads_given = TRUE) {
  n <- NROW(x)
  if (is_precomputed(kernel))
    stop_argument("solver = \"matrix_free\" needs the data rows: a precomputed kernel matrix ",
                  "is stored already; use solver = \"exact\" or \"iterative\"")
  settings <- matrix_free_control(control, n, features)
  weights <- kernel_weights(kernel, x)
  # on future's workers, threads per worker: by default kpca_threads()
  # shared among them, as for chunks (chunk_threads())
  if (!threads_given && chunks_in_parallel()) threads <- chunk_threads()
  op <- matrix_free_operator(x, kernel, weights, threads)
  on.exit(op$close())
  start <- matrix_free_start(x, kernel, op$program, settings, op$threads)
  sol <- matrix_free_eigen(op, start, n, features, settings)
  res <- list(values = sol$values, vectors = sol$vectors)
  comp <- exact_components(res, n, th, features, row_labels(x), removed)
  colmeans <- sol$colmeans
  grand_mean <- mean(colmeans)
  diagonal <- kernel_self(x, kernel)
  validate_fastkpca_exact(new_fastkpca_exact(
    alpha = comp$alpha, eig = comp$eig, rotated = comp$rotated, kernel = kernel,
    kpar = kernel_kpar(kernel), features = features, th = th, threads = op$threads,
    variance_total = mean(diagonal) - grand_mean, center = scaling$center,
    scale = scaling$scale, call = call, na.action = removed, xmatrix = x,
    kernel_weights = weights, kernel_colmeans = colmeans, kernel_mean = grand_mean,
    solver = "matrix_free", iterations = NULL, variance = NULL,
    eig_residuals = stats::setNames(sol$residuals[seq_along(comp$eig)], names(comp$eig)),
    passes = sol$passes, residual_history = sol$history))
}

# ---- the passes ----

# K[rows, ] V for the rows row0 + 1, ..., row0 + nrow of x (in C).
kernel_block_product <- function(x, row0, nrow, program, weights, V, threads) {
  engine_call(.Call(C_kernel_block_product, x, as.integer(row0), as.integer(nrow), program,
                    weights, V, as.integer(threads)))
}

# The operator of a fit: list(apply = function(V) Kc V / n, product =
# function(V) K V, program (the kernel's), threads, close). In this process, one .Call per pass;
# under a parallel plan, one batch of rows per worker, the data written
# once to a file the workers read (and keep, keyed by its path) and the
# block of vectors sent with each pass.
matrix_free_operator <- function(x, kernel, weights, threads) {
  n <- NROW(x)
  program <- kernel_program(kernel)
  parallel <- chunks_in_parallel() && n >= 2L * matrix_free_batch_rows
  product <- if (!parallel) {
    function(V) kernel_block_product(x, 0L, n, program, weights, V, threads)
  } else {
    path <- tempfile("fastkpca-rows-", tmpdir = matrix_free_shared_dir(), fileext = ".rds")
    saveRDS(list(x = x, program = program, weights = weights), path)
    batches <- matrix_free_batches(n, future::nbrOfWorkers())
    function(V) {
      out <- run_on_workers(batches, matrix_free_batch,
                            list(path = path, V = V, threads = threads),
                            function(i) sprintf("batch %d (rows %d to %d) of the pass", i,
                                                batches[[i]]$row0 + 1L,
                                                batches[[i]]$row0 + batches[[i]]$nrow))
      do.call(rbind, out)
    }
  }
  list(product = product, program = program, threads = threads,
       apply = function(V) centered_product(product, V),
       close = function() if (parallel) unlink(path))
}

# Kc V / n = H K H V / n from product(V) = K V, H = I - 11'/n: the
# centering costs two column means, never a matrix.
centered_product <- function(product, V) {
  P <- product(sweep(V, 2L, colMeans(V)))
  sweep(P, 2L, colMeans(P)) / nrow(V)
}

# The certificate of eigenpairs (values, unit vectors V): the residual
# ||Kc v / n - value v|| of each, relative to the largest value, from one
# product with the kernel matrix. Every solver's fit keeps it
# (eig_residuals).
eigen_residuals <- function(product, values, V) {
  R <- centered_product(product, V) - sweep(V, 2L, values, "*")
  sqrt(colSums(R^2)) / max(values)
}

# Rows per batch are a multiple of this (so batches align with the C
# code's blocks, although the results do not depend on it).
matrix_free_batch_rows <- 256L

# Contiguous row ranges, one per worker: list(row0, nrow) each.
matrix_free_batches <- function(n, workers) {
  units <- ceiling(n / matrix_free_batch_rows)
  per <- ceiling(units / max(1L, min(workers, units)))
  starts <- seq(0L, n - 1L, by = per * matrix_free_batch_rows)
  lapply(starts, function(s) list(row0 = as.integer(s),
                                  nrow = as.integer(min(n - s, per * matrix_free_batch_rows))))
}

# Where the data file of a parallel fit goes: the option
# fastkpca.shared_dir (a folder every worker sees), else tempdir().
matrix_free_shared_dir <- function() {
  dir <- getOption("fastkpca.shared_dir")
  if (is.null(dir)) return(tempdir())
  if (!is.character(dir) || length(dir) != 1L || is.na(dir) || !dir.exists(dir))
    stop_argument("option 'fastkpca.shared_dir' must name an existing folder")
  dir
}

# The data of the fit a worker is serving, read once per fit.
matrix_free_cache <- new.env(parent = emptyenv())

# One batch, on a worker (or here): K[rows, ] V.
matrix_free_batch <- function(batch, args) {
  if (!identical(matrix_free_cache$path, args$path)) {
    data <- tryCatch(readRDS(args$path), error = function(e)
      stop_worker(sprintf(paste0("a worker cannot read the fit's data file %s (%s); on other ",
                                 "machines, set options(fastkpca.shared_dir = ) to a folder ",
                                 "they all see"), args$path, conditionMessage(e))))
    matrix_free_cache$data <- data
    matrix_free_cache$path <- args$path
  }
  data <- matrix_free_cache$data
  kernel_block_product(data$x, batch$row0, batch$nrow, data$program, data$weights,
                       args$V, args$threads)
}

# ---- the solver ----

# The first basis: the leading directions of a centered Nystrom fit on
# settings$landmarks uniform rows (cheap beside one pass, and close to the
# answer), filled up with random vectors; R's generator, so set.seed()
# makes the fit reproducible.
matrix_free_start <- function(x, kernel, program, settings, threads) {
  n <- NROW(x)
  p <- settings$block
  V <- NULL
  if (settings$landmarks > p) {
    rows <- take_rows(x, sample.int(n, settings$landmarks))
    V <- tryCatch(suppressWarnings({
      basis <- nystrom_landmark_basis(rows, kernel, 1L, threads, program)
      stats <- nystrom_statistics(x, basis, kernel, threads, program)
      res <- nystrom_solve(stats, basis, min(p, basis$rank), 0)
      nystrom_score_rows(x, basis, kernel, res$alpha, res$mu, threads, program)
    }), error = function(e) NULL)
  }
  missing <- p - if (is.null(V)) 0L else ncol(V)
  if (missing > 0L) V <- cbind(V, matrix(stats::rnorm(n * missing), n, missing))
  orthonormal_columns(sweep(V, 2L, colMeans(V)))
}

# The leading eigenpairs of A = Kc / n from the start X (n x p,
# orthonormal, orthogonal to 1). Returns list(values, vectors (unit),
# residuals (of the last pass), passes, history, colmeans (of K)).
matrix_free_eigen <- function(op, X, n, k, settings) {
  p <- ncol(X)
  progress <- matrix_free_progress(settings$maxit)
  # the first pass also gives the kernel's row means (a column of ones)
  P <- op$product(cbind(sweep(X, 2L, colMeans(X)), 1))
  colmeans <- P[, p + 1L] / n
  AX <- sweep(P[, seq_len(p), drop = FALSE], 2L,
              colMeans(P[, seq_len(p), drop = FALSE])) / n
  rm(P)
  basis <- krylov_basis(X, AX, settings$ncv)
  passes <- 1L
  stalled <- FALSE
  history <- numeric()
  repeat {
    rr <- rayleigh_ritz(basis, p)
    top <- max(rr$values[1L], .Machine$double.xmin)
    res <- rr$norms / top
    if (!stalled) {  # (a stalled basis is examined again without a pass)
      history <- c(history, max(res[seq_len(k)]))
      progress(passes, history[length(history)])
    }
    done <- all(res[seq_len(k)] <= settings$tol)
    # the certifying pass counts among the maxit
    if (done || stalled || passes >= settings$maxit - 1L) {
      # the certificate: the returned vectors times A in a pass of their own
      V <- rr$X[, seq_len(k), drop = FALSE]
      AV <- op$apply(V)
      passes <- passes + 1L
      theta <- colSums(V * AV)
      cert <- sqrt(colSums((AV - sweep(V, 2L, theta, "*"))^2)) / max(theta)
      history <- c(history, max(cert))
      progress(passes, max(cert))
      if (all(cert <= settings$tol) || stalled || passes >= settings$maxit) {
        if (!all(cert <= settings$tol))
          warn_convergence(sprintf(paste0("the matrix-free solver did not reach control$tol (%g) ",
                                          "in %d passes: the largest residual is %.2g, %.3g times ",
                                          "the tolerance; increase control$maxit or control$ncv"),
                                   settings$tol, passes, max(cert), max(cert) / settings$tol))
        return(list(values = theta, vectors = oriented_columns(V), residuals = cert,
                    passes = passes, history = history, colmeans = colmeans))
      }
      rr$AX[, seq_len(k)] <- AV
      rr$R[, seq_len(k)] <- AV - sweep(V, 2L, theta, "*")
      res[seq_len(k)] <- cert
    }
    active <- which(res > settings$tol)
    if (basis$used + length(active) > settings$ncv)
      basis <- krylov_basis(rr$X, rr$AX, settings$ncv)
    W <- orthonormal_columns(sweep(rr$R[, active, drop = FALSE], 2L,
                                   colMeans(rr$R[, active, drop = FALSE])), basis)
    if (ncol(W) == 0L) {
      # nothing new is left of the residuals (they lie in the basis, to
      # rounding): certify what there is, and warn if it misses tol
      stalled <- TRUE
      next
    }
    basis <- krylov_add(basis, W, op$apply(W))
    passes <- passes + 1L
  }
}

# A basis Q with A Q, and H = Q'AQ, kept in preallocated n x ncv matrices
# (filled column by column, not regrown).
krylov_basis <- function(X, AX, ncv) {
  n <- nrow(X)
  p <- ncol(X)
  Q <- matrix(0, n, ncv)
  AQ <- matrix(0, n, ncv)
  Q[, seq_len(p)] <- X
  AQ[, seq_len(p)] <- AX
  H <- crossprod(X, AX)
  list(Q = Q, AQ = AQ, H = (H + t(H)) / 2, used = p)
}

krylov_add <- function(basis, W, AW) {
  old <- seq_len(basis$used)
  new <- basis$used + seq_len(ncol(W))
  basis$Q[, new] <- W
  basis$AQ[, new] <- AW
  Q_old <- basis$Q[, old, drop = FALSE]
  cross <- (crossprod(Q_old, AW) + t(crossprod(W, basis$AQ[, old, drop = FALSE]))) / 2
  WAW <- crossprod(W, AW)
  basis$H <- rbind(cbind(basis$H, cross), cbind(t(cross), (WAW + t(WAW)) / 2))
  basis$used <- max(new)
  basis
}

# Rayleigh-Ritz on the basis: the p leading Ritz values, vectors X, AX,
# the residuals R = AX - X diag(values) and their norms.
rayleigh_ritz <- function(basis, p) {
  used <- seq_len(basis$used)
  e <- eigen(basis$H, symmetric = TRUE)
  Y <- e$vectors[, seq_len(p), drop = FALSE]
  X <- basis$Q[, used, drop = FALSE] %*% Y
  AX <- basis$AQ[, used, drop = FALSE] %*% Y
  values <- e$values[seq_len(p)]
  R <- AX - sweep(X, 2L, values, "*")
  list(values = values, X = X, AX = AX, R = R, norms = sqrt(colSums(R^2)))
}

# The columns of W made orthonormal, and orthogonal to the basis's (two
# rounds of classical Gram-Schmidt against it, then a QR inside); columns
# that nothing new is left of are dropped.
orthonormal_columns <- function(W, basis = NULL) {
  norms <- sqrt(colSums(W^2))
  if (!is.null(basis)) {
    Q <- basis$Q[, seq_len(basis$used), drop = FALSE]
    for (round in 1:2) W <- W - Q %*% crossprod(Q, W)
  }
  if (ncol(W) == 0L) return(W)
  qrw <- qr(W, LAPACK = FALSE, tol = 1e-10)
  r <- abs(diag(qr.R(qrw)))
  keep <- r > 1e-10 * pmax(norms, .Machine$double.xmin)
  Qw <- qr.Q(qrw)[, seq_len(qrw$rank), drop = FALSE]
  Qw[, keep[qrw$pivot[seq_len(qrw$rank)]], drop = FALSE]
}

# The sign rule of every fit (orient_columns() in src/eigen.c), on a copy.
oriented_columns <- function(V) .Call(C_oriented_columns, V)

# progressr's progress of the passes (R/progress.R): one step per pass,
# the message the largest residual so far; nothing where progress is off.
matrix_free_progress <- function(maxit, envir = parent.frame()) {
  p <- progress_for(maxit, "matrix-free kernel PCA: first pass", envir)
  function(pass, residual)
    progress_signal(p, sprintf("pass %d, largest residual %.2g", pass, residual))
}
