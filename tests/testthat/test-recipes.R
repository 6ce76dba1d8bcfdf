# The recipes steps of R/recipes.R. Oracles: recipes' own kernel PCA steps
# (which call kernlab) and kpca() + predict() called directly.

# Training and test rows of the scaled USArrests data (50 x 4, on a decimal
# grid), as data frames with a non-numeric column that the steps leave alone.
arrests_split <- function() {
  x <- as.data.frame(fx_arrests())
  names(x) <- names(USArrests)
  x$state <- rownames(USArrests)
  list(train = x[1:35, ], test = x[36:50, ], vars = names(USArrests))
}

kpc_cols <- function(d) as.matrix(d[grep("^kPC", names(d))])

test_that("step_fastkpca_rbf() equals recipes' step_kpca_rbf() up to signs", {
  skip_if_not_installed("recipes")
  skip_if_not_installed("kernlab")
  s <- arrests_split()
  ours <- recipes::prep(step_fastkpca_rbf(
    recipes::recipe(~ ., data = s$train), recipes::all_numeric(),
    num_comp = 3, sigma = 0.2), training = s$train)
  theirs <- recipes::prep(recipes::step_kpca_rbf(
    recipes::recipe(~ ., data = s$train), recipes::all_numeric(),
    num_comp = 3, sigma = 0.2), training = s$train)
  for (new in list(NULL, s$test)) {
    a <- recipes::bake(ours, new_data = new)
    b <- recipes::bake(theirs, new_data = new)
    expect_identical(names(a), names(b))
    expect_identical(a$state, b$state)
    expect_cols_equal_up_to_sign(kpc_cols(a), kpc_cols(b), tol = 1e-8,
                                 label = "rbf bake")
  }
})

test_that("step_fastkpca_poly() equals recipes' step_kpca_poly() up to signs", {
  skip_if_not_installed("recipes")
  skip_if_not_installed("kernlab")
  s <- arrests_split()
  ours <- recipes::prep(step_fastkpca_poly(
    recipes::recipe(~ ., data = s$train), recipes::all_numeric(),
    num_comp = 2, degree = 2, scale_factor = 0.5, offset = 1), training = s$train)
  theirs <- recipes::prep(recipes::step_kpca_poly(
    recipes::recipe(~ ., data = s$train), recipes::all_numeric(),
    num_comp = 2, degree = 2, scale_factor = 0.5, offset = 1), training = s$train)
  a <- recipes::bake(ours, new_data = s$test)
  b <- recipes::bake(theirs, new_data = s$test)
  expect_identical(names(a), names(b))
  expect_cols_equal_up_to_sign(kpc_cols(a), kpc_cols(b), tol = 1e-8, label = "poly bake")
})

test_that("step_fastkpca() equals step_kpca() for another kernel, in both argument forms", {
  skip_if_not_installed("recipes")
  skip_if_not_installed("kernlab")
  s <- arrests_split()
  opts <- list(kernel = "laplacedot", kpar = list(sigma = 0.3))
  rec <- recipes::recipe(~ ., data = s$train)
  ours <- recipes::prep(step_fastkpca(rec, recipes::all_numeric(), num_comp = 4,
                                               kernel = "laplacedot",
                                               kpar = list(sigma = 0.3)),
                        training = s$train)
  ours_opts <- recipes::prep(step_fastkpca(rec, recipes::all_numeric(),
                                                    num_comp = 4, options = opts),
                             training = s$train)
  theirs <- recipes::prep(recipes::step_kpca(rec, recipes::all_numeric(), num_comp = 4,
                                             options = opts), training = s$train)
  a <- recipes::bake(ours, new_data = s$test)
  expect_identical(recipes::bake(ours_opts, new_data = s$test), a)
  b <- recipes::bake(theirs, new_data = s$test)
  expect_identical(names(a), names(b))
  expect_cols_equal_up_to_sign(kpc_cols(a), kpc_cols(b), tol = 1e-8, label = "laplace bake")
})

test_that("step_fastkpca() takes a kernel object and bakes what kpca() predicts", {
  skip_if_not_installed("recipes")
  s <- arrests_split()
  k <- kern("rbfdot", sigma = 0.3) + 0.5 * kern("polydot", degree = 2)
  rec <- recipes::recipe(~ ., data = s$train)
  prepped <- recipes::prep(step_fastkpca(rec, recipes::all_numeric(), num_comp = 3,
                                         kernel = k), training = s$train)
  fit <- kpca(as.matrix(s$train[s$vars]), kernel = k, features = 3)
  baked <- recipes::bake(prepped, new_data = s$test)
  expect_equal(unname(kpc_cols(baked)), unname(predict(fit, as.matrix(s$test[s$vars]))),
               tolerance = 1e-10)
})

test_that("bake() gives kpca()'s rotated on the training rows and predict() on new rows", {
  skip_if_not_installed("recipes")
  s <- arrests_split()
  prepped <- recipes::prep(step_fastkpca_rbf(
    recipes::recipe(~ ., data = s$train), recipes::all_numeric(),
    num_comp = 3, sigma = 0.5), training = s$train)
  fit <- kpca(as.matrix(s$train[s$vars]), kernel = "rbfdot",
              kpar = list(sigma = 0.5), features = 3)
  expect_equal(unname(kpc_cols(recipes::bake(prepped, new_data = NULL))),
               unname(fit$rotated), tolerance = 1e-12)
  expect_equal(unname(kpc_cols(recipes::bake(prepped, new_data = s$test))),
               unname(predict(fit, as.matrix(s$test[s$vars]))), tolerance = 1e-12)
  # columns in another order are matched by name
  shuffled <- s$test[rev(names(s$test))]
  expect_equal(kpc_cols(recipes::bake(prepped, new_data = shuffled)),
               kpc_cols(recipes::bake(prepped, new_data = s$test)))
  # the step keeps the fit, with every setting used
  res <- prepped$steps[[1]]$res
  expect_s3_class(res, "fastkpca")
  expect_identical(res$kernel, fit$kernel)
  expect_identical(res$kpar, fit$kpar)
  expect_identical(unname(prepped$steps[[1]]$columns), s$vars)
})

test_that("the step options: prefix, keep_original_cols, num_comp = 0, roles", {
  skip_if_not_installed("recipes")
  s <- arrests_split()
  rec <- recipes::recipe(Murder ~ ., data = s$train)
  kept <- recipes::prep(step_fastkpca_rbf(rec, recipes::all_numeric_predictors(),
                                                   num_comp = 2, prefix = "K",
                                                   keep_original_cols = TRUE),
                        training = s$train)
  out <- recipes::bake(kept, new_data = s$test)
  expect_identical(names(out), c("Assault", "UrbanPop", "Rape", "state", "Murder", "K1", "K2"))
  expect_identical(out$Murder, s$test$Murder)
  # num_comp = 0 leaves the data alone
  none <- recipes::prep(step_fastkpca(rec, recipes::all_numeric_predictors(),
                                               num_comp = 0), training = s$train)
  expect_null(none$steps[[1]]$res)
  expect_identical(names(recipes::bake(none, new_data = s$test)),
                   names(recipes::bake(recipes::prep(rec, training = s$train),
                                       new_data = s$test)))
  # ten or more components: recipes' zero-padded names
  many <- recipes::prep(step_fastkpca_rbf(recipes::recipe(~ ., data = s$train),
                                                   recipes::all_numeric(), num_comp = 10),
                        training = s$train)
  expect_identical(grep("^kPC", names(recipes::bake(many, new_data = NULL)), value = TRUE),
                   recipes::names0(10, "kPC"))
})

test_that("the steps give clear errors", {
  skip_if_not_installed("recipes")
  s <- arrests_split()
  rec <- recipes::recipe(~ ., data = s$train)
  expect_error(recipes::prep(step_fastkpca_rbf(rec, recipes::all_predictors()),
                             training = s$train),
               "numeric")
  expect_error(recipes::prep(step_fastkpca_rbf(rec, recipes::all_numeric(),
                                                        sigma = -1), training = s$train),
               "`sigma` must be a number larger than or equal to", fixed = TRUE)
  expect_error(recipes::prep(step_fastkpca_poly(rec, recipes::all_numeric(),
                                                         degree = 1.5), training = s$train),
               "`degree` must be a whole number, not the number 1.5.", fixed = TRUE)
  expect_error(recipes::prep(step_fastkpca_rbf(rec, recipes::all_numeric(),
                                                        num_comp = -1), training = s$train),
               "`num_comp` must be a whole number larger than or equal to 0, not the number -1.",
               fixed = TRUE)
  expect_error(recipes::prep(step_fastkpca_rbf(rec, recipes::all_numeric(),
                                                        num_comp = 99), training = s$train),
               "step_fastkpca_rbf() could not fit kpca(): 'features'", fixed = TRUE)
  expect_error(recipes::prep(step_fastkpca(rec, recipes::all_numeric(),
                                                    kernel = "nope"), training = s$train),
               "'kernel' must be one of")
  expect_error(step_fastkpca(rec, recipes::all_numeric(), options = list(th = 1)),
               "'options' must be a list with entries named kernel and kpar only")
  prepped <- recipes::prep(step_fastkpca_rbf(rec, recipes::all_numeric(),
                                                      num_comp = 2), training = s$train)
  # recipes checks the columns of new_data itself; the step checks them too
  expect_error(recipes::bake(prepped$steps[[1]], new_data = s$test[c("Murder", "state")]),
               "'new_data' lacks the columns Assault, UrbanPop, Rape needed by step_fastkpca_rbf()",
               fixed = TRUE)
  clash <- s$train
  clash$kPC1 <- 0
  expect_error(recipes::prep(step_fastkpca_rbf(recipes::recipe(~ ., data = clash),
                                                        Murder, Assault), training = clash),
               "kPC1")
})

test_that("landmarks reach kpca() only when given", {
  expect_identical(fastkpca:::kpca_step_args("rbfdot", list(sigma = 1), 3, NULL),
                   list(kernel = "rbfdot", kpar = list(sigma = 1), features = 3))
  expect_identical(fastkpca:::kpca_step_args("rbfdot", list(sigma = 1), 3, 20)$landmarks, 20)
})

test_that("step_fastkpca() passes landmarks on to kpca()", {
  skip_if_not_installed("recipes")
  s <- arrests_split()
  rec <- step_fastkpca(recipes::recipe(~ ., data = s$train), recipes::all_numeric(),
                       num_comp = 2, kpar = list(sigma = 0.2), landmarks = 20)
  if (!"landmarks" %in% names(formals(fastkpca:::kpca.default))) {
    # kpca() without the Nystrom method: the step says what failed
    expect_error(recipes::prep(rec, training = s$train),
                 "step_fastkpca() could not fit kpca(): unused argument: landmarks",
                 fixed = TRUE)
  } else {
    # with it: the step's output is kpca(landmarks = 20)'s, from the same seed
    set.seed(3)
    prepped <- recipes::prep(rec, training = s$train)
    set.seed(3)
    fit <- kpca(as.matrix(s$train[s$vars]), kernel = "rbfdot", kpar = list(sigma = 0.2),
                features = 2, landmarks = 20)
    expect_equal(unname(kpc_cols(recipes::bake(prepped, new_data = s$test))),
                 unname(predict(fit, as.matrix(s$test[s$vars]))), tolerance = 1e-10)
  }
})

test_that("print() and tidy() of the steps match recipes' own steps", {
  skip_if_not_installed("recipes")
  s <- arrests_split()
  rec <- recipes::recipe(~ ., data = s$train)
  ours <- step_fastkpca_rbf(rec, Murder, Assault, id = "a")
  theirs <- recipes::step_kpca_rbf(rec, Murder, Assault, id = "a")
  expect_identical(recipes::tidy(ours, number = 1), recipes::tidy(theirs, number = 1))
  ours_p <- recipes::prep(ours, training = s$train)
  theirs_p <- recipes::prep(theirs, training = s$train)
  expect_identical(recipes::tidy(ours_p, number = 1), recipes::tidy(theirs_p, number = 1))
  expect_identical(recipes::tidy(ours_p, number = 1)$terms, c("Murder", "Assault"))
  # recipes prints steps on standard output (1.0) or as messages (1.1 on)
  printed <- function(x) {
    msgs <- capture_messages(out <- capture_output(print(x)))
    paste(c(out, msgs), collapse = "\n")
  }
  # recipes' own format, to the character: the steps differ in class and id
  # only (a "(fastkpca)" in the title pushed the trained line past width 80)
  expect_identical(printed(ours), printed(theirs))
  expect_identical(printed(ours_p), printed(theirs_p))
  expect_match(printed(step_fastkpca_poly(rec, Murder)), "Polynomial kernel PCA extraction")
  expect_match(printed(step_fastkpca(rec, Murder)), "Kernel PCA extraction")
})

test_that("tunable() offers recipes' dials parameters; required_pkgs() names fastkpca", {
  skip_if_not_installed("recipes")
  rec <- recipes::recipe(~ ., data = USArrests)
  pairs <- list(
    list(step_fastkpca_rbf(rec, recipes::all_numeric(), id = "x"),
         recipes::step_kpca_rbf(rec, recipes::all_numeric(), id = "x")),
    list(step_fastkpca_poly(rec, recipes::all_numeric(), id = "x"),
         recipes::step_kpca_poly(rec, recipes::all_numeric(), id = "x")))
  for (p in pairs) {
    ours <- recipes::tunable(p[[1]]$steps[[1]])
    theirs <- recipes::tunable(p[[2]]$steps[[1]])
    expect_identical(ours$name, theirs$name)
    # the offset parameter: dials renamed offset() to kernel_offset(); ours
    # names the one the installed dials has, while an older recipes beside a
    # newer dials names the old one
    info_ours <- ours$call_info
    info_theirs <- theirs$call_info
    off <- which(ours$name == "offset")
    if (length(off) == 1L) {
      ours_fun <- info_ours[[off]]$fun
      expect_true(ours_fun %in% c("offset", "kernel_offset"))
      if (nzchar(system.file(package = "dials"))) {
        expect_true(ours_fun %in% getNamespaceExports("dials"))
        if (info_theirs[[off]]$fun %in% getNamespaceExports("dials"))
          expect_identical(ours_fun, info_theirs[[off]]$fun)
      }
      info_ours[[off]] <- NULL
      info_theirs[[off]] <- NULL
    }
    expect_identical(info_ours, info_theirs)
    expect_identical(ours$source, theirs$source)
    expect_true(all(ours$component == class(p[[1]]$steps[[1]])[1]))
    expect_true(all(ours$component_id == "x"))
  }
  gen <- recipes::tunable(step_fastkpca(rec, recipes::all_numeric())$steps[[1]])
  expect_identical(gen$name, "num_comp")
  for (step in list(step_fastkpca, step_fastkpca_rbf,
                    step_fastkpca_poly))
    expect_identical(recipes::required_pkgs(step(rec, recipes::all_numeric())$steps[[1]]),
                     "fastkpca")
})

test_that("the dials parameters that tunable() names exist", {
  skip_if_not_installed("recipes")
  skip_if_not_installed("dials")
  rec <- recipes::recipe(~ ., data = USArrests)
  steps <- list(step_fastkpca_rbf(rec, recipes::all_numeric()),
                step_fastkpca_poly(rec, recipes::all_numeric()))
  for (r in steps) {
    for (info in recipes::tunable(r$steps[[1]])$call_info) {
      make <- getExportedValue(info$pkg, info$fun)
      param <- if (is.null(info$range)) make() else make(range = info$range)
      expect_s3_class(param, "param")
    }
  }
})

test_that("tune_grid() tunes num_comp and sigma; its predictions are kpca() + lm()", {
  for (p in c("recipes", "tune", "dials", "parsnip", "workflows", "rsample", "yardstick"))
    skip_if_not_installed(p)
  ns <- function(pkg, name) getExportedValue(pkg, name)
  d <- as.data.frame(fx_cars())
  names(d) <- c("mpg", "disp", "hp", "wt", "qsec")
  rec <- step_fastkpca_rbf(recipes::recipe(mpg ~ ., data = d),
                                    recipes::all_numeric_predictors(),
                                    num_comp = ns("tune", "tune")(),
                                    sigma = ns("tune", "tune")())
  wf <- ns("workflows", "add_model")(
    ns("workflows", "add_recipe")(ns("workflows", "workflow")(), rec),
    ns("parsnip", "set_engine")(ns("parsnip", "linear_reg")(), "lm"))
  set.seed(12)
  folds <- ns("rsample", "vfold_cv")(d, v = 2)
  grid <- expand.grid(num_comp = 1:2, sigma = c(0.05, 0.5))
  res <- ns("tune", "tune_grid")(wf, resamples = folds, grid = grid,
                                 metrics = ns("yardstick", "metric_set")(ns("yardstick", "rmse")),
                                 control = ns("tune", "control_grid")(save_pred = TRUE))
  metrics <- ns("tune", "collect_metrics")(res)
  expect_identical(nrow(metrics), 4L)
  expect_true(all(is.finite(metrics$mean)))
  expect_setequal(paste(metrics$num_comp, metrics$sigma),
                  paste(grid$num_comp, grid$sigma))
  # one configuration on the first fold, recomputed without recipes or tune
  pred <- ns("tune", "collect_predictions")(res)
  pred <- pred[pred$id == "Fold1" & pred$num_comp == 2 & pred$sigma == 0.5, ]
  split <- folds$splits[[1]]
  train <- ns("rsample", "analysis")(split)
  test <- ns("rsample", "assessment")(split)
  vars <- c("disp", "hp", "wt", "qsec")
  fit <- kpca(as.matrix(train[vars]), kernel = "rbfdot", kpar = list(sigma = 0.5),
              features = 2)
  scores <- data.frame(mpg = train$mpg, fit$rotated)
  model <- stats::lm(mpg ~ ., data = scores)
  manual <- stats::predict(model, newdata = as.data.frame(predict(fit, as.matrix(test[vars]))))
  expect_equal(pred$.pred[order(pred$.row)], unname(manual), tolerance = 1e-8)
})
