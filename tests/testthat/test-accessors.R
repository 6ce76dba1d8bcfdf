# kernlab's accessors and kernel constructors (R/kernlab_accessors.R,
# R/kernlab_kernels.R, R/zzz.R), against kernlab on the same fits, and with
# kernlab loaded or attached in every order (in child R processes).

acc_data <- function() {
  set.seed(19)
  x <- matrix(rnorm(60 * 3), 60, 3, dimnames = list(paste0("r", 1:60), c("a", "b", "c")))
  x[, 2] <- x[, 2] + x[, 1]^2
  x
}

# fastkpca's accessors on f against kernlab's on k: the same shapes, names
# and numbers, up to the signs of the columns.
expect_same_accessors <- function(f, k, label) {
  expect_equal(eig(f), kernlab::eig(k), tolerance = 1e-8, label = paste(label, "eig"))
  for (what in c("pcv", "rotated")) {
    ours <- get(what, asNamespace("fastkpca"))(f)
    theirs <- getExportedValue("kernlab", what)(k)
    expect_identical(dimnames(ours), dimnames(theirs), label = paste(label, what, "names"))
    expect_equal(align_signs(ours, theirs), theirs, tolerance = 1e-6,
                 label = paste(label, what))
  }
}

test_that("accessors equal kernlab's on the same fit, for several kernels", {
  skip_if_not_installed("kernlab")
  x <- acc_data()
  cases <- list(list("rbfdot", list(sigma = 0.2)), list("vanilladot", list()),
                list("polydot", list(degree = 2, scale = 0.5, offset = 1)),
                list("laplacedot", list(sigma = 0.3)))
  for (case in cases) {
    f <- kpca(x, kernel = case[[1]], kpar = case[[2]], features = 3)
    k <- kernlab::kpca(x, kernel = case[[1]], kpar = case[[2]], features = 3)
    expect_same_accessors(f, k, case[[1]])
    expect_identical(xmatrix(f), kernlab::xmatrix(k))
    expect_equal(kpar(f)[names(case[[2]])], case[[2]])
    expect_equal(kpar(kernelf(f)), kpar(f))
    expect_fastkpca_kernel(kernelf(f))
    expect_identical(kcall(f), f$call)
    expect_null(terms(f))
  }
})

test_that("accessors of a formula fit: terms, rotated row names, xmatrix", {
  skip_if_not_installed("kernlab")
  d <- as.data.frame(acc_data())
  f <- kpca(~ a + b, data = d, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 2)
  k <- kernlab::kpca(~ a + b, data = d, kernel = "rbfdot", kpar = list(sigma = 0.2),
                     features = 2)
  expect_same_accessors(f, k, "formula")
  expect_s3_class(terms(f), "terms")
  expect_identical(attr(terms(f), "term.labels"), attr(k@terms, "term.labels"))
  expect_equal(xmatrix(f), kernlab::xmatrix(k), ignore_attr = TRUE)
  expect_identical(dimnames(xmatrix(f)), dimnames(kernlab::xmatrix(k)))
})

test_that("the linear kernel's pcv() and rotated() relate to prcomp as documented", {
  x <- acc_data()
  f <- kpca(x, kernel = vanilladot(), features = 2)
  pc <- prcomp(x)
  n <- nrow(x)
  expect_equal(align_signs(rotated(f), pc$x[, 1:2]), sqrt(n) * pc$x[, 1:2],
               ignore_attr = TRUE, tolerance = 1e-8)
  # pcv() = V / sqrt(eig): eig * colSums(pcv^2) = 1
  expect_equal(unname(eig(f) * colSums(pcv(f)^2)), c(1, 1), tolerance = 1e-10)
})

test_that("a kernelMatrix from kernlab is the precomputed fit, and predict() takes the cross kernel", {
  skip_if_not_installed("kernlab")
  x <- acc_data()
  train <- x[1:40, ]
  test <- x[41:60, ]
  kf <- kernlab::rbfdot(sigma = 0.2)
  K <- kernlab::kernelMatrix(kf, train)
  expect_s4_class(K, "kernelMatrix")
  f <- kpca(K, features = 3)
  expect_identical(kernelf(f), "precomputed")
  expect_null(xmatrix(f))     # no copy of the kernel matrix is kept
  expect_identical(kpar(f), list())
  k <- kernlab::kpca(K, features = 3)
  expect_same_accessors(f, k, "kernelMatrix")
  # the same numbers as the fit on the data
  fd <- kpca(train, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 3)
  expect_equal(eig(f), eig(fd), tolerance = 1e-10)
  Kz <- kernlab::kernelMatrix(kf, test, train)
  pz <- predict(f, Kz)
  expect_equal(dim(pz), c(20L, 3L))
  expect_equal(pz, predict(fd, test), tolerance = 1e-8, ignore_attr = TRUE)
  # kernlab's predict on its kernelMatrix fit, up to signs
  pk <- kernlab::predict(k, Kz)
  expect_equal(align_signs(unname(pz), unname(pk)), unname(pk), tolerance = 1e-6)
  # on the training rows, predict() gives rotated()
  expect_equal(unname(predict(f, K)), unname(rotated(f)), tolerance = 1e-8)
  expect_error(predict(f, Kz[, 1:5]), "'newdata' must be the kernel matrix")
})

test_that("Nystrom fits: pcv() holds the landmark coefficients, xmatrix() the landmarks", {
  x <- acc_data()
  set.seed(3)
  f <- kpca(x, kernel = rbfdot(0.2), features = 2, landmarks = 25)
  expect_equal(dim(pcv(f)), c(25L, 2L))
  expect_equal(dim(xmatrix(f)), c(25L, 3L))
  # a row projects to (k_m(x) - mu)' pcv, as ?kernlab-accessors says
  expect_identical(xmatrix(f), f$landmarks)
  km <- kernel_matrix(kernelf(f), x, xmatrix(f))
  proj <- sweep(km, 2L, colMeans(km)) %*% pcv(f)     # mu: the mean kernel row
  expect_equal(unname(proj), unname(rotated(f)), tolerance = 1e-8)
  expect_equal(unname(proj), unname(predict(f, x)), tolerance = 1e-8)
})

test_that("kernlab's generics reach every class a kpca fit can have first", {
  skip_if_not_installed("kernlab")
  loadNamespace("kernlab")
  x <- acc_data()
  set.seed(4)
  ny <- kpca(x, kernel = rbfdot(0.2), features = 2, landmarks = 20)
  ex <- kpca(x, kernel = rbfdot(0.2), features = 2)
  # the subclasses of issue 20 (chunked Nystrom) and of the string kernels
  for (first in c("fastkpca_nystrom_chunked", "fastkpca_string")) {
    f <- ny
    class(f) <- c(first, class(ny))
    expect_identical(kernlab::xmatrix(f), ny$landmarks, label = first)
    expect_identical(kernlab::pcv(f), pcv(ny), label = first)
  }
  f <- ex
  class(f) <- c("fastkpca_string", "fastkpca")
  expect_identical(kernlab::xmatrix(f), ex$xmatrix)
  expect_identical(kernlab::eig(ex), eig(ex))
  expect_identical(kernlab::kpar(rbfdot(0.3)), list(sigma = 0.3))
})

test_that("the kernel constructors equal kernlab's kernels", {
  skip_if_not_installed("kernlab")
  x <- acc_data()[1:15, ]
  cases <- list(
    list(rbfdot(0.3), kernlab::rbfdot(0.3), 1e-12),
    list(vanilladot(), kernlab::vanilladot(), 1e-12),
    list(polydot(2, 0.5, 1), kernlab::polydot(2, 0.5, 1), 1e-12),
    list(tanhdot(0.1, 0.5), kernlab::tanhdot(0.1, 0.5), 1e-12),
    # kernlab rounds the squared distances of these two to 9 decimals
    list(laplacedot(0.4), kernlab::laplacedot(0.4), 1e-6),
    list(besseldot(0.5, 2, 2), kernlab::besseldot(0.5, 2, 2), 1e-6),
    list(anovadot(0.2, 2), kernlab::anovadot(0.2, 2), 1e-10),
    list(splinedot(), kernlab::splinedot(), 1e-8))
  for (case in cases) {
    expect_kernel_object(case[[1]])
    # (kernlab's kernelMatrix(tanhdot(), x, y) fails: the symmetric form)
    ours <- kernel_matrix(case[[1]], x)
    theirs <- unclass(kernlab::kernelMatrix(case[[2]], x))
    expect_lt(max(abs(ours - theirs)) / max(1, abs(theirs)), case[[3]],
              label = format(case[[1]]))
    expect_equal(kpar(case[[1]]), kern(case[[2]])$kpar, label = format(case[[1]]))
  }
  # defaults are kernlab's
  expect_equal(kpar(rbfdot()), list(sigma = 1))
  expect_equal(kpar(polydot()), list(degree = 1, scale = 1, offset = 1))
  expect_equal(kpar(besseldot()), list(sigma = 1, order = 1, degree = 1))
  expect_null(kpar(rbfdot(1) + vanilladot()))
})

test_that("kpca(), predict() and the algebra take the constructors' kernels", {
  x <- acc_data()
  f1 <- kpca(x, kernel = rbfdot(sigma = 0.2), features = 2)
  f2 <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 2)
  expect_equal(f1$eig, f2$eig)
  expect_equal(predict(f1, x[1:5, ]), predict(f2, x[1:5, ]))
  k <- 2 * rbfdot(0.2) + polydot(degree = 2)
  expect_equal(kernel_matrix(k, x[1:5, ]),
               2 * kernel_matrix(rbfdot(0.2), x[1:5, ]) +
                 kernel_matrix(polydot(degree = 2), x[1:5, ]))
  expect_identical(kernelf(kpca(x, kernel = k, features = 2)), k)
})

test_that("accessors: bad input gives errors naming the argument", {
  x <- acc_data()
  f <- kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.2), features = 2)
  expect_error(pcv(f, type = 1), "pcv\\(\\) takes only 'object'; unknown argument 'type'")
  expect_error(eig(f, 2), "unknown argument '\\(unnamed\\)'")
  expect_error(rotated(f, a = 1, b = 2), "unknown arguments 'a', 'b'")
  expect_error(pcv(1:3), "'object' must be a fit from kpca\\(\\), not an object of class \"integer\"")
  expect_error(kpar("rbfdot"), "'object' must be a fit from kpca\\(\\) or kcca\\(\\), or a kernel object")
  expect_error(kcor(f), "'object' must be a fit from kcca\\(\\)")
  g <- f
  g$rotated <- NULL
  expect_error(rotated(g), "'object' keeps no scores")
  expect_error(rbfdot(-1), "'sigma' must be positive")
  expect_error(polydot(degree = 1.5), "'degree' must be a whole number")
  expect_error(besseldot(order = 60), "'order' must be between 0 and 50")
})

# Each order of loading runs in a fresh R process; the installed fastkpca
# under test is the one on .libPaths().
run_in_child <- function(fun, args) {
  callr::r(fun, args = args, libpath = .libPaths(),
           env = c(callr::rcmd_safe_env(), R_TESTS = ""))
}

# The child's work: `steps` loads the packages, then the accessors are read.
accessor_session <- function(steps) {
  eval(parse(text = steps))
  x <- matrix(c(2.5, 0.5, 2.2, 1.9, 3.1, 2.3, 2.0, 1.0, 1.5, 1.1,
                2.4, 0.7, 2.9, 2.2, 3.0, 2.7, 1.6, 1.1, 1.6, 0.9), ncol = 2)
  f <- fastkpca::kpca(x, kernel = fastkpca::vanilladot())
  set.seed(1)
  fn <- fastkpca::kpca(x, kernel = "rbfdot", kpar = list(sigma = 0.5), features = 2,
                       landmarks = 6)
  fp <- fastkpca::kpca(tcrossprod(scale(x, scale = FALSE)), kernel = "precomputed",
                       features = 2)
  fk <- kernlab::kpca(x, kernel = kernlab::vanilladot())
  # the accessors the search path finds, and kernlab's own by name
  list(found = list(eig(f), pcv(f), rotated(f), class(kernelf(f)), xmatrix(f),
                    dim(pcv(fn)), eig(fk), pcv(fk), class(kernelf(fk)),
                    kpar(kernelf(fk)), eig(fp)),
       kernlab = list(kernlab::eig(f), kernlab::pcv(f), kernlab::rotated(f),
                      class(kernlab::kernelf(f)), kernlab::xmatrix(f),
                      dim(kernlab::pcv(fn)), kernlab::eig(fp)),
       fastkpca = list(fastkpca::eig(fk), fastkpca::pcv(fk),
                       class(fastkpca::kernelf(fk)), fastkpca::kpar(kernlab::rbfdot(2))))
}

test_that("accessors work alone and with kernlab loaded or attached in every order", {
  skip_on_cran()
  skip_if_not_installed("kernlab")
  skip_if_not_installed("callr")
  orders <- c(
    alone = "library(fastkpca)",
    fastkpca_then_kernlab = "library(fastkpca); library(kernlab)",
    kernlab_then_fastkpca = "library(kernlab); library(fastkpca)",
    kernlab_loaded_first = "loadNamespace('kernlab'); library(fastkpca)",
    kernlab_loaded_later = "library(fastkpca); loadNamespace('kernlab')")
  results <- lapply(orders, function(steps) run_in_child(accessor_session, list(steps)))
  ref <- results[["fastkpca_then_kernlab"]]
  x <- scale(fx_seed003(), scale = FALSE)
  fk <- kernlab::kpca(x, kernel = kernlab::vanilladot())
  expect_equal(ref$found[[1]], kernlab::eig(fk), tolerance = 1e-10)
  expect_equal(align_signs(ref$found[[2]], kernlab::pcv(fk)), kernlab::pcv(fk),
               tolerance = 1e-8)
  # kernelf() of a vanilladot fit, read once kernlab is loaded (the session
  # loads it in every order): fastkpca's kernel function, in every session
  expect_identical(ref$found[[4]], c("fastkpca_kernel_function", "fastkpca_kernel", "kernel"))
  expect_identical(ref$found[[6]], c(6L, 2L))
  expect_equal(ref$found[[11]], ref$found[[1]], tolerance = 1e-10)  # precomputed
  for (order in names(results)) {
    res <- results[[order]]
    # the same answers, whichever generic the search path finds
    expect_equal(res$found, ref$found, label = order)
    expect_equal(res$kernlab, ref$found[c(1:6, 11)],
                 label = paste(order, "kernlab's generics"))
    expect_equal(res$fastkpca, list(ref$found[[7]], ref$found[[8]], ref$found[[9]],
                                    list(sigma = 2)),
                 label = paste(order, "fastkpca's generics on kernlab's objects"))
  }
})
