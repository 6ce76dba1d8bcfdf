# The argument checkers of R/validate.R: one per kind, one wording.

test_that("check_choice() takes one of the choices, and the default vector", {
  cc <- fastkpca:::check_choice
  expect_identical(cc("b", c("a", "b"), "arg"), "b")
  expect_identical(cc(c("a", "b"), c("a", "b"), "arg"), "a")
  for (bad in list("c", NA_character_, c("a", "b", "a"), 1, NULL, character(0), "A"))
    expect_error(cc(bad, c("a", "b"), "arg"), "^'arg' must be one of \"a\", \"b\"$")
})

test_that("check_whole() takes whole numbers in range, as integers", {
  cw <- fastkpca:::check_whole
  expect_identical(cw(3, "k", 0, 10), 3L)
  expect_identical(cw(0L, "k", 0, 10), 0L)
  for (bad in list(-1, 11, 2.5, NA, NaN, Inf, "3", TRUE, c(1, 2), NULL))
    expect_error(cw(bad, "k", 0, 10), "^'k' must be a whole number between 0 and 10$")
  expect_error(cw(11, "features", 0, 10, hi_label = "nrow(x)"),
               "^'features' must be a whole number between 0 and nrow\\(x\\) \\(10\\)$")
  expect_error(cw(1, "landmarks", 3, 10, lo_label = "max(2, features + 1)"),
               "between max\\(2, features \\+ 1\\) \\(3\\) and 10$")
})

test_that("check_number() takes single finite numbers in range, as doubles", {
  cn <- fastkpca:::check_number
  expect_identical(cn(2L, "s"), 2)
  expect_identical(cn(0, "th", lo = 0), 0)
  expect_identical(cn(1, "v", 0, 1, lo_open = TRUE), 1)
  for (bad in list(NA, Inf, "1", c(1, 2), NULL, list(1)))
    expect_error(cn(bad, "s"), "^'s' must be a single finite number$")
  expect_error(cn(-1, "th", lo = 0), "^'th' must be a single non-negative number$")
  expect_error(cn(0, "ridge", lo = 0, lo_open = TRUE), "^'ridge' must be a single positive number$")
  expect_error(cn(0, "v", 0, 1, lo_open = TRUE), "^'v' must be a single number in \\(0, 1\\]$")
  expect_error(cn(1.5, "v", 0, 1, lo_open = TRUE), "^'v' must be a single number in \\(0, 1\\]$")
  expect_error(cn(-0.5, "p", 0, 1), "^'p' must be a single number in \\[0, 1\\]$")
  expect_identical(fastkpca:::check_positive(0.5, "ridge"), 0.5)
  expect_error(fastkpca:::check_positive(-1, "ridge"), "'ridge' must be a single positive number")
})

test_that("the data checks coerce what they can and name the argument", {
  adm <- fastkpca:::as_data_matrix
  m <- adm(data.frame(a = 1:3, b = c(TRUE, FALSE, TRUE)), "x")
  expect_identical(storage.mode(m), "double")
  expect_identical(dim(m), c(3L, 2L))
  expect_identical(dim(adm(1:4, "x")), c(4L, 1L))
  expect_error(adm(data.frame(a = 1, f = "u"), "newdata"), "^'newdata' has non-numeric column: f$")
  expect_error(adm(NULL, "y"), "^'y' must not be NULL$")
  expect_error(adm(factor(1:3), "y"), "^'y' must be numeric, not a factor$")
  expect_error(adm(list(1, 2), "y"), "^'y' must be a numeric matrix or data frame, not a list$")
  expect_error(adm(array(0, c(2, 2, 2)), "y"), "^'y' must be a matrix, not an array$")
  expect_error(fastkpca:::check_finite(c(1, NA), "y"), "^'y' must not contain missing values")
  expect_error(fastkpca:::check_finite(c(1, Inf), "y"), "^'y' must not contain infinite values$")
  expect_silent(fastkpca:::check_no_infinite(c(1, NA), "y"))
})

test_that("value_flags() finds missing and infinite values as anyNA() and is.infinite() do", {
  # one pass in C, on one thread and on the team (vectors from 2^20 values
  # on a thread), a bad value at either end, in the middle and at a
  # thread's boundary
  flags <- fastkpca:::value_flags
  oracle <- function(v) c(anyNA(v), any(is.infinite(v)))
  n <- 2^21 + 3
  for (bad in list(NA_real_, NaN, Inf, -Inf, c(NA, Inf), c(-Inf, NaN))) {
    for (at in c(1, n %/% 2, n %/% 2 + 1, n)) {
      v <- rep(-1.5, n)
      v[at + seq_along(bad) - 1 - (at == n) * (length(bad) - 1)] <- bad
      for (threads in 1:2) expect_identical(flags(v, threads), oracle(v))
    }
  }
  for (v in list(numeric(0), 0, c(1, NA), c(1, -Inf), .Machine$double.xmax * c(1, -1),
                 matrix(c(1, 2, NaN, 4), 2), c(5e-324, -0)))
    expect_identical(flags(v, 2L), oracle(v))
  expect_identical(flags(rep(1, n), 2L), c(FALSE, FALSE))
  expect_true(fastkpca:::any_infinite(c(NA, Inf)))
  expect_false(fastkpca:::any_infinite(c(1L, NA)))
  expect_error(flags(1:3), class = "fastkpca_error_argument")
})

test_that("the settings checks of kpca() use the checkers", {
  expect_identical(fastkpca:::check_features(3, 10), 3L)
  expect_error(fastkpca:::check_features(11, 10), "between 0 and nrow\\(x\\) \\(10\\)")
  expect_identical(fastkpca:::check_threads(2), 2L)
  expect_error(fastkpca:::check_threads(0), "^'threads' must be a whole number between 1 and 1024$")
  expect_error(fastkpca:::check_threads(2.5, "getOption(\"fastkpca.threads\")"),
               "^'getOption\\(\"fastkpca.threads\"\\)' must be")
  expect_error(fastkpca:::check_no_dots(a = 1, 2), "^unused arguments: a, \\(unnamed\\)$")
  expect_silent(fastkpca:::check_no_dots())
})
