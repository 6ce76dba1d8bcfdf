# Every exported function refuses bad arguments with an error that names
# the argument in single quotes, in lower case, without a trailing period.
# The table lists each exported function with bad values of its arguments;
# a function exported later without an entry here makes the first test fail.

# The data the cases use, in an environment to evaluate them in.
arguments_env <- function() {
  env <- new.env(parent = globalenv())
  env$x <- as.matrix(iris[1:40, 1:4])
  env$fit <- kpca(env$x, kpar = list(sigma = 0.3), features = 2)
  env
}

arguments_cases <- function() {
  list(
    kpca = list(
      list(quote(kpca(letters, kernel = "rbfdot")), "x"),
      list(quote(kpca(list("acgt", 1))), "x"),
      list(quote(kpca(x, kernel = "foo")), "kernel"),
      list(quote(kpca(x, kpar = list(sigma = -1))), "kpar$sigma"),
      list(quote(kpca(x, features = 99)), "features"),
      list(quote(kpca(x, th = -1)), "th"),
      list(quote(kpca(rbind(x, NA), na.action = 3)), "na.action"),
      list(quote(kpca(x, solver = "qr")), "solver"),
      list(quote(kpca(x, threads = 0)), "threads"),
      list(quote(kpca(x, features = 2, control = list(tol = 2))), "control$tol"),
      list(quote(kpca(x, center = "yes")), "center"),
      list(quote(kpca(x, scale. = -1)), "scale."),
      list(quote(kpca(x, variance = 2)), "variance"),
      list(quote(kpca(x, landmarks = 1000)), "landmarks"),
      list(quote(kpca(x, landmarks = 10, landmark_rule = "kmeans")), "landmark_rule")
    ),
    row_chunks = list(
      list(quote(row_chunks(42)), "x"),
      list(quote(row_chunks(c("a.txt", "b.txt"))), "reader"),
      list(quote(row_chunks(list(x), reader = 1)), "reader"),
      list(quote(row_chunks(list(x), query = "SELECT 1")), "query"),
      list(quote(row_chunks(function(i) NULL, chunks = 0)), "chunks")
    ),
    kern = list(
      list(quote(kern("foo")), "kernel"),
      list(quote(kern("rbfdot", sigma = 0)), "sigma")
    ),
    stringdot = list(
      list(quote(stringdot(length = 0)), "length"),
      list(quote(stringdot(lambda = -1, type = "string")), "lambda"),
      list(quote(stringdot(type = "gappy")), "type"),
      list(quote(stringdot(normalized = NA)), "normalized")
    ),
    kern_conformal = list(list(quote(kern_conformal(kern("rbfdot"), 3)), "g")),
    kernel_matrix = list(
      list(quote(kernel_matrix("rbfdot", letters)), "x"),
      list(quote(kernel_matrix("rbfdot", x, x[, 1:2])), "y"),
      list(quote(kernel_matrix("rbfdot", x, kpar = list(sigma = "a"))), "kpar$sigma"),
      list(quote(kernel_matrix("rbfdot", x, threads = -1)), "threads")
    ),
    kpca_threads = list(list(quote(local({
      old <- options(fastkpca.threads = 0); on.exit(options(old)); kpca_threads()
    })), "getOption(\"fastkpca.threads\")")),
    simd_path = list(
      list(quote(simd_path(available = NA)), "available"),
      list(quote(local({
        old <- options(fastkpca.simd = "fast"); on.exit(options(old)); simd_path()
      })), "getOption(\"fastkpca.simd\")"),
      list(quote(local({
        old <- options(fastkpca.tuning = list(tile_thread_work = -1)); on.exit(options(old))
        kernel_matrix("rbfdot", x)
      })), "fastkpca.tuning$tile_thread_work")),
    median_sigma = list(
      list(quote(median_sigma(x, "polydot")), "kernel"),
      list(quote(median_sigma(letters)), "x")
    ),
    kpca_cv = list(
      list(quote(kpca_cv(x, grid = list(sigma = 1), features = 0)), "features"),
      list(quote(kpca_cv(x, grid = list(sigma = 1), features = 2, folds = 1)), "folds"),
      list(quote(kpca_cv(x, grid = list(sigma = 1), features = 2, criterion = "r2")), "criterion"),
      list(quote(kpca_cv(x, grid = list(sigma = 1), features = 2, ridge = 0)), "ridge"),
      list(quote(kpca_cv(x, grid = list(foo = 1), features = 2)), "grid")
    ),
    preimage = list(
      list(quote(preimage(fit, ridge = -1)), "ridge"),
      list(quote(preimage(fit, scores = matrix(1, 2, 5))), "scores")
    ),
    kica = list(
      list(quote(kica(letters)), "x"),
      list(quote(kica(x, contrast = "mi")), "contrast"),
      list(quote(kica(x, sigma = -1)), "sigma"),
      list(quote(kica(x, maxit = 0)), "maxit")
    ),
    amari_distance = list(list(quote(amari_distance(letters, diag(2))), "W")),
    # kernlab's accessors (R/kernlab_accessors.R): an unknown argument, or an
    # object they do not read
    pcv = list(list(quote(pcv(fit, type = 1)), NA), list(quote(pcv(1:3)), "object")),
    eig = list(list(quote(eig(fit, type = 1)), NA)),
    rotated = list(list(quote(rotated(1:3)), "object")),
    kernelf = list(list(quote(kernelf(1:3)), "object")),
    kpar = list(list(quote(kpar(1:3)), "object")),
    xmatrix = list(list(quote(xmatrix(1:3)), "object")),
    kcall = list(list(quote(kcall(1:3)), "object")),
    kcor = list(list(quote(kcor(fit)), "object")),
    xcoef = list(list(quote(xcoef(fit)), "object")),
    ycoef = list(list(quote(ycoef(fit)), "object")),
    kcca = list(
      list(quote(kcca(x, x[1:20, ])), "y"),
      list(quote(kcca(x, x, gamma = -1)), "gamma"),
      list(quote(kcca(x, x, ncomps = 0)), "ncomps"),
      list(quote(kcca(x, x, formulation = "dense")), "formulation")
    ),
    # kernlab's kernel generators (R/kernlab_kernels.R)
    rbfdot = list(list(quote(rbfdot(sigma = -1)), "sigma")),
    laplacedot = list(list(quote(laplacedot(sigma = 0)), "sigma")),
    besseldot = list(list(quote(besseldot(order = -1)), "order")),
    anovadot = list(list(quote(anovadot(degree = 0.5)), "degree")),
    polydot = list(list(quote(polydot(degree = 0)), "degree")),
    tanhdot = list(list(quote(tanhdot(scale = "a")), "scale")),
    vanilladot = NULL, splinedot = NULL,
    # the recipes steps check their arguments when the recipe is prepared
    # (test-recipes.R, which needs the recipes package); glance() has none
    step_fastkpca = NULL, step_fastkpca_rbf = NULL, step_fastkpca_poly = NULL,
    glance = NULL,
    tidy = list(list(quote(tidy(fit, matrix = "loadings")), "matrix")),
    augment = list(list(quote(augment(fit, data = iris[1:3, ])), "data")),
    # methods of the exported generics
    predict = list(
      list(quote(predict(fit, x[, 1:3])), "newdata"),
      list(quote(predict(fit, x, extra = 1)), NA)   # "unused argument: extra"
    ),
    plot = list(list(quote(plot(fit, which = 3)), "which"))
  )
}

test_that("every exported function has an entry in the table", {
  exported <- getNamespaceExports("fastkpca")
  cases <- arguments_cases()
  expect_setequal(intersect(exported, names(cases)), exported)
})

test_that("each bad argument gives an error naming it, in the package's wording", {
  cases <- arguments_cases()
  env <- arguments_env()
  n <- 0L
  for (fn in names(cases)) for (case in cases[[fn]]) {
    err <- tryCatch({
      suppressWarnings(eval(case[[1]], env))
      NULL
    }, error = function(e) record_error("arguments", paste(deparse(case[[1]]), collapse = " "), e))
    label <- paste(deparse(case[[1]]), collapse = " ")
    expect_s3_class(err, "error")
    if (is.null(err)) next
    msg <- conditionMessage(err)
    n <- n + 1L
    if (!is.na(case[[2]]))
      expect_true(grepl(paste0("'", case[[2]], "'"), msg, fixed = TRUE),
                  info = paste(label, "->", msg))
    expect_false(grepl("\\.\\s*$", msg), info = paste(label, ": trailing period:", msg))
    expect_false(grepl("^[A-Z][a-z]", msg), info = paste(label, ": capitalised:", msg))
  }
  expect_gt(n, 30L)
})

test_that("every error of the table is a classed fastkpca error (?fastkpca_conditions)", {
  seen <- expect_recorded_errors_classed("arguments", at_least = 30L)
  # a bad argument is an argument error, whatever the function
  kinds <- vapply(seen, function(s) s$class[1L], "")
  expect_true(all(kinds == "fastkpca_error_argument"),
              info = paste(vapply(seen, `[[`, "", "label")[kinds != "fastkpca_error_argument"],
                           collapse = "; "))
})
