# The one kernel path: every kernel spec a user can give (a name with kpar,
# a kernlab kernel object, a kernel object from kern(), which is a kernel
# function, R/kernel_function.R) becomes one kernel tree ("fastkpca_kernel",
# R/kernel_algebra.R) here, once per call, and a kernel tree becomes the
# engine-ready form here: the postfix program that src/kernel.c evaluates,
# and the conformal weights of a set of rows.
#
# Adding a base kernel means: its name and defaults in kernel_defaults (a
# kernel on numbers) or beside stringdot() (R/string_kernels.R), its
# kernlab class in kernlab_classes if kernlab has one, its code in the C
# enum (src/fastkpca.h), and its value function in C.

# Each base kernel on numbers: its own parameters and their defaults (as
# kernlab's kernel generators have them).
kernel_defaults <- list(
  vanilladot = list(),
  polydot = list(degree = 1, scale = 1, offset = 1),
  rbfdot = list(sigma = 1),
  laplacedot = list(sigma = 1),
  tanhdot = list(scale = 1, offset = 1),
  besseldot = list(sigma = 1, order = 1, degree = 1),
  anovadot = list(sigma = 1, degree = 1),
  splinedot = list()
)
kernel_names <- names(kernel_defaults)

# Every base kernel of the engine, tagged by the data it takes: the
# position of a name is its code in src/fastkpca.h (0 is a precomputed
# kernel matrix). "stringdot" (R/string_kernels.R) is every type of string
# kernel, told apart by its parameters.
engine_kernels <- c(vapply(kernel_defaults, function(p) "numbers", ""),
                    stringdot = "strings")

# The order of the kernel parameters in the double vector passed to C
# (a string kernel's are the last four).
kpar_slots <- c("sigma", "degree", "scale", "offset", "order", "length", "lambda", "type",
                "normalized")

# kernlab's kernel classes and the names of their kernels.
kernlab_classes <- c(vanillakernel = "vanilladot", polykernel = "polydot",
                     rbfkernel = "rbfdot", laplacekernel = "laplacedot",
                     tanhkernel = "tanhdot", besselkernel = "besseldot",
                     anovakernel = "anovadot", splinekernel = "splinedot")

# Whether a value is a kernel object, ours or kernlab's.
is_kernel_spec_object <- function(kernel) is_kernel(kernel) || inherits(kernel, "kernel")

# Any kernel spec as a kernel object: a kernel object (as it is), a
# kernlab kernel, or a kernel name with its parameters kpar (missing ones
# take the kernel's defaults). kpar_given: whether the caller's user gave
# kpar (an error with a kernel object, which carries its own). kpar_arg:
# how errors name the parameters ("kpar" for 'kpar$sigma', "" for 'sigma').
as_kernel <- function(kernel, kpar = list(), kpar_given = FALSE, kpar_arg = "kpar") {
  if (is_kernel_spec_object(kernel)) {
    if (kpar_given)
      stop_argument("'kpar' must not be given with a kernel object: its parameters are ",
                    "part of the object")
    if (is_kernel(kernel)) return(kernel_tree(kernel))  # R/kernel_function.R
    return(kern_from_kernlab(kernel))
  }
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel))
    stop_argument("'kernel' must be a kernel name, a kernel object from kern() or a kernlab kernel")
  if (kernel == "stringdot") return(string_kernel(kpar, kpar_arg))  # R/string_kernels.R
  if (!kernel %in% kernel_names)
    stop_argument("'kernel' must be one of ", paste(dQuote(kernel_names, FALSE), collapse = ", "),
                  ", not ", dQuote(kernel, FALSE))
  base_kernel(kernel, resolve_kpar(kernel, kpar, kpar_arg))
}

# kpca()'s `kernel` and `kpar` as a kernel object (precomputed_kernel() for
# "precomputed").
# default_kpar: kpca()'s default kpar (kernlab's list(sigma = 0.1), written
# once, in kpca.default's signature), used when the user left kpar out: its
# entries that the kernel has apply, the others are dropped. With kpar =
# "automatic" the kernel takes its defaults here; kpca() sets sigma from
# the data once it has them (R/tune.R).
kpca_kernel <- function(kernel, kpar, kpar_missing) {
  if (identical(kernel, "stringdot")) string_input_error()  # R/string_kernels.R
  if (identical(kpar, "automatic")) {
    if (identical(kernel, "precomputed"))
      stop_argument("'kpar = \"automatic\"' needs the data, not a precomputed kernel matrix")
    if (!is_kernel_spec_object(kernel))
      kernel <- sigma_kernel_name(kernel, "with kpar = \"automatic\", 'kernel'")
    return(as_kernel(kernel, list(), kpar_given = TRUE))
  }
  if (identical(kernel, "precomputed")) {
    if (!kpar_missing && length(kpar) > 0L)
      warn_argument("'kpar' is ignored when 'kernel' is \"precomputed\"")
    return(precomputed_kernel())
  }
  if (kpar_missing && is.character(kernel) && length(kernel) == 1L &&
      kernel %in% kernel_names)
    kpar <- kpar[intersect(names(kpar), names(kernel_defaults[[kernel]]))]
  k <- as_kernel(kernel, kpar, kpar_given = !kpar_missing)
  # kpca() on numbers; strings go to kpca.character (R/string_kernels.R)
  if (uses_strings(k)) string_input_error()
  k
}

# Fill missing entries of kpar with the kernel's defaults and check them all.
# arg: how errors name the parameters ("kpar" for 'kpar$sigma'; "" for kern()'s
# named arguments, 'sigma').
resolve_kpar <- function(kernel, kpar, arg = "kpar") {
  if (is.null(kpar)) kpar <- list()
  if (!is.list(kpar) && !(is.numeric(kpar) && !is.null(names(kpar))))
    stop_argument("'kpar' must be a named list")
  kpar <- as.list(kpar)
  what <- if (nzchar(arg)) sprintf("'%s' has", arg) else "'kernel' has"
  if (length(kpar) > 0L && (is.null(names(kpar)) || any(names(kpar) == "")))
    stop_argument("'kpar' must be a named list")
  defaults <- kernel_defaults[[kernel]]
  unknown <- setdiff(names(kpar), names(defaults))
  if (length(unknown) > 0L) {
    known <- if (length(defaults)) paste(names(defaults), collapse = ", ") else "none"
    noun <- if (nzchar(arg)) c("entry ", "entries ") else c("parameter ", "parameters ")
    stop_argument(what, " unknown ", noun[1L + (length(unknown) > 1L)],
                  paste(dQuote(unknown, FALSE), collapse = ", "), " for kernel ",
                  dQuote(kernel, FALSE), " (its parameters: ", known, ")")
  }
  if (anyDuplicated(names(kpar)))
    stop_argument(sprintf("'%s' names a parameter twice", if (nzchar(arg)) arg else "kernel"))
  # the given entries are checked (a NULL entry is an error, not a gap); the
  # defaults are valid as they stand
  for (p in names(kpar)) kpar[[p]] <- check_kpar_value(p, kpar[[p]], arg)
  full <- defaults
  full[names(kpar)] <- kpar
  full[names(defaults)]
}

check_kpar_value <- function(name, value, arg = "kpar") {
  label <- if (nzchar(arg)) sprintf("'%s$%s'", arg, name) else sprintf("'%s'", name)
  if (!(is.numeric(value) || is.logical(value)) || length(value) != 1L ||
      is.na(value) || !is.finite(value))
    stop_argument(label, " must be a single finite number")
  value <- as.double(value)
  switch(name,
    sigma = if (value <= 0) stop_argument(label, " must be positive"),
    degree = if (value < 1 || value != round(value))
      stop_argument(label, " must be a whole number of at least 1"),
    # beyond about 52, J_order(t) underflows for small t and the kernel is lost
    # (with one warning per kernel value): the limit is the C engine's
    order = if (value < 0 || value > engine_limits()$bessel_order)
      stop_argument(label, " must be between 0 and ", engine_limits()$bessel_order),
    NULL)
  value
}

# A base node; kpar is resolved and checked already.
base_kernel <- function(name, kpar) {
  structure(list(op = "base", name = name, kpar = kpar), class = "fastkpca_kernel")
}

# A precomputed kernel matrix as the kernel path carries it: a base node of
# its own (code 0 in src/fastkpca.h), which C never evaluates. A precomputed
# fit keeps the label "precomputed" as its kernel (see ?kpca, kernelf()).
precomputed_kernel <- function() base_kernel("precomputed", list())

# Whether a kernel is a precomputed kernel matrix: the node, or a fit's label.
is_precomputed <- function(kernel) {
  identical(kernel, "precomputed") ||
    (is_kernel(kernel) && identical(kernel$op, "base") && identical(kernel$name, "precomputed"))
}

kern_from_kernlab <- function(kernel) {
  if (inherits(kernel, "stringkernel")) return(kern_from_kernlab_string(kernel))
  name <- kernlab_classes[intersect(class(kernel), names(kernlab_classes))]
  if (length(name) != 1L)
    stop_argument("'kernel' is a kernlab kernel of class \"", class(kernel)[1L],
                  "\", which fastkpca does not support; use one of: ",
                  paste(kernel_names, collapse = ", "))
  name <- unname(name)
  base_kernel(name, resolve_kpar(name, attr(kernel, "kpar")))
}

# A fit's kpar: a single named kernel's parameters; NULL for an expression
# (its parameters are in the kernel object).
kernel_kpar <- function(k) if (k$op == "base") k$kpar

# ---- the engine-ready form ----

# Operation codes of the postfix program (kernel_op in src/fastkpca.h).
kernel_ops <- c(base = 1L, sum = 2L, product = 3L, scale = 4L, power = 5L, exp = 6L,
                conformal = 7L)

# The kernel code and parameter vector of a base kernel, as C reads them
# (a string kernel's type as its code in string_types).
kernel_code <- function(name) match(name, names(engine_kernels))

kpar_vector <- function(kpar) {
  if (is.character(kpar$type)) kpar$type <- match(kpar$type, string_types)
  v <- vapply(kpar_slots, function(p) if (is.null(kpar[[p]])) 0 else as.double(kpar[[p]]),
              numeric(1))
  unname(v)
}

# The postfix program src/kernel.c evaluates: list(ops, args, codes, kpar,
# nweights). Base kernels and conformal weights are numbered from 0 in the
# order of kernel_bases() and kernel_conformals(). Made once per call (the
# fit, predict(), a Nystrom pass) and read once per call by C.
kernel_program <- function(k) {
  ops <- integer(); args <- double()
  nbase <- 0L; nweights <- 0L
  emit <- function(node) {
    for (a in node$args) emit(a)
    arg <- switch(node$op,
      base = { nbase <<- nbase + 1L; nbase - 1L },
      conformal = { nweights <<- nweights + 1L; nweights - 1L },
      scale = , power = node$value,
      0)
    ops <<- c(ops, kernel_ops[[node$op]])
    args <<- c(args, as.double(arg))
  }
  emit(k)
  bases <- kernel_bases(k)
  list(ops = ops, args = args,
       codes = vapply(bases, function(b) kernel_code(b$name), integer(1)),
       kpar = as.double(vapply(bases, function(b) kpar_vector(b$kpar), numeric(length(kpar_slots)))),
       nweights = nweights)
}

# The base nodes of a kernel, in the order of a depth-first walk.
kernel_bases <- function(k) {
  if (k$op == "base") return(list(k))
  do.call(c, lapply(k$args, kernel_bases))
}

# The conformal nodes of a kernel, in the same order.
kernel_conformals <- function(k) {
  if (k$op == "base") return(list())
  inner <- do.call(c, lapply(k$args, kernel_conformals))
  if (k$op == "conformal") c(inner, list(k)) else inner
}

# The conformal weights g(x) of the rows of x (the strings of a character
# vector, for a string kernel), one double vector per conformal node,
# checked: g must give one finite number per row.
kernel_weights <- function(k, x) {
  nodes <- kernel_conformals(k)
  if (length(nodes)) x <- rows_for_user(x)   # sparse rows as a dgRMatrix (R/rows.R)
  lapply(nodes, function(node) {
    w <- tryCatch(node$g(x), error = function(e)
      stop_from(e, paste0("'g' of the conformal kernel failed: ", conditionMessage(e))))
    what <- if (is.character(x)) "string" else "row"
    if (!is.numeric(w) || length(w) != NROW(x))
      stop_argument(sprintf("'g' of the conformal kernel must return one number per %s (%d), not %s",
                            what, NROW(x), describe_value(w)))
    w <- as.double(w)
    if (!all(is.finite(w)))
      stop_argument("'g' of the conformal kernel must return finite numbers; it returned ",
                    if (anyNA(w)) "NA or NaN" else "infinite values")
    w
  })
}

describe_value <- function(w) {
  if (is.numeric(w)) sprintf("%d number%s", length(w), if (length(w) == 1L) "" else "s")
  else paste("an object of type", typeof(w))
}
