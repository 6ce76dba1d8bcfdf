# kernlab's functions on fastkpca's kernels, and fastkpca's functions on
# kernlab's (R/kernel_function.R, R/kernlab_kernels.R): with both packages
# attached in either order, each kernlab function that takes a kernel gives
# with a fastkpca kernel what it gives with kernlab's own generator, and
# with a sum of kernels what it gives with the same kernel written by hand
# as an R function. Each load order runs in a child R process, which does
# every check and returns the pairs to compare.

both_ways_child <- function(fun, steps) {
  callr::r(fun, args = list(steps), libpath = .libPaths(),
           env = c(callr::rcmd_safe_env(), R_TESTS = ""))
}

# The child's work: `steps` attaches the two packages; then each case is
# computed twice, once with fastkpca's kernel and once with kernlab's (or
# the hand-written kernel), and the pairs come back as plain matrices.
both_ways_session <- function(steps) {
  eval(parse(text = steps))
  fk <- asNamespace("fastkpca")
  kl <- asNamespace("kernlab")
  ours <- list(
    rbfdot = fk$rbfdot(0.2), polydot = fk$polydot(degree = 2, scale = 0.5),
    vanilladot = fk$vanilladot(), tanhdot = fk$tanhdot(scale = 0.01),
    laplacedot = fk$laplacedot(0.3), besseldot = fk$besseldot(0.4, order = 1),
    anovadot = fk$anovadot(0.5, degree = 2), splinedot = fk$splinedot())
  theirs <- list(
    rbfdot = kl$rbfdot(0.2), polydot = kl$polydot(degree = 2, scale = 0.5),
    vanilladot = kl$vanilladot(), tanhdot = kl$tanhdot(scale = 0.01),
    laplacedot = kl$laplacedot(0.3), besseldot = kl$besseldot(0.4, order = 1),
    anovadot = kl$anovadot(0.5, degree = 2), splinedot = kl$splinedot())
  set.seed(26)
  rows <- c(1:20, 51:70, 101:120)
  x <- as.matrix(iris[rows, 1:4])
  x01 <- scale(x, center = FALSE, scale = apply(x, 2, max))  # splinedot's scale
  y <- droplevels(iris$Species[rows])
  z <- rnorm(nrow(x))
  xn <- x[1:7, ]
  dec <- function(m) unclass(predict(m, xn, type = "decision"))
  # the four kernel generics, for every generator
  # On two sets of points, kernlab's own methods for its classes fail or
  # disagree with its own kernel functions (tanhdot's stops: 'scale' is not
  # found; kernelPol() of polydot, vanilladot and splinedot is transposed;
  # kernelMult() of anovadot differs): there the reference is kernlab's
  # generic default, its loop over pairs of points of the kernel function.
  pairwise <- function(k) structure(function(a, b) k(a, b), class = "kernel")
  generics <- lapply(names(ours), function(nm) {
    d <- if (nm %in% c("splinedot", "anovadot")) x01 else x
    both <- lapply(list(ours[[nm]], theirs[[nm]]), function(k) {
      k2 <- if (inherits(k, "fastkpca_kernel")) k else pairwise(k)
      list(matrix = unclass(kl$kernelMatrix(k, d)),
           cross = unclass(kl$kernelMatrix(k2, d, d[1:5, ])),
           fast = unclass(kl$kernelFast(k2, d, d[1:5, ], rowSums(d^2))),
           mult = kl$kernelMult(k, d, NULL, z),
           mult_cross = kl$kernelMult(k2, d, d[1:5, ], z[1:5]),
           pol = unclass(kl$kernelPol(k, d, NULL, z)),
           pol_cross = unclass(kl$kernelPol(k2, d, d[1:5, ], cbind(z), cbind(z[1:5]))),
           pair = drop(k(d[1, ], d[2, ])))
    })
    both
  })
  names(generics) <- names(ours)
  # the functions that fit, each with a few of the generators
  fit_with <- function(k) list(
    ksvm = dec(kl$ksvm(x, y, kernel = k, C = 2)),
    gausspr = predict(kl$gausspr(x, y, kernel = k), xn, type = "probabilities"),
    rvm = predict(kl$rvm(x[, -3], x[, 3], kernel = k), xn[, -3]),
    lssvm = unclass(predict(kl$lssvm(x, y, kernel = k, reduced = FALSE), xn)),
    kkmeans = { set.seed(4); kl$kkmeans(x, centers = 3, kernel = k)@.Data },
    specc = { set.seed(5); kl$specc(x, centers = 3, kernel = k)@.Data },
    kqr = predict(kl$kqr(x[, -3], x[, 3], kernel = k, kpar = list()), xn[, -3]),
    kha = { set.seed(6); abs(predict(kl$kha(x, kernel = k, features = 2, maxiter = 20), xn)) },
    kfa = abs(predict(kl$kfa(x, kernel = k, features = 2), xn)),
    # kernlab's kcca() gives the pair +rho, -rho of equal modulus in
    # eigen()'s order for a nonsymmetric matrix, which is arbitrary
    kcca = sort(kl$kcor(kl$kcca(x[, 1:2], x[, 3:4], kernel = k, ncomps = 2))),
    kpca = abs(predict(kl$kpca(x, kernel = k, features = 2), xn)),
    kpca_formula = kl$eig(kl$kpca(~ ., data = as.data.frame(x), kernel = k, features = 2)))
  # (kernlab's own kkmeans() fails with besseldot, its lssvm() is singular
  # with the low-rank kernels: two full-rank kernels go through all)
  fits <- lapply(c("rbfdot", "laplacedot"), function(nm)
    list(fit_with(ours[[nm]]), fit_with(theirs[[nm]])))
  names(fits) <- c("rbfdot", "laplacedot")
  # every generator through ksvm() and kernlab's kpca()
  # (kernlab's ksvm() computes anovadot in its own C code, which differs
  # from kernlab's definition of it in R: there the reference is the latter)
  svm_pca <- lapply(names(ours), function(nm) {
    d <- if (nm %in% c("splinedot", "anovadot")) x01 else x
    reference <- if (nm == "anovadot") pairwise(theirs[[nm]]) else theirs[[nm]]
    lapply(list(ours[[nm]], reference), function(k) list(
      ksvm = unclass(predict(kl$ksvm(d, y, kernel = k, C = 2), d[1:7, ], type = "decision")),
      kpca = kl$eig(kl$kpca(d, kernel = k, features = 2))))
  })
  names(svm_pca) <- names(ours)
  # the sum kernel against the same kernel written by hand
  sum_kernel <- fk$rbfdot(0.2) + 0.5 * fk$polydot(degree = 2, scale = 0.05)
  by_hand <- function(a, b) exp(-0.2 * sum((a - b)^2)) + 0.5 * (0.05 * sum(a * b) + 1)^2
  class(by_hand) <- "kernel"
  sums <- list(fit_with(sum_kernel), fit_with(by_hand))
  m_sum <- kl$ksvm(x, y, kernel = sum_kernel, C = 2)
  m_hand <- kl$ksvm(x, y, kernel = by_hand, C = 2)
  svm_models <- lapply(list(m_sum, m_hand), function(m)
    list(alpha = kl$alpha(m), b = kl$b(m), index = kl$alphaindex(m)))
  # lssvm()'s reduced fit: csi()'s pivots call the kernel point by point and
  # ask for rows of NA past the last pivot (kernlab's own fails on 60 rows)
  csi <- lapply(list(ours$rbfdot, theirs$rbfdot), function(k) list(
    lssvm = unclass(predict(kl$lssvm(as.matrix(iris[, 1:4]), iris$Species, kernel = k),
                            as.matrix(iris[, 1:4])))))
  # strings: kernelMatrix and ksvm's list interface
  words <- c("the cat sat", "the cat ran", "a dog sat", "a dog ran", "cats and dogs",
             "the mat", "a cat sat on the mat", "dogs ran on")
  classes <- factor(c("a", "a", "b", "b", "b", "a", "a", "b"))
  string_cases <- lapply(list(fk$stringdot(length = 2), kl$stringdot(length = 2)), function(k) list(
    matrix = unclass(kl$kernelMatrix(k, as.list(words))),
    mult = kl$kernelMult(k, as.list(words), NULL, seq_along(words)),
    ksvm = unclass(predict(kl$ksvm(as.list(words), classes, kernel = k, C = 1),
                              as.list(words[1:4]), type = "decision"))))
  # a kernel made before kernlab was loaded (the steps made `early` then)
  early <- if (exists("early", inherits = FALSE)) list(
    dec(kl$ksvm(x, y, kernel = get("early"), C = 2)),
    dec(kl$ksvm(x, y, kernel = theirs$rbfdot, C = 2)))
  # fastkpca's kpca() still takes kernlab's kernels, and fastkpca's own
  own <- lapply(list(fk$kpca(x, kernel = kl$rbfdot(0.2), features = 2),
                     fk$kpca(x, kernel = fk$rbfdot(0.2), features = 2)), function(f) f$eig)
  list(generics = generics, fits = fits, svm_pca = svm_pca, sums = sums, early = early, svm_models = svm_models, csi = csi,
       strings = string_cases, own = own,
       classes = list(class(fk$rbfdot(1)), class(fk$stringdot()),
                      methods::is(fk$rbfdot(1), "kernel"),
                      methods::is(fk$stringdot(), "stringkernel")),
       search = list(rbfdot = environmentName(environment(get("rbfdot"))),
                     kpca = environmentName(environment(get("kpca")))))
}

# Each result with fastkpca's kernel against the same with the reference,
# as plain numbers with their shape (kernlab names rows for some kernels
# and not for others).
expect_pairs_equal <- function(pairs, tolerance, label) {
  plain <- function(v) array(as.vector(v), dim = if (is.null(dim(v))) length(v) else dim(v))
  for (what in names(pairs[[1]]))
    expect_equal(plain(pairs[[1]][[what]]), plain(pairs[[2]][[what]]),
                 tolerance = tolerance, label = paste(label, what))
}

test_that("kernlab's functions take fastkpca's kernels in both load orders", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("callr")
  orders <- c(kernlab_then_fastkpca = "library(kernlab); library(fastkpca)",
              fastkpca_then_kernlab =
                "library(fastkpca); early <- rbfdot(0.2); library(kernlab)")
  for (order in names(orders)) {
    res <- both_ways_child(both_ways_session, orders[[order]])
    masking <- if (order == "kernlab_then_fastkpca") "fastkpca" else "kernlab"
    expect_identical(res$search$rbfdot, masking, label = paste(order, "rbfdot found"))
    for (nm in names(res$generics))
      expect_pairs_equal(res$generics[[nm]], 1e-8, paste(order, nm))
    for (nm in names(res$svm_pca))
      expect_pairs_equal(res$svm_pca[[nm]], 1e-5, paste(order, nm, "ksvm and kpca"))
    for (nm in names(res$fits))
      expect_pairs_equal(res$fits[[nm]], 1e-5, paste(order, nm, "fit"))
    expect_pairs_equal(res$sums, 1e-5, paste(order, "sum kernel against the hand-written one"))
    expect_pairs_equal(res$svm_models, 1e-6, paste(order, "ksvm's model, sum kernel"))
    expect_pairs_equal(res$csi, 0, paste(order, "lssvm with csi()"))
    expect_pairs_equal(res$strings, 1e-8, paste(order, "stringdot"))
    if (order == "fastkpca_then_kernlab")
      expect_equal(res$early[[1]], res$early[[2]], tolerance = 1e-5,
                   label = "ksvm() with a kernel made before library(kernlab)")
    expect_equal(res$own[[1]], res$own[[2]], tolerance = 1e-10,
                 label = paste(order, "fastkpca's kpca() with kernlab's rbfdot"))
    expect_identical(res$classes[[1]], c("fastkpca_kernel_function", "fastkpca_kernel", "kernel"))
    expect_true(res$classes[[3]])
    expect_true(res$classes[[4]])
  }
})

test_that("kernlab's generics on fastkpca's kernels refuse bad input by name", {
  skip_if_not_installed("kernlab")
  k <- rbfdot(1)
  x <- matrix(as.double(1:6), 3)
  expect_error(k(1:3, 1:2), "'x' and 'y' must be numeric vectors of the same length")
  expect_error(k(c("a", "b"), c("a", "b")), "'x' and 'y' must be numeric vectors")
  expect_error(kernlab::kernelMult(k, x, NULL, 1:2), "'z' must be a numeric vector or matrix with 3 rows")
  expect_error(kernlab::kernelMult(k, x, x[1:2, ], 1:3), "'z' .* 2 rows, one per point of 'y'")
  expect_error(kernlab::kernelPol(k, x, x[1:2, ], 1:3), "'k' must be given with 'y'")
  expect_error(kernlab::kernelPol(k, x, x[1:2, ], 1:3, 1:3), "'k' .* 2 rows")
  expect_error(kernlab::kernelPol(k, x, NULL, c(1, NA, 2)), "'z' must not contain missing values")
  expect_error(kernlab::kernelMatrix(k, x, matrix(1, 2, 3)), "'y' must have 2 columns")
  expect_error(kernlab::kernelMatrix(stringdot(), list("ab", NA)), "missing strings")
  # kernlab's rows of NA (csi() past its last pivot) give NA, as kernlab's own do
  xna <- rbind(x, NA)
  ours <- kernlab::kernelMatrix(k, xna, x[1, , drop = FALSE])
  theirs <- kernlab::kernelMatrix(kernlab::rbfdot(1), xna, x[1, , drop = FALSE])
  expect_equal(as.vector(ours), as.vector(theirs))
  # the kernel value of one pair is the kernel matrix's
  expect_equal(k(x[1, ], x[2, ]), kernel_matrix(k, x)[1, 2])
  expect_equal(stringdot(length = 2)("abcd", "bcde"),
               kernel_matrix(stringdot(length = 2), c("abcd", "bcde"))[1, 2])
})
