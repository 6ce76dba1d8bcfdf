# String kernels: stringdot(), kpca() on character vectors and lists of
# strings (exact and Nystrom), predict(), and the string kernel's matrices.
# The kernel values are computed in C (src/string_kernel.c); a string kernel
# is a kernel object (R/kern.R) whose base nodes are named "stringdot", so
# the kernel algebra (sums, products, scales, powers, exp, conformal
# weights) applies to it unchanged.

# The types, in the order of their codes in src/string_kernel.c.
string_types <- c("spectrum", "boundrange", "constant", "exponential", "string",
                  "fullstring", "sequence")

# stringdot()'s defaults, as kernlab's.
string_kernel_defaults <- list(length = 4, lambda = 1.1, type = "spectrum", normalized = TRUE)

#' String kernels
#'
#' `stringdot()` makes a string kernel with kernlab's signature and meaning;
#' [kpca()] takes a character vector, or a list whose elements are
#' character vectors (each pasted into one string, as kernlab does), with a
#' string kernel. [kernel_matrix()] and `predict()` take strings too, and
#' string kernels combine with the kernel algebra of [kern()] (sums,
#' products, positive scales, whole powers, `exp()`, [kern_conformal()]
#' with a `g` of a character vector).
#'
#' With \eqn{n_s(x)} the number of occurrences of the substring \eqn{s} in
#' \eqn{x}, all types but `"sequence"` are
#' \deqn{k(x, y) = \sum_s n_s(x)\, n_s(y)\, w(|s|)}{k(x, y) = sum_s n_s(x) n_s(y) w(|s|)}
#' with the weights of substrings of length \eqn{l}:
#' \describe{
#'   \item{`"spectrum"`}{1 for \eqn{l} = `length`: the number of common
#'     substrings of exactly `length` characters (the default);}
#'   \item{`"boundrange"`}{1 for \eqn{l \le}{l <=} `length`;}
#'   \item{`"constant"`}{1 for every length: all common substrings;}
#'   \item{`"exponential"`}{\eqn{\lambda^{-l}}{lambda^-l} (`lambda > 1`);}
#'   \item{`"string"`}{\eqn{\lambda^{2 length + 2}}{lambda^(2 length + 2)}
#'     for \eqn{l} = `length`;}
#'   \item{`"fullstring"`}{\eqn{\lambda^{2l}}{lambda^(2l)} for
#'     \eqn{l \le}{l <=} `length`;}
#'   \item{`"sequence"`}{the gap-weighted subsequence kernel of Lodhi et al.
#'     (2002): common subsequences of `length` characters, each weighted by
#'     \eqn{\lambda}{lambda} to the power of the spans it covers in both
#'     strings.}
#' }
#' As in kernlab, the first four types see each string with a newline
#' appended (so a substring may end with it), `lambda` is set to `length`
#' for `"spectrum"` and `"boundrange"` (which do not use it), and
#' `normalized = TRUE` divides by \eqn{\sqrt{k(x, x) k(y, y)}}{sqrt(k(x, x) k(y, y))}.
#' The values equal `kernlab::kernelMatrix(kernlab::stringdot(...), x)`.
#' Two differences: a string with no substring of the lengths that count
#' (shorter than `length` for `"spectrum"`) has kernel values 0, where
#' kernlab stops with an error or gives `NaN`; and `length` counts
#' characters of UTF-8 strings, where kernlab mixes bytes and characters.
#'
#' The suffixes of all strings are sorted once per call (a generalized
#' suffix array), which gives each string a sorted profile of its
#' substrings; a kernel value is then one merge of two profiles, linear in
#' the lengths of the two strings, instead of a suffix tree built for each
#' pair as in kernlab (`"sequence"`: a dynamic programme, O(`length` |x| |y|)
#' per pair). The values are computed on `threads` threads.
#'
#' `kpca()` on strings works as on numbers: the exact fit fills its one
#' n x n matrix with the string kernel; with `landmarks` (a number, `"auto"`,
#' or a character vector or list of landmark strings), the fit is centered
#' Nyström kernel PCA, which computes the kernel only between blocks of
#' strings and the landmarks and never holds an n x n matrix. Strings that
#' are `NA` (or list elements with an `NA`) follow `na.action`. `center` and
#' `scale.` do not apply to strings. The fit has the class
#' `"fastkpca_string"` before its usual classes, and `xmatrix` holds the
#' training strings (the landmark strings for a Nyström fit).
#'
#' @param length The length of the substrings considered, a whole number of
#'   at least 1.
#' @param lambda The decay factor, a number > 0 (> 1 for `"exponential"`);
#'   not used by `"spectrum"` and `"boundrange"`.
#' @param type One of `"spectrum"`, `"boundrange"`, `"constant"`,
#'   `"exponential"`, `"string"`, `"fullstring"`, `"sequence"`.
#' @param normalized Whether to normalize the kernel (`TRUE` or `FALSE`).
#' @return `stringdot()`: a kernel object (class `"fastkpca_kernel"`);
#'   `kpca()`: a fit as described in [kpca()], with class
#'   `"fastkpca_string"` first; `predict()`: the scores of the new strings
#'   (`NA` rows for `NA` strings).
#' @references Lodhi, H., Saunders, C., Shawe-Taylor, J., Cristianini, N.
#'   and Watkins, C. (2002). Text classification using string kernels.
#'   Journal of Machine Learning Research 2, 419-444.
#'
#'   Vishwanathan, S. V. N. and Smola, A. J. (2003). Fast kernels for
#'   string and tree matching. Advances in Neural Information Processing
#'   Systems 15.
#' @seealso [kpca()], [kernel_matrix()], [kern()]
#' @examples
#' x <- c("the cat sat on the mat", "the dog sat on the log",
#'        "a cat and a dog", "stocks fell on monday", "markets fell sharply")
#' k <- stringdot(length = 3)
#' round(kernel_matrix(k, x), 3)
#' fit <- kpca(x, kpar = list(length = 3), features = 2)
#' fit$rotated
#' predict(fit, c("the cat sat", "stocks rose"))
#' # a list of character vectors (tokens) is pasted into strings
#' kpca(list(c("ac", "gt"), "acgt", c("tt", "ga", "ca")), features = 1)$eig
#' # string kernels combine: a sum of two lengths
#' kernel_matrix(stringdot(length = 2) + stringdot(length = 4), x[1:3])
#' @export
stringdot <- function(length = 4, lambda = 1.1, type = "spectrum", normalized = TRUE) {
  kernel_function(string_kernel(list(length = length, lambda = lambda, type = type,
                                     normalized = normalized), arg = ""))
}

# A base string kernel node from a (partial) kpar; arg as in resolve_kpar().
string_kernel <- function(kpar, arg = "kpar") {
  base_kernel("stringdot", resolve_string_kpar(kpar, arg))
}

# Fill a string kernel's kpar with the defaults and check it. arg: "kpar"
# names the entries 'kpar$length'; "" names them 'length'.
resolve_string_kpar <- function(kpar, arg = "kpar") {
  if (is.null(kpar)) kpar <- list()
  if (!is.list(kpar) || (length(kpar) > 0L && (is.null(names(kpar)) || any(names(kpar) == ""))))
    stop_argument("'kpar' must be a named list, such as list(length = 4, lambda = 0.5)")
  unknown <- setdiff(names(kpar), names(string_kernel_defaults))
  if (length(unknown) > 0L)
    stop_argument(if (nzchar(arg)) "'kpar' has" else "'kernel' has", " unknown ",
                  if (length(unknown) > 1L) "entries " else "entry ",
                  paste(dQuote(unknown, FALSE), collapse = ", "),
                  " for kernel \"stringdot\" (its parameters: length, lambda, type, normalized)")
  label <- function(p) if (nzchar(arg)) sprintf("'%s$%s'", arg, p) else sprintf("'%s'", p)
  full <- string_kernel_defaults
  full[names(kpar)] <- kpar
  type <- full$type
  if (!is.character(type) || length(type) != 1L || is.na(type) ||
      is.na(match <- pmatch(type, string_types)))
    stop_argument(label("type"), " must be one of ", paste(dQuote(string_types, FALSE), collapse = ", "))
  type <- string_types[match]
  len <- full$length
  if (!is.numeric(len) || length(len) != 1L || !is.finite(len) || len < 1 ||
      len != round(len) || len > 1e6)
    stop_argument(label("length"), " must be a whole number of at least 1")
  lambda <- full$lambda
  if (type %in% c("spectrum", "boundrange")) {
    lambda <- len   # kernlab's: these types have no decay factor
  } else if (!is.numeric(lambda) || length(lambda) != 1L || !is.finite(lambda) || lambda <= 0) {
    stop_argument(label("lambda"), " must be a single finite number > 0")
  } else if (type == "exponential" && lambda <= 1) {
    stop_argument(label("lambda"), " must be greater than 1 for type \"exponential\"")
  }
  norm <- full$normalized
  if (!is.logical(norm) || length(norm) != 1L || is.na(norm))
    stop_argument(label("normalized"), " must be TRUE or FALSE")
  list(length = as.double(len), lambda = as.double(lambda), type = type, normalized = norm)
}

# kernlab's stringkernel object as a fastkpca kernel.
kern_from_kernlab_string <- function(kernel) string_kernel(attr(kernel, "kpar"))

# Whether a kernel object is made of string kernels; an error if it mixes
# them with kernels on numbers.
uses_strings <- function(k) {
  if (!is_kernel(k)) return(FALSE)
  names <- vapply(kernel_bases(k), function(b) b$name, "")
  strings <- names == "stringdot"
  if (any(strings) && !all(strings))
    stop_argument("'kernel' mixes string kernels with kernels on numbers: the algebra ",
                  "combines kernels on the same kind of data only")
  all(strings)
}

# A string kernel given with data that are not strings (kpca.default,
# kpca_cv, ...).
string_input_error <- function() {
  stop_argument("'x' must be a character vector or a list of strings for a string kernel ",
                "(\"stringdot\")")
}

# kpca()'s kernel and kpar for string input: a string kernel object.
resolve_string_kernel <- function(kernel, kpar, kpar_missing) {
  if (is.character(kernel) && length(kernel) == 1L && identical(kernel, "stringdot"))
    return(string_kernel(kpar))
  if (inherits(kernel, "stringkernel") || is_kernel(kernel)) {
    if (!kpar_missing)
      stop_argument("'kpar' must not be given with a kernel object: its parameters are ",
                    "part of the object")
    k <- kern(kernel)
    if (uses_strings(k)) return(k)
  }
  stop_argument("'x' holds strings: 'kernel' must be \"stringdot\" or a string kernel such as ",
                "stringdot(length = 4)")
}

# x as a character vector: a character vector as it is, a list of character
# vectors pasted element by element (NA where an element has an NA).
as_strings <- function(x, arg = "x") {
  if (is.character(x) && is.null(dim(x))) return(x)
  if (is.list(x) && !is.data.frame(x) && is.null(dim(x))) {
    out <- vapply(seq_along(x), function(i) {
      el <- x[[i]]
      if (is.logical(el) && length(el) == 1L && is.na(el)) return(NA_character_)
      if (!is.character(el) || !is.null(dim(el)))
        stop_argument(sprintf("'%s' must be a list of character strings; element %d is %s", arg, i,
                              if (is.null(el)) "NULL" else paste("of class", class(el)[1L])))
      if (anyNA(el)) NA_character_ else paste(el, collapse = "")
    }, "")
    names(out) <- names(x)
    return(out)
  }
  stop_argument(sprintf("'%s' must be a character vector or a list of character strings for a string kernel",
                        arg))
}

# The user's na.action on a character vector, keeping its record.
apply_string_na_action <- function(x, na.action) {
  if (!anyNA(x)) return(x)
  out <- with_error_kind(na_action_function(na.action)(x), "data")
  if (!is.character(out) || anyNA(out))
    stop_argument("'na.action' must remove the missing strings, as na.omit does")
  out
}

# The program src/string_kernel.c evaluates: kernel_program()'s operations,
# with each base's string kernel parameters.
string_program <- function(k) {
  p <- kernel_program(k)
  bases <- kernel_bases(k)
  par <- function(name) lapply(bases, function(b) b$kpar[[name]])
  list(ops = p$ops, args = p$args,
       string_types = match(unlist(par("type")), string_types),
       lengths = as.integer(unlist(par("length"))),
       lambdas = as.double(unlist(par("lambda"))),
       normalized = as.logical(unlist(par("normalized"))),
       nweights = p$nweights)
}

# The conformal weights g(x) of a character vector of strings.
string_weights <- function(k, x) {
  lapply(kernel_conformals(k), function(node) {
    w <- tryCatch(node$g(x), error = function(e)
      stop_from(e, paste0("'g' of the conformal kernel failed: ", conditionMessage(e))))
    if (!is.numeric(w) || length(w) != length(x) || !all(is.finite(w)))
      stop_argument(sprintf("'g' of the conformal kernel must return one finite number per string (%d)",
                            length(x)))
    as.double(w)
  })
}

# The string kernel matrices, computed in C.
string_kernel_gram <- function(x, kernel, threads, weights = string_weights(kernel, x)) {
  engine_call(.Call(C_string_kernel_gram, x, string_program(kernel), weights, as.integer(threads)))
}

string_kernel_cross <- function(z, x, kernel, threads, xweights = string_weights(kernel, x)) {
  engine_call(.Call(C_string_kernel_cross, z, x, string_program(kernel), string_weights(kernel, z),
                    xweights, as.integer(threads)))
}

# Whether a kernel specification is a string kernel ("stringdot", kernlab's
# stringdot() or a kernel object of string kernels): kernel_matrix() and
# kpca() on character input take the string path for those, and the
# numeric path (with its errors for non-numeric data) for the others.
is_string_kernel_spec <- function(kernel) {
  identical(kernel, "stringdot") || inherits(kernel, "stringkernel") ||
    (is_kernel(kernel) && uses_strings(kernel))
}

# kernel_matrix() for strings.
string_kernel_matrix <- function(kernel, x, y, kpar, kpar_missing, threads) {
  if (!is.character(x) && !(is.list(x) && !is.data.frame(x)))
    stop_argument("'x' must be a character vector or a list of strings for a string kernel")
  k <- resolve_string_kernel(kernel, kpar, kpar_missing)
  threads <- check_threads(threads)
  x <- as_strings(x, "x")
  if (anyNA(x)) stop_argument("'x' must not contain missing strings")
  if (is.null(y)) {
    out <- string_kernel_gram(x, k, threads)
    dimnames(out) <- list(names(x), names(x))
    return(out)
  }
  y <- as_strings(y, "y")
  if (anyNA(y)) stop_argument("'y' must not contain missing strings")
  out <- string_kernel_cross(x, y, k, threads)
  dimnames(out) <- list(names(x), names(y))
  out
}

#' @rdname stringdot
#' @param x For `kpca()`, a character vector, or a list of character
#'   vectors; for `print()`, a fit. A character matrix, a list without
#'   strings, or a `kernel` that is not a string kernel go to the default
#'   method (which takes numbers).
#' @param kernel A string kernel: `"stringdot"` (with `kpar`), a kernel
#'   object from `stringdot()` or combinations of them, or kernlab's
#'   `stringdot()` object.
#' @param kpar With `kernel = "stringdot"`, a named list of `length`,
#'   `lambda`, `type`, `normalized`; missing ones take `stringdot()`'s
#'   defaults. `kpca()`'s default is kernlab's, `list(length = 4, lambda = 0.5)`.
#' @param features,th,na.action,solver,threads,control,variance,landmarks As
#'   in [kpca()]; `landmarks` may also be a character vector or list of
#'   landmark strings.
#' @param ... Unused (an error if given).
#' @export
kpca.character <- function(x, kernel = "stringdot", kpar = list(length = 4, lambda = 0.5),
                           features = 0, th = 1e-4, na.action = na.omit,
                           solver = c("auto", "exact", "iterative", "randomized",
                                      "matrix_free"),
                           threads = kpca_threads(), control = list(), variance = NULL,
                           landmarks = NULL, ...) {
  call <- match.call()
  if (!is.null(dim(x)) || (!missing(kernel) && !is_string_kernel_spec(kernel))) {
    # a character matrix, or a kernel on numbers: the default method (and
    # its errors for data that are not numeric)
    call[[1L]] <- kpca.default
    return(eval(call, parent.frame()))
  }
  check_no_dots(...)
  call[[1L]] <- as.name("kpca")
  kernel <- resolve_string_kernel(kernel, kpar, missing(kpar))
  x <- apply_string_na_action(as_strings(x, "x"), na.action)
  removed <- attr(x, "na.action")
  attr(x, "na.action") <- NULL
  n <- length(x)
  if (n < 2L) stop_argument("'x' must hold at least 2 strings (after 'na.action')")
  threads <- check_threads(threads)
  th <- check_th(th)
  features <- check_features(features, n)
  variance <- check_variance(variance, features, solver)
  if (!is.null(landmarks)) {
    if (!is.null(variance))
      stop_argument("'variance' needs the exact fit; with 'landmarks', give 'features'")
    return(kpca_string_nystrom(x, kernel, features, th, landmarks, threads, call, removed))
  }
  solver <- choose_solver(solver, n, features)
  settings <- solver_control(control, n, features)
  check_memory(n, features)
  weights <- string_weights(kernel, x)
  res <- engine_call(.Call(C_kpca_exact, x, string_program(kernel), weights, features, th,
                           solver_codes[[solver]], threads, settings,
                           if (is.null(variance)) 0 else variance,
                           progress_fraction(sprintf("kpca: exact fit on %d strings", n))))
  string_exact_fit(res, x, kernel, weights, features, th, solver, threads, variance,
                   call, removed)
}

#' @rdname stringdot
#' @export
kpca.list <- function(x, ...) {
  # a list without strings is numeric data for the default method
  if (!any(vapply(x, is.character, NA))) return(kpca.default(x, ...))
  fit <- kpca.character(as_strings(x, "x"), ...)
  call <- match.call()
  call[[1L]] <- as.name("kpca")
  fit$call <- call
  fit
}

# The exact fit on strings from C_kpca_exact's result: the components as
# kpca_exact() (R/kpca.R) makes them, the fit by the exact fit's
# constructor, marked as a fit on strings.
string_exact_fit <- function(res, x, kernel, weights, features, th, solver, threads,
                             variance, call, removed) {
  if (!res$converged)
    warn_convergence(sprintf(paste0("the iterative solver did not converge in %d restarts ",
                                    "(largest relative residual %.2g); increase control$maxit ",
                                    "or use solver = \"exact\""), res$restarts, res$residual))
  comp <- exact_components(res, length(x), th, features, names(x), removed)
  fit <- new_fastkpca_exact(
    comp$alpha, comp$eig, comp$rotated, kernel, kernel_kpar(kernel),
    if (is.null(variance)) features else length(comp$eig), th, threads,
    res$variance_total, FALSE, FALSE, call, removed, unname(x), weights, res$colmeans,
    res$grand_mean, solver, if (solver == "iterative") res$restarts, variance)
  validate_fastkpca_string(new_fastkpca_string(fit))
}

# A fit on strings: an exact or Nystrom fit whose training rows (xmatrix,
# landmarks) are strings, with the class "fastkpca_string" first, so that
# predict() and print() take strings.
new_fastkpca_string <- function(fit) {
  structure(fit, class = c("fastkpca_string", class(fit)))
}

validate_fastkpca_string <- function(x) {
  validate_fastkpca_common(x)
  m <- nrow(x$alpha)
  rows <- if (inherits(x, "fastkpca_nystrom")) x$landmarks else x$xmatrix
  if (!is.character(rows) || length(rows) != m || anyNA(rows))
    invalid_fit(sprintf("its strings must be a character vector of %d strings", m))
  if (!is_kernel(x$kernel) || !uses_strings(x$kernel))
    invalid_fit("'kernel' must be a string kernel")
  invisible(x)
}

#' @exportS3Method
check_fit.fastkpca_string <- function(object) validate_fastkpca_string(object)

# The landmark strings a `landmarks` argument means: list(rows, rule, index).
resolve_string_landmarks <- function(landmarks, x, features) {
  n <- length(x)
  lo <- max(features + 1L, 2L)
  if (identical(landmarks, "auto")) landmarks <- min(n, auto_landmarks(n, features))
  if (is.numeric(landmarks) && length(landmarks) == 1L && is.null(dim(landmarks))) {
    if (is.na(landmarks) || landmarks != round(landmarks) || landmarks < lo || landmarks > n)
      stop_argument(sprintf(paste0("'landmarks' must be a whole number between ",
                                   "max(2, features + 1) (%d) and the number of strings (%d)"), lo, n))
    index <- sample.int(n, landmarks)
    return(list(rows = unname(x[index]), rule = "uniform", index = index))
  }
  rows <- tryCatch(as_strings(landmarks, "landmarks"), error = function(e)
    stop_argument("'landmarks' must be NULL, a number of strings, \"auto\", or a character ",
                  "vector or list of landmark strings"))
  if (anyNA(rows)) stop_argument("'landmarks' must not contain missing strings")
  if (length(rows) < lo || length(rows) > n)
    stop_argument(sprintf("'landmarks' must hold between max(2, features + 1) (%d) and %d strings, not %d",
                          lo, n, length(rows)))
  list(rows = unname(rows), rule = "given", index = NULL)
}

# Centered Nystrom kernel PCA on strings: the steps of kpca_nystrom()
# (R/nystrom.R), with the kernels between strings from src/string_kernel.c:
# (a) the landmark basis, (b) the sufficient statistics over blocks of
# strings, (c) nystrom_solve() itself, (d) the scores block by block.
kpca_string_nystrom <- function(x, kernel, features, th, landmarks, threads, call,
                                removed) {
  chosen <- resolve_string_landmarks(landmarks, x, features)
  basis <- string_landmark_basis(chosen$rows, kernel, features, threads)
  blocks <- string_blocks(length(x), length(chosen$rows))
  stats <- list(n = length(x), shift = basis$shift, sums = numeric(length(basis$shift)),
                cross = matrix(0, length(basis$shift), length(basis$shift)))
  for (idx in blocks) {
    D <- sweep(string_kernel_cross(x[idx], basis$rows, kernel, threads, basis$weights),
               2L, basis$shift, "-")
    stats$sums <- stats$sums + colSums(D)
    stats$cross <- stats$cross + crossprod(D)
  }
  res <- nystrom_solve(stats, basis, features, th)
  labels <- paste0("Comp.", seq_along(res$eig))
  names(res$eig) <- labels
  dimnames(res$alpha) <- list(NULL, labels)
  offset <- drop(crossprod(res$mu, res$alpha))
  rotated <- matrix(0, length(x), ncol(res$alpha), dimnames = list(names(x), labels))
  for (idx in blocks)
    rotated[idx, ] <- sweep(string_kernel_cross(x[idx], basis$rows, kernel, threads,
                                                basis$weights) %*% res$alpha,
                            2L, offset, "-")
  fit <- new_fastkpca_nystrom(
    res$alpha, res$eig, stats::napredict(removed, rotated), kernel, kernel_kpar(kernel),
    features, th, threads, res$variance_total, FALSE, FALSE, call, removed,
    landmarks = basis$rows, landmark_rule = chosen$rule, landmark_rows = chosen$index,
    landmark_rank = basis$rank, kernel_weights = basis$weights, statistics = stats)
  validate_fastkpca_string(new_fastkpca_string(fit))
}

# (a) of kpca_string_nystrom(): as nystrom_landmark_basis() (R/nystrom.R),
# with the string kernel matrix of the landmark strings.
string_landmark_basis <- function(L, kernel, features, threads) {
  weights <- string_weights(kernel, L)
  Kmm <- string_kernel_gram(L, kernel, threads, weights)
  e <- eigen(Kmm, symmetric = TRUE)
  keep <- e$values > nystrom_rtol * max(e$values, 0)
  rank <- sum(keep)
  if (rank < max(features, 1L))
    stop_data(sprintf(paste0("'landmarks' leave the kernel matrix among them with %d positive ",
                             "eigenvalue%s, fewer than 'features' (%d): use more landmarks"),
                      rank, if (rank == 1L) "" else "s", max(features, 1L)))
  list(rows = L, weights = weights,
       basis = sweep(e$vectors[, keep, drop = FALSE], 2L, sqrt(e$values[keep]), "/"),
       shift = rowMeans(Kmm), rank = rank)
}

# Blocks of strings (indices) whose kernel with m landmarks holds about
# 2^22 doubles; the internal option fastkpca.nystrom_block_rows sets another
# size (the tests use it to check that the sums over blocks add up).
string_blocks <- function(n, m) {
  size <- getOption("fastkpca.nystrom_block_rows", max(256, floor(2^22 / m)))
  size <- as.integer(max(1, min(n, size)))
  split(seq_len(n), ceiling(seq_len(n) / size))
}

#' @rdname stringdot
#' @param object A fit of [kpca()] on strings.
#' @param newdata New strings: a character vector or a list of character
#'   vectors. If missing, the training scores `object$rotated`.
#' @export
predict.fastkpca_string <- function(object, newdata, ...) {
  check_no_dots(...)
  check_fit(object)
  if (missing(newdata) || is.null(newdata)) return(object$rotated)
  z <- as_strings(newdata, "newdata")
  alpha <- object$alpha
  out <- matrix(NA_real_, length(z), ncol(alpha), dimnames = list(names(z), colnames(alpha)))
  ok <- !is.na(z)
  for (rows in row_blocks(sum(ok), nrow(alpha))) {
    idx <- which(ok)[rows]
    kz <- string_kernel_cross(unname(z[idx]), string_fit_rows(object), object$kernel,
                              object$threads, object$kernel_weights)
    out[idx, ] <- string_project(object, kz)
  }
  out
}

# The strings a fit's kernel is taken with: the training strings, or the
# landmarks of a Nystrom fit.
string_fit_rows <- function(object) UseMethod("string_fit_rows")
string_fit_rows.fastkpca_nystrom <- function(object) object$landmarks
string_fit_rows.default <- function(object) object$xmatrix

# Scores from the kernel between new strings and the fit's strings.
string_project <- function(object, kz) UseMethod("string_project")

string_project.fastkpca_nystrom <- function(object, kz) {
  sweep(kz %*% object$alpha, 2L, drop(crossprod(nystrom_mu(object$statistics), object$alpha)),
        "-")
}

string_project.default <- function(object, kz) {
  alpha <- object$alpha
  sums <- colSums(alpha)
  offset <- drop(crossprod(object$kernel_colmeans, alpha)) - object$kernel_mean * sums
  sweep(kz %*% alpha - outer(rowMeans(kz), sums), 2L, offset, "-")
}

#' @rdname stringdot
#' @param digits Number of significant digits for the eigenvalues.
#' @export
print.fastkpca_string <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  n <- nrow(x$rotated)
  cat_line("", sprintf("Kernel PCA (fastkpca%s) on %d strings",
                       if (is.null(x$landmarks)) "" else ", centered Nystr\u00f6m", n))
  cat_line("Kernel:     ", format(x$kernel))
  if (!is.null(x$landmarks))
    cat_line("Landmarks:  ", sprintf("%d (%s; rank %d)", length(x$landmarks),
                                     x$landmark_rule, x$landmark_rank))
  k <- length(x$eig)
  rule <- if (!is.null(x[["variance"]])) sprintf("variance = %g", x[["variance"]])
          else if (x$features == 0L) sprintf("eigenvalues above th = %g", x$th)
          else sprintf("features = %d", x$features)
  cat_line("Components: ", k, " (", rule, ")")
  cat("Eigenvalues", if (k > 10L) " (first 10)", ":\n", sep = "")
  print(utils::head(x$eig, 10L), digits = digits)
  invisible(x)
}

#' @rdname stringdot
#' @export
preimage.fastkpca_string <- function(object, ...) {
  stop_argument("'object' is a fit on strings: pre-images are defined for numeric data only")
}
