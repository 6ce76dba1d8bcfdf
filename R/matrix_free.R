# Exact kernel PCA without the n x n matrix: solver = "matrix_free".
#
# The leading eigenpairs of Kc / n come from a block Krylov method with
# thick restarts (a block Davidson iteration on residuals, which spans the
# same space as block Lanczos), whose one heavy step is a pass: the kernel
# matrix times a block of vectors, computed tile by tile in C and never
# stored (kernel_block_product(), src/matrix_free.c), in this process or
# shared among future's workers (matrix_free_worker_product()): half the
# kernel matrix per pass either way, with the same bits. It is
# one of the solvers of R/eigen.R: it takes the fit's operator
# (kernel_operator()) and returns certified eigenpairs. The steps:
#   matrix_free_start()       a Nystrom subspace (or random vectors) to start from
#   matrix_free_first_pass()  A X, and the kernel's column means and trace;
#                             a centered kernel that is zero ends here
#   rayleigh_ritz()           the Ritz pairs of the basis, their certificate
#   matrix_free_expand()      the residuals not yet small enough, one pass
#   matrix_free_certify()     a last pass on the returned vectors

#' @rdname kpca
#' @section Exact beyond memory: `solver = "matrix_free"`:
#' The exact solvers hold the n x n kernel matrix (8 n^2 bytes: 75 GiB at
#' n = 10^5). `solver = "matrix_free"` computes the same leading eigenpairs
#' of the centered kernel matrix without ever storing it. Each *pass*
#' computes the kernel matrix tile by tile and multiplies each tile by a
#' block of vectors at once. Each tile of the lower triangle is computed
#' once and used for both of its blocks of rows (the kernel matrix is
#' symmetric), so a pass costs \eqn{n^2 / 2} kernel evaluations plus a small
#' product, in one R process or shared among future's workers. The results
#' are the same to the last bit either way. Memory is \eqn{O(n b)} for a
#' basis of b vectors (`control$ncv`) plus the tiles (under workers, the calling
#' process also holds their partial products, up to 8 n b numbers per
#' pass). Centering is
#' implicit: \eqn{K_c V = H K H V} with \eqn{H = I - 11'/n}. The steps
#' between the passes (the Nyström start's products, Rayleigh-Ritz, each
#' new block made orthonormal against the basis, the centering of each
#' product) are \eqn{O(n b^2)} dense work in C, in the calling process; they
#' run on the fit's `threads` too where a step has the work for them (from
#' about 10^6 multiply-adds), and give the
#' same bits on any number of threads.
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
#' Each eigenpair is certified twice: its residual
#' \eqn{\|K_c v / n - \lambda v\|}{||Kc v / n - eig v||} relative to the
#' largest eigenvalue bounds the eigenvalue's error (`eig_residuals`), and
#' the residual divided by the gap between its eigenvalue and every other
#' bounds the sine of the angle between its vector and the exact one
#' (`eig_angles`, Davis and Kahan's sin-theta theorem). The gap counts the
#' other computed eigenvalues, each up to its residual, and the part of the
#' spectrum not computed, which lies below the smallest Ritz value of the
#' block plus its residual (the assumption of every Krylov method: no
#' leading eigenvalue was missed). It stops when every requested
#' eigenpair's residual and angle bound are at most `control$tol` (default
#' `1e-8`; an angle is left as it is once its residual is at the rounding
#' level, as for a multiple eigenvalue, whose vectors are any basis of its
#' space), then makes one more pass on the returned vectors and measures
#' both there. If that last pass does not confirm them, it goes on; after
#' `control$maxit` passes (default 100) it warns by how much it missed.
#'
#' A centered kernel matrix that is zero (every row alike in feature space:
#' constant rows, or a kernel that gives 1 everywhere) is found before the
#' passes, or from the first one, and ends with the error the exact solver
#' gives; a kernel of lower rank than `features` gives the exact solver's
#' warning and the components there are.
#'
#' Under a parallel [future::plan()], each pass is split into one
#' batch per worker. For a kernel of an inner product or a distance (one
#' base kernel), the rows and columns are cut into groups (8, growing with
#' n from 32769 rows to 64 from 258049), and each worker computes an even
#' share of the pairs of groups, in blocks of pairs, each pair's kernel
#' values once for the rows of both groups: the workers compute half the
#' kernel matrix between them, as one process does. Each worker sends back
#' one sum per row of each of its blocks, and the blocks are as few as
#' even shares allow (within 4% where the pairs allow it; at 10^6 rows,
#' within 5% for every number of workers up to 128). Other kernels
#' (anovadot, sums, products, conformal and string kernels) split the rows,
#' each worker computing its rows whole. The data go to each worker once per
#' fit, as a file in [tempdir()] (on other machines, set
#' `options(fastkpca.shared_dir = )` to a folder they all see), and the
#' block of vectors once per pass. A worker that is lost during a pass
#' (its process killed) is replaced: once the pass's other batches are
#' back, the plan's workers are started again (future's `resetWorkers()`
#' where it serves the backend, else the plan set again) and the batch
#' runs again, up to twice; a batch that no renewed worker takes (a
#' cluster made by the user, which cannot be renewed) runs in the calling
#' process. The fit is the same as without the loss, under future.batchtools
#' and future.mirai too: a batchtools job that batchtools finds expired
#' (ended with no result: killed) is lost, while an error of the batch's
#' own code stops the fit, as everywhere; future.mirai's futures, which can
#' stay unresolved for ever when a daemon is killed just as a batch reaches
#' it, are waited for by polling, and one still unresolved once mirai's
#' dispatcher has held no task for 2 seconds is lost. Every entry of a
#' pass is summed in the same order whatever the batches (a row's sums
#' over the groups of columns, added in a binary tree over the groups,
#' fixed by n), so the fit is the same under every plan and number of
#' workers, and in one process.
#' `threads` is the number of threads per worker (by default
#' `kpca_threads()` divided by the number of workers). 2 workers of 1
#' thread each do the work of one process on 2 threads; workers pay off
#' across machines (below 32769 rows, with 36 pairs of groups, the shares
#' are even for up to about 8 workers). Progress (passes and the
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

# ---- the passes ----

# K[rows, ] V for the rows row0 + 1, ..., row0 + nrow of x (in C). tile:
# the rows and columns of the symmetric product's tiles (the numbers do
# not depend on it); center: (all rows only) the centered H K H V / n,
# centered_product()'s numbers without its two n x b copies; count: keep
# the attribute kernel_values, the kernel values the call computed; step:
# NULL, or a function C calls after each of its interrupt checks (the
# tests count the work done after one).
kernel_block_product <- function(x, row0, nrow, program, weights, V, threads,
                                 tile = matrix_free_tile, center = FALSE, count = FALSE,
                                 step = NULL) {
  # the attribute dropped within engine_call(), where Y has one reference:
  # outside, its promise holds a second one, and R would copy Y to drop it
  engine_call({
    Y <- .Call(C_kernel_block_product, x, as.integer(row0), as.integer(nrow), program, weights,
               V, as.integer(threads), as.integer(tile), isTRUE(center), step)
    if (!count) attr(Y, "kernel_values") <- NULL
    Y
  })
}

# The rows and columns of a tile of the symmetric products.
matrix_free_tile <- 256L

# A worker's share of a pass (in C): for each block of pairs of groups of
# pairs (a 3-row integer matrix: level, i, j, from matrix_free_schedule()),
# its rows' node sums (2 per block; the second NULL for a block within a
# node), with the attribute kernel_values.
kernel_pair_products <- function(x, pairs, program, weights, V, threads,
                                 tile = matrix_free_tile) {
  engine_call(.Call(C_kernel_pair_products, x, pairs, program, weights, V,
                    as.integer(threads), as.integer(tile)))
}

# The 0-based first rows of the groups of n rows, and n (src/matrix_free.c):
# 8 to 64 groups as n grows, placed by n alone.
matrix_free_groups <- function(n) engine_call(.Call(C_matrix_free_groups, as.integer(n)))

# Whether the kernel's passes share the tiles of the lower triangle on the
# rows x: dense rows (one base kernel of an inner product or a distance,
# src/kernel_fast.c) or sparse rows (any single base kernel but besseldot,
# src/sparse_tiles.c, src/sparse_columns.c); C reads the kind from x.
kernel_shares_tiles <- function(program, x) {
  engine_call(.Call(C_kernel_shares_tiles, program, x))
}

# K V on future's workers (run_on_workers(), R/workers.R): the data
# written once to a file the workers read (and keep, keyed by its path),
# the block of vectors sent with each pass. For a kernel that shares tiles,
# each worker computes a share of the pairs of row groups
# (matrix_free_schedule()), half the kernel matrix between them, and the
# group sums come back to be added here (matrix_free_fold()); for another,
# a batch of whole rows per worker. Returns list(product, close); close()
# removes the file.
matrix_free_worker_product <- function(x, program, weights, threads) {
  path <- tempfile("fastkpca-rows-", tmpdir = matrix_free_shared_dir(), fileext = ".rds")
  saveRDS(list(x = x, program = program, weights = weights), path)
  n <- NROW(x)
  shared <- kernel_shares_tiles(program, x)
  batches <- if (shared) lapply(matrix_free_schedule(n, future::nbrOfWorkers()),
                                function(pairs) list(pairs = pairs))
             else matrix_free_batches(n, future::nbrOfWorkers())
  label <- function(i) {
    if (shared) return(sprintf("batch %d (%d blocks of pairs of row groups) of the pass", i,
                               ncol(batches[[i]]$pairs)))
    sprintf("batch %d (rows %d to %d) of the pass", i, batches[[i]]$row0 + 1L,
            batches[[i]]$row0 + batches[[i]]$nrow)
  }
  list(product = function(V) {
         out <- run_on_workers(batches, "matrix_free_batch",
                               list(path = path, V = V, threads = threads), label)
         if (shared) matrix_free_fold(n, ncol(V), batches, out) else do.call(rbind, out)
       },
       close = function() unlink(path))
}

# The blocks of pairs of row groups shared among the workers, so that each
# computes about as many kernel values as the others, in as few blocks as
# that allows: from the root's block (every pair), the blocks costlier than
# a target are split into their children (a block within a node: the
# blocks within its two children and the one between them; a block between
# two nodes: the four between their children), the target halving, until
# the costliest first, each to the worker with the least so far, give
# shares within matrix_free_spread of each other, or every block is a
# single pair. A block costs its kernel values (a pair the product of its
# groups' rows, a group's square half its own). A list of 3-row integer
# matrices (level, i, j: the blocks of src/matrix_free.c's tree), one per
# worker given blocks. Which worker computes what does not change the
# numbers; the fewer the blocks, the fewer node sums the workers send back.
matrix_free_schedule <- function(n, workers) {
  starts <- as.double(matrix_free_groups(n))
  root <- ceiling(log2(length(starts) - 1L))
  cost <- function(b) matrix_free_block_values(starts, b)
  children <- function(b) {
    L <- b[1L] - 1
    i <- b[2L]
    j <- b[3L]
    kids <- if (i == j) list(c(L, 2 * i, 2 * i), c(L, 2 * i + 1, 2 * i),
                             c(L, 2 * i + 1, 2 * i + 1))
            else list(c(L, 2 * i, 2 * j), c(L, 2 * i, 2 * j + 1), c(L, 2 * i + 1, 2 * j),
                      c(L, 2 * i + 1, 2 * j + 1))
    Filter(function(k) matrix_free_node_rows(starts, k[1L], k[2L]) > 0, kids)
  }
  workers <- max(1L, workers)
  lpt <- function(costs) {
    load <- numeric(workers)
    owner <- integer(length(costs))
    for (p in order(-costs)) {
      w <- which.min(load)
      owner[p] <- w
      load[w] <- load[w] + costs[p]
    }
    list(owner = owner, load = load)
  }
  blocks <- list(c(root, 0, 0))
  costs <- cost(blocks[[1L]])
  target <- sum(costs) / workers
  repeat {
    shares <- lpt(costs)
    if (max(shares$load) <= matrix_free_spread * min(shares$load)) break
    split <- which(vapply(blocks, function(b) b[1L] > 0, TRUE) & costs > target)
    if (!length(split)) {
      if (!any(vapply(blocks, function(b) b[1L] > 0, TRUE))) break
      target <- target / 2
      next
    }
    while (length(split)) {
      kids <- unlist(lapply(blocks[split], children), recursive = FALSE)
      blocks <- c(blocks[-split], kids)
      costs <- c(costs[-split], vapply(kids, cost, 0))
      split <- which(vapply(blocks, function(b) b[1L] > 0, TRUE) & costs > target)
    }
    target <- target / 2
  }
  owner <- shares$owner
  out <- lapply(seq_len(workers), function(w) {
    m <- matrix(as.integer(unlist(blocks[owner == w])), nrow = 3L)
    dimnames(m) <- NULL
    m
  })
  out[vapply(out, ncol, 1L) > 0L]
}

# The rows of node (L, i) of the tree over the groups whose first rows,
# and n, are starts (matrix_free_groups(); mf_node_groups() in
# src/matrix_free.c): 0 where the node holds no group.
matrix_free_node_rows <- function(starts, L, i) {
  G <- length(starts) - 1L
  starts[min((i + 1) * 2^L, G) + 1L] - starts[min(i * 2^L, G) + 1L]
}

# The kernel values of the block b = c(L, i, j) of matrix_free_schedule():
# the pairs between nodes i and j (the product of their rows), or within
# node i (j = i: each group's square half its own, (m^2 + m) / 2 for its m
# rows).
matrix_free_block_values <- function(starts, b) {
  m <- matrix_free_node_rows(starts, b[1L], b[2L])
  if (b[2L] != b[3L]) m * matrix_free_node_rows(starts, b[1L], b[3L]) else (m^2 + m) / 2
}

# The largest share of a pass over the smallest that matrix_free_schedule()
# accepts.
matrix_free_spread <- 1.04

# K V (n x b) from the workers' node sums (values[[i]] from the blocks of
# batches[[i]]): each group of rows gets its node sums added in the tree
# of the groups, as all_rows_product() in src/matrix_free.c adds them: the
# same bits as one process. Added in C.
matrix_free_fold <- function(n, b, batches, values) {
  blocks <- do.call(cbind, lapply(batches, function(batch) batch$pairs))
  sums <- do.call(c, lapply(values, function(v) { attributes(v) <- NULL; v }))
  engine_call(.Call(C_matrix_free_fold, as.integer(n), as.integer(b), blocks, sums))
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

# One batch, on a worker (or here): its pairs' group sums
# (kernel_pair_products()), or K[rows, ] V for a batch of rows.
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
  if (!is.null(batch$pairs))
    return(kernel_pair_products(data$x, batch$pairs, data$program, data$weights, args$V,
                                args$threads))
  kernel_block_product(data$x, batch$row0, batch$nrow, data$program, data$weights,
                       args$V, args$threads)
}

# ---- the solver ----

# The solver of R/eigen.R's interface: the `features` leading eigenpairs
# of op's Kc / n, certified (eigen_certificate()), without the n x n
# matrix. The state of the iteration is one list, `run` (matrix_free_run());
# each step below takes it and returns it.
matrix_free_eigen <- function(op, features, control) {
  if (op$precomputed)
    stop_argument("solver = \"matrix_free\" needs the data rows: a precomputed kernel matrix ",
                  "is stored already; use solver = \"exact\" or \"iterative\"")
  settings <- matrix_free_control(control, op$n, features)
  # rows all alike: K is constant and Kc zero whatever the kernel, known
  # before any pass
  if (rows_alike(op$x)) stop_no_positive_eigenvalue(" (every row of 'x' is the same)")
  settings$features <- features
  settings$threads <- op$threads
  settings$progress <- matrix_free_progress(settings$maxit)
  X <- matrix_free_start(op, settings)
  run <- matrix_free_run(X, matrix_free_first_pass(op, X), settings)
  repeat {
    run <- matrix_free_iterate(op, run, settings)
    # the start's Ritz pairs come from the first pass itself: certified
    if (run$fresh) break
    run <- matrix_free_certify(op, run, settings)
    if (all(run$cert$met) || run$last) break
  }
  matrix_free_result(run, settings)
}

# The state of an iteration: the basis, its Ritz pairs (rr) and their
# certificate (cert); passes so far, the largest residual after each
# (history) and the largest one not met (pending); fresh: the basis is the
# start, whose products one pass computed; last: no pass is left for more
# than the certificate (maxit, a stalled basis, rounding).
matrix_free_run <- function(X, first, settings) {
  list(basis = krylov_basis(X, first$AX, settings$ncv, settings$threads), block = ncol(X),
       first = first,
       rr = NULL, cert = NULL, passes = 1L, history = numeric(), pending = numeric(),
       fresh = TRUE, last = FALSE)
}

# Rayleigh-Ritz and expansion, pass after pass, until the Ritz pairs'
# certificate is met or passes run out (the certifying pass counts among
# maxit).
matrix_free_iterate <- function(op, run, settings) {
  repeat {
    run <- matrix_free_ritz(run, settings)
    run$last <- run$last || at_rounding_floor(run, settings) ||
      run$passes >= settings$maxit - as.integer(!run$fresh)
    if (all(run$cert$met) || run$last) return(run)
    grown <- matrix_free_expand(op, run$basis, run$rr, run$cert$active, settings$ncv)
    # nothing new left of the residuals (they lie in the basis, to rounding)
    if (is.null(grown)) {
      run$last <- TRUE
      return(run)
    }
    run$basis <- grown
    run$passes <- run$passes + 1L
    run$fresh <- FALSE
  }
}

# The Ritz pairs of the basis and their certificate; after a pass, its
# record (history, pending, progress).
matrix_free_ritz <- function(run, settings) {
  run$rr <- rayleigh_ritz(run$basis, run$block, settings$threads)
  run$cert <- pair_certificate(run$rr$values, run$rr$norms, nrow(run$rr$X),
                               settings$features, settings$tol)
  if (length(run$history) < run$passes) run <- matrix_free_record(run, settings)
  run
}

matrix_free_record <- function(run, settings) {
  run$history <- c(run$history, run$cert$largest)
  run$pending <- c(run$pending, run$cert$pending)
  settings$progress(run$passes, run$cert$largest)
  run
}

# The first basis: the leading directions of a centered Nystrom fit on
# settings$landmarks uniform rows (cheap beside one pass, and close to the
# answer), filled up to settings$block with random vectors; R's generator,
# so set.seed() makes the fit reproducible. Orthonormal and orthogonal to
# 1; random columns are drawn again for those that are not independent
# (a Nystrom fit of lower rank than the block, on data with few distinct
# rows).
matrix_free_start <- function(op, settings) {
  n <- op$n
  p <- settings$block
  V <- matrix(0, n, 0L)
  if (settings$landmarks > p) {
    scores <- tryCatch(suppressWarnings(matrix_free_nystrom(op, p, settings$landmarks)),
                       error = function(e) NULL)
    if (!is.null(scores)) V <- orthonormal_columns(scores, NULL, op$threads, center = TRUE)
  }
  for (round in 1:3) {
    missing <- p - ncol(V)
    if (missing <= 0L) break
    R <- matrix(stats::rnorm(n * missing), n, missing)
    V <- cbind(V, orthonormal_columns(R, list(Q = V, used = ncol(V)), op$threads,
                                      center = TRUE))
  }
  V
}

# The scores of the rows of op on the p leading components of a centered
# Nystrom fit on `landmarks` uniform rows: R/nystrom.R's steps, with
# nystrom_solve()'s products on the tiles and the fit's threads
# (dense_product()) and only the p leading eigenpairs of its covariance
# (top_eigen_pairs()); the scale of the coefficients, which the start does
# not need, as a Nystrom fit's.
matrix_free_nystrom <- function(op, p, landmarks) {
  threads <- op$threads
  rows <- take_rows(op$x, sample.int(op$n, landmarks))
  basis <- nystrom_landmark_basis(rows, op$kernel, 1L, threads, op$program)
  stats <- nystrom_statistics(op$x, basis, op$kernel, threads, op$program)
  n <- stats$n
  dev <- stats$sums / n
  Tm <- basis$basis
  C <- dense_product(Tm, dense_product(stats$cross / n - tcrossprod(dev), Tm, FALSE, threads),
                     TRUE, threads)
  C <- (C + t(C)) / 2
  e <- top_eigen_pairs(C, min(p, basis$rank))
  comp <- positive_components(e$values, e$vectors)
  nystrom_score_rows(op$x, basis, op$kernel, nystrom_alpha(Tm, comp$vectors, n),
                     nystrom_mu(stats), threads, op$program)
}

# The first pass: A X, and with a column of ones the kernel's column
# means, hence the centering terms and trace(Kc) / n (with the diagonal).
# A centered kernel that is zero to rounding (its trace and A X within
# flat_constant_share of the diagonal, R/diagnostics.R) has no component:
# the exact solver's error, now rather than after passes on rounding.
matrix_free_first_pass <- function(op, X) {
  n <- nrow(X)
  p <- ncol(X)
  P <- op$product(cbind(center_columns(X, threads = op$threads), 1))
  colmeans <- P[, p + 1L] / n
  AX <- center_columns(P[, seq_len(p), drop = FALSE], n, op$threads)
  diagonal <- mean(kernel_self(op$x, op$kernel, op$program))
  grand_mean <- mean(colmeans)
  total <- diagonal - grand_mean
  noise <- flat_constant_share * abs(diagonal)
  if (abs(total) <= noise && max(sqrt(colSums(AX^2))) <= noise)
    stop_no_positive_eigenvalue(sprintf(paste0(" (from the first pass: trace(Kc) / n is %.2g, ",
                                               "the kernel's mean diagonal %.2g)"),
                                        total, diagonal))
  list(AX = AX, colmeans = colmeans, grand_mean = grand_mean, variance_total = total)
}

# The certificate of the block's pairs (eigen_certificate()), of which the
# first k are wanted: met (for those k), active (the pairs whose residual
# goes into the next block: the wanted ones not met, and the others whose
# residual is above tol, which speed up the last wanted ones and tighten
# their gaps), largest (the largest residual of the wanted ones), pending
# (the largest residual of the wanted ones not met, 0 if none).
pair_certificate <- function(values, norms, n, k, tol) {
  cert <- eigen_certificate(values, norms, n)
  wanted <- seq_len(k)
  met <- certificate_met(cert, tol)
  c(cert, list(met = met[wanted],
               active = c(which(!met[wanted]), k + which(cert$residuals[-wanted] > tol)),
               largest = max(cert$residuals[wanted]),
               pending = max(c(0, cert$residuals[wanted][!met[wanted]]))))
}

# Whether the pairs left are at the floor of rounding: every wanted
# residual within tol, and the largest of those not met (one per pass) no
# smaller than half what it was 3 passes before. Their angles then stay as
# they are (their eigenvalues lie within rounding / tol of others), and
# more passes would only repeat them.
at_rounding_floor <- function(run, settings) {
  m <- length(run$pending)
  m > 3L && all(run$cert$residuals[seq_len(settings$features)] <= settings$tol) &&
    run$pending[m] > 0.5 * run$pending[m - 3L]
}

# One pass: the residuals of the active pairs, orthogonal to the basis,
# and their products, added to the basis (restarted from the Ritz vectors
# first when it would outgrow ncv). NULL when nothing new is left of the
# residuals (they lie in the basis, to rounding).
matrix_free_expand <- function(op, basis, rr, active, ncv) {
  if (basis$used + length(active) > ncv)
    basis <- krylov_basis(rr$X, rr$AX, ncv, op$threads, basis)
  W <- orthonormal_columns(rr$R, basis, op$threads, columns = active, center = TRUE)
  if (ncol(W) == 0L) return(NULL)
  krylov_add(basis, W, op$apply(W), op$threads)
}

# The certifying pass: the wanted Ritz vectors times A, their Rayleigh
# quotients and residuals from that product alone (the basis's products
# carry the rounding of its restarts); the block's other pairs bound the
# gaps as before. The block, with these products in front, becomes the
# basis, to go on from if the certificate is not met.
matrix_free_certify <- function(op, run, settings) {
  rr <- run$rr
  wanted <- seq_len(settings$features)
  V <- rr$X[, wanted, drop = FALSE]
  AV <- op$apply(V)
  values <- c(colSums(V * AV), rr$values[-wanted])
  norms <- c(residual_norms(V, AV, values[wanted]), rr$norms[-wanted])
  run$rr <- list(X = rr$X, AX = cbind(AV, rr$AX[, -wanted, drop = FALSE]), values = values,
                 norms = norms)
  run$cert <- pair_certificate(values, norms, nrow(V), settings$features, settings$tol)
  run$basis <- krylov_basis(run$rr$X, run$rr$AX, settings$ncv, settings$threads, run$basis)
  run$passes <- run$passes + 1L
  matrix_free_record(run, settings)
}

# The solver's answer from the certified run, warning if the tolerance was
# not met.
matrix_free_result <- function(run, settings) {
  k <- settings$features
  wanted <- seq_len(k)
  matrix_free_warn(run$cert, k, settings$tol, run$passes)
  list(values = run$rr$values[wanted],
       vectors = oriented_columns(run$rr$X[, wanted, drop = FALSE]),
       residuals = run$cert$residuals[wanted], angles = run$cert$angles[wanted],
       colmeans = run$first$colmeans, grand_mean = run$first$grand_mean,
       variance_total = run$first$variance_total, iterations = NULL, passes = run$passes,
       history = run$history)
}

# The warning of a fit that ended (maxit, or a stalled basis) before its
# pairs met tol: by how much the residuals missed, or else which vectors
# are not pinned down.
matrix_free_warn <- function(cert, k, tol, passes) {
  if (all(cert$met)) return(invisible())
  residuals <- cert$residuals[seq_len(k)]
  if (any(residuals > tol))
    return(warn_convergence(sprintf(paste0(
      "the matrix-free solver did not reach control$tol (%g) in %d passes: the largest ",
      "residual is %.2g, %.3g times the tolerance; increase control$maxit or control$ncv"),
      tol, passes, max(residuals), max(residuals) / tol)))
  loose <- which(!cert$met)
  warn_convergence(sprintf(paste0(
    "the matrix-free solver did not bound the eigenvector angles of component%s %s by ",
    "control$tol (%g) in %d passes: the largest bound is %.2g (their eigenvalues lie close ",
    "to others); increase control$maxit or control$ncv"),
    if (length(loose) > 1L) "s" else "", paste(loose, collapse = ", "), tol, passes,
    max(cert$angles[loose])))
}

# A basis Q with A Q, and H = Q'AQ: an environment holding n x ncv
# matrices Q and AQ, filled column by column in place (not regrown, nor
# copied: the run's states before and after a step share it, and the
# basis is most of the solver's memory), H and `used`, the columns filled.
# A restart (`basis` given) writes X and AX, which are matrices of their
# own, over its first columns. The products of this and the next three
# steps are in C (src/krylov.c), which reads the basis's columns in place:
# they run in this process while workers wait.
krylov_basis <- function(X, AX, ncv, threads, basis = NULL) {
  p <- ncol(X)
  if (is.null(basis)) {
    basis <- new.env(parent = emptyenv())
    basis_matrix(basis, "Q", X, ncv, threads)
    basis_matrix(basis, "AQ", AX, ncv, threads)
  } else {
    set_basis_columns(basis, "Q", seq_len(p), X)
    set_basis_columns(basis, "AQ", seq_len(p), AX)
  }
  H <- basis_cross_product(X, AX, p, p, threads)
  basis$H <- (H + t(H)) / 2
  basis$used <- p
  basis
}

krylov_add <- function(basis, W, AW, threads) {
  used <- basis$used
  b <- ncol(W)
  new <- used + seq_len(b)
  set_basis_columns(basis, "Q", new, W)
  set_basis_columns(basis, "AQ", new, AW)
  # Q'AW and (W'AQ)' are equal but for rounding: their mean keeps H
  # symmetric. The basis's columns `new` are W and AW now: two products
  # over all used + b columns give Q'AW and W'AW (from Q'AW's last rows,
  # each entry summed as alone), and W'AQ
  QAW <- basis_cross_product(basis$Q, AW, used + b, b, threads)
  WAQ <- basis_cross_product(W, basis$AQ, b, used, threads)
  cross <- (QAW[seq_len(used), , drop = FALSE] + t(WAQ)) / 2
  WAW <- QAW[new, , drop = FALSE]
  basis$H <- rbind(cbind(basis$H, cross), cbind(t(cross), (WAW + t(WAW)) / 2))
  basis$used <- max(new)
  basis
}

# The basis's matrix `name` made new: n x ncv, X (n x p) in its first
# columns and zeros after, in C on the threads (src/krylov.c: the pages of
# the basis touched there, not by R's fill on this thread). Assigned within
# engine_call(), whose promise would otherwise hold a second reference to
# the matrix, which R would then copy when the basis first grows.
basis_matrix <- function(basis, name, X, ncv, threads) {
  engine_call({
    basis[[name]] <- .Call(C_basis_matrix, X, as.integer(ncv), as.integer(threads))
    NULL
  })
  invisible(basis)
}

# The columns cols of the basis's matrix `name` set to V, in place: the
# environment lets go of the matrix first, so that R sees one reference
# and does not copy it.
set_basis_columns <- function(basis, name, cols, V) {
  M <- basis[[name]]
  basis[[name]] <- NULL
  M[, cols] <- V
  basis[[name]] <- M
  invisible(basis)
}

# Rayleigh-Ritz on the basis: the p leading Ritz values, vectors X, AX,
# the residuals R = AX - X diag(values) and their norms.
rayleigh_ritz <- function(basis, p, threads) {
  e <- eigen(basis$H, symmetric = TRUE)
  values <- e$values[seq_len(p)]
  c(list(values = values),
    rayleigh_ritz_vectors(basis$Q, basis$AQ, basis$used, e$vectors[, seq_len(p), drop = FALSE],
                          values, threads))
}

# X = Q Y, AX = AQ Y for the basis's used columns, R = AX - X diag(values)
# and its column norms (src/krylov.c): list(X, AX, R, norms).
rayleigh_ritz_vectors <- function(Q, AQ, used, Y, values, threads) {
  engine_call(.Call(C_rayleigh_ritz_vectors, Q, AQ, as.integer(used), Y, as.double(values),
                    as.integer(threads)))
}

# t(A[, 1:ka]) %*% B[, 1:kb], the columns read in place (src/krylov.c).
basis_cross_product <- function(A, B, ka, kb, threads) {
  engine_call(.Call(C_basis_cross_product, A, B, as.integer(ka), as.integer(kb),
                    as.integer(threads)))
}

# The columns of W (those numbered `columns`, or all; less their means
# when center is TRUE, as center_columns()) made orthonormal, and
# orthogonal to the basis's (its first `used` columns) (src/krylov.c):
# classical Gram-Schmidt twice against the basis, then column by column
# within W, Gram-Schmidt twice against the columns kept before; a column
# that nothing new is left of (1e-10 of its length before the projections)
# is dropped. When a kept column lost nearly all of its length (all but
# 1e-3), dividing by what is left magnified the projections' rounding, and
# the whole of it is done again on the result ("twice is enough"). On the
# threads, with the bits of one thread.
orthonormal_columns <- function(W, basis = NULL, threads = 1L, columns = NULL,
                                center = FALSE) {
  if (!is.double(W)) storage.mode(W) <- "double"   # (a copy otherwise)
  if (is.null(basis)) basis <- list(Q = matrix(0, nrow(W), 0L), used = 0L)
  if (!is.null(columns)) columns <- as.integer(columns)
  engine_call(.Call(C_orthonormal_columns, W, columns, isTRUE(center), basis$Q,
                    as.integer(basis$used), as.integer(threads)))
}

# V with each column's mean taken out (orthogonal to 1), divided by scale:
# (V - rep(colMeans(V), each = nrow(V))) / scale, in C on the threads
# (src/krylov.c), the means summed in long double as colMeans() does (in
# four interleaved sums), without R's n x b temporaries.
center_columns <- function(V, scale = 1, threads = 1L) {
  if (!is.double(V)) storage.mode(V) <- "double"   # (a copy otherwise)
  engine_call(.Call(C_center_columns, V, as.double(scale), as.integer(threads)))
}

# op(A) %*% B (op(A) = t(A) when trans_a) on the tiles and threads
# (src/krylov.c, matrix_product() in src/blas.c): the Nystrom start's
# products.
dense_product <- function(A, B, trans_a = FALSE, threads = 1L) {
  if (!is.double(A)) storage.mode(A) <- "double"   # (a copy otherwise)
  if (!is.double(B)) storage.mode(B) <- "double"   # (a copy otherwise)
  engine_call(.Call(C_dense_product, A, B, isTRUE(trans_a), as.integer(threads)))
}

# The f leading eigenpairs of the symmetric A (LAPACK's dsyevr for those
# alone, src/krylov.c): list(values (decreasing), vectors).
top_eigen_pairs <- function(A, f) {
  if (!is.double(A)) storage.mode(A) <- "double"   # (a copy otherwise)
  engine_call(.Call(C_top_eigen_pairs, A, as.integer(f)))
}

# The sign rule of every fit (orient_columns() in src/eigen.c), on a copy.
oriented_columns <- function(V) engine_call(.Call(C_oriented_columns, V))

# progressr's progress of the passes (R/progress.R): one step per pass,
# the message the largest residual so far; nothing where progress is off.
matrix_free_progress <- function(maxit, envir = parent.frame()) {
  p <- progress_for(maxit, "matrix-free kernel PCA: first pass", envir)
  function(pass, residual)
    progress_signal(p, sprintf("pass %d, largest residual %.2g", pass, residual))
}
