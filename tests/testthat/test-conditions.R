# The classes of fastkpca's conditions (R/conditions.R, ?fastkpca_conditions).
# The bad-input and argument tests check the class of every error they
# produce; these tests cover the kinds those tables do not reach.

test_that("errors of the C engine are classed by what they report", {
  kind_of <- function(expr) class(tryCatch(fastkpca:::engine_call(expr), error = identity))[1:2]
  expect_identical(kind_of(stop("cannot allocate vector of size 3.2 Gb")),
                   c("fastkpca_error_memory", "fastkpca_error"))
  expect_identical(kind_of(stop("error code 3 from LAPACK routine 'dsyevr'")),
                   c("fastkpca_error_numerical", "fastkpca_error"))
  expect_identical(kind_of(stop("kernel values are not finite: try a smaller sigma")),
                   c("fastkpca_error_data", "fastkpca_error"))
  expect_identical(kind_of(stop("'x' must be a double matrix")),
                   c("fastkpca_error_argument", "fastkpca_error"))
  # the message stays, with no call, and the original error is kept
  e <- tryCatch(fastkpca:::engine_call(stop("error code 3 from LAPACK routine 'dpotrf'")), error = identity)
  expect_identical(conditionMessage(e), "error code 3 from LAPACK routine 'dpotrf'")
  expect_null(conditionCall(e))
  expect_s3_class(e$parent, "simpleError")
  # a fastkpca error passes through unchanged
  inner <- tryCatch(fastkpca:::stop_memory("too big"), error = identity)
  expect_identical(tryCatch(fastkpca:::engine_call(stop(inner)), error = identity), inner)
  # interrupts are not errors: fastkpca:::engine_call() lets them through
  expect_identical(class(tryCatch(fastkpca:::engine_call(signalCondition(
    structure(class = c("interrupt", "condition"), list()))), condition = identity))[1],
    "interrupt")
})

test_that("kernel values that overflow in C are a data error", {
  big <- matrix(c(1e300, -1e300, 2e300, 1e300), 4, 2)
  expect_error(kpca(big, kernel = "vanilladot", features = 1), "not finite",
               class = "fastkpca_error_data")
})

test_that("an error on behalf of another keeps its class or gains one, and the parent", {
  e <- tryCatch(kpca(as.matrix(iris[1:20, 1:4]),
                     kernel = kern_conformal(rbfdot(sigma = 0.2), function(z) stop("no g today")),
                     features = 2), error = identity)
  expect_s3_class(e, "fastkpca_error_argument")
  expect_match(conditionMessage(e), "'g' of the conformal kernel failed: no g today")
  expect_identical(conditionMessage(e$parent), "no g today")
  # a fastkpca error inside keeps its kind (here the memory refusal)
  inner <- tryCatch(fastkpca:::stop_memory("a fit on 1e6 rows needs about 7.3 TiB"), error = identity)
  outer <- tryCatch(fastkpca:::stop_from(inner, "step_fastkpca() could not fit kpca(): ..."),
                    error = identity)
  expect_s3_class(outer, "fastkpca_error_memory")
  expect_identical(outer$parent, inner)
})

test_that("warnings are classed, and the flat kernel's older class stays", {
  x <- as.matrix(iris[1:30, 1:4])
  w <- tryCatch(kpca(x, kpar = list(sigma = 1e4), features = 2), warning = identity)
  expect_identical(class(w), c("fastkpca_flat_kernel", "fastkpca_warning_data",
                               "fastkpca_warning", "warning", "condition"))
  K <- tcrossprod(matrix(rnorm(40), 20))
  w <- tryCatch(kpca(K, kernel = "precomputed", kpar = list(sigma = 1), features = 1),
                warning = identity)
  expect_s3_class(w, "fastkpca_warning_argument")
  expect_match(conditionMessage(w), "'kpar' is ignored")
})
