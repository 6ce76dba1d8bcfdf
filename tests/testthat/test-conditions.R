# The classes of fastkpca's conditions (R/conditions.R, ?fastkpca_conditions).
# The bad-input and argument tests check the class of every error they
# produce; these tests cover the kinds those tables do not reach.

test_that("errors of the C engine come classed from C, whatever their message", {
  # straight from .Call, with no engine_call() around it: the class is the
  # one the C code gives
  x <- matrix(rnorm(20), 10)
  e <- tryCatch(.Call(fastkpca:::C_kernel_self, x, fastkpca:::kernel_program(
    kern("rbfdot", sigma = 1)), list("not weights")), error = identity)
  expect_s3_class(e, "fastkpca_error_argument")
  expect_null(conditionCall(e))
  e <- tryCatch(.Call(fastkpca:::C_kernel_self, x * 1e200, fastkpca:::kernel_program(
    kern("polydot", degree = 3)), list()), error = identity)
  expect_s3_class(e, "fastkpca_error_data")
  expect_match(conditionMessage(e), "^kernel values .*are not finite")
  # a singular system (two equal points: two equal rows of k(Z, Z), a
  # ridge below their rounding): LAPACK reports it, a numerical error
  z <- rbind(c(0, 0), c(0, 0), c(1, 1))
  e <- tryCatch(fastkpca:::preimage_coefficients(z, matrix(1, 3, 1), kern("rbfdot", sigma = 1),
                                                 ridge = 1e-300, threads = 1L),
                error = identity)
  expect_s3_class(e, "fastkpca_error_numerical")
  expect_match(conditionMessage(e), "singular: increase 'ridge'")
})

test_that("R's own errors inside C are memory when an allocation fails, else argument", {
  kind_of <- function(expr) class(tryCatch(fastkpca:::engine_call(expr), error = identity))[1:2]
  expect_identical(kind_of(stop("cannot allocate vector of size 3.2 Gb")),
                   c("fastkpca_error_memory", "fastkpca_error"))
  expect_identical(kind_of(stop("vector memory exhausted (limit reached?)")),
                   c("fastkpca_error_memory", "fastkpca_error"))
  expect_identical(kind_of(stop("cannot allocate memory block of size 8.0 Tb")),
                   c("fastkpca_error_memory", "fastkpca_error"))
  # the text is no longer read for other kinds: these come classed from C
  expect_identical(kind_of(stop("error code 3 from LAPACK routine 'dsyevr'")),
                   c("fastkpca_error_argument", "fastkpca_error"))
  expect_identical(kind_of(stop("long vectors not supported yet: memory.c:3")),
                   c("fastkpca_error_argument", "fastkpca_error"))
  # a template matches the whole message only
  expect_identical(kind_of(stop("'x': cannot allocate vector of size 3.2 Gb, said the reader")),
                   c("fastkpca_error_argument", "fastkpca_error"))
  # the message stays, with no call, and the original error is kept
  e <- tryCatch(fastkpca:::engine_call(stop("cannot allocate vector of size 3.2 Gb")),
                error = identity)
  expect_identical(conditionMessage(e), "cannot allocate vector of size 3.2 Gb")
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

test_that("a failed allocation inside C is a memory error in German too", {
  # a child R whose messages are in German, with a vector heap of 100 MB:
  # the kernel matrix of 4000 points (128 MB), allocated in C, fails there
  out <- run_child_r(c(
    "suppressPackageStartupMessages(library(fastkpca))",
    "english <- fastkpca:::allocation_templates",
    "cat('translated:', !identical(gettext(english[7], domain = 'R'), english[7]), '\\n')",
    "invisible(mem.maxVSize(100))",
    "e <- tryCatch(kernel_matrix('rbfdot', matrix(seq(0, 1, length.out = 4000)),",
    "                            kpar = list(sigma = 1), threads = 1), error = identity)",
    "invisible(mem.maxVSize(Inf))",
    "cat('class:', class(e)[1], '\\n')",
    "cat('parent:', class(e$parent)[1], '\\n')",
    "cat('english:', any(vapply(english, function(t)",
    "  grepl(fastkpca:::template_pattern(t), conditionMessage(e)), NA)), '\\n')",
    "cat('message:', conditionMessage(e), '\\n')",
    "d <- tryCatch(kpca(matrix(c(1e300, -1e300, 2e300, 1e300), 4, 2), kernel = 'vanilladot',",
    "                   features = 1), error = identity)",
    "cat('data:', class(d)[1], '\\n')"),
    env = c("LANGUAGE=de", "LC_ALL=C.UTF-8"))
  info <- paste(out, collapse = "\n")
  skip_if(any(grepl("^translated: FALSE", out)),
          "R has no German translation of its messages here (package r-base-core's translations)")
  expect_true("translated: TRUE " %in% out, info = info)
  expect_true("class: fastkpca_error_memory " %in% out, info = info)
  expect_true("parent: simpleError " %in% out, info = info)
  # the message is R's own, in German: no English template matches it
  expect_true("english: FALSE " %in% out, info = info)
  expect_true("data: fastkpca_error_data " %in% out, info = info)
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
