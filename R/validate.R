# Argument checks, one per kind, shared by every function of the package:
#   check_choice()    one of a few strings
#   check_whole()     a whole number (a count) in a range
#   check_number()    a single number in a range (check_positive(): > 0)
#   as_data_matrix()  data as a double matrix (check_finite() on it: R/rows.R)
# Errors name the argument in single quotes, in lower case, without a
# trailing period: "'features' must be a whole number between 0 and
# nrow(x) (10)". C re-checks types and dimensions only.

# Coerce data to a double matrix: numeric, integer or logical matrices and
# vectors, data frames of such columns, and matrix classes with an
# as.matrix() method (such as those of the Matrix package).
as_data_matrix <- function(x, arg = "x") {
  if (is.null(x)) stop_argument(sprintf("'%s' must not be NULL", arg))
  if (is_sparse_data(x))  # the steps that take sparse data call as_data_rows()
    stop_argument(sprintf("'%s' is sparse, and this step does not take sparse data; as.matrix(%s) makes it dense if it fits in memory",
                          arg, arg))
  if (is.data.frame(x)) {
    ok <- vapply(x, function(col) (is.numeric(col) || is.logical(col)) &&
                   is.null(dim(col)), logical(1))
    if (!all(ok))
      stop_argument(sprintf("'%s' has non-numeric column%s: %s", arg,
                            if (sum(!ok) > 1L) "s" else "",
                            paste(names(x)[!ok], collapse = ", ")))
    x <- as.matrix(x)
    if (ncol(x) == 0L) storage.mode(x) <- "double"
  } else if (is.object(x) && length(dim(x)) == 2L && !is.matrix(x)) {
    x <- as.matrix(x)
  }
  if (is.factor(x))
    stop_argument(sprintf("'%s' must be numeric, not a factor", arg))
  if (is.list(x))
    stop_argument(sprintf("'%s' must be a numeric matrix or data frame, not a list", arg))
  if (!(is.numeric(x) || is.logical(x)))
    stop_argument(sprintf("'%s' must be numeric, not %s", arg, typeof(x)))
  if (is.null(dim(x))) x <- matrix(x, ncol = 1L, dimnames = list(names(x), NULL))
  if (length(dim(x)) != 2L)
    stop_argument(sprintf("'%s' must be a matrix, not an array", arg))
  # storage.mode<- copies even a double matrix (x is shared with the
  # caller); only integers and logicals need the coercion
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

check_features <- function(features, n) {
  check_whole(features, "features", 0, n, hi_label = "nrow(x)")
}

check_th <- function(th) check_number(th, "th", lo = 0)

# The limits of the C engine (threads, besseldot's order, kernel powers,
# solver iterations), written once, in src/fastkpca.h; read once per session.
engine_limits <- local({
  limits <- NULL
  function() {
    if (is.null(limits)) limits <<- engine_call(.Call(C_engine_limits))
    limits
  }
})

# A limit as the messages show it: 1e6, not 1e+06.
format_limit <- function(v) sub("e\\+0*", "e", format(v))

# Arguments a function does not take are an error; kernel parameters given
# on their own get a hint (stop_unused_arguments() in R/diagnostics.R).
check_no_dots <- function(...) {
  if (...length() > 0L) stop_unused_arguments(...)
}

# Infinite values are an error; missing ones are left to the caller (predict()
# gives their rows NA scores).
check_no_infinite <- function(x, arg, threads = 1L) {
  if (any_infinite(stored_values(x), threads))
    stop_argument(sprintf("'%s' must not contain infinite values", arg))
  invisible(x)
}

# Whether the vector v holds an infinite value (value_flags(); FALSE for
# a vector that is not double, which cannot).
any_infinite <- function(v, threads = 1L) is.double(v) && value_flags(v, threads)[2L]

# Whether the double vector v holds a missing value (NA or NaN) and whether
# an infinite one: c(missing, infinite), in one pass in C over v in place,
# on up to `threads` threads (anyNA(), min() and max() were three passes
# in R, and is.infinite() allocates a logical of v's size).
value_flags <- function(v, threads = 1L) {
  engine_call(.Call(C_value_flags, v, as.integer(threads)))
}

# One of the strings in choices; the whole default vector (an argument
# left at c("a", "b")) means its first entry.
check_choice <- function(value, choices, arg) {
  if (identical(value, choices)) return(choices[1L])
  if (!is.character(value) || length(value) != 1L || is.na(value) || !(value %in% choices))
    stop_argument(sprintf("'%s' must be one of %s", arg,
                          paste0("\"", choices, "\"", collapse = ", ")))
  value
}

# A whole number in [lo, hi], as an integer. lo_label, hi_label: how the
# message names a bound that depends on the data, e.g. "nrow(x)", shown as
# "nrow(x) (10)".
check_whole <- function(value, arg, lo, hi, lo_label = NULL, hi_label = NULL) {
  if (!is.numeric(value) || length(value) != 1L || !is.finite(value) ||
      value != round(value) || value < lo || value > hi) {
    bound <- function(v, label) if (is.null(label)) format(v) else sprintf("%s (%s)", label, format(v))
    stop_argument(sprintf("'%s' must be a whole number between %s and %s", arg,
                          bound(lo, lo_label), bound(hi, hi_label)))
  }
  as.integer(value)
}

# A single finite number in [lo, hi] ((lo, hi] with lo_open), as a double.
check_number <- function(value, arg, lo = -Inf, hi = Inf, lo_open = FALSE) {
  ok <- is.numeric(value) && length(value) == 1L && is.finite(value) &&
    (if (lo_open) value > lo else value >= lo) && value <= hi
  if (!ok) {
    what <- if (lo == 0 && hi == Inf) {
      if (lo_open) "a single positive number" else "a single non-negative number"
    } else if (lo == -Inf && hi == Inf) {
      "a single finite number"
    } else {
      sprintf("a single number in %s%g, %g]", if (lo_open) "(" else "[", lo, hi)
    }
    stop_argument(sprintf("'%s' must be %s", arg, what))
  }
  as.double(value)
}

check_positive <- function(value, arg) check_number(value, arg, lo = 0, lo_open = TRUE)
