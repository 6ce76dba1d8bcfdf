# Step 1 of the algorithm, on the R side: naming and resolving kernels.
# The kernel matrix itself is computed in C (src/kernel.c).

# Kernel names; the position of a name is its code in src/fastkpca.h (0 is
# "precomputed").
kernel_names <- c("vanilladot", "polydot", "rbfdot", "laplacedot", "tanhdot",
                  "besseldot", "anovadot", "splinedot")

# Each kernel's own parameters and their defaults (as kernlab's generators).
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

# The order of the kernel parameters in the double vector passed to C.
kpar_slots <- c("sigma", "degree", "scale", "offset", "order")

# kernlab's kernel classes and the names of their kernels.
kernlab_classes <- c(vanillakernel = "vanilladot", polykernel = "polydot",
                     rbfkernel = "rbfdot", laplacekernel = "laplacedot",
                     tanhkernel = "tanhdot", besselkernel = "besseldot",
                     anovakernel = "anovadot", splinekernel = "splinedot")

# Resolve kpca()'s `kernel` and `kpar` into a kernel object (R/kern.R), or
# "precomputed". `kernel` is a name, "precomputed", a kernel object or a
# kernlab kernel; `kpar_missing` says whether the user left `kpar` out.
resolve_kernel <- function(kernel, kpar, kpar_missing) {
  if (is_kernel(kernel) || inherits(kernel, "kernel")) {
    if (!kpar_missing)
      stop("'kpar' must not be given with a kernel object: its parameters are ",
           "part of the object", call. = FALSE)
    k <- kern(kernel)
    if (uses_strings(k)) string_input_error()  # R/string_kernels.R
    return(k)
  }
  if (identical(kernel, "stringdot")) string_input_error()
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel))
    stop("'kernel' must be a kernel name, a kernel object from kern() or a kernlab kernel",
         call. = FALSE)
  if (identical(kpar, "automatic")) {
    # sigma by the median heuristic (R/tune.R), once kpca() has the data
    if (identical(kernel, "precomputed"))
      stop("'kpar = \"automatic\"' needs the data, not a precomputed kernel matrix",
           call. = FALSE)
    kernel <- sigma_kernel_name(kernel, "with kpar = \"automatic\", 'kernel'")
    return(base_kernel(kernel, resolve_kpar(kernel, list())))
  }
  if (identical(kernel, "precomputed")) {
    if (!kpar_missing && length(kpar) > 0L)
      warning("'kpar' is ignored when 'kernel' is \"precomputed\"", call. = FALSE)
    return("precomputed")
  }
  if (!kernel %in% kernel_names)
    stop("'kernel' must be one of ", paste(dQuote(kernel_names, FALSE), collapse = ", "),
         " or \"precomputed\", not ", dQuote(kernel, FALSE), call. = FALSE)
  if (kpar_missing) {
    # kernlab's default kpar is list(sigma = 0.1): it applies to the kernels
    # that have a sigma; the others take their own defaults.
    kpar <- if ("sigma" %in% names(kernel_defaults[[kernel]])) list(sigma = 0.1) else list()
  }
  base_kernel(kernel, resolve_kpar(kernel, kpar))
}

# Fill missing entries of kpar with the kernel's defaults and check them all.
# arg: how errors name the parameters ("kpar" for 'kpar$sigma'; "" for kern()'s
# named arguments, 'sigma').
resolve_kpar <- function(kernel, kpar, arg = "kpar") {
  if (is.null(kpar)) kpar <- list()
  if (!is.list(kpar) && !(is.numeric(kpar) && !is.null(names(kpar))))
    stop("'kpar' must be a named list", call. = FALSE)
  kpar <- as.list(kpar)
  what <- if (nzchar(arg)) sprintf("'%s' has", arg) else "'kernel' has"
  if (length(kpar) > 0L && (is.null(names(kpar)) || any(names(kpar) == "")))
    stop("'kpar' must be a named list", call. = FALSE)
  defaults <- kernel_defaults[[kernel]]
  unknown <- setdiff(names(kpar), names(defaults))
  if (length(unknown) > 0L) {
    known <- if (length(defaults)) paste(names(defaults), collapse = ", ") else "none"
    noun <- if (nzchar(arg)) c("entry ", "entries ") else c("parameter ", "parameters ")
    stop(what, " unknown ", noun[1L + (length(unknown) > 1L)],
         paste(dQuote(unknown, FALSE), collapse = ", "), " for kernel ",
         dQuote(kernel, FALSE), " (its parameters: ", known, ")", call. = FALSE)
  }
  if (anyDuplicated(names(kpar)))
    stop(sprintf("'%s' names a parameter twice", if (nzchar(arg)) arg else "kernel"),
         call. = FALSE)
  # the given entries are checked (a NULL entry is an error, not a gap); the
  # defaults are valid as they stand
  for (p in names(kpar)) kpar[[p]] <- check_kpar_value(p, kpar[[p]], arg)
  full <- defaults
  full[names(kpar)] <- kpar
  full[names(defaults)]
}

# Largest besseldot 'order' (BESSEL_MAX_ORDER in src/kernel.c).
bessel_max_order <- 50

check_kpar_value <- function(name, value, arg = "kpar") {
  label <- if (nzchar(arg)) sprintf("'%s$%s'", arg, name) else sprintf("'%s'", name)
  if (!(is.numeric(value) || is.logical(value)) || length(value) != 1L ||
      is.na(value) || !is.finite(value))
    stop(label, " must be a single finite number", call. = FALSE)
  value <- as.double(value)
  switch(name,
    sigma = if (value <= 0) stop(label, " must be positive", call. = FALSE),
    degree = if (value < 1 || value != round(value))
      stop(label, " must be a whole number of at least 1", call. = FALSE),
    # beyond about 52, J_order(t) underflows for small t and the kernel is lost
    # (with one warning per kernel value); the C engine has the same limit
    order = if (value < 0 || value > bessel_max_order)
      stop(label, " must be between 0 and ", bessel_max_order, call. = FALSE),
    NULL)
  value
}

# The kernel code and parameter vector passed to C.
kernel_code <- function(name) match(name, kernel_names)

kpar_vector <- function(kpar) {
  v <- vapply(kpar_slots, function(p) if (is.null(kpar[[p]])) 0 else kpar[[p]],
              numeric(1))
  unname(v)
}

# The cross-kernel matrix k(z_i, x_j) (nrow(z) x nrow(x)) of a kernel
# object, computed in C; x is the training data (its column means shift the
# distance kernels, which does not change them). xweights: the conformal
# weights of x, when the caller has them already (a fit stores its own).
kernel_cross <- function(z, x, kernel, threads = 1L, xweights = kernel_weights(kernel, x)) {
  .Call(C_kernel_cross, z, x, kernel_program(kernel), kernel_weights(kernel, z),
        xweights, as.integer(threads))
}
