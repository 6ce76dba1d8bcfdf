# String kernels: stringdot(), kpca() on character vectors and lists of
# strings, predict() of a fit on strings. A string kernel is a kernel
# object (R/kernel_algebra.R) whose base nodes are named "stringdot" (tagged
# "strings" in engine_kernels, R/kernel_spec.R), so the kernel algebra
# applies to it unchanged, and it runs the one kernel path: kernel_program()
# and src/kernel.c's interpreter, whose string base kernel takes its values
# from src/string_kernel.c. Strings are prepared here (as_strings(),
# na.action); the fit, Nystrom and the projection are the numeric ones.

# The types, in the order of their codes in src/fastkpca.h.
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
#' suffix array), instead of a suffix tree built for each pair as in
#' kernlab. For `"spectrum"`, `"string"`, and `"boundrange"` and
#' `"fullstring"` up to `length = 16`, this gives each string a sorted
#' profile of its substrings, and a kernel value is one merge of two
#' profiles per length, linear in the lengths of the two strings. For
#' `"constant"`, `"exponential"` and the longer bounded types, the whole
#' matrix comes at once from the nodes of the suffix tree of all the
#' strings: the substrings that most strings share are the columns of a
#' dense matrix whose products give their part of the kernel, and the
#' others an inverted index from each string to its substrings shared
#' with other strings. `"sequence"` is a dynamic programme,
#' O(`length` |x| |y|) per pair. The values are computed on `threads`
#' threads.
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
#' @return `stringdot()`: a kernel object (kernlab's `"stringkernel"`
#'   object while kernlab is attached, see [rbfdot()]; otherwise of class
#'   `"fastkpca_kernel"`);
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
  generator_kernel(string_kernel(list(length = length, lambda = lambda, type = type,
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
  strings <- engine_kernels[names] %in% "strings"
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
    k <- as_kernel(kernel)
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

# Whether a kernel specification is a string kernel ("stringdot", kernlab's
# stringdot() or a kernel object of string kernels): kernel_matrix() and
# kpca() on character input take the string path for those, and the
# numeric path (with its errors for non-numeric data) for the others.
is_string_kernel_spec <- function(kernel) {
  identical(kernel, "stringdot") || inherits(kernel, "stringkernel") ||
    (is_kernel(kernel) && uses_strings(kernel))
}

# kernel_matrix()'s x or y for a string kernel: a character vector without
# NA (a list of character vectors pasted).
kernel_matrix_strings <- function(x, arg) {
  if (!is.character(x) && !(is.list(x) && !is.data.frame(x)))
    stop_argument(sprintf("'%s' must be a character vector or a list of strings for a string kernel",
                          arg))
  x <- as_strings(x, arg)
  if (anyNA(x)) stop_argument(sprintf("'%s' must not contain missing strings", arg))
  x
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
  # (missing() is reliable only before the argument is changed)
  threads_given <- !missing(threads)
  kernel <- resolve_string_kernel(kernel, kpar, missing(kpar))
  x <- apply_string_na_action(as_strings(x, "x"), na.action)
  removed <- attr(x, "na.action")
  x <- drop_na_action(x)
  if (length(x) < 2L) stop_argument("'x' must hold at least 2 strings (after 'na.action')")
  threads <- check_threads(threads)
  th <- check_th(th)
  # then the steps of every fit (R/kpca.R): the strings are the rows
  fit <- kpca_steps(x, kernel, features, th, solver, threads, control, variance, landmarks,
                    "uniform", call, removed, list(center = FALSE, scale = FALSE),
                    threads_given = threads_given)
  validate_fastkpca_string(new_fastkpca_string(fit))
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

# A fit on strings: an exact or Nystrom fit whose training rows (xmatrix,
# landmarks) are strings, with the class "fastkpca_string" first, so that
# predict() and print() take strings.
new_fastkpca_string <- function(fit) {
  structure(fit, class = c("fastkpca_string", class(fit)))
}

validate_fastkpca_string <- function(x) {
  validate_fastkpca_common(x)
  m <- nrow(x$alpha)
  rows <- fit_columns(x)
  if (!is.character(rows) || length(rows) != m || anyNA(rows))
    invalid_fit(sprintf("its strings must be a character vector of %d strings", m))
  if (!is_kernel(x$kernel) || !uses_strings(x$kernel))
    invalid_fit("'kernel' must be a string kernel")
  invisible(x)
}

#' @exportS3Method
check_fit.fastkpca_string <- function(object) {
  validate_fastkpca_string(object)
  NextMethod()  # the exact or Nystrom fit's own checks
}

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
  # NA strings get NA scores; the others are projected as numeric rows are
  ok <- !is.na(z)
  if (any(ok)) out[ok, ] <- project_rows(object, unname(z[ok]))
  out
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
