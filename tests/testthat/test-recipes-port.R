# recipes' own tests of its kernel PCA steps (tests/testthat/test-kpca.R,
# test-kpca_rbf.R and test-kpca_poly.R of the recipes package, release
# 1.3.2), ported to step_fastkpca(), step_fastkpca_rbf() and
# step_fastkpca_poly(). Where recipes compares with a snapshot of its own
# output, the oracle here is recipes' step itself, run beside ours (kernlab
# computes it); where it pins an error message, the pattern is recipes'
# message.
#
# Not ported, and why:
# - "rethrows error correctly from implementation" mocks kernlab::kpca();
#   our steps call fastkpca's kpca(), and the test below ("errors of
#   kpca() reach the user with the step's name") provokes a real error
#   instead of a mocked one.
# - "keep_original_cols - can prep recipes with it missing": the warning
#   comes from recipes::get_keep_original_cols(), which our prep() calls
#   as recipes' do; ported, but only its outcome (prep and bake work) is
#   checked, since the warning exists only in recipes 1.1 and later.
# - recipes' tests run its own steps' tidy() on kernlab objects; ours return
#   the same tibble, checked against recipes' step in every test that tidies.

skip_if_not_installed("recipes")
skip_if_not_installed("kernlab")

port_data <- function() {
  set.seed(131)
  tr <- matrix(rnorm(100 * 6), ncol = 6)
  te <- matrix(rnorm(20 * 6), ncol = 6)
  colnames(tr) <- colnames(te) <- paste0("X", 1:6)
  list(tr = tr, te = te)
}

# Our step and recipes' counterpart, by kind, with the same arguments.
port_steps <- list(
  kpca = list(ours = function(...) step_fastkpca(...),
              theirs = function(...) recipes::step_kpca(...)),
  kpca_rbf = list(ours = function(...) step_fastkpca_rbf(...),
                  theirs = function(...) recipes::step_kpca_rbf(...)),
  kpca_poly = list(ours = function(...) step_fastkpca_poly(...),
                   theirs = function(...) recipes::step_kpca_poly(...)))

# What print() shows: on standard output (recipes 1.0) or as messages (1.1 on)
printed <- function(x) {
  msgs <- capture_messages(out <- capture_output(print(x)))
  paste(c(out, msgs), collapse = "\n")
}

align_signs <- function(a, b) {
  for (i in seq_len(ncol(a))) {
    j <- which.max(abs(a[, i]))
    if (sign(a[j, i]) != sign(b[j, i])) a[, i] <- -a[, i]
  }
  a
}

test_that("correct kernel PCA values (kernlab's kpca() and predict())", {
  d <- port_data()
  rec <- recipes::recipe(X1 ~ ., data = d$tr)
  cases <- list(
    list(step = step_fastkpca(rec, X2, X3, X4, X5, X6, id = ""),
         kernel = "rbfdot", kpar = list(sigma = 0.2)),
    list(step = step_fastkpca_rbf(rec, X2, X3, X4, X5, X6, id = ""),
         kernel = "rbfdot", kpar = list(sigma = 0.2)),
    list(step = step_fastkpca_poly(rec, X2, X3, X4, X5, X6, id = "", degree = 3,
                                   scale_factor = .1),
         kernel = "polydot", kpar = list(degree = 3, scale = .1, offset = 1)))
  for (case in cases) {
    trained <- recipes::prep(case$step, training = d$tr, verbose = FALSE)
    pred <- as.matrix(recipes::bake(trained, new_data = d$te, recipes::all_predictors()))
    exp_fit <- kernlab::kpca(as.matrix(d$tr[, -1]), kernel = case$kernel, kpar = case$kpar)
    k <- trained$steps[[1]]$num_comp
    expected <- kernlab::predict(exp_fit, d$te[, -1])[, 1:k]
    colnames(expected) <- paste0("kPC", 1:k)
    rownames(pred) <- rownames(expected) <- NULL
    expect_equal(align_signs(pred, expected), expected, tolerance = 1e-8)
    tib <- tibble::tibble(terms = c("X2", "X3", "X4", "X5", "X6"), id = "")
    expect_equal(recipes::tidy(case$step, 1), tib)
    expect_equal(recipes::tidy(trained, 1), tib)
  }
})

test_that("No kPCA comps", {
  d <- port_data()
  rec <- recipes::recipe(X1 ~ ., data = d$tr)
  for (kind in names(port_steps)) {
    ours <- recipes::prep(port_steps[[kind]]$ours(rec, X2, X3, X4, X5, X6,
                                                  num_comp = 0, id = ""))
    theirs <- suppressWarnings(recipes::prep(port_steps[[kind]]$theirs(
      rec, X2, X3, X4, X5, X6, num_comp = 0, id = "")))
    expect_equal(names(recipes::bake(ours, new_data = NULL)), paste0("X", c(2:6, 1)))
    expect_null(ours$steps[[1]]$res)
    expect_equal(recipes::tidy(ours, 1), tibble::tibble(terms = paste0("X", 2:6), id = ""))
    expect_identical(printed(ours), printed(theirs))
  }
})

test_that("check_name() is used", {
  d <- port_data()
  dat <- tibble::as_tibble(d$tr)
  dat$kPC1 <- dat$X1
  for (kind in names(port_steps)) {
    rec <- port_steps[[kind]]$ours(recipes::recipe(~ ., data = dat), X2, X3, X4, X5, X6)
    expect_error(recipes::prep(rec, training = dat), "kPC1")
  }
})

test_that("tunable", {
  rec <- recipes::recipe(~ ., data = iris)
  expected <- list(kpca = "num_comp", kpca_rbf = c("num_comp", "sigma"),
                   kpca_poly = c("num_comp", "degree", "scale_factor", "offset"))
  for (kind in names(port_steps)) {
    step <- port_steps[[kind]]$ours(rec, recipes::all_predictors())$steps[[1]]
    rec_param <- recipes::tunable(step)
    expect_equal(rec_param$name, expected[[kind]])
    expect_true(all(rec_param$source == "recipe"))
    expect_true(is.list(rec_param$call_info))
    expect_equal(nrow(rec_param), length(expected[[kind]]))
    expect_equal(names(rec_param),
                 c("name", "call_info", "source", "component", "component_id"))
  }
})

test_that("Do nothing for num_comps = 0 and keep_original_cols = FALSE (#1152)", {
  for (kind in names(port_steps)) {
    rec <- recipes::prep(port_steps[[kind]]$ours(
      recipes::recipe(~ ., data = mtcars), recipes::all_predictors(), num_comp = 0,
      keep_original_cols = FALSE))
    expect_identical(recipes::bake(rec, new_data = NULL), tibble::as_tibble(mtcars))
  }
})

test_that("errors of kpca() reach the user with the step's name", {
  for (kind in names(port_steps)) {
    rec <- port_steps[[kind]]$ours(recipes::recipe(~ ., data = mtcars),
                                   recipes::all_predictors(), num_comp = 99)
    expect_error(recipes::prep(rec), "could not fit kpca\\(\\): 'features'")
  }
})

test_that("check_options() is used", {
  rec <- recipes::recipe(~ mpg, data = mtcars)
  expect_error(step_fastkpca(rec, mpg, options = TRUE),
               "`options` must be a list, not `TRUE`.", fixed = TRUE)
  expect_error(step_fastkpca(rec, mpg, options = list(1)),
               "The list passed to `options` must be named.", fixed = TRUE)
})

test_that("bake method errors when needed non-standard role columns are missing", {
  skip_if_not(exists("update_role_requirements", asNamespace("recipes")),
              "recipes before 1.0.0 has no update_role_requirements()")
  d <- port_data()
  for (kind in names(port_steps)) {
    rec <- port_steps[[kind]]$ours(recipes::recipe(X1 ~ ., data = d$tr), X2, X3, X4,
                                   X5, X6) |>
      recipes::update_role(X2, X3, X4, X5, X6, new_role = "potato") |>
      recipes::update_role_requirements(role = "potato", bake = FALSE)
    trained <- recipes::prep(rec, training = d$tr, verbose = FALSE)
    expect_error(recipes::bake(trained, new_data = d$te[, 1:3]), "X4, X5")
  }
})

test_that("empty printing", {
  for (kind in names(port_steps)) {
    rec <- recipes::recipe(mpg ~ ., mtcars)
    ours <- port_steps[[kind]]$ours(rec)
    theirs <- port_steps[[kind]]$theirs(rec)
    expect_identical(printed(ours), printed(theirs))
    expect_identical(printed(recipes::prep(ours, mtcars)),
                     printed(recipes::prep(theirs, mtcars)))
  }
})

test_that("empty selection prep/bake is a no-op", {
  for (kind in names(port_steps)) {
    rec1 <- recipes::prep(recipes::recipe(mpg ~ ., mtcars), mtcars)
    rec2 <- recipes::prep(port_steps[[kind]]$ours(recipes::recipe(mpg ~ ., mtcars)),
                          mtcars)
    expect_identical(recipes::bake(rec1, mtcars), recipes::bake(rec2, mtcars))
  }
})

test_that("empty selection tidy method works", {
  expect <- tibble::tibble(terms = character(), id = character())
  for (kind in names(port_steps)) {
    rec <- port_steps[[kind]]$ours(recipes::recipe(mpg ~ ., mtcars), id = "potato")
    expect_identical(recipes::tidy(rec, number = 1), expect)
    rec <- recipes::prep(rec, mtcars)
    expect_identical(recipes::tidy(rec, number = 1), expect)
  }
})

test_that("keep_original_cols works", {
  d <- port_data()
  new_names <- paste0("kPC", 1:5)
  for (kind in names(port_steps)) {
    rec <- recipes::prep(port_steps[[kind]]$ours(recipes::recipe(~ ., d$tr),
                                                 recipes::all_predictors(),
                                                 keep_original_cols = FALSE))
    expect_equal(colnames(recipes::bake(rec, new_data = NULL)), new_names)
    rec <- recipes::prep(port_steps[[kind]]$ours(recipes::recipe(~ ., d$tr),
                                                 recipes::all_predictors(),
                                                 keep_original_cols = TRUE))
    expect_equal(colnames(recipes::bake(rec, new_data = NULL)),
                 c(colnames(d$tr), new_names))
  }
})

test_that("keep_original_cols - can prep recipes with it missing", {
  d <- port_data()
  for (kind in names(port_steps)) {
    rec <- port_steps[[kind]]$ours(recipes::recipe(~ ., d$tr), recipes::all_predictors())
    rec$steps[[1]]$keep_original_cols <- NULL
    rec <- suppressWarnings(recipes::prep(rec))
    expect_no_error(recipes::bake(rec, new_data = d$tr))
  }
})

test_that("printing, as recipes' own steps print, at widths 40, 80 and 120", {
  d <- port_data()
  wide <- as.data.frame(d$tr)
  names(wide) <- paste0("a_rather_long_predictor_name_", 1:6)
  for (width in c(40, 80, 120)) {
    old <- options(width = width)
    for (kind in names(port_steps)) {
      for (dat in list(d$tr, wide)) {
        rec <- recipes::recipe(~ ., data = dat)
        ours <- port_steps[[kind]]$ours(rec, recipes::all_predictors(), num_comp = 2)
        theirs <- port_steps[[kind]]$theirs(rec, recipes::all_predictors(), num_comp = 2)
        expect_identical(printed(ours), printed(theirs))
        expect_identical(printed(recipes::prep(ours)), printed(recipes::prep(theirs)))
      }
    }
    options(old)
  }
})

test_that("tunable is setup to work with extract_parameter_set_dials", {
  skip_if_not_installed("dials")
  skip_if_not(exists("extract_parameter_set_dials", asNamespace("recipes")) ||
                exists("extract_parameter_set_dials", asNamespace("hardhat")))
  extract <- if (exists("extract_parameter_set_dials", asNamespace("recipes")))
    getExportedValue("recipes", "extract_parameter_set_dials")
  else getExportedValue("hardhat", "extract_parameter_set_dials")
  tune <- getExportedValue("hardhat", "tune")
  rec <- recipes::recipe(~ ., data = mtcars)
  params <- extract(step_fastkpca_rbf(rec, recipes::all_predictors(), num_comp = tune(),
                                      sigma = tune()))
  expect_s3_class(params, "parameters")
  expect_identical(nrow(params), 2L)
  params <- extract(step_fastkpca_poly(rec, recipes::all_predictors(), num_comp = tune(),
                                       degree = tune(), scale_factor = tune(),
                                       offset = tune()))
  expect_s3_class(params, "parameters")
  expect_identical(nrow(params), 4L)
})

test_that("bad args (recipes' messages)", {
  d <- port_data()
  rec <- recipes::recipe(~ ., data = d$tr)
  for (kind in names(port_steps)) {
    step <- port_steps[[kind]]$ours
    expect_error(recipes::prep(step(rec, recipes::all_numeric_predictors(), num_comp = -1)),
                 "`num_comp` must be a whole number larger than or equal to 0, not the number -1.",
                 fixed = TRUE)
    expect_error(recipes::prep(step(rec, recipes::all_numeric_predictors(), prefix = 1)),
                 "`prefix` must be a single string, not the number 1.", fixed = TRUE)
  }
  expect_error(recipes::prep(step_fastkpca_rbf(rec, recipes::all_numeric_predictors(),
                                               sigma = 0)),
               "`sigma` must be a number larger than or equal to", fixed = TRUE)
  expect_error(recipes::prep(step_fastkpca_poly(rec, recipes::all_numeric_predictors(),
                                                degree = 1.1)),
               "`degree` must be a whole number, not the number 1.1.", fixed = TRUE)
  expect_error(recipes::prep(step_fastkpca_poly(rec, recipes::all_numeric_predictors(),
                                                scale_factor = -1.1)),
               "`scale_factor` must be a number larger than or equal to 0, not the number -1.1.",
               fixed = TRUE)
  expect_error(recipes::prep(step_fastkpca_poly(rec, recipes::all_numeric_predictors(),
                                                offset = "a")),
               "`offset` must be a number, not the string \"a\".", fixed = TRUE)
})

test_that("0 and 1 rows data work in bake method", {
  for (kind in names(port_steps)) {
    rec <- recipes::prep(port_steps[[kind]]$ours(recipes::recipe(~ ., mtcars),
                                                 recipes::all_numeric_predictors()))
    expect_identical(nrow(recipes::bake(rec, mtcars[1, ])), 1L)
    expect_identical(nrow(recipes::bake(rec, mtcars[0, ])), 0L)
  }
})
