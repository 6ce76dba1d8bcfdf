# The iterative (Lanczos) solver against the exact one (dsyevr; dstemr above
# 10 components), the rule behind solver = "auto", and identical results for
# any thread count.

solver_data <- function(n = 400, d = 6, seed = 7) {
  set.seed(seed)
  matrix(rnorm(n * d), n, d)
}

# the kernels and parameters of helper-oracles.R (kernel_cases)
solver_kernels <- kernel_cases

test_that("iterative and exact solvers agree on every kernel", {
  x <- solver_data()
  x_scaled <- x / 4 # keeps splinedot and polydot values moderate
  for (kern in names(solver_kernels)) {
    xx <- if (kern %in% c("splinedot", "tanhdot")) x_scaled else x
    ex <- kpca(xx, kernel = kern, kpar = solver_kernels[[kern]], features = 5,
               solver = "exact")
    it <- kpca(xx, kernel = kern, kpar = solver_kernels[[kern]], features = 5,
               solver = "iterative")
    expect_identical(it$solver, "iterative")
    expect_equal(it$eig, ex$eig, tolerance = 1e-10, info = kern)
    # signs are fixed by the same rule, so the vectors compare directly
    expect_equal(it$alpha, ex$alpha, tolerance = 1e-8, info = kern)
    expect_equal(it$rotated, ex$rotated, tolerance = 1e-8, info = kern)
  }
})

test_that("the iterative solver matches kernlab on the parity cases", {
  skip_if_not_installed("kernlab")
  x <- as.matrix(iris[, 1:4])
  for (kern in c("rbfdot", "polydot", "laplacedot", "anovadot")) {
    kp <- solver_kernels[[kern]]
    kl <- kernlab::kpca(x, kernel = kern, kpar = kp, features = 4)
    it <- kpca(x, kernel = kern, kpar = kp, features = 4, solver = "iterative")
    expect_equal(unname(it$eig), unname(kernlab::eig(kl)), tolerance = 1e-10,
                 info = kern)
    ref <- kernlab::rotated(kl)
    signs <- sign(colSums(ref * it$rotated))
    expect_equal(unname(it$rotated), sweep(ref, 2, signs, "*"), tolerance = 1e-8,
                 info = kern)
  }
})

test_that("the iterative solver is deterministic and handles low rank", {
  x <- solver_data(300, 3)
  a <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 6,
            solver = "iterative")
  b <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 6,
            solver = "iterative")
  expect_identical(a, b)
  # a linear kernel on 3 columns has rank 3: the Krylov space closes early
  expect_warning(lin <- kpca(x, kernel = "vanilladot", features = 5,
                             solver = "iterative"), "only 3 of the 5")
  ex <- suppressWarnings(kpca(x, kernel = "vanilladot", features = 5, solver = "exact"))
  expect_equal(lin$eig, ex$eig, tolerance = 1e-10)
  expect_true(all(is.finite(lin$alpha)))
})

test_that("the iterative solver warns when it does not converge", {
  x <- solver_data(300, 4)
  expect_warning(
    kpca(x, kernel = "polydot", kpar = list(degree = 2), features = 5,
         solver = "iterative", control = list(maxit = 1, ncv = 6, tol = 1e-14)),
    "did not converge", class = "fastkpca_warning_convergence")
})

test_that("solver settings are checked", {
  x <- solver_data(100, 3)
  expect_error(kpca(x, features = 2, solver = "lanczos"), "'solver' must be one of")
  expect_error(kpca(x, features = 0, solver = "iterative"), "needs 'features' > 0")
  expect_error(kpca(x, features = 2, control = list(tol = -1)), "control\\$tol")
  expect_error(kpca(x, features = 2, control = list(maxit = 0.5)), "control\\$maxit")
  expect_error(kpca(x, features = 2, control = list(ncv = 1000)), "control\\$ncv")
  expect_error(kpca(x, features = 2, control = list(foo = 1)), "unknown entry")
  expect_error(kpca(x, features = 2, control = 3), "'control' must be a list")
})

test_that("solver = 'auto' follows the documented rule", {
  expect_identical(fastkpca:::choose_solver("auto", 2000, 10), "iterative")
  expect_identical(fastkpca:::choose_solver("auto", 100, 5), "exact")
  expect_identical(fastkpca:::choose_solver("auto", 2000, 0), "exact")
  expect_identical(fastkpca:::choose_solver("auto", 1000, 500), "exact")
  expect_identical(fastkpca:::choose_solver("auto", 150, 2), "exact")
  expect_identical(fastkpca:::choose_solver(c("auto", "exact", "iterative", "randomized",
                                              "matrix_free"), 100, 5),
                   "exact")
  fit <- kpca(solver_data(500, 4), kpar = list(sigma = 0.1), features = 3)
  expect_identical(fit$solver, "iterative")
})

test_that("results are identical for 1 and 2 threads", {
  x <- solver_data(700, 5)
  for (kern in c("rbfdot", "polydot", "anovadot", "besseldot")) {
    kp <- solver_kernels[[kern]]
    one <- kpca(x, kernel = kern, kpar = kp, features = 4, threads = 1)
    two <- kpca(x, kernel = kern, kpar = kp, features = 4, threads = 2)
    one$threads <- two$threads <- NULL
    one$call <- two$call <- NULL
    expect_identical(one, two, info = kern)
    z <- x[1:50, ]
    expect_identical(fastkpca:::kernel_cross(z, x, kern_case(kern, kp), 1L),
                     fastkpca:::kernel_cross(z, x, kern_case(kern, kp), 2L),
                     info = kern)
  }
  t1 <- kpca(x, features = 0, threads = 1)
  t2 <- kpca(x, features = 0, threads = 2)
  expect_identical(t1$eig, t2$eig)
  expect_identical(t1$kernel_colmeans, t2$kernel_colmeans)
})

test_that("threads default to the option, then to at most 2", {
  old <- options(fastkpca.threads = 1)
  on.exit(options(old))
  expect_identical(kpca_threads(), 1L)
  options(fastkpca.threads = NULL)
  expect_true(kpca_threads() %in% 1:2)
  options(fastkpca.threads = 0)
  expect_error(kpca_threads(), "fastkpca.threads")
  expect_error(kpca(solver_data(50, 2), features = 2, threads = 0), "'threads'")
})

test_that("a fit too large for memory is refused before allocating", {
  expect_error(fastkpca:::check_memory(1e6, 10, available = 16 * 2^30),
               "needs about 7.3 TiB")
  expect_silent(fastkpca:::check_memory(1000, 10, available = 16 * 2^30))
  # and before any work: nothing reached the engine but the query of the
  # memory (and of its limits, read once a session) and the data's check
  # for missing and infinite values
  skip_if(is.na(fastkpca:::available_bytes()), "the available memory is unknown here")
  entered <- entries_entered(expect_error(
    kpca(matrix(rnorm(3e6), ncol = 1), features = 2, solver = "iterative"),
    "needs about|cannot allocate"))
  expect_identical(setdiff(entered, c("available_bytes", "engine_limits", "value_flags")),
                   character(0))
})
