# String kernels (R/string_kernels.R, src/string_kernel.c): kernel values
# against kernlab's kernelMatrix() and a plain-R count of common
# substrings; kernel PCA on strings against kernlab's kpca(); predict(),
# Nystrom, the algebra, missing strings and bad input.

string_types_all <- c("spectrum", "boundrange", "constant", "exponential", "string",
                      "fullstring", "sequence")

# Random strings over a small alphabet, with the cases that stress the
# suffix sorting: a repeated string, periodic strings, a string exactly
# `length` long.
fx_strings <- function(n = 14, lo = 5, hi = 30, seed = 1) {
  set.seed(seed)
  x <- vapply(seq_len(n), function(i)
    paste(sample(c("a", "c", "g", "t"), sample(lo:hi, 1L), TRUE), collapse = ""), "")
  c(x, x[2], "acacacacacacac", "aaaaaaaaaa", "acgt")
}

string_kpar <- function(type) {
  list(length = if (type == "sequence") 3 else 4,
       lambda = if (type == "exponential") 1.3 else 0.7, type = type)
}

kernlab_stringdot <- function(kpar, normalized = TRUE)
  do.call(kernlab::stringdot, c(kpar, normalized = normalized))

fk_stringdot <- function(kpar, normalized = TRUE)
  do.call(stringdot, c(kpar, normalized = normalized))

# Plain R: sum over substrings s of n_s(x) n_s(y) w(|s|), by enumerating
# every substring (characters, not bytes).
plain_string_kernel <- function(x, y, type, length, lambda) {
  newline <- type %in% c("spectrum", "boundrange", "constant", "exponential")
  prep <- function(s) strsplit(if (newline) paste0(s, "\n") else s, "")[[1L]]
  w <- function(l) switch(type,
    spectrum = as.numeric(l == length), boundrange = as.numeric(l <= length),
    constant = 1, exponential = lambda^-l,
    string = if (l == length) lambda^(2 * length + 2) else 0,
    fullstring = if (l <= length) lambda^(2 * l) else 0)
  subs <- function(ch) {
    out <- character(0)
    for (i in seq_along(ch)) for (j in i:length(ch)) out <- c(out, paste(ch[i:j], collapse = "\r"))
    table(out)
  }
  outer(x, y, Vectorize(function(a, b) {
    ta <- subs(prep(a)); tb <- subs(prep(b))
    common <- intersect(names(ta), names(tb))
    lens <- lengths(strsplit(common, "\r", fixed = TRUE))
    sum(as.numeric(ta[common]) * as.numeric(tb[common]) * vapply(lens, w, 0))
  }))
}

test_that("string kernel matrices equal kernlab's kernelMatrix for every type", {
  skip_if_not_installed("kernlab")
  x <- fx_strings()
  y <- fx_strings(5, seed = 2)
  for (type in string_types_all) for (normalized in c(TRUE, FALSE)) {
    kpar <- string_kpar(type)
    kl <- kernlab_stringdot(kpar, normalized)
    fk <- fk_stringdot(kpar, normalized)
    label <- sprintf("%s, normalized = %s", type, normalized)
    ref <- unclass(kernlab::kernelMatrix(kl, as.list(x)))
    expect_lt(rel_diff(kernel_matrix(fk, x), ref), 1e-10, label = paste(label, "gram"))
    ref <- unclass(kernlab::kernelMatrix(kl, as.list(y), as.list(x)))
    expect_lt(rel_diff(kernel_matrix(fk, y, x), ref), 1e-10, label = paste(label, "cross"))
  }
})

test_that("long bounded lengths (the suffix tree's nodes, not per-length profiles) equal kernlab", {
  skip_if_not_installed("kernlab")
  x <- fx_strings(10, lo = 20, hi = 60)
  x <- c(x, strrep("acg", 12), strrep("acg", 11))
  for (kpar in list(list(type = "boundrange", length = 20, lambda = 1),
                    list(type = "fullstring", length = 18, lambda = 0.8))) {
    for (normalized in c(TRUE, FALSE)) {
      ref <- unclass(kernlab::kernelMatrix(kernlab_stringdot(kpar, normalized), as.list(x)))
      expect_lt(rel_diff(kernel_matrix(fk_stringdot(kpar, normalized), x), ref), 1e-10,
                label = paste(kpar$type, normalized))
    }
  }
})

test_that("the nodes' dense matrix and inverted index give kernlab's values whatever the split", {
  skip_if_not_installed("kernlab")
  # 60 strings, so that short substrings are shared by most of them (dense
  # nodes) and long ones by a few (the inverted index); the share that
  # splits them moves every node to one side or the other
  x <- fx_strings(56, lo = 20, hi = 70, seed = 7)
  z <- fx_strings(6, lo = 5, hi = 50, seed = 8)
  local_tuning(string_dense_share = NULL)
  for (kpar in list(list(type = "constant", length = 4, lambda = 1),
                    list(type = "exponential", length = 4, lambda = 1.4),
                    list(type = "boundrange", length = 17, lambda = 1))) {
    for (normalized in c(TRUE, FALSE)) {
      kl <- kernlab_stringdot(kpar, normalized)
      fk <- fk_stringdot(kpar, normalized)
      ref <- unclass(kernlab::kernelMatrix(kl, as.list(x)))
      ref_cross <- unclass(kernlab::kernelMatrix(kl, as.list(z), as.list(x)))
      for (share in c("0.01", "0.5", "2")) {
        fastkpca:::set_tuning(string_dense_share = as.numeric(share))
        label <- sprintf("%s, normalized = %s, share %s", kpar$type, normalized, share)
        expect_lt(rel_diff(kernel_matrix(fk, x, threads = 2), ref), 1e-10, label = label)
        expect_lt(rel_diff(kernel_matrix(fk, z, x), ref_cross), 1e-10, label = label)
        # the diagonal alone (no tile of the block: each value by itself)
        self <- .Call(fastkpca:::C_kernel_self, x, fastkpca:::kernel_program(fk), list())
        expect_lt(rel_diff(self, diag(ref)), 1e-10, label = paste(label, "diagonal"))
      }
    }
  }
})

test_that("string kernels equal a plain-R count of common substrings, UTF-8 included", {
  x <- c("h\u00e9llo w\u00f6rld", "w\u00f6rld h\u00e9llo", "hello", "\u00e9\u00e9\u00e9")
  for (type in string_types_all[1:6]) {
    kpar <- list(type = type, length = 2, lambda = if (type == "exponential") 1.5 else 0.8)
    ref <- plain_string_kernel(x, x, type, kpar$length,
                               if (type %in% c("spectrum", "boundrange")) 2 else kpar$lambda)
    got <- kernel_matrix(fk_stringdot(kpar, FALSE), x)
    expect_lt(rel_diff(got, unname(ref)), 1e-12, label = type)
  }
})

test_that("stringdot() has kernlab's signature, defaults and kpar", {
  skip_if_not_installed("kernlab")
  expect_identical(names(formals(stringdot)), names(formals(kernlab::stringdot)))
  k <- stringdot()
  expect_kernel_object(k)
  expect_identical(k$op, "base")
  expect_identical(k$name, "stringdot")
  for (type in string_types_all) {
    ref <- kernlab::kpar(kernlab::stringdot(length = 5, lambda = 0.9, type = type))
    got <- stringdot(length = 5, lambda = 0.9 + (type == "exponential"), type = type)$kpar
    if (type == "exponential") ref$lambda <- 1.9
    expect_equal(got[names(ref)], ref, label = type)
  }
  expect_same_kernel(kern("stringdot", length = 3, type = "boundrange"),
                     stringdot(length = 3, type = "boundrange"))
  expect_same_kernel(kern(kernlab::stringdot(length = 3, type = "string", lambda = 0.5)),
                     stringdot(length = 3, type = "string", lambda = 0.5))
  expect_match(format(stringdot()), "stringdot(length = 4, lambda = 4, type = \"spectrum\", normalized = TRUE)",
               fixed = TRUE)
})

test_that("kpca() on a list of strings equals kernlab's kpca() for every type", {
  skip_if_not_installed("kernlab")
  x <- fx_strings(20, lo = 10, hi = 40, seed = 3)
  for (type in string_types_all) for (normalized in c(TRUE, FALSE)) {
    kpar <- c(string_kpar(type), normalized = normalized)
    ref <- kernlab::kpca(as.list(x), kernel = "stringdot", kpar = kpar, features = 4)
    fit <- kpca(as.list(x), kernel = "stringdot", kpar = kpar, features = 4)
    label <- sprintf("%s, normalized = %s", type, normalized)
    expect_lt(rel_diff(fit$eig, kernlab::eig(ref)), 1e-8, label = paste(label, "eig"))
    expect_kpca_equal(fit, list(eig = kernlab::eig(ref), alpha = kernlab::pcv(ref),
                                rotated = kernlab::rotated(ref)), tol = 1e-6, label = label)
  }
  # kernlab's defaults for lists: stringdot with list(length = 4, lambda = 0.5)
  ref <- kernlab::kpca(as.list(x))
  fit <- kpca(as.list(x))
  expect_kpca_equal(fit, list(eig = kernlab::eig(ref), alpha = kernlab::pcv(ref),
                              rotated = kernlab::rotated(ref)), tol = 1e-6, label = "defaults")
  expect_identical(fit$kpar, stringdot(length = 4, lambda = 0.5)$kpar)
})

test_that("predict() on new strings is the centered cross-kernel times alpha", {
  skip_if_not_installed("kernlab")
  x <- fx_strings(20, seed = 4)
  z <- fx_strings(6, seed = 5)
  for (type in c("spectrum", "constant", "fullstring")) {
    kpar <- string_kpar(type)
    fit <- kpca(x, kpar = kpar, features = 3)
    kl <- kernlab_stringdot(kpar)
    K <- unclass(kernlab::kernelMatrix(kl, as.list(x)))
    Kz <- unclass(kernlab::kernelMatrix(kl, as.list(z), as.list(x)))
    expect_lt(rel_diff(predict(fit, z), plain_predict(K, Kz, fit$alpha)), 1e-8, label = type)
    expect_lt(rel_diff(predict(fit, x), fit$rotated), 1e-8, label = paste(type, "training"))
    expect_lt(rel_diff(predict(fit, as.list(z)), predict(fit, z)), 1e-14)
  }
  expect_identical(predict(fit), fit$rotated)
})

test_that("a list of character vectors is pasted into strings, as in kernlab", {
  x <- list(c("ac", "gt", "ta"), "acgtac", c("tt", "ga", "ca", "gg"), "ttgacgg", c("a", "c"))
  fit_list <- kpca(x, kpar = list(length = 2), features = 2)
  fit_chr <- kpca(vapply(x, paste, "", collapse = ""), kpar = list(length = 2), features = 2)
  expect_equal(fit_list$eig, fit_chr$eig)
  expect_equal(fit_list$rotated, fit_chr$rotated)
  expect_identical(fit_list$call[[1L]], as.name("kpca"))
})

test_that("missing strings follow na.action", {
  x <- fx_strings(12, seed = 6)
  xn <- append(x, NA, after = 4L)
  ref <- kpca(x, kpar = list(length = 3), features = 2)
  omit <- kpca(xn, kpar = list(length = 3), features = 2)
  expect_equal(omit$rotated, ref$rotated, ignore_attr = TRUE)
  expect_equal(unclass(omit$na.action), 5L, ignore_attr = TRUE)
  excl <- kpca(xn, kpar = list(length = 3), features = 2, na.action = na.exclude)
  expect_identical(dim(excl$rotated), c(length(xn), 2L))
  expect_true(all(is.na(excl$rotated[5, ])))
  expect_equal(excl$rotated[-5, ], ref$rotated, ignore_attr = TRUE)
  expect_error(kpca(xn, kpar = list(length = 3), na.action = na.fail), "missing values")
  lst <- list("acgtacgt", NA, c("ac", NA), "ttgcatgca", "gattaca", "catcat")
  fit <- kpca(lst, kpar = list(length = 2), features = 2)
  expect_identical(nrow(fit$rotated), 4L)
  p <- predict(fit, c("acgt", NA, "gattaca"))
  expect_true(all(is.na(p[2, ])) && !anyNA(p[-2, ]))
})

test_that("string kernels combine with the kernel algebra", {
  x <- fx_strings(8, seed = 7)
  k1 <- stringdot(length = 3)
  k2 <- stringdot(length = 2, type = "boundrange", normalized = FALSE)
  k3 <- stringdot(type = "fullstring", lambda = 0.5)
  K1 <- kernel_matrix(k1, x); K2 <- kernel_matrix(k2, x); K3 <- kernel_matrix(k3, x)
  expect_lt(rel_diff(kernel_matrix(2 * k1 + k2 * k3, x), 2 * K1 + K2 * K3), 1e-14)
  expect_lt(rel_diff(kernel_matrix(k1^2 + exp(k3), x), K1^2 + exp(K3)), 1e-14)
  g <- function(s) 1 / nchar(s)
  expect_lt(rel_diff(kernel_matrix(kern_conformal(k1, g), x), outer(g(x), g(x)) * K1), 1e-14)
  z <- fx_strings(3, seed = 8)
  expect_lt(rel_diff(kernel_matrix(k1 + k3, z, x),
                     kernel_matrix(k1, z, x) + kernel_matrix(k3, z, x)), 1e-14)
  fit <- kpca(x, kernel = k1 + k3, features = 2)
  expect_null(fit$kpar)
  expect_lt(rel_diff(predict(fit, x), fit$rotated), 1e-8)
  expect_error(kernel_matrix(k1 + kern("rbfdot"), x), "mixes string kernels")
})

test_that("the exact fit's solvers agree and threads do not change the result", {
  x <- fx_strings(40, seed = 9)
  a <- kpca(x, kpar = list(length = 3), features = 3, solver = "exact", threads = 1)
  b <- kpca(x, kpar = list(length = 3), features = 3, solver = "iterative", threads = 2)
  expect_kpca_equal(b, a, tol = 1e-6)
  for (type in c("spectrum", "constant", "boundrange", "sequence"))
    expect_identical(kernel_matrix(stringdot(type = type, lambda = 1.2), x, threads = 1),
                     kernel_matrix(stringdot(type = type, lambda = 1.2), x, threads = 2))
})

test_that("strings take every solver of a numeric fit, matrix-free included", {
  x <- fx_strings(40, lo = 10, hi = 40, seed = 12)
  k <- stringdot(type = "constant")
  exact <- kpca(x, kernel = k, features = 3, solver = "exact")
  expect_length(exact$eig_residuals, 3L)
  expect_lt(max(exact$eig_residuals), 1e-10)
  free <- kpca(x, kernel = k, features = 3, solver = "matrix_free", threads = 2)
  expect_s3_class(free, "fastkpca_string")
  expect_kpca_equal(free, list(eig = exact$eig, alpha = exact$alpha, rotated = exact$rotated),
                    tol = 1e-6, label = "matrix-free")
  z <- fx_strings(3, seed = 13)
  expect_lt(rel_diff(predict(free, z), predict(exact, z)), 1e-6)
})

test_that("Nystrom on strings: all strings as landmarks is the exact fit; blocks add up", {
  x <- fx_strings(30, seed = 10)
  exact <- kpca(x, kpar = list(length = 3), features = 3)
  nys <- kpca(x, kpar = list(length = 3), features = 3, landmarks = x)
  expect_s3_class(nys, "fastkpca_nystrom")
  expect_kpca_equal(nys, list(eig = exact$eig, alpha = exact$alpha, rotated = exact$rotated),
                    tol = 1e-6, label = "all landmarks")
  z <- fx_strings(4, seed = 11)
  expect_cols_equal_up_to_sign(predict(nys, z), predict(exact, z), tol = 1e-6)
  set.seed(1)
  one <- kpca(x, kpar = list(length = 3), features = 2, landmarks = 12)
  local_tuning(block_rows = 7)
  set.seed(1)
  many <- kpca(x, kpar = list(length = 3), features = 2, landmarks = 12)
  expect_lt(rel_diff(many$rotated, one$rotated), 1e-12)
  expect_identical(length(one$landmarks), 12L)
  expect_lt(rel_diff(predict(one, x), one$rotated), 1e-8)
  expect_output(print(one), "Landmarks:  12")
})

test_that("bad input to string kernels gives errors that name the argument", {
  x <- fx_strings(6)
  expect_error(kpca(list("acgt", 1, "ttga")), "'x' must be a list of character strings; element 2")
  expect_error(kernel_matrix(stringdot(), list("acgt", TRUE)), "'x' must be a list of character")
  expect_error(kpca(matrix(rnorm(20), 10), kernel = "stringdot"), "'x' must be a character vector")
  expect_error(kpca(matrix(rnorm(20), 10), kernel = stringdot()), "'x' must be a character vector")
  expect_error(kernel_matrix(stringdot(), matrix(1:4, 2)), "'x' must be a character vector")
  expect_error(kpca(x, kernel = "rbfdot"), "'x' must be numeric, not character")
  expect_error(kernel_matrix("rbfdot", x), "'x' must be numeric")
  expect_error(stringdot(length = 0), "'length' must be a whole number of at least 1")
  expect_error(stringdot(length = 2.5), "'length' must be a whole number")
  expect_error(kpca(x, kpar = list(length = -1)), "'kpar\\$length' must be a whole number")
  expect_error(stringdot(lambda = -1, type = "string"), "'lambda' must be a single finite number > 0")
  expect_error(stringdot(lambda = 0.9, type = "exponential"), "'lambda' must be greater than 1")
  expect_error(kpca(x, kpar = list(lambda = 0, type = "fullstring")), "'kpar\\$lambda'")
  expect_error(stringdot(type = "gappy"), "'type' must be one of")
  expect_error(stringdot(normalized = NA), "'normalized' must be TRUE or FALSE")
  expect_error(kpca(x, kpar = list(sigma = 1)), "unknown entry \"sigma\"")
  expect_error(kpca("acgt"), "at least 2 strings")
  expect_error(kpca(matrix(c("a", "b"), 1)), "'x' must be numeric, not character")
  expect_error(kpca(list(1, 2, 3), kernel = stringdot()), "'x' must be a character vector or a list of strings")
  expect_error(kpca(x, kernel = stringdot(), kpar = list(length = 3)), "'kpar' must not be given")
  fit <- kpca(x, features = 1)
  expect_error(preimage(fit, fit$rotated), "'object' is a fit on strings")
  expect_error(predict(fit, list(1, "acgt")), "'newdata' must be a list of character strings")
  expect_error(predict(fit, matrix(1, 2, 2)), "'newdata' must be a character vector")
})
