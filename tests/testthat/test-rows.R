# Rows as a kind (R/rows.R): what the package computes on data points is a
# generic with a method per kind (a dense matrix, sparse rows, strings),
# and the kind is tested only where input enters. Two checks: the methods
# of the two numeric kinds agree, and the package's code calls inherits()
# and is_sparse_data() only in the functions listed below.

# The functions of the package allowed to call inherits() or
# is_sparse_data(), and why. Anything else dispatches on the class.
kind_test_allowed <- c(
  # input checks and conversions: user data into rows of their kind
  is_sparse_data = "R/sparse.R: what sparse input is (Matrix's and slam's classes, sparse rows)",
  as_sparse_rows = "R/sparse.R: each sparse input class converted once into sparse rows",
  as_data_rows = "R/sparse.R: the entrance of data, sparse input kept sparse",
  is_rows_input = "R/sparse.R: whether 'landmarks' holds rows, not a number or a rule",
  as_data_matrix = "R/validate.R: the steps without a sparse path refuse sparse input",
  chunk_matrix = "R/row_chunks.R: a chunk as its source gives it, turned into rows",
  # refusals of sparse data
  kpca_cv = "R/tune.R: criterion = \"reconstruction\" needs pre-images, which sparse data lack",
  preimage.fastkpca = "R/preimage.R: a fit of sparse data has no pre-images",
  # other input, not data rows
  kpca.default = "R/kpca.R: a kernlab kernelMatrix as 'x' means kernel = \"precomputed\"",
  row_chunks = "R/row_chunks.R: a source, or a DBI connection, as 'x'",
  new_row_chunks_dbi = "R/row_chunks.R: 'con' must be a DBI connection",
  predict.fastkpca_nystrom = "R/chunked_nystrom.R: 'newdata' from row_chunks()",
  update.fastkpca_nystrom = "R/chunked_nystrom.R: 'newdata' a fit, a source or rows; a fit on strings refused",
  check_fit = "R/fit_classes.R: 'object' must be a kpca() fit",
  validate_fastkpca_cv = "R/fit_classes.R: a kpca_cv object's 'fit' must be a kpca() fit",
  is_kernel = "R/kernel_algebra.R: a kernel spec that is a fastkpca kernel",
  is_kernel_spec_object = "R/kernel_spec.R: a kernel spec that is a kernel object",
  kern_from_kernlab = "R/kernel_spec.R: kernlab's string kernels read as string kernels",
  kernel_tree = "R/kernel_function.R: kernlab's kernel objects read as kernel trees",
  is_string_kernel_spec = "R/string_kernels.R: a kernel spec that is a string kernel",
  resolve_string_kernel = "R/string_kernels.R: a string kernel spec into a kernel tree",
  kpca_step_args = "R/recipes.R: a recipe step's kernel given as a kernel object",
  # conditions and other packages' objects
  engine_call = "R/conditions.R: the package's classed errors pass through unchanged",
  stop_from = "R/conditions.R: the package's classed errors pass through unchanged",
  run_batch = "R/chunk_passes.R: the marker a chunk reader returns at the end of a source",
  chunk_map_unknown = "R/chunk_passes.R: the marker a chunk reader returns at the end of a source",
  chunks_in_parallel = "R/chunked_nystrom.R: future's sequential plan",
  run_on_workers = "R/workers.R: future's errors of a lost worker",
  batch_value = "R/workers.R: future's errors and batchtools futures",
  batchtools_value = "R/workers.R: future's errors",
  batchtools_job_expired = "R/workers.R: batchtools futures and registries",
  future_done = "R/workers.R: future's errors",
  backend_holds_tasks = "R/workers.R: future.mirai's futures",
  round_values = "R/workers.R: future.mirai's futures",
  fitted_rotated = "R/preimage.R: stats' na.action record (\"exclude\" pads with NA)",
  preimage_of_training = "R/preimage.R: stats' na.action record (\"exclude\" pads with NA)")

# The inherits() and is_sparse_data() calls of an object: a function's
# formals and body, or the functions of a list (chunk_ops), walked as
# language; `base::inherits(...)` counts, and so does either name passed
# as a value (vapply(parts, inherits, NA, "cls")).
kind_test_names <- c("inherits", "is_sparse_data")
kind_test_calls <- function(e) {
  if (is.function(e)) return(c(kind_test_calls(formals(e)), kind_test_calls(body(e))))
  if (is.list(e) && !is.pairlist(e)) return(unlist(lapply(e, kind_test_calls)))
  if (is.name(e)) return(if (as.character(e) %in% kind_test_names) as.character(e))
  if (!is.call(e) && !is.pairlist(e) && !is.expression(e)) return(character(0))
  parts <- as.list(e)
  here <- character(0)
  if (is.call(e)) {
    head <- e[[1L]]
    if (is.call(head) && as.character(head[[1L]]) %in% c("::", ":::")) head <- head[[3L]]
    if (is.name(head) && as.character(head) %in% kind_test_names) {
      here <- paste(deparse(e), collapse = " ")
      parts <- parts[-1L]
    }
  }
  c(here, unlist(lapply(parts, function(part) if (!missing(part)) kind_test_calls(part))))
}

test_that("only input checks, conversions and refusals test the kind of an object", {
  ns <- asNamespace("fastkpca")
  found <- list()
  for (nm in ls(ns, all.names = TRUE)) {
    obj <- get(nm, envir = ns)
    if (is.primitive(obj)) next
    calls <- kind_test_calls(obj)
    if (length(calls) > 0L) found[[nm]] <- calls
  }
  unlisted <- found[setdiff(names(found), names(kind_test_allowed))]
  expect_identical(names(unlisted), character(0), info = paste(c(
    "dispatch on the rows (R/rows.R) or the fit, or list the place here with a reason:",
    sprintf("%s: %s", names(unlisted), vapply(unlisted, paste, "", collapse = "; "))),
    collapse = "\n"))
  # every listed place is a function of the package that still tests a
  # kind (a renamed one is listed again, under its new name; one that no
  # longer tests leaves the list)
  expect_true(all(vapply(names(kind_test_allowed), exists, NA, envir = ns, inherits = FALSE)))
  expect_identical(setdiff(names(kind_test_allowed), names(found)), character(0))
  # the walk sees a kind test where there is one
  expect_identical(kind_test_calls(function(x) if (base::inherits(x, "a")) 1),
                   "base::inherits(x, \"a\")")
  expect_identical(unname(kind_test_calls(list(f = function(x) g(is_sparse_data(x))))),
                   "is_sparse_data(x)")
  expect_identical(kind_test_calls(function(p) vapply(p, inherits, NA, "a")), "inherits")
  expect_identical(kind_test_calls(function(x) UseMethod("f", "inherits")), character(0))
})

test_that("the rows' methods give the same for a dense matrix and sparse rows", {
  ns <- asNamespace("fastkpca")
  set.seed(3)
  x <- matrix(as.double(rbinom(60, 3, 0.3)), 12, 5,
              dimnames = list(letters[1:12], LETTERS[1:5]))
  x[c(2, 7), 3] <- NA
  s <- ns$as_sparse_rows(Matrix::Matrix(x, sparse = TRUE))
  dense <- function(v) if (inherits(v, "fastkpca_sparse_rows")) as.matrix(v) else v
  expect_identical(ns$complete_rows(s), unname(ns$complete_rows(x)))
  expect_null(ns$complete_rows(s[-c(2, 7), ]))
  omitted <- ns$apply_na_action(s, stats::na.omit)
  expect_identical(dense(omitted)[, ], stats::na.omit(x)[, ])
  expect_identical(attr(omitted, "na.action"), attr(stats::na.omit(x), "na.action"))
  x <- stats::na.omit(x)[, ]
  s <- omitted
  attr(s, "na.action") <- NULL
  x_inf <- x
  x_inf[1, 1] <- Inf
  for (v in list(x_inf, ns$as_sparse_rows(Matrix::Matrix(x_inf, sparse = TRUE))))
    expect_error(ns$check_finite(v, "x"), "infinite", class = "fastkpca_error_argument")
  expect_equal(dense(ns$scale_columns(s, FALSE, TRUE)$x), ns$scale_columns(x, FALSE, TRUE)$x,
               tolerance = 1e-14)
  expect_equal(ns$column_moments(s), ns$column_moments(x), tolerance = 1e-14)
  expect_equal(ns$squared_distances(s), ns$squared_distances(x), tolerance = 1e-12)
  expect_identical(ns$row_labels(s), rownames(x))
  expect_identical(dense(ns$take_rows(s, 2:3)), x[2:3, ])
  # rows alike, in the three kinds
  expect_true(ns$rows_alike(x[c(1, 1, 1), ]) && ns$rows_alike(s[c(4, 4), ]) &&
                ns$rows_alike(c("ab", "ab")))
  expect_false(ns$rows_alike(x) || ns$rows_alike(s) || ns$rows_alike(c("ab", "ba")))
  # one kind from another, and binding: sparse if any part is
  expect_s3_class(ns$rows_like(x, s), "fastkpca_sparse_rows")
  expect_identical(ns$rows_like(s, x), dense(s))
  mixed <- ns$bind_rows(list(x[1:2, ], NULL, s[3:4, ], x[5, , drop = FALSE]))
  expect_s3_class(mixed, "fastkpca_sparse_rows")
  expect_identical(dense(mixed), x[1:5, ])
  expect_identical(ns$bind_rows(list(x[1:2, ], x[3:4, ])), x[1:4, ])
  expect_null(ns$bind_rows(list(NULL)))
})

test_that("dense newdata of a sparse fit keeps its missing values missing", {
  set.seed(5)
  x <- Matrix::rsparsematrix(40, 6, density = 0.4, rand.x = function(n) rnorm(n))
  fit <- kpca(x, features = 2)
  z <- as.matrix(x[1:5, ])
  z[2, 3] <- NA
  expected <- predict(fit, Matrix::Matrix(z, sparse = TRUE))
  expect_true(all(is.na(expected[2, ])) && !anyNA(expected[-2, ]))
  # the dense rows made sparse keep the NA (it was dropped as a zero)
  expect_identical(predict(fit, z), expected)
})
