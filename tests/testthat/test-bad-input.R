# Bad input: every case ends in an R error that names the argument (or the
# variable), in lower case without a trailing period, or in a documented
# warning with finite results. Nothing crashes, hangs or returns NaN.
#
# The table-driven tests below run each case and count them; the counts are
# printed by the last test of this file.

# Small fixtures, built inside the tests that use them.
bad_input_data <- function() {
  x <- as.matrix(iris[seq(1, 150, by = 5), 1:4])          # 30 x 4, named columns
  rownames(x) <- NULL
  K <- exp(-0.5 * as.matrix(stats::dist(x))^2)           # an rbf kernel matrix
  dimnames(K) <- NULL
  list(x = x, K = K, n = nrow(x))
}

# Run a table of cases: each list(label, expression, pattern). The error must
# match the pattern and read as a fastkpca error (no trailing period).
expect_bad_input_cases <- function(cases, env) {
  for (case in cases) {
    err <- tryCatch({
      withCallingHandlers(eval(case[[2]], env),
                          warning = function(w) invokeRestart("muffleWarning"))
      NULL
    }, error = function(e) record_error("bad-input", case[[1]], e))
    expect_true(inherits(err, "error"), info = paste(case[[1]], ": no error"))
    if (!inherits(err, "error")) next
    msg <- conditionMessage(err)
    expect_match(msg, case[[3]], info = case[[1]])
    expect_false(grepl("\\.\\s*$", msg), info = paste(case[[1]], ": trailing period:", msg))
  }
  length(cases)
}

# How many bad-input cases each test covered (reported at the end).
bad_input_count <- new.env()

test_that("bad data are refused with an error naming 'x'", {
  d <- bad_input_data()
  env <- list2env(d, parent = environment())
  n_na_all <- matrix(NA_real_, 10, 3)
  cases <- list(
    list("character matrix", quote(kpca(matrix(letters[1:12], 6))), "'x' must be numeric, not character"),
    list("character vector with a numeric kernel", quote(kpca(letters, kernel = "rbfdot")), "'x' must be numeric, not character"),
    list("factor", quote(kpca(factor(1:10))), "'x' must be numeric, not a factor"),
    list("complex", quote(kpca(complex(real = 1:10, imaginary = 1))), "'x' must be numeric, not complex"),
    list("complex matrix", quote(kpca(matrix(1i, 4, 2))), "'x' must be numeric, not complex"),
    list("raw", quote(kpca(as.raw(1:10))), "'x' must be numeric, not raw"),
    list("NULL", quote(kpca(NULL)), "'x' must not be NULL"),
    list("unnamed list", quote(kpca(list(1, 2, 3))), "'x' must be a numeric matrix or data frame, not a list"),
    list("named list", quote(kpca(list(a = 1:3, b = 4:6))), "'x' must be a numeric matrix or data frame, not a list"),
    list("function", quote(kpca(function(v) v)), "'x' must be numeric"),
    list("environment", quote(kpca(new.env())), "'x' must be numeric"),
    list("3-d array", quote(kpca(array(0, c(3, 3, 3)))), "'x' must be a matrix"),
    list("zero rows", quote(kpca(x[0, ])), "'x' must have at least 2 rows"),
    list("one row", quote(kpca(x[1, , drop = FALSE])), "'x' must have at least 2 rows"),
    list("zero columns", quote(kpca(x[, 0])), "'x' must have at least one column"),
    list("0 x 0 matrix", quote(kpca(matrix(numeric(0), 0, 0))), "'x' must have at least"),
    list("Inf", quote({ y <- x; y[3, 2] <- Inf; kpca(y) }), "'x' must not contain infinite values"),
    list("-Inf", quote({ y <- x; y[1, 1] <- -Inf; kpca(y, features = 2) }), "'x' must not contain infinite values"),
    list("NaN with na.fail", quote({ y <- x; y[3, 2] <- NaN; kpca(y, na.action = na.fail) }), "missing values"),
    list("NA with na.fail", quote({ y <- x; y[5, 1] <- NA; kpca(y, na.action = na.fail) }), "missing values"),
    list("all rows NA", quote(kpca(n_na_all)), "'x' must have at least 2 rows \\(after 'na.action'\\)"),
    list("one row left after na.omit", quote({ y <- x[1:3, ]; y[1:2, 1] <- NA; kpca(y) }), "at least 2 rows"),
    list("data.frame with character column", quote(kpca(data.frame(a = 1:5, b = letters[1:5]))), "'x' has non-numeric column: b"),
    list("data.frame with factor column", quote(kpca(iris)), "'x' has non-numeric column: Species"),
    list("data.frame with Date column", quote(kpca(data.frame(a = as.Date("2020-01-01") + 1:5, b = 1:5))), "'x' has non-numeric column: a"),
    list("data.frame with list column", quote(kpca(data.frame(a = I(list(1, 2, 3)), b = 1:3))), "'x' has non-numeric column: a"),
    list("data.frame with matrix column", quote(kpca(data.frame(a = 1:5, m = I(matrix(1:10, 5))))), "'x' has non-numeric column: m"),
    list("empty data.frame", quote(kpca(data.frame())), "'x' must have at least one column"),
    list("unused argument", quote(kpca(x, foo = 1)), "unused argument: foo"),
    list("formula with a response", quote(kpca(Species ~ Sepal.Length, data = iris)), "'x' must be a formula without a response"),
    list("formula with a missing variable", quote(kpca(~ a + b, data = data.frame(a = 1:5))), "'b' not found")
  )
  env$n_na_all <- n_na_all
  bad_input_count$data <- expect_bad_input_cases(cases, env)
})

test_that("bad 'features', 'th', 'kernel', 'solver' and 'threads' are refused", {
  d <- bad_input_data()
  env <- list2env(d, parent = environment())
  feat <- "'features' must be a whole number between 0 and nrow\\(x\\) \\(30\\)"
  cases <- list(
    list("features negative", quote(kpca(x, features = -1)), feat),
    list("features fractional", quote(kpca(x, features = 1.5)), feat),
    list("features NA", quote(kpca(x, features = NA)), feat),
    list("features NA_real_", quote(kpca(x, features = NA_real_)), feat),
    list("features a vector", quote(kpca(x, features = 1:2)), feat),
    list("features larger than n", quote(kpca(x, features = 31)), feat),
    list("features character", quote(kpca(x, features = "2")), feat),
    list("features Inf", quote(kpca(x, features = Inf)), feat),
    list("features logical", quote(kpca(x, features = TRUE)), feat),
    list("features NULL", quote(kpca(x, features = NULL)), feat),
    list("features huge", quote(kpca(x, features = 2^31)), feat),
    list("th negative", quote(kpca(x, th = -1)), "'th' must be a single non-negative number"),
    list("th NA", quote(kpca(x, th = NA)), "'th' must be a single non-negative number"),
    list("th character", quote(kpca(x, th = "1")), "'th' must be a single non-negative number"),
    list("th Inf", quote(kpca(x, th = Inf)), "'th' must be a single non-negative number"),
    list("th a vector", quote(kpca(x, th = c(1, 2))), "'th' must be a single non-negative number"),
    list("th above every eigenvalue", quote(kpca(x, th = 1e300)), "no eigenvalue of the centered kernel matrix exceeds 'th'"),
    list("unknown kernel", quote(kpca(x, kernel = "foo")), "'kernel' must be one of .* not \"foo\""),
    list("kernel in upper case", quote(kpca(x, kernel = "RBFDOT")), "'kernel' must be one of"),
    list("empty kernel name", quote(kpca(x, kernel = "")), "'kernel' must be one of"),
    list("kernel NA", quote(kpca(x, kernel = NA_character_)), "'kernel' must be a kernel name"),
    list("kernel numeric", quote(kpca(x, kernel = 1)), "'kernel' must be a kernel name"),
    list("kernel a vector", quote(kpca(x, kernel = c("rbfdot", "polydot"))), "'kernel' must be a kernel name"),
    list("kernel a function", quote(kpca(x, kernel = function(a, b) sum(a * b))), "'kernel' must be a kernel name"),
    list("unknown solver", quote(kpca(x, solver = "foo")), "'solver'"),
    list("solver NA", quote(kpca(x, solver = NA)), "'solver'"),
    list("solver numeric", quote(kpca(x, solver = 1)), "'solver'"),
    list("iterative solver without features", quote(kpca(x, features = 0, solver = "iterative")), "'features'"),
    list("threads 0", quote(kpca(x, threads = 0)), "'threads' must be a whole number between 1 and 1024"),
    list("threads negative", quote(kpca(x, threads = -1)), "'threads' must be a whole number"),
    list("threads NA", quote(kpca(x, threads = NA)), "'threads' must be a whole number"),
    list("threads fractional", quote(kpca(x, threads = 1.5)), "'threads' must be a whole number"),
    list("threads character", quote(kpca(x, threads = "2")), "'threads' must be a whole number"),
    list("threads huge", quote(kpca(x, threads = 1e6)), "'threads' must be a whole number"),
    list("threads option 0", quote(local({
      old <- options(fastkpca.threads = 0); on.exit(options(old)); kpca(x)
    })), "fastkpca.threads")
  )
  bad_input_count$arguments <- expect_bad_input_cases(cases, env)
})

test_that("bad 'kpar' entries are refused with an error naming the entry", {
  d <- bad_input_data()
  env <- list2env(d, parent = environment())
  num <- "must be a single finite number"
  cases <- list(
    list("unknown entry", quote(kpca(x, kpar = list(foo = 1))), "'kpar' has unknown entry \"foo\" for kernel \"rbfdot\""),
    list("entry of another kernel", quote(kpca(x, kernel = "polydot", kpar = list(sigma = 1))), "unknown entry \"sigma\""),
    list("entry for vanilladot", quote(kpca(x, kernel = "vanilladot", kpar = list(sigma = 1))), "its parameters: none"),
    list("sigma character", quote(kpca(x, kpar = list(sigma = "a"))), paste("'kpar\\$sigma'", num)),
    list("sigma NA", quote(kpca(x, kpar = list(sigma = NA))), paste("'kpar\\$sigma'", num)),
    list("sigma NaN", quote(kpca(x, kpar = list(sigma = NaN))), paste("'kpar\\$sigma'", num)),
    list("sigma NULL", quote(kpca(x, kpar = list(sigma = NULL))), paste("'kpar\\$sigma'", num)),
    list("sigma a vector", quote(kpca(x, kpar = list(sigma = c(1, 2)))), paste("'kpar\\$sigma'", num)),
    list("sigma a list", quote(kpca(x, kpar = list(sigma = list(1)))), paste("'kpar\\$sigma'", num)),
    list("sigma Inf", quote(kpca(x, kpar = list(sigma = Inf))), paste("'kpar\\$sigma'", num)),
    list("sigma complex", quote(kpca(x, kpar = list(sigma = 1i))), paste("'kpar\\$sigma'", num)),
    list("sigma 0", quote(kpca(x, kpar = list(sigma = 0))), "'kpar\\$sigma' must be positive"),
    list("sigma negative", quote(kpca(x, kpar = list(sigma = -1))), "'kpar\\$sigma' must be positive"),
    list("laplacedot sigma negative", quote(kpca(x, kernel = "laplacedot", kpar = list(sigma = -0.1))), "'kpar\\$sigma' must be positive"),
    list("anovadot sigma 0", quote(kpca(x, kernel = "anovadot", kpar = list(sigma = 0))), "'kpar\\$sigma' must be positive"),
    list("besseldot sigma negative", quote(kpca(x, kernel = "besseldot", kpar = list(sigma = -2))), "'kpar\\$sigma' must be positive"),
    list("kpar a string", quote(kpca(x, kpar = "a")), "'kpar' must be a named list"),
    list("kpar unnamed", quote(kpca(x, kpar = list(0.5))), "'kpar' must be a named list"),
    list("kpar a function", quote(kpca(x, kpar = function() 1)), "'kpar' must be a named list"),
    list("kpar partly named", quote(kpca(x, kernel = "polydot", kpar = list(degree = 2, 3))), "'kpar' must be a named list"),
    list("kpar names an entry twice", quote(kpca(x, kpar = list(sigma = 1, sigma = 2))), "names a parameter twice"),
    list("polydot degree fractional", quote(kpca(x, kernel = "polydot", kpar = list(degree = 1.5))), "'kpar\\$degree' must be a whole number of at least 1"),
    list("polydot degree 0", quote(kpca(x, kernel = "polydot", kpar = list(degree = 0))), "'kpar\\$degree' must be a whole number of at least 1"),
    list("polydot degree negative", quote(kpca(x, kernel = "polydot", kpar = list(degree = -2))), "'kpar\\$degree' must be a whole number"),
    list("polydot degree NA", quote(kpca(x, kernel = "polydot", kpar = list(degree = NA_real_))), paste("'kpar\\$degree'", num)),
    list("polydot degree NULL", quote(kpca(x, kernel = "polydot", kpar = list(degree = NULL))), paste("'kpar\\$degree'", num)),
    list("polydot scale NA", quote(kpca(x, kernel = "polydot", kpar = list(scale = NA))), paste("'kpar\\$scale'", num)),
    list("polydot offset Inf", quote(kpca(x, kernel = "polydot", kpar = list(offset = Inf))), paste("'kpar\\$offset'", num)),
    list("tanhdot scale character", quote(kpca(x, kernel = "tanhdot", kpar = list(scale = "1"))), paste("'kpar\\$scale'", num)),
    list("anovadot degree 0.5", quote(kpca(x, kernel = "anovadot", kpar = list(degree = 0.5))), "'kpar\\$degree' must be a whole number"),
    list("besseldot degree 2.5", quote(kpca(x, kernel = "besseldot", kpar = list(degree = 2.5))), "'kpar\\$degree' must be a whole number"),
    list("besseldot order negative", quote(kpca(x, kernel = "besseldot", kpar = list(order = -1))), "'kpar\\$order' must be between 0 and 50"),
    list("besseldot order too large", quote(kpca(x, kernel = "besseldot", kpar = list(order = 51))), "'kpar\\$order' must be between 0 and 50"),
    list("besseldot order huge", quote(kpca(x, kernel = "besseldot", kpar = list(order = 1e4))), "'kpar\\$order' must be between 0 and 50")
  )
  bad_input_count$kpar <- expect_bad_input_cases(cases, env)
})

test_that("bad kernel parameters of kernlab kernel objects are refused by name", {
  skip_if_not_installed("kernlab")
  env <- list2env(bad_input_data(), parent = environment())
  cases <- list(
    list("kernlab object with a negative sigma", quote(kpca(x, kernel = kernlab::rbfdot(sigma = -1))), "'kpar\\$sigma' must be positive"),
    list("kernlab object with a fractional degree", quote(kpca(x, kernel = kernlab::polydot(degree = 2.5))), "'kpar\\$degree'"),
    list("kernlab string kernel on numbers", quote(kpca(x, kernel = kernlab::stringdot())), "'x' must be a character vector or a list of strings for a string kernel")
  )
  bad_input_count$kpar_kernlab <- expect_bad_input_cases(cases, env)
})

test_that("bad 'na.action' is refused with an error naming it", {
  d <- bad_input_data()
  env <- list2env(d, parent = environment())
  env$y <- d$x
  env$y[2, 3] <- NA
  cases <- list(
    list("na.action a number", quote(kpca(y, na.action = 1)), "'na.action' must be a function"),
    list("na.action returns a scalar", quote(kpca(y, na.action = function(v) 1)), "'na.action' must return the data as a matrix"),
    list("na.action keeps the NA", quote(kpca(y, na.action = function(v) v)), "'x' must not contain missing values"),
    # R/kpca.R's apply_na_action() does not catch get()'s error: see the report
    list("na.action names no function", quote(kpca(y, na.action = "no_such_function")), "'na.action'")
  )
  bad_input_count$na.action <- expect_bad_input_cases(cases, env)
})

test_that("precomputed kernel matrices: not square, not symmetric, NA, not numeric", {
  skip_if_exact_solver_unsafe()
  d <- bad_input_data()
  env <- list2env(d, parent = environment())
  cases <- list(
    list("not square", quote(kpca(K[, 1:10], kernel = "precomputed")), "'x' must be a square kernel matrix .*not 30 x 10"),
    list("a vector", quote(kpca(K[1, ], kernel = "precomputed")), "'x' must be a numeric kernel matrix"),
    list("not symmetric", quote({ A <- K; A[1, 2] <- A[1, 2] + 0.01; kpca(A, kernel = "precomputed") }), "'x' must be a symmetric kernel matrix"),
    list("NA", quote({ A <- K; A[2, 5] <- NA; kpca(A, kernel = "precomputed") }), "'x' must not contain missing or infinite values"),
    list("NaN on the diagonal", quote({ A <- K; A[4, 4] <- NaN; kpca(A, kernel = "precomputed", features = 2) }), "'x' must not contain missing or infinite values"),
    list("Inf", quote({ A <- K; A[1, 1] <- Inf; kpca(A, kernel = "precomputed") }), "'x' must not contain missing or infinite values"),
    list("character", quote(kpca(matrix(letters[1:4], 2), kernel = "precomputed")), "'x' must be a numeric kernel matrix"),
    list("complex", quote(kpca(matrix(1i, 3, 3), kernel = "precomputed")), "'x' must be a numeric kernel matrix"),
    list("1 x 1", quote(kpca(matrix(1, 1, 1), kernel = "precomputed")), "'x' must have at least 2 rows"),
    list("0 x 0", quote(kpca(matrix(0, 0, 0), kernel = "precomputed")), "'x' must have at least 2 rows"),
    list("values that overflow when centered", quote(kpca(matrix(1e308, 3, 3), kernel = "precomputed")), "centered kernel matrix is not finite"),
    list("constant", quote(kpca(matrix(2, 5, 5), kernel = "precomputed", features = 1)), "no positive eigenvalue")
  )
  bad_input_count$precomputed <- expect_bad_input_cases(cases, env)
})

test_that("a kernel that overflows is an error, never NaN results", {
  skip_if_exact_solver_unsafe()
  d <- bad_input_data()
  env <- list2env(d, parent = environment())
  env$x10 <- d$x * 2        # values up to about 16, as "values around 10"
  not_finite <- "kernel values are not finite"
  cases <- list(
    list("polydot degree 400, features 2", quote(kpca(x10, kernel = "polydot", kpar = list(degree = 400), features = 2)),
         "kernel values are not finite: 'kpar' gives values too large \\(try a smaller degree or scale\\)"),
    list("polydot degree 400, threshold", quote(kpca(x10, kernel = "polydot", kpar = list(degree = 400))), not_finite),
    list("polydot degree 400, iterative", quote(kpca(x10, kernel = "polydot", kpar = list(degree = 400), features = 2, solver = "iterative")), not_finite),
    list("polydot huge scale", quote(kpca(x, kernel = "polydot", kpar = list(degree = 2, scale = 1e300), features = 2)), not_finite),
    list("polydot huge degree", quote(kpca(x, kernel = "polydot", kpar = list(degree = 1e9), features = 2)), not_finite),
    list("anovadot huge degree", quote(kpca(x, kernel = "anovadot", kpar = list(degree = 1e6), features = 2)), "try a smaller degree"),
    list("vanilladot on data near the overflow", quote(kpca(x * 1e160, kernel = "vanilladot", features = 2)), not_finite),
    list("splinedot on huge data", quote(kpca(x * 1e80, kernel = "splinedot", features = 2)), not_finite),
    list("predict: polydot overflow on new data", quote({
      fit <- kpca(x, kernel = "polydot", kpar = list(degree = 60), features = 2)
      predict(fit, x[1:3, ] * 1e6)
    }), "kernel values between 'newdata' and the training data are not finite")
  )
  bad_input_count$overflow <- expect_bad_input_cases(cases, env)

  # around the edge, every result is either that error or finite
  for (degree in c(50, 100, 200, 250, 300, 350)) {
    res <- tryCatch(suppressWarnings(
      kpca(env$x10, kernel = "polydot", kpar = list(degree = degree), features = 2)),
      error = function(e) e)
    if (inherits(res, "error")) {
      expect_match(conditionMessage(res), "not finite|no positive eigenvalue",
                   info = paste("degree", degree))
    } else {
      expect_true(all(is.finite(res$eig)) && all(is.finite(res$alpha)) &&
                    all(is.finite(res$rotated)), info = paste("degree", degree))
    }
  }
})

test_that("data far from the origin or huge in size keep distance kernels exact", {
  skip_if_exact_solver_unsafe()
  d <- bad_input_data()
  x <- d$x
  ref <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 3)
  # a large offset cancels in x - y; it must not cancel the digits too
  for (offset in c(1e6, 1e8)) {
    fit <- kpca(x + offset, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 3)
    expect_equal(fit$eig, ref$eig, tolerance = 1e-8, info = paste("offset", offset))
    expect_equal(abs(fit$rotated), abs(ref$rotated), tolerance = 1e-6,
                 info = paste("offset", offset))
    p <- predict(fit, x[1:5, ] + offset)
    expect_equal(abs(p), abs(ref$rotated[1:5, ]), tolerance = 1e-6, ignore_attr = TRUE)
  }
  fl <- kpca(x + 1e7, kernel = "laplacedot", kpar = list(sigma = 0.3), features = 2)
  rl <- kpca(x, kernel = "laplacedot", kpar = list(sigma = 0.3), features = 2)
  expect_equal(fl$eig, rl$eig, tolerance = 1e-8)
  # norms that overflow: far-apart points have kernel 0, not 1
  big <- kpca(x * 1e200, kernel = "rbfdot", kpar = list(sigma = 1), features = 2)
  expect_true(all(is.finite(big$rotated)))
  expect_equal(big$kernel_mean, 1 / nrow(x))          # K = I
  p <- predict(big, x[1:3, ] * 1e200)
  expect_true(all(is.finite(p)))
})

test_that("predict: wrong columns, names, types and non-finite values are refused", {
  d <- bad_input_data()
  x <- d$x
  fit <- kpca(x, kpar = list(sigma = 0.3), features = 2)
  fd <- kpca(as.data.frame(x), kpar = list(sigma = 0.3), features = 2)
  fu <- kpca(unname(x), kpar = list(sigma = 0.3), features = 2)
  ff <- kpca(~ Sepal.Length + Petal.Width, data = iris[1:60, ], features = 2)
  fs <- kpca(~ Sepal.Length + Species, data = iris[seq(1, 150, by = 3), ], features = 2)
  fk <- kpca(d$K, kernel = "precomputed", features = 2)
  damaged <- fit; damaged$alpha <- NULL
  damaged2 <- fit; damaged2$kernel <- "foo"
  damaged3 <- fit; damaged3$kernel_colmeans <- 1:3
  env <- list2env(list(x = x, fit = fit, fd = fd, fu = fu, ff = ff, fs = fs, fk = fk, K = d$K,
                       damaged = damaged, damaged2 = damaged2, damaged3 = damaged3),
                  parent = environment())
  cases <- list(
    list("too few columns (unnamed)", quote(predict(fit, unname(x[, 1:3]))), "'newdata' must have 4 columns, as the training data, not 3"),
    list("too many columns (unnamed)", quote(predict(fit, cbind(unname(x), 1))), "'newdata' must have 4 columns, as the training data, not 5"),
    list("a named column missing", quote(predict(fit, x[, 1:3])), "'newdata' lacks column Petal.Width"),
    list("a vector of the wrong length", quote(predict(fit, c(1, 2, 3))), "'newdata'"),
    # (rows with NA or NaN give NA scores, as in predict.prcomp: test-prcomp-like.R)
    list("Inf", quote({ z <- x[1:3, ]; z[1, 1] <- Inf; predict(fit, z) }), "'newdata' must not contain infinite values"),
    list("-Inf beside an NA row", quote({ z <- x[1:3, ]; z[2, 2] <- NA; z[1, 1] <- -Inf; predict(fit, z) }), "'newdata' must not contain infinite values"),
    list("character", quote(predict(fit, "a")), "'newdata' must be numeric, not character"),
    list("a list", quote(predict(fit, list(1, 2))), "'newdata' must be a numeric matrix or data frame, not a list"),
    # (extra columns, a factor among them, are ignored by named fits: test-prcomp-like.R)
    list("a needed column is a factor", quote({ z <- as.data.frame(x[1:3, ]); z$Sepal.Length <- factor(z$Sepal.Length); predict(fit, z) }), "'newdata' has non-numeric column: Sepal.Length"),
    list("a needed column is character", quote({ z <- as.data.frame(x[1:3, ]); z$Petal.Width <- "a"; predict(fit, z) }), "'newdata' has non-numeric column: Petal.Width"),
    list("unnamed fit: a factor column", quote(predict(fu, iris[1:3, ])), "'newdata' has non-numeric column: Species"),
    list("unused argument", quote(predict(fit, x, foo = 1)), "unused argument: foo"),
    list("data.frame fit: renamed columns", quote(predict(fd, setNames(as.data.frame(x), paste0("v", 1:4)))), "'newdata' lacks columns Sepal.Length"),
    list("data.frame fit: a column missing", quote(predict(fd, as.data.frame(x)[, -2])), "'newdata' lacks column Sepal.Width"),
    list("formula fit: a variable missing", quote(predict(ff, iris[1:3, c("Sepal.Length", "Sepal.Width")])), "'newdata' lacks variable of the formula: Petal.Width"),
    list("formula fit: a vector", quote(predict(ff, 1:2)), "'newdata' lacks variables of the formula"),
    list("formula fit: a character variable", quote(predict(ff, data.frame(Sepal.Length = "a", Petal.Width = 1))), "'newdata' does not match the training data: variable 'Sepal.Length'"),
    list("formula fit: a factor for a number", quote(predict(ff, data.frame(Sepal.Length = factor("a"), Petal.Width = 1))), "'newdata' does not match the training data"),
    list("formula fit: Inf", quote(predict(ff, data.frame(Sepal.Length = Inf, Petal.Width = 1))), "'newdata' must not contain infinite values"),
    list("formula fit: a new factor level", quote(predict(fs, data.frame(Sepal.Length = 5, Species = "unknown"))), "Species"),
    list("precomputed: wrong width", quote(predict(fk, K[1:3, 1:10])), "'newdata' must be the kernel matrix between new and training rows, with 30 columns, not 10"),
    list("precomputed: Inf", quote({ z <- K[1:3, ]; z[1, 1] <- Inf; predict(fk, z) }), "'newdata' must not contain infinite values"),
    list("a damaged fit: no alpha", quote(predict(damaged, x)), "'object' is not a valid fastkpca fit"),
    list("a damaged fit: unknown kernel", quote(predict(damaged2, x)), "'object' is not a valid fastkpca fit"),
    list("a damaged fit: colmeans", quote(predict(damaged3, x)), "'object' is not a valid fastkpca fit")
  )
  bad_input_count$predict <- expect_bad_input_cases(cases, env)
})

test_that("sparse Matrix objects are kept sparse, and give the dense result", {
  skip_if_not_installed("Matrix")
  x <- bad_input_data()$x
  xs <- Matrix::Matrix(x, sparse = TRUE)
  xs2 <- Matrix::Matrix(x * (x > 3), sparse = TRUE)      # with real zeros
  dense <- kpca(x, kpar = list(sigma = 0.3), features = 3)
  fs <- kpca(xs, kpar = list(sigma = 0.3), features = 3)
  expect_s3_class(fs$xmatrix, "fastkpca_sparse_rows")
  expect_kpca_equal(fs, dense, tol = 1e-10)
  expect_equal(kpca(xs2, kpar = list(sigma = 0.3), features = 3)$eig,
               kpca(as.matrix(xs2), kpar = list(sigma = 0.3), features = 3)$eig)
  expect_equal(predict(dense, xs[1:4, ]), predict(dense, x[1:4, ]))
  # a sparse precomputed kernel matrix too
  K <- bad_input_data()$K
  expect_equal(kpca(Matrix::Matrix(K, sparse = TRUE), kernel = "precomputed", features = 2)$eig,
               kpca(K, kernel = "precomputed", features = 2)$eig)
})

test_that("missing values are dropped by na.omit and the fit stays finite", {
  x <- bad_input_data()$x
  x[c(2, 9), 1] <- NA
  x[4, 3] <- NaN
  fit <- kpca(x, kpar = list(sigma = 0.3), features = 3)
  expect_equal(nrow(fit$rotated), nrow(x) - 3L)
  expect_equal(sort(as.integer(fit$na.action)), c(2L, 4L, 9L))
  expect_true(all(is.finite(fit$alpha)) && all(is.finite(fit$rotated)))
})

test_that("degenerate data: constant data are an error, duplicated rows work", {
  skip_if_exact_solver_unsafe()
  const <- matrix(3, 12, 2)
  expect_error(kpca(const, features = 2), "no positive eigenvalue", class = "fastkpca_error_data")
  expect_error(kpca(const), "no eigenvalue of the centered kernel matrix exceeds 'th'", class = "fastkpca_error_data")
  expect_error(kpca(const, kernel = "vanilladot", features = 1), "no positive eigenvalue", class = "fastkpca_error_data")
  expect_error(kpca(const, features = 2, solver = "iterative"), "no positive eigenvalue", class = "fastkpca_error_data")

  x <- bad_input_data()$x
  dup <- x[rep(1:6, each = 5), ]                          # 30 rows, 6 distinct
  expect_warning(fit <- kpca(dup, kpar = list(sigma = 0.3), features = 10),
                 "only 5 of the 10 requested components")
  expect_equal(length(fit$eig), 5L)
  expect_true(all(fit$eig > 0))
  expect_true(all(is.finite(fit$alpha)) && all(is.finite(fit$rotated)))
  # with features = 0 the zero eigenvalues are below th: no warning
  f0 <- kpca(dup, kpar = list(sigma = 0.3))
  expect_true(all(is.finite(f0$alpha)))
  expect_true(all(is.finite(predict(fit, dup))))
  # rows repeated exactly twice: still finite
  expect_true(all(is.finite(kpca(rbind(x, x), kpar = list(sigma = 0.3), features = 4)$alpha)))
})

test_that("non-PSD kernels: more components than positive eigenvalues warn, finite results", {
  skip_if_exact_solver_unsafe()
  set.seed(11)
  x <- matrix(round(rnorm(40 * 3), 2), 40, 3)
  kp <- list(scale = 2, offset = -1)
  expect_warning(fit <- kpca(x, kernel = "tanhdot", kpar = kp, features = 40),
                 "not positive semidefinite")
  expect_lt(length(fit$eig), 40L)
  expect_true(all(fit$eig > 0))
  expect_true(all(is.finite(fit$alpha)) && all(is.finite(fit$rotated)))
  expect_equal(unname(fit$eig * colSums(fit$alpha^2)), rep(1, length(fit$eig)),
               tolerance = 1e-8)
  p <- predict(fit, x[1:5, ])
  expect_true(all(is.finite(p)))
  # a tanhdot kernel that is nearly constant on these data: the same rules
  res <- tryCatch(suppressWarnings(kpca(x * 100, kernel = "tanhdot", features = 10)),
                  error = function(e) e)
  if (inherits(res, "error")) {
    expect_match(conditionMessage(res), "no positive eigenvalue")
  } else {
    expect_true(all(is.finite(res$alpha)) && all(res$eig > 0))
  }
  # rank-deficient linear kernel (3 columns): 3 components at most
  expect_warning(lin <- kpca(x, kernel = "vanilladot", features = 6), "only 3 of the 6")
  expect_true(all(is.finite(lin$alpha)))
})

test_that("a precomputed matrix symmetric within tolerance is symmetrised", {
  K <- bad_input_data()$K
  set.seed(3)
  E <- matrix(rnorm(length(K)), nrow(K)) * 1e-9         # far below the tolerance
  Ka <- K + E
  fit <- kpca(Ka, kernel = "precomputed", features = 3)
  ref <- kpca((Ka + t(Ka)) / 2, kernel = "precomputed", features = 3)
  expect_equal(fit$eig, ref$eig, tolerance = 1e-12)
  expect_equal(fit$alpha, ref$alpha, tolerance = 1e-10)
  # the user's matrix is left as it was
  expect_identical(Ka, K + E)
  # an asymmetry well above the tolerance is an error
  expect_error(kpca(K + E * 1e5, kernel = "precomputed", features = 3),
               "'x' must be a symmetric kernel matrix", class = "fastkpca_error_argument")
})

test_that("eigenvalues are judged relative to the largest: scaling K changes nothing", {
  skip_if_exact_solver_unsafe()
  x <- bad_input_data()$x
  dup <- x[rep(1:8, length.out = 30), ]                   # rank 7 after centering
  K <- exp(-0.3 * as.matrix(stats::dist(dup))^2)
  counts <- vapply(c(1e-12, 1, 1e12), function(s) {
    fit <- suppressWarnings(kpca(K * s, kernel = "precomputed", features = 12))
    expect_true(all(is.finite(fit$alpha)) && all(is.finite(fit$rotated)))
    expect_equal(unname(fit$eig * colSums(fit$alpha^2)), rep(1, length(fit$eig)),
                 tolerance = 1e-6)
    length(fit$eig)
  }, integer(1))
  expect_equal(counts, rep(7L, 3))
  expect_warning(kpca(K * 1e-12, kernel = "precomputed", features = 12), "only 7 of the 12")
})

test_that("kernels constant to working precision are an error, not noise components", {
  set.seed(8)
  # the linear kernel of data near 1e8: K ~ 1e16, the centered part ~ 1e-14
  x <- 1e8 + matrix(rnorm(40) * 1e-7, 20, 2)
  expect_error(kpca(x, kernel = "vanilladot", features = 2), "rounding level", class = "fastkpca_error_data")
  # (centering the data first is the cure, as the message says)
  fit <- kpca(scale(x, scale = FALSE), kernel = "vanilladot", features = 2)
  expect_true(all(is.finite(fit$rotated)))
  # rbfdot with a sigma so small that K is 1 up to the last bit
  xi <- bad_input_data()$x
  expect_error(kpca(xi, kpar = list(sigma = 1e-17), features = 2),
               "rounding level|no positive eigenvalue", class = "fastkpca_error_data")
  expect_error(kpca(xi, kpar = list(sigma = 1e-17)),
               "rounding level|no eigenvalue of the centered kernel matrix exceeds", class = "fastkpca_error_data")
})

test_that("threshold mode (features = 0) is exact for kernel matrices of any scale", {
  skip_if_exact_solver_unsafe()
  # LAPACK's bisection squares matrix entries: unscaled, entries beyond about
  # 1e77 overflow (an error from 'dstebz') and below about 1e-146 underflow
  # (wrong eigenvalues, silently). dsyevr scales first; so must src/eigen.c.
  K <- bad_input_data()$K
  ref <- kpca(K, kernel = "precomputed", th = 1e-4)
  for (s in c(1e-200, 1e-150, 1e80, 1e200)) {
    fit <- tryCatch(kpca(K * s, kernel = "precomputed", th = 1e-4 * s),
                    error = function(e) e)
    expect_false(inherits(fit, "error"), info = paste("scale", s))
    if (inherits(fit, "error")) next
    expect_equal(length(fit$eig), length(ref$eig), info = paste("scale", s))
    if (length(fit$eig) == length(ref$eig))
      expect_equal(unname(fit$eig) / s, unname(ref$eig), tolerance = 1e-10,
                   info = paste("scale", s))
    expect_true(all(is.finite(fit$alpha)), info = paste("scale", s))
  }
  # the same through a kernel: polydot values around 1e180
  set.seed(4)
  x <- matrix(rnorm(40) * 1e20, 20, 2)
  # (th is absolute: some of the eigenvalues above it are below 1e-12 of the
  # largest, and are dropped with the documented warning)
  f0 <- tryCatch(suppressWarnings(kpca(x, kernel = "polydot",
                                       kpar = list(degree = 5, scale = 0.1), th = 1e-4)),
                 error = function(e) e)
  expect_false(inherits(f0, "error"))
  if (!inherits(f0, "error")) {
    f1 <- suppressWarnings(kpca(x, kernel = "polydot", kpar = list(degree = 5, scale = 0.1),
                                features = length(f0$eig)))
    expect_equal(f0$eig, f1$eig, tolerance = 1e-8)
  }
})

test_that("besseldot up to the largest order works without a flood of warnings", {
  skip_if_exact_solver_unsafe()
  x <- bad_input_data()$x
  expect_silent(fit <- kpca(x, kernel = "besseldot",
                            kpar = list(sigma = 0.05, order = 50, degree = 1), features = 2))
  expect_true(all(is.finite(fit$alpha)))
  expect_silent(kpca(x, kernel = "besseldot", kpar = list(sigma = 2, order = 0.5, degree = 3),
                     features = 2))
})

test_that("an n x n buffer too large for memory is refused before any work", {
  x <- matrix(stats::runif(2e6), ncol = 1)
  # R refuses it from the memory the system can still give (a system that
  # does not tell leaves it to the allocation in C: test-memory.R)
  skip_if(is.na(fastkpca:::available_bytes()), "the available memory is unknown here")
  # (with features > 0, "auto" would go on without the buffer: the
  # matrix-free solver, test-matrix-free.R)
  entered <- entries_entered(expect_error(kpca(x, features = 1, solver = "exact"),
                                          "memory|allocate", class = "fastkpca_error_memory"))
  # nothing reached the engine but the query of the memory (and of its
  # limits, read once a session) and the data's check for missing and
  # infinite values: no kernel value, no buffer
  checks <- c("available_bytes", "engine_limits", "value_flags")
  expect_identical(setdiff(entered, checks), character(0))
  expect_true("available_bytes" %in% entered)
  entered <- entries_entered(expect_error(kpca(x, features = 0), "memory|allocate",
                                          class = "fastkpca_error_memory"))
  expect_identical(setdiff(entered, checks), character(0))
  # and R goes on working
  expect_equal(length(kpca(x[1:50, , drop = FALSE], kernel = "vanilladot", features = 1)$eig), 1L)
})

test_that("the number of bad-input cases covered is reported", {
  skip_if_exact_solver_unsafe()   # some tables above were skipped
  counts <- unlist(mget(ls(bad_input_count), envir = bad_input_count))
  # the tables above (besides the dedicated tests that follow them)
  expect_gte(sum(counts), 150L)
  message(sprintf("bad-input cases in tables: %d (%s)", sum(counts),
                  paste(names(counts), counts, sep = " ", collapse = ", ")))
})

test_that("every error of the bad-input tables is a classed fastkpca error (?fastkpca_conditions)", {
  skip_if_exact_solver_unsafe()   # some tables above were skipped
  expect_recorded_errors_classed("bad-input", at_least = 150L)
})
