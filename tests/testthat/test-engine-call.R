# Every call into the C engine goes through engine_call() (R/conditions.R),
# which passes the engine's settings from R options first, so that each
# entry point runs on the vector path options(fastkpca.simd) names. Two
# checks: the package's code writes every .Call inside engine_call(), and
# each registered entry point, called from R with the option "plain" while
# C was left on another path, reports that it ran on "plain" (src/simd.c
# records simd_active() at every entry; engine_entry_paths() reads it).

# The entry points that do not report their path, and why.
entry_path_exempt <- c(
  engine_settings = "it passes the settings: engine_call() calls it before any other entry point",
  engine_defaults = "tuning_table() reads it (once a session) to check the tuning settings",
  engine_entry_paths = "it reads the record of the paths, and records nothing itself",
  thread_limits = "it reads the process's limits on threads (src/threads.c), and computes nothing on a vector path")

# For each other entry point, a minimal valid call through the package's R
# code that reaches it: `setup` prepares the arguments, `call` is the R
# function that makes the .Call (so that nothing else is entered before
# it). Each runs in a child R process, in an environment where x (30 x 3),
# k (a Gaussian kernel), prog and w (its program and the weights of x), V
# (30 x 2) exist.
entry_path_cases <- list(
  dense_eigen = list(
    setup = quote(op <- fastkpca:::kernel_operator(x, k, 1L)),
    call = quote(fastkpca:::dense_eigen(op, "exact", 2L, 1e-4, list(), NULL))),
  scaled_columns = list(call = quote(fastkpca:::scaled_columns(V, c(1, 2), TRUE))),
  value_flags = list(call = quote(fastkpca:::value_flags(x, 1L))),
  kernel_cross = list(call = quote(fastkpca:::kernel_cross(x[1:5, ], x, k))),
  kernel_matrix = list(call = quote(kernel_matrix(k, x, threads = 1))),
  kernel_self = list(call = quote(fastkpca:::kernel_self(x[1:5, ], k))),
  kernel_project_rows = list(
    call = quote(fastkpca:::kernel_project_rows(x[1:5, ], x, k, w, V, c(0, 0), NULL, 1L))),
  nystrom_statistics = list(
    setup = quote(basis <- fastkpca:::nystrom_landmark_basis(x[1:10, ], k, 2L, 1L)),
    call = quote(fastkpca:::nystrom_statistics(x, basis, k, 1L))),
  nystrom_alpha = list(
    setup = quote({
      Tm <- fastkpca:::nystrom_landmark_basis(x[1:10, ], k, 2L, 1L)$basis
      W <- diag(ncol(Tm))[, 1:2]
    }),
    call = quote(fastkpca:::nystrom_alpha(Tm, W, 30))),
  nystrom_kmeanspp = list(call = quote(fastkpca:::nystrom_kmeanspp(x, 3L, k))),
  # (read once a session: the cached limits are dropped first)
  engine_limits = list(call = quote({
    assign("limits", NULL, envir = environment(fastkpca:::engine_limits))
    fastkpca:::engine_limits()
  })),
  preimage_coefficients = list(
    setup = quote(fit <- kpca(x, kernel = k, features = 2)),
    call = quote(fastkpca:::preimage_coefficients(fit$rotated / sqrt(30), x, k, 1, 1L))),
  preimage_fixed_point = list(
    setup = quote({
      fit <- kpca(x, kernel = k, features = 2)
      basis <- fastkpca:::preimage_basis.fastkpca(fit)
      settings <- fastkpca:::fixed_point_control(list())
    }),
    call = quote(fastkpca:::preimage_fixed_point(fit, basis, fit$rotated, x, settings))),
  kica_contrast = list(call = quote(fastkpca:::kica_contrast(V, c(1, 2e-2, 2e-4), 1L))),
  kica_sweeps = list(
    call = quote(fastkpca:::kica_sweeps(scale(V), diag(2), c(1, 2e-2, 2e-4), 1L,
                                        c(-0.4, 0, 0.4), 0.4, 1e-3, 2L))),
  kcca_ichol = list(call = quote(fastkpca:::kcca_ichol(x, k, 1e-6, 10L))),
  sparse_rows = list(call = quote(fastkpca:::sparse_rows(c(0L, 1L), c(1L, 0L), c(2, 3),
                                                         c(2L, 2L), 1L))),
  kernel_block_product = list(
    call = quote(fastkpca:::kernel_block_product(x, 0L, 30L, prog, w, V, 1L))),
  kernel_pair_products = list(
    setup = quote(pairs <- fastkpca:::matrix_free_schedule(30L, 1L)[[1L]]),
    call = quote(fastkpca:::kernel_pair_products(x, pairs, prog, w, V, 1L))),
  matrix_free_groups = list(call = quote(fastkpca:::matrix_free_groups(30L))),
  matrix_free_fold = list(
    setup = quote({
      pairs <- fastkpca:::matrix_free_schedule(30L, 1L)[[1L]]
      sums <- fastkpca:::kernel_pair_products(x, pairs, prog, w, V, 1L)
    }),
    call = quote(fastkpca:::matrix_free_fold(30L, 2L, list(list(pairs = pairs)), list(sums)))),
  kernel_shares_tiles = list(call = quote(fastkpca:::kernel_shares_tiles(prog, x))),
  oriented_columns = list(call = quote(fastkpca:::oriented_columns(V))),
  orthonormal_columns = list(call = quote(fastkpca:::orthonormal_columns(V))),
  center_columns = list(call = quote(fastkpca:::center_columns(V))),
  dense_product = list(call = quote(fastkpca:::dense_product(x, V, TRUE))),
  top_eigen_pairs = list(call = quote(fastkpca:::top_eigen_pairs(crossprod(x), 2L))),
  rayleigh_ritz_vectors = list(
    setup = quote({
      Q <- qr.Q(qr(cbind(V, x)))
      AQ <- kernel_matrix(k, x, threads = 1) %*% Q
    }),
    call = quote(fastkpca:::rayleigh_ritz_vectors(Q, AQ, 5L, diag(5)[, 1:2], c(2, 1), 1L))),
  basis_cross_product = list(
    call = quote(fastkpca:::basis_cross_product(cbind(V, x), V, 4L, 2L, 1L))),
  basis_matrix = list(call = quote(fastkpca:::krylov_basis(V, V, 3L, 1L))),
  tile_product = list(call = quote(fastkpca:::tile_product(x, t(x)))),
  available_bytes = list(call = quote(fastkpca:::available_bytes())),
  simd_path_resolve = list(call = quote(simd_path()))
)

# Whole fits, each from the path left at "auto": every entry point they
# enter must run on "plain" too (the issue: the first orthonormalization of
# a matrix-free fit ran on the automatic path).
entry_path_fits <- list(
  matrix_free = quote(kpca(x, kernel = k, features = 2, solver = "matrix_free",
                           control = list(landmarks = 0))),
  exact_and_predict = quote(predict(kpca(x, kernel = k, features = 2), x[1:5, ])),
  nystrom = quote(kpca(x, kernel = k, features = 2, landmarks = 10)))

# The child: C's path is set to "auto" with a raw .Call of engine_settings
# (the one way past engine_call()), the record cleared, then each call made
# with options(fastkpca.simd = "plain"); each call runs once before, so
# that what an R function reads once a session (the engine's limits and
# defaults) is read already. It reads the cases from the file input and
# writes the paths each call entered, by case, to the file output.
entry_path_child <- function(input, output) c(
  "suppressPackageStartupMessages(library(fastkpca))",
  sprintf("todo <- readRDS(%s)", deparse(input)),
  "options(fastkpca.simd = 'plain', fastkpca.progress = FALSE)",
  "settings <- getDLLRegisteredRoutines('fastkpca')$.Call$engine_settings",
  "set.seed(1)",
  "base <- list2env(list(x = matrix(rnorm(90), 30, 3), V = matrix(rnorm(60), 30, 2),",
  "                      k = kern('rbfdot', sigma = 0.5)))",
  "local({ prog <- fastkpca:::kernel_program(k); w <- fastkpca:::kernel_weights(k, x) },",
  "      envir = base)",
  "out <- lapply(todo, function(case) {",
  "  env <- new.env(parent = base)",
  "  eval(case$setup, env)",
  "  eval(case$call, env)",
  "  invisible(fastkpca:::engine_entry_paths())",
  "  .Call(settings, 0L, NULL)",
  "  eval(case$call, env)",
  "  fastkpca:::engine_entry_paths()",
  "})",
  sprintf("saveRDS(out, %s)", deparse(output)),
  "cat('child finished\\n')")

# The paths the cases in todo entered (NULL if the child failed), and the
# child's output.
run_entry_path_child <- function(todo) {
  input <- tempfile(fileext = ".rds")
  output <- tempfile(fileext = ".rds")
  on.exit(unlink(c(input, output)))
  saveRDS(todo, input)
  lines <- run_child_r(entry_path_child(input, output), timeout = 300)
  list(lines = lines, paths = if (file.exists(output)) readRDS(output))
}

test_that("every C entry point called from R runs on the path the option names", {
  skip_on_cran()
  # on a CPU with no vector path, "auto" is "plain": nothing to tell apart
  auto <- fastkpca:::simd_path_resolve(0L)
  skip_if(auto == "plain", "this CPU runs no vector path")
  routines <- names(getDLLRegisteredRoutines("fastkpca")$.Call)
  expect_true(all(names(entry_path_exempt) %in% routines))
  # every registered entry point has a call here, or a reason not to
  missing_case <- setdiff(routines, c(names(entry_path_exempt), names(entry_path_cases)))
  expect_identical(missing_case, character(0),
                   info = "entry points with no minimal call in entry_path_cases")
  cases <- entry_path_cases[intersect(names(entry_path_cases), routines)]
  todo <- c(cases, lapply(entry_path_fits, function(f) list(call = f)))
  res <- run_entry_path_child(todo)
  expect_true(any(grepl("child finished", res$lines)),
              info = paste(utils::tail(res$lines, 15), collapse = "\n"))
  paths <- res$paths
  for (name in names(cases)) {
    entered <- paths[[name]]
    expect_true(name %in% names(entered), info = sprintf("%s was not entered", name))
    expect_identical(entered[[name]], "plain", info = name)
    # and everything else the call entered
    expect_identical(unname(entered[entered != "plain"]), character(0),
                     info = sprintf("%s: %s", name, paste(names(entered), entered,
                                                           sep = " ran ", collapse = ", ")))
  }
  for (name in names(entry_path_fits)) {
    entered <- paths[[name]]
    expect_gt(length(entered), 0L)
    expect_identical(unname(entered[entered != "plain"]), character(0),
                     info = sprintf("%s: %s", name, paste(names(entered), entered,
                                                           sep = " ran ", collapse = ", ")))
  }
  # the matrix-free fit entered its dense steps too
  expect_true(all(c("kernel_block_product", "orthonormal_columns") %in%
                    names(paths$matrix_free)))
})

# The .Call calls in an expression that are not the argument of an
# engine_call(): the language object walked, "inside" set at an
# engine_call( ... .Call(...)), and kept through a block and an assignment
# directly in it (engine_call({ out <- .Call(...); dimnames(out) <- ...;
# out }), which names the result where it is made, without a copy).
bare_calls <- function(e, inside = FALSE) {
  if (is.function(e)) return(c(bare_calls(formals(e)), bare_calls(body(e))))
  if (!is.call(e) && !is.pairlist(e) && !is.expression(e)) return(character(0))
  if (is.call(e)) {
    head <- e[[1L]]
    if (identical(head, as.name(".Call"))) {
      here <- if (inside) character(0) else deparse(e[[2L]])
      return(c(here, unlist(lapply(as.list(e)[-1L], bare_calls))))
    }
    if (inside && identical(head, as.name("{")))
      return(unlist(lapply(as.list(e)[-1L], bare_calls, inside = TRUE)))
    if (inside && identical(head, as.name("<-")))
      return(c(bare_calls(e[[2L]]), bare_calls(e[[3L]], inside = TRUE)))
    if (identical(head, as.name("engine_call")) && length(e) == 2L)
      return(bare_calls(e[[2L]], inside = TRUE))
  }
  unlist(lapply(as.list(e), function(part) if (!missing(part)) bare_calls(part)))
}

test_that("the package's code makes every .Call inside engine_call()", {
  ns <- asNamespace("fastkpca")
  found <- list()
  for (nm in ls(ns, all.names = TRUE)) {
    f <- get(nm, envir = ns)
    if (!is.function(f) || is.primitive(f)) next
    bare <- bare_calls(f)
    if (length(bare) > 0L) found[[nm]] <- bare
  }
  # engine_settings() passes the settings (and reads their defaults first):
  # the two calls engine_call() itself makes
  expect_identical(found, list(engine_defaults = "C_engine_defaults",
                               engine_settings = "C_engine_settings"))
  # the walk sees a .Call where there is one
  expect_identical(bare_calls(quote(f(.Call(C_a), engine_call(.Call(C_b))))), "C_a")
  expect_identical(bare_calls(function() engine_call(g(.Call(C_c)))), "C_c")
  expect_identical(bare_calls(quote(engine_call({ out <- .Call(C_d); names(out) <- 1; out }))),
                   character(0))
  expect_identical(bare_calls(quote(engine_call({ out <- g(.Call(C_e)); out }))), "C_e")
})
