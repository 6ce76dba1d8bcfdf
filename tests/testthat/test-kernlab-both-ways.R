# kernlab's functions on fastkpca's kernels, and fastkpca's functions on
# kernlab's (R/kernel_function.R, R/kernlab_kernels.R): with both packages
# attached in either order, each kernlab function that takes a kernel gives
# with a fastkpca kernel what it gives with kernlab's own generator, and
# with a sum of kernels what it gives with the same kernel written by hand
# as an R function. While kernlab is attached, fastkpca's generators return
# kernlab's own objects (its class, kpar and kernel function); the fastkpca
# kernel functions that kernlab treats as user kernels are the expressions
# of the algebra (here 1 * k for each base kernel k, whose kernel matrices
# come from fastkpca's methods on kernlab's generics) and the kernels made
# before kernlab was attached. Each load order runs in a child R process,
# which does every check and returns the pairs to compare. Kernels and fits
# saved in one kind of session and read in the other compute the same.

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
  native <- list(
    rbfdot = fk$rbfdot(0.2), polydot = fk$polydot(degree = 2, scale = 0.5),
    vanilladot = fk$vanilladot(), tanhdot = fk$tanhdot(scale = 0.01),
    laplacedot = fk$laplacedot(0.3), besseldot = fk$besseldot(0.4, order = 1),
    anovadot = fk$anovadot(0.5, degree = 2), splinedot = fk$splinedot())
  # fastkpca kernel expressions of the same kernels: kernlab's user kernels
  ours <- lapply(native, function(k) 1 * k)
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
    # (past about 20 of its default 100 iterations, rvm()'s pruning turns
    # a kernel value's last bit into a change of up to 10% in its
    # predictions, with kernlab's own kernel too: the kernel values of the
    # engine's vector paths and of kernlab's R differ in the last bit)
    rvm = predict(kl$rvm(x[, -3], x[, 3], kernel = k, iterations = 10), xn[, -3]),
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
  # a kernel made before kernlab was attached (the steps made `early` then)
  early_fits <- if (exists("early", inherits = FALSE)) list(
    dec(kl$ksvm(x, y, kernel = get("early"), C = 2)),
    dec(kl$ksvm(x, y, kernel = theirs$rbfdot, C = 2)))
  # fastkpca's kpca() still takes kernlab's kernels, and fastkpca's own
  own <- lapply(list(fk$kpca(x, kernel = kl$rbfdot(0.2), features = 2),
                     fk$kpca(x, kernel = fk$rbfdot(0.2), features = 2)), function(f) f$eig)
  # fastkpca's generators give kernlab's objects: kernlab's class, kpar and
  # value of k(x, y)
  a <- x[1, ]
  b <- x[2, ]
  base_objects <- lapply(names(native), function(nm) {
    lapply(list(native[[nm]], theirs[[nm]]), function(k) list(
      class = as.vector(class(k)), kpar = kl$kpar(k), pair = k(a, b)))
  })
  names(base_objects) <- names(native)
  strings_native <- lapply(list(fk$stringdot(length = 3, type = "boundrange"),
                                kl$stringdot(length = 3, type = "boundrange")), function(k)
    list(class = as.vector(class(k)), kpar = kl$kpar(k), pair = k("the cat", "the mat")))
  # kernlab takes its native paths for them: ksvm()'s C-bsvc (which crashes
  # on user kernels) with the probability model, as in example(ksvm)
  bsvc <- lapply(list(native$rbfdot, theirs$rbfdot), function(k) {
    set.seed(33)
    m <- kl$ksvm(Species ~ ., data = iris, type = "C-bsvc", kernel = k, C = 10,
                 prob.model = TRUE)
    list(probabilities = predict(m, iris[c(1, 51, 101, 120), -5], type = "probabilities"),
         alpha = unlist(kl$alpha(m)))
  })
  # and an expression there is an error, not a crash, for every type whose
  # solver crashes on a user kernel
  refused <- lapply(c("C-bsvc", "kbb-svc", "spoc-svc", "eps-bsvr"), function(type) {
    response <- if (type == "eps-bsvr") x[, 1] else y
    tryCatch({
      kl$ksvm(x[, -1], response, type = type, kernel = sum_kernel, prob.model = type == "C-bsvc")
      "no error"
    }, error = function(e) c(class(e)[1], conditionMessage(e)))
  })
  # on strings kernlab's list method takes its user-kernel path for every
  # string kernel (kernlab's own stringdot() too), and those types crash
  # there: an error for kernlab's object and for an expression
  refused_strings <- lapply(list(fk$stringdot(length = 2), 1 * fk$stringdot(length = 2)),
    function(k) tryCatch({
      kl$ksvm(as.list(words), classes, kernel = k, type = "C-bsvc", C = 1)
      "no error"
    }, error = function(e) c(class(e)[1], conditionMessage(e))))
  # (C-svc on strings runs, as in kernlab)
  string_svc <- lapply(list(fk$stringdot(length = 2), kl$stringdot(length = 2)), function(k)
    unclass(predict(kl$ksvm(as.list(words), classes, kernel = k, C = 1), as.list(words[1:4]),
                    type = "decision")))
  # the algebra on kernlab's own objects, in both orders, against kernlab's
  # own kernel matrices combined in R
  Kr <- unclass(kl$kernelMatrix(kl$rbfdot(0.2), x))
  Kp <- unclass(kl$kernelMatrix(kl$polydot(degree = 2, scale = 0.05), x))
  kl_sum <- kl$rbfdot(0.2) + kl$polydot(degree = 2, scale = 0.05)
  algebra <- list(
    sum = list(kl_sum, Kr + Kp),
    sum_mixed = list(fk$kern("rbfdot", sigma = 0.2) * 1 + kl$polydot(degree = 2, scale = 0.05),
                     Kr + Kp),
    sum_mixed_other_order = list(kl$polydot(degree = 2, scale = 0.05) + 1 * fk$rbfdot(0.2),
                                 Kp + Kr),
    scale_left = list(2 * kl$rbfdot(0.2), 2 * Kr),
    scale_right = list(kl$rbfdot(0.2) * 0.5, 0.5 * Kr),
    product = list(kl$rbfdot(0.2) * kl$polydot(degree = 2, scale = 0.05), Kr * Kp),
    power = list(kl$polydot(degree = 2, scale = 0.05)^3, Kp^3),
    exp = list(exp(kl$rbfdot(0.2)), exp(Kr)))
  algebra_values <- lapply(algebra, function(case) list(
    class = class(case[[1]]),
    fastkpca = fk$kernel_matrix(case[[1]], x),
    kernlab = unclass(kl$kernelMatrix(case[[1]], x)),
    reference = case[[2]]))
  algebra_errors <- lapply(list(
    function() kl$rbfdot(1) - kl$rbfdot(2), function() kl$rbfdot(1) / 2,
    function() -kl$rbfdot(1), function() sqrt(kl$rbfdot(1)),
    function() kl$rbfdot(1) + 1, function() kl$rbfdot(1)^0.5), function(f)
      tryCatch({ f(); "no error" }, error = function(e) class(e)[1]))
  # ksvm() with a sum of kernlab's own kernels fits the sum kernel
  by_hand_kl <- function(a, b) exp(-0.2 * sum((a - b)^2)) + (0.05 * sum(a * b) + 1)^2
  class(by_hand_kl) <- "kernel"
  kl_sum_svm <- lapply(list(kl_sum, by_hand_kl), function(k) dec(kl$ksvm(x, y, kernel = k, C = 2)))
  list(generics = generics, fits = fits, svm_pca = svm_pca, sums = sums, early = early_fits, svm_models = svm_models, csi = csi,
       strings = string_cases, own = own, base_objects = base_objects,
       strings_native = strings_native, bsvc = bsvc, refused = refused,
       refused_strings = refused_strings, string_svc = string_svc,
       formatted = format(fk$rbfdot(0.2)),
       algebra = algebra_values, algebra_errors = algebra_errors, kl_sum_svm = kl_sum_svm,
       early_object = if (exists("early", inherits = FALSE))
         list(class = class(get("early")), pair = get("early")(a, b), fresh = class(fk$rbfdot(0.2))),
       classes = list(class(1 * fk$rbfdot(1)), class(1 * fk$stringdot()),
                      methods::is(fk$rbfdot(1), "rbfkernel"),
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
    expect_identical(res$classes[[2]], c("fastkpca_string_kernel_function", "fastkpca_kernel_function",
                                         "fastkpca_kernel", "stringkernel", "kernel"))
    expect_true(res$classes[[3]])
    expect_true(res$classes[[4]])
    # fastkpca's generators give kernlab's objects, whose k(x, y) is kernlab's
    for (nm in names(res$base_objects)) {
      pair <- res$base_objects[[nm]]
      expect_identical(pair[[1]]$class, pair[[2]]$class, label = paste(order, nm, "class"))
      expect_equal(pair[[1]]$kpar, pair[[2]]$kpar, label = paste(order, nm, "kpar"))
      expect_identical(pair[[1]]$pair, pair[[2]]$pair, label = paste(order, nm, "k(x, y)"))
    }
    expect_identical(res$strings_native[[1]], res$strings_native[[2]])
    # ksvm()'s C-bsvc with the probability model on fastkpca's rbfdot(): kernlab's result
    expect_pairs_equal(res$bsvc, 0, paste(order, "ksvm C-bsvc"))
    for (r in res$refused) {
      expect_identical(r[[1]], "fastkpca_error_argument", label = paste(order, r[[2]]))
      expect_match(r[[2]], "ksvm\\(\\) of type \"(C-bsvc|kbb-svc|spoc-svc|eps-bsvr)\" cannot take the kernel rbfdot")
    }
    for (r in res$refused_strings) {
      expect_identical(r[[1]], "fastkpca_error_argument", label = paste(order, r[[2]]))
      expect_match(r[[2]], "ksvm\\(\\) of type \"C-bsvc\" cannot take the string kernel")
    }
    expect_pairs_equal(res$string_svc, 0, paste(order, "ksvm on strings"))
    expect_identical(res$formatted, "rbfdot(sigma = 0.2)")
    # the algebra on kernlab's own kernels
    for (nm in names(res$algebra)) {
      case <- res$algebra[[nm]]
      expect_identical(case$class, c("fastkpca_kernel_function", "fastkpca_kernel", "kernel"),
                       label = paste(order, nm, "class"))
      expect_equal(case$fastkpca, case$reference, tolerance = 1e-10, ignore_attr = TRUE,
                   label = paste(order, nm, "kernel_matrix()"))
      expect_equal(case$kernlab, case$reference, tolerance = 1e-10, ignore_attr = TRUE,
                   label = paste(order, nm, "kernlab's kernelMatrix()"))
    }
    expect_identical(unlist(res$algebra_errors), rep("fastkpca_error_argument", 6L))
    expect_pairs_equal(res$kl_sum_svm, 1e-5, paste(order, "ksvm, sum of kernlab's kernels"))
    if (order == "fastkpca_then_kernlab") {
      # made before kernlab was attached: fastkpca's kernel function, kept;
      # made after: kernlab's object
      expect_identical(res$early_object$class, c("fastkpca_kernel_function", "fastkpca_kernel", "kernel"))
      expect_identical(dim(res$early_object$pair), c(1L, 1L))
      expect_identical(as.vector(res$early_object$fresh), "rbfkernel")
    }
  }
})

test_that("without kernlab, the generators give fastkpca's kernel functions with kernlab's k(x, y)", {
  skip_if_not_installed("callr")
  res <- callr::r(function() {
    library(fastkpca)
    x <- c(1, 2, 3)
    y <- c(1.5, 2, 2.5)
    ks <- list(rbfdot(0.1), polydot(2), vanilladot(), tanhdot(0.01), laplacedot(0.2),
               besseldot(0.2), anovadot(0.2, 2), splinedot(), rbfdot(0.1) + vanilladot())
    list(loaded = isNamespaceLoaded("kernlab"), classes = lapply(ks, class),
         values = lapply(ks, function(k) k(x, y)),
         reference = list(exp(-0.1 * sum((x - y)^2)), (sum(x * y) + 1)^2, sum(x * y),
                          tanh(0.01 * sum(x * y) + 1), exp(-0.2 * sqrt(sum((x - y)^2)))))
  }, libpath = .libPaths(), env = c(callr::rcmd_safe_env(), R_TESTS = ""))
  expect_false(res$loaded)
  for (cl in res$classes)
    expect_identical(cl, c("fastkpca_kernel_function", "fastkpca_kernel", "kernel"))
  # kernlab's shapes: a 1 x 1 matrix for the kernels kernlab computes with
  # crossprod(), a number for anovadot, splinedot and expressions
  for (i in 1:6) expect_identical(dim(res$values[[i]]), c(1L, 1L))
  for (i in 7:9) expect_null(dim(res$values[[i]]))
  for (i in 1:5) expect_equal(as.vector(res$values[[i]]), res$reference[[i]], tolerance = 1e-12)
})

test_that("kernlab's generics on fastkpca's kernels refuse bad input by name", {
  skip_if_not_installed("kernlab")
  loadNamespace("kernlab")
  # fastkpca's kernel functions (an expression: a base kernel made by a
  # generator while kernlab is attached is kernlab's own)
  k <- 1 * rbfdot(1)
  x <- matrix(as.double(1:6), 3)
  expect_error(k(1:3, 1:2), "'x' and 'y' must be numeric vectors of the same length")
  expect_error(k(c("a", "b"), c("a", "b")), "'x' and 'y' must be numeric vectors")
  expect_error(kernlab::kernelMult(k, x, NULL, 1:2), "'z' must be a numeric vector or matrix with 3 rows")
  expect_error(kernlab::kernelMult(k, x, x[1:2, ], 1:3), "'z' .* 2 rows, one per point of 'y'")
  expect_error(kernlab::kernelPol(k, x, x[1:2, ], 1:3), "'k' must be given with 'y'")
  expect_error(kernlab::kernelPol(k, x, x[1:2, ], 1:3, 1:3), "'k' .* 2 rows")
  expect_error(kernlab::kernelPol(k, x, NULL, c(1, NA, 2)), "'z' must not contain missing values")
  expect_error(kernlab::kernelMatrix(k, x, matrix(1, 2, 3)), "'y' must have 2 columns")
  expect_error(kernlab::kernelMatrix(1 * stringdot(), list("ab", NA)), "missing strings")
  # kernlab's rows of NA (csi() past its last pivot) give NA, as kernlab's own do
  xna <- rbind(x, NA)
  ours <- kernlab::kernelMatrix(k, xna, x[1, , drop = FALSE])
  theirs <- kernlab::kernelMatrix(kernlab::rbfdot(1), xna, x[1, , drop = FALSE])
  expect_equal(as.vector(ours), as.vector(theirs))
  # the kernel value of one pair is the kernel matrix's
  expect_equal(k(x[1, ], x[2, ]), kernel_matrix(k, x)[1, 2])
  expect_equal(stringdot(length = 2)("abcd", "bcde"),
               kernel_matrix(stringdot(length = 2), c("abcd", "bcde"))[1, 2])
  expect_equal((1 * stringdot(length = 2))("abcd", "bcde"),
               kernel_matrix(stringdot(length = 2), c("abcd", "bcde"))[1, 2])
})

# A kernel and fits saved in one session: the kernel from rbfdot(), which
# is kernlab's own object while kernlab is attached; a kpca() fit and two
# kcca() fits on it; and what the saving session computed with them.
saving_session <- function(setup, file, saved_results) {
  eval(parse(text = setup), envir = globalenv())
  fk <- asNamespace("fastkpca")
  x <- as.matrix(iris[c(1:20, 51:70, 101:120), 1:4])
  z <- as.matrix(iris[c(21:25, 71:75, 121:125), 1:4])
  k <- fk$rbfdot(0.3)
  objects <- list(kernel = k, kpca = fk$kpca(x, kernel = k, features = 3),
                  kcca = fk$kcca(x[, 1:2], x[, 3:4], kernel = k, ncomps = 4),
                  centered = fk$kcca(x[, 1:2], x[, 3:4], kernel = k, ncomps = 2,
                                     formulation = "centered"))
  saveRDS(objects, file)
  list(kernel_class = class(k), results = saved_results(objects, z, x))
}

# What a reading session computes with the objects, for comparison with
# the saving session's.
saved_results <- function(objects, z, x) {
  fk <- asNamespace("fastkpca")
  list(kernel_matrix = fk$kernel_matrix(objects$kernel, z, x),
       kernel_matrix_self = fk$kernel_matrix(objects$kernel, x),
       kpca = predict(objects$kpca, z),
       kcca = predict(objects$kcca, x = z[, 1:2], y = z[, 3:4]),
       centered = predict(objects$centered, x = z[, 1:2], y = z[, 3:4]),
       kernelf = fk$kernel_matrix(fk$kernelf(objects$kpca), z, x))
}

# The reading session: what it gives before and after readRDS() (the
# generators, kern(), a kcca() fit, the search path), and the results
# computed with the objects read.
reading_session <- function(setup, file, saved_results) {
  eval(parse(text = setup), envir = globalenv())
  fk <- asNamespace("fastkpca")
  x <- as.matrix(iris[c(1:20, 51:70, 101:120), 1:4])
  z <- as.matrix(iris[c(21:25, 71:75, 121:125), 1:4])
  state <- function() {
    set.seed(7)
    v <- matrix(rnorm(120), 40)
    list(generator = class(fk$rbfdot(0.3)), string_generator = class(fk$stringdot()),
         kern = class(fk$kern("rbfdot", sigma = 0.3)),
         # (a kernlab object prints the address of its closure's environment)
         printed = gsub("0x[0-9a-f]+", "0x", utils::capture.output(print(fk$rbfdot(0.3)))),
         kcca = fk$kcca(v[, 1:2], v[, 3, drop = FALSE], kernel = "rbfdot",
                        kpar = list(sigma = 0.2), ncomps = 4),
         search = search())
  }
  before <- state()
  loaded_before <- isNamespaceLoaded("kernlab")
  objects <- readRDS(file)
  after <- state()
  list(before = before, after = after, loaded_before = loaded_before,
       loaded_after = isNamespaceLoaded("kernlab"),
       results = saved_results(objects, z, x))
}

test_that("kernels and fits saved with kernlab attached and read without it (and the other way round) compute the same", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("callr")
  setups <- c(attached = "suppressMessages({library(kernlab); library(fastkpca)})",
              without = "library(fastkpca)")
  child <- function(fun, args)
    callr::r(fun, args = args, libpath = .libPaths(),
             env = c(callr::rcmd_safe_env(), R_TESTS = ""))
  results <- saved_results
  environment(results) <- globalenv()  # travels to the children as an argument
  for (from in names(setups)) {
    to <- setdiff(names(setups), from)
    file <- tempfile(fileext = ".rds")
    on.exit(unlink(file), add = TRUE)
    saved <- child(saving_session, list(setups[[from]], file, results))
    if (from == "attached") expect_identical(as.vector(saved$kernel_class), "rbfkernel")
    else expect_identical(saved$kernel_class[1L], "fastkpca_kernel_function")
    read <- child(reading_session, list(setups[[to]], file, results))
    label <- sprintf("saved %s kernlab, read %s", from,
                     if (to == "attached") "with it attached" else "without it")
    if (to == "without") expect_false(read$loaded_before, label = label)
    # the same numbers, bit for bit
    for (what in names(saved$results))
      expect_identical(read$results[[what]], saved$results[[what]],
                       label = paste(label, what))
    # and nothing else of the reading session changed: the generators,
    # kern(), a kcca() fit, the search path
    expect_identical(read$after, read$before, label = label)
  }
})
