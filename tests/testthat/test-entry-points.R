# The C entry points defend themselves: every routine registered for .Call,
# fed garbage directly (wrong types and lengths, NULL, NA, huge sizes,
# negative codes, strings, lists), gives an R error, never a crash. The
# routines are found through getDLLRegisteredRoutines(), so a routine added
# later is covered without editing this file.

# Values no argument of any routine should accept. (If a new routine has an
# argument that legitimately accepts one of these, add it to entry_accepts.)
entry_garbage <- function() list(
  "NULL" = NULL, "NA" = NA, "NA_integer_" = NA_integer_, "NA_real_" = NA_real_,
  "NA_character_" = NA_character_, "-1L" = -1L, "-5" = -5,
  "integer max" = .Machine$integer.max, "-integer max" = -.Machine$integer.max,
  "-Inf" = -Inf, "NaN" = NaN,
  "integer(0)" = integer(0), "numeric(0)" = numeric(0), "character(0)" = character(0),
  "\"a\"" = "a", "two strings" = c("rbfdot", "x"), "TRUE" = TRUE,
  "list()" = list(), "list(1, \"a\")" = list(1, "a"), "data.frame" = data.frame(a = 1:3),
  "1:2" = 1:2, "c(0.5, 2)" = c(0.5, 2), "4 doubles" = c(1, 2, 3, 4),
  "6 integers" = 1:6, "5 NA doubles" = rep(NA_real_, 5), "5 Inf doubles" = rep(Inf, 5),
  "character matrix" = matrix("a", 2, 2), "integer matrix" = matrix(1L, 3, 3),
  "0 x 0" = matrix(0, 0, 0), "3 x 0" = matrix(0, 3, 0), "1 x 1" = matrix(-1, 1, 1),
  "3-d array" = array(0, c(2, 2, 2)), "complex" = 1i, "raw" = as.raw(1:3),
  "factor" = factor("a"), "closure" = function(v) v, "symbol" = as.name("a"),
  "call" = quote(f(x)), "environment" = globalenv(),
  "huge n" = matrix(0, 2e5, 1)     # a 2e5 x 2e5 buffer cannot be allocated
)

# (routine, argument position, garbage name) triples that may succeed.
# kernel_matrix() has one data matrix: a single point in one dimension is data.
entry_accepts <- list(list("kernel_matrix", 1L, "1 x 1"),
  # predict() on an exact fit: NULL row-mean terms mean a Nystrom projection;
  # two doubles are a valid offset or alpha_sums for two components; no
  # progress function is the usual case
  list("kernel_project_rows", 7L, "c(0.5, 2)"), list("kernel_project_rows", 8L, "NULL"),
  list("kernel_project_rows", 8L, "c(0.5, 2)"), list("kernel_project_rows", 11L, "NULL"),
  # the sign rule takes any double matrix of vectors
  list("oriented_columns", 1L, "1 x 1"), list("oriented_columns", 1L, "huge n"),
  # the matrix-free fit's centering takes any double matrix of vectors
  list("center_columns", 1L, "1 x 1"), list("center_columns", 1L, "huge n"),
  # the scaling of an exact fit's columns: any two numbers for two columns,
  # divided or multiplied
  list("scaled_columns", 2L, "c(0.5, 2)"), list("scaled_columns", 3L, "TRUE"),
  # and no dimnames
  list("scaled_columns", 4L, "NULL"),
  # an exact fit's progress function (R/progress.R): none, or any function
  list("dense_eigen", 10L, "NULL"), list("dense_eigen", 10L, "closure"),
  # the step functions the tests count work with: none, or any function
  list("kernel_block_product", 9L, "NULL"), list("kernel_block_product", 9L, "closure"),
  list("nystrom_kmeanspp", 5L, "NULL"), list("nystrom_kmeanspp", 5L, "closure"),
  # the memory readers to try: none, or any of the codes 1 to 4 (R/memory.R)
  list("available_bytes", 1L, "integer(0)"), list("available_bytes", 1L, "1:2"),
  list("available_bytes", 1L, "integer matrix"),
  # the groups of the largest number of rows a matrix can have (computed in
  # 64 bits: the 32-bit sum overflowed and wrote below the array)
  list("matrix_free_groups", 1L, "integer max"),
  # the process's limits on threads, with the machine looked at or not
  list("thread_limits", 1L, "TRUE"),
  # no tuning setting set: every one at its default (R/tuning.R)
  list("engine_settings", 2L, "NULL"))

# the scan for missing and infinite values (value_flags()) takes any double
# vector
entry_accepts <- c(entry_accepts, lapply(
  c("NA_real_", "-5", "-Inf", "NaN", "numeric(0)", "c(0.5, 2)", "4 doubles", "5 NA doubles",
    "5 Inf doubles", "0 x 0", "3 x 0", "1 x 1", "3-d array", "huge n"),
  function(g) list("value_flags", 1L, g)))

entry_routines <- function() getDLLRegisteredRoutines("fastkpca")$.Call

# Whether argument pos of routine name may take garbage g (entry_accepts).
entry_accepted <- function(name, pos, g)
  any(vapply(entry_accepts, identical, logical(1), list(name, pos, g)))

# What a call whose outcome is out should have done but did not, described
# by what: nothing when it gave an error with a message.
entry_not_error <- function(out, what) {
  if (!inherits(out, "error")) return(sprintf("%s returned", what))
  if (!nzchar(conditionMessage(out))) return(sprintf("%s: an error without a message", what))
  character()
}

# Call a routine with a list of arguments; the condition or "returned".
entry_outcome <- function(routine, args) {
  tryCatch({
    suppressWarnings(do.call(.Call, c(list(routine), args), quote = TRUE))
    "returned"
  }, error = function(e) e)
}

# The arguments of the first .Call made to each routine by the R code of a
# small workflow (fits with several kernels and solvers, then predict):
# realistic arguments, on which one argument at a time is then spoiled.
# The package's functions are copied into an environment whose .Call
# records its arguments before calling the real one.
entry_capture_args <- function() {
  ns <- asNamespace("fastkpca")
  seen <- new.env()
  cap <- new.env(parent = ns)
  cap$.Call <- function(.NAME, ...) {
    name <- .NAME$name
    if (!is.null(name) && !exists(name, envir = seen, inherits = FALSE))
      assign(name, list(...), envir = seen)
    base::.Call(.NAME, ...)
  }
  for (nm in ls(ns, all.names = TRUE)) {
    f <- get(nm, envir = ns)
    if (is.function(f) && !is.primitive(f) && identical(environment(f), ns)) {
      environment(f) <- cap
      assign(nm, f, envir = cap)
    }
  }
  set.seed(5)
  x <- matrix(rnorm(24 * 2), 24, 2)
  K <- exp(-as.matrix(stats::dist(x))^2)
  # first a conformal kernel, so that the recorded calls carry real weights
  conformal <- kern_conformal(kern("rbfdot", sigma = 0.5), function(m) 1 + m[, 1]^2)
  runs <- list(
    list(x, kernel = conformal, features = 2, solver = "exact"),
    list(x, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 2, solver = "exact"),
    list(x, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 2, solver = "iterative"),
    list(x, kernel = "polydot", kpar = list(degree = 2), features = 0),
    list(K, kernel = "precomputed", features = 2)
  )
  for (r in runs) {
    fit <- tryCatch(suppressWarnings(do.call(cap$kpca.default, r)), error = function(e) NULL)
    if (!is.null(fit))
      try(cap$predict.fastkpca(fit, if (cap$is_precomputed(fit$kernel)) K[1:3, ] else x[1:3, ]),
          silent = TRUE)
  }
  try(cap$kernel_matrix(conformal, x[1:5, ]), silent = TRUE)
  as.list(seen)
}

test_that("every registered .Call routine errors on garbage in all its arguments", {
  routines <- entry_routines()
  expect_gt(length(routines), 0L)
  garbage <- entry_garbage()
  set.seed(20240611)
  calls <- 0L
  for (r in routines) {
    k <- r$numParameters
    if (k == 0L) {           # nothing to spoil: it must at least not crash
      entry_outcome(r, list())
      next
    }
    if (k < 0L) next         # variable arity: not registered that way here
    # the calls that did not give an error with a message, one expectation
    # per routine that names them all (an expectation per call cost more
    # than the calls: about 1.4 ms each, 30 times that under valgrind)
    wrong <- character()
    # the same garbage in every argument
    for (g in names(garbage)) {
      out <- entry_outcome(r, rep(list(garbage[[g]]), k))
      calls <- calls + 1L
      # a routine of one argument may accept what entry_accepts lists
      if (k == 1L && entry_accepted(r$name, 1L, g)) next
      wrong <- c(wrong, entry_not_error(out, sprintf("all arguments %s", g)))
    }
    # random mixes of garbage
    for (i in seq_len(random_cases(60L))) {
      pick <- sample(names(garbage), k, replace = TRUE)
      out <- entry_outcome(r, unname(garbage[pick]))
      calls <- calls + 1L
      # a mix the routine accepts in every argument is a valid call, by chance
      if (all(mapply(entry_accepted, r$name, seq_along(pick), pick))) next
      wrong <- c(wrong, entry_not_error(out, sprintf("(%s)", paste(pick, collapse = ", "))))
    }
    expect(length(wrong) == 0L, sprintf("%s did not give an error with a message for: %s",
                                        r$name, paste(wrong, collapse = "; ")))
  }
  # a corrupted heap shows itself at the next full collection
  for (i in 1:3) gc(full = TRUE)
  expect_gt(calls, 0L)
})

test_that("every routine errors when any one of its real arguments is garbage", {
  routines <- entry_routines()
  baselines <- entry_capture_args()
  # the workflow reaches the routines the R code uses
  expect_true(all(c("dense_eigen", "kernel_project_rows", "kernel_matrix") %in% names(baselines)))
  garbage <- entry_garbage()
  for (r in routines) {
    args <- baselines[[r$name]]
    if (is.null(args)) next   # not called by the workflow: covered by the test above
    expect_length(args, r$numParameters)
    # the untouched call works
    expect_identical(entry_outcome(r, args), "returned", info = r$name)
    wrong <- character()   # one expectation per routine, as above
    for (pos in seq_along(args)) {
      for (g in names(garbage)) {
        spoiled <- args
        spoiled[pos] <- list(garbage[[g]])
        out <- entry_outcome(r, spoiled)
        if (!entry_accepted(r$name, pos, g))
          wrong <- c(wrong, entry_not_error(out, sprintf("argument %d = %s", pos, g)))
      }
    }
    expect(length(wrong) == 0L, sprintf("%s did not give an error with a message for: %s",
                                        r$name, paste(wrong, collapse = "; ")))
  }
  for (i in 1:3) gc(full = TRUE)
  # and R still fits
  fit <- kpca(as.matrix(iris[1:30, 1:4]), kpar = list(sigma = 0.3), features = 2)
  expect_true(all(is.finite(fit$rotated)))
})

test_that("C checks the invariants R relies on, with its own clear messages", {
  r <- entry_routines()
  x <- matrix(as.double(1:20), 10, 2)
  slots <- fastkpca:::kpar_slots
  kp <- rep(1, length(slots))
  at <- function(name, value) replace(kp, match(name, slots), value)
  # a one-kernel program, and a cross-kernel call with it
  prog <- function(code = 3L, kpar = kp, ops = 1L, args = 0, nweights = 0L)
    list(ops = ops, args = args, codes = code, kpar = kpar, nweights = nweights)
  cross <- function(p, z = x, w = list(), threads = 1L)
    .Call(r$kernel_cross, z, x, p, w, w, threads)
  expect_error(cross(prog(99L)), "'kernel' code 99 is not a known kernel")
  expect_error(cross(prog(-1L)), "not a known kernel")
  expect_error(cross(prog(0L)), "'kernel' code 0 is not a known kernel")
  expect_error(cross(prog(3L, at("sigma", -1))), "'sigma' must be positive")
  expect_error(cross(prog(3L, at("degree", NA))), "'kpar' values must be finite")
  expect_error(cross(prog(3L, kp[1:4])),
               sprintf("'kpar' must hold %d doubles per base kernel", length(slots)))
  expect_error(cross(prog(6L, at("order", 1e4))), "'order' must be between 0 and 50")
  # a string kernel: its type, its parameters, its data; not mixed with others
  string_code <- fastkpca:::kernel_code("stringdot")
  expect_error(cross(prog(string_code, at("type", 99))), "unknown string kernel type 99")
  expect_error(cross(prog(string_code, at("length", 0))), "'length' must be at least 1")
  expect_error(cross(prog(string_code, at("lambda", 0))), "'lambda' must be positive")
  expect_error(cross(prog(string_code)), "'x' must be a character vector for a string kernel")
  expect_error(.Call(r$kernel_cross, c("ab", NA), c("ab", "b"), prog(string_code), list(),
                     list(), 1L), "'z' must not contain missing strings")
  expect_error(cross(prog(code = c(3L, string_code), kpar = c(kp, kp), ops = c(1L, 1L, 2L),
                          args = c(0, 1, 0))), "mixes string kernels with kernels on numbers")
  expect_error(.Call(r$kernel_self, x, prog(string_code), list()), "must be a character vector")
  # sparse rows: every invariant the value functions rely on, and both sets
  # of a call of one kind
  sp <- function(p = c(0L, 2L, 3L), j = c(0L, 2L, 1L), v = c(1, 2, 3), dim = c(2L, 3L))
    structure(list(p = p, j = j, x = v, dim = dim), class = "fastkpca_sparse_rows")
  kmat <- function(rows) .Call(r$kernel_matrix, rows, prog(), list(), 1L)
  expect_equal(dim(kmat(sp())), c(2L, 2L))
  expect_error(kmat(sp(p = c(0L, 3L, 2L))), "the row starts must")
  expect_error(kmat(sp(p = c(1L, 2L, 3L))), "from 0 to the number of values")
  expect_error(kmat(sp(p = c(0L, 2L))), "the row starts must be 3 integers")
  expect_error(kmat(sp(j = c(2L, 0L, 1L))), "columns must increase within each row")
  expect_error(kmat(sp(j = c(0L, 0L, 1L))), "columns must increase within each row")
  expect_error(kmat(sp(j = c(0L, 3L, 1L))), "a column index is out of range")
  expect_error(kmat(sp(j = c(0L, -1L, 1L))), "a column index is out of range")
  expect_error(kmat(sp(v = c(1, NaN, 3))), "must not contain missing or infinite values")
  expect_error(kmat(sp(v = c(1, 2))), "integer and double vectors of one length")
  expect_error(kmat(sp(dim = c(2L, NA))), "two non-negative dimensions")
  expect_error(kmat(unclass(sp())), "'x' must be a double matrix")
  expect_error(.Call(r$kernel_cross, x, sp(), prog(), list(), list(), 1L),
               "'z' must be sparse rows, as 'x' are")
  expect_error(.Call(r$kernel_cross, sp(), x, prog(), list(), list(), 1L),
               "'x' must be sparse rows, as 'z' are")
  expect_error(.Call(r$sparse_rows, c(0L, 5L), c(0L, 1L), c(1, 2), c(2L, 2L), 1L),
               "a row index is out of range")
  expect_error(.Call(r$sparse_rows, c(0L, 1L), c(0L, 1L, 3L), c(1, 2), c(2L, 2L), 0L),
               "column starts, from 0 to 2")
  expect_error(.Call(r$sparse_rows, c(0L, 1L), c(0L, 2L, 1L), c(1, 2), c(2L, 2L), 0L),
               "column starts, from 0 to 2|must not decrease")
  expect_error(.Call(r$nystrom_kmeanspp, x, 2L, prog(string_code), list(), NULL),
               "'x' must be a character vector for a string kernel")
  expect_error(.Call(r$nystrom_kmeanspp, c("ab", "ba", "ab"), 2L, prog(string_code), list(),
                     NULL), "k-means[+][+] landmarks are rows of numbers")
  expect_error(cross(prog(), z = x[, 1, drop = FALSE]), "'z' must have 2 columns, not 1")
  expect_error(cross(prog(), threads = 0L), "'threads'")
  expect_error(cross(prog(), threads = 2000L), "'threads'")
  # malformed programs
  expect_error(cross(prog()[-1]), "program lacks 'ops'")
  expect_error(cross(unname(prog())), "must be a kernel program")
  expect_error(cross(prog(ops = c(1L, 2L), args = c(0, 0))), "lacks its operands")
  expect_error(cross(prog(code = c(3L, 3L), kpar = c(kp, kp), ops = c(1L, 1L), args = c(0, 1))),
               "exactly one kernel value")
  expect_error(cross(prog(ops = 1L, args = 1)), "base kernel 1 does not exist")
  expect_error(cross(prog(ops = c(1L, 4L), args = c(0, -2))), "a scale must be positive")
  expect_error(cross(prog(ops = c(1L, 5L), args = c(0, 2.5))), "a power must be a whole number")
  expect_error(cross(prog(ops = c(1L, 9L), args = c(0, 0))), "unknown operation 9")
  expect_error(cross(prog(ops = c(1L, 7L), args = c(0, 0))), "conformal weights 0 do not exist")
  expect_error(cross(prog(ops = c(1L, 7L), args = c(0, 0), nweights = 1L)),
               "'weights' must be a list of 1 conformal weight vectors")
  expect_error(cross(prog(ops = c(1L, 7L), args = c(0, 0), nweights = 1L), w = list(1:10)),
               "'weights' must hold one double per point")
  expect_error(cross(prog(ops = c(1L, 7L), args = c(0, 0), nweights = 1L), w = list(c(1, 2))),
               "'weights' must hold one double per point")
  expect_equal(cross(prog(ops = c(1L, 7L), args = c(0, 0), nweights = 1L), w = list(rep(2, 10))),
               4 * cross(prog()))
  # non-integer polydot degrees reach C only through .Call: NaN is caught
  expect_error(.Call(r$kernel_cross, -x, x, prog(2L, replace(at("degree", 2.5), 4, 0)), list(),
                     list(), 1L), "not finite")
  # empty inputs are fine and give empty results
  expect_equal(dim(cross(prog(), z = x[0, , drop = FALSE])), c(0L, 10L))
})

test_that("partial eigen-decompositions of degenerate spectra stay in bounds (child R)", {
  skip_on_cran()
  rscript <- file.path(R.home("bin"), "Rscript")
  skip_if_not(file.exists(rscript) || file.exists(paste0(rscript, ".exe")), "no Rscript")
  # Many tied (zero) eigenvalues make LAPACK's dsyevr (RANGE = 'I') write up
  # to n eigenvalues into W, even when few are requested: a short W corrupts
  # the heap, which a full collection then trips over.
  code <- c(
    "suppressPackageStartupMessages(library(fastkpca))",
    "for (n in c(10, 40, 120)) for (f in c(1, 2, 5, 20)) if (f < n) {",
    "  x <- matrix(1, n, 3)",
    "  try(kpca(x, features = f, solver = 'exact', threads = 1), silent = TRUE)",
    "  y <- matrix(rep(c(0, 1), length.out = 3 * n), n, 3)",
    "  try(suppressWarnings(kpca(y, kernel = 'vanilladot', features = f, solver = 'exact', threads = 1)), silent = TRUE)",
    "  for (i in 1:2) invisible(gc(full = TRUE))",
    "}",
    "x <- matrix(rnorm(40), 20)",
    "invisible(kpca(x, features = 2))",
    "cat('child finished\\n')"
  )
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(code, script)
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  out <- suppressWarnings(system2(rscript, c("--vanilla", shQuote(script)), stdout = TRUE,
                                  stderr = TRUE, env = paste0("R_LIBS=", shQuote(libs)),
                                  timeout = 120))
  status <- attr(out, "status")
  expect_true(is.null(status) || status == 0L,
              info = paste(utils::tail(out, 15), collapse = "\n"))
  expect_true(any(grepl("child finished", out)), info = paste(utils::tail(out, 15), collapse = "\n"))
})
