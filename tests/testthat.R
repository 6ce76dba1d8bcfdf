# testthat is suggested: without it (a check with only the hard
# dependencies installed) the tests say so and stop
if (requireNamespace("testthat", quietly = TRUE)) {
  library(testthat)
  library(fastkpca)
  test_check("fastkpca")
} else {
  message("testthat is not installed: the tests are skipped")
}
