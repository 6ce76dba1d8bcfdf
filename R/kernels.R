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

# Resolve `kernel` and `kpar` into list(name, kpar): the kernel name and all
# of its parameters, checked. `kernel` is a name, "precomputed", or a kernlab
# kernel object; `kpar_missing` says whether the user left `kpar` out.
resolve_kernel <- function(kernel, kpar, kpar_missing) {
  if (inherits(kernel, "kernel")) {
    name <- kernlab_classes[intersect(class(kernel), names(kernlab_classes))]
    if (length(name) != 1L)
      stop("'kernel' is a kernlab kernel of class \"", class(kernel)[1L],
           "\", which fastkpca does not support; use one of: ",
           paste(kernel_names, collapse = ", "), call. = FALSE)
    if (!kpar_missing)
      warning("'kpar' is ignored when 'kernel' is a kernel object", call. = FALSE)
    kpar <- attr(kernel, "kpar")
    kernel <- unname(name)
  } else {
    if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel))
      stop("'kernel' must be a kernel name or a kernlab kernel object",
           call. = FALSE)
    if (identical(kernel, "precomputed")) {
      if (!kpar_missing && length(kpar) > 0L)
        warning("'kpar' is ignored when 'kernel' is \"precomputed\"", call. = FALSE)
      return(list(name = "precomputed", kpar = list()))
    }
    if (!kernel %in% kernel_names)
      stop("'kernel' must be one of ", paste(dQuote(kernel_names, FALSE), collapse = ", "),
           " or \"precomputed\", not ", dQuote(kernel, FALSE), call. = FALSE)
    if (kpar_missing) {
      # kernlab's default kpar is list(sigma = 0.1): it applies to the kernels
      # that have a sigma; the others take their own defaults.
      kpar <- if ("sigma" %in% names(kernel_defaults[[kernel]])) list(sigma = 0.1) else list()
    }
  }
  list(name = kernel, kpar = resolve_kpar(kernel, kpar))
}

# Fill missing entries of kpar with the kernel's defaults and check them all.
resolve_kpar <- function(kernel, kpar) {
  if (is.null(kpar)) kpar <- list()
  if (!is.list(kpar) && !(is.numeric(kpar) && !is.null(names(kpar))))
    stop("'kpar' must be a named list", call. = FALSE)
  kpar <- as.list(kpar)
  if (length(kpar) > 0L && (is.null(names(kpar)) || any(names(kpar) == "")))
    stop("'kpar' must be a named list", call. = FALSE)
  defaults <- kernel_defaults[[kernel]]
  unknown <- setdiff(names(kpar), names(defaults))
  if (length(unknown) > 0L) {
    known <- if (length(defaults)) paste(names(defaults), collapse = ", ") else "none"
    stop("'kpar' has unknown entr", if (length(unknown) > 1L) "ies " else "y ",
         paste(dQuote(unknown, FALSE), collapse = ", "), " for kernel ",
         dQuote(kernel, FALSE), " (its parameters: ", known, ")", call. = FALSE)
  }
  if (anyDuplicated(names(kpar)))
    stop("'kpar' names a parameter twice", call. = FALSE)
  # the given entries are checked (a NULL entry is an error, not a gap); the
  # defaults are valid as they stand
  for (p in names(kpar)) kpar[[p]] <- check_kpar_value(p, kpar[[p]])
  full <- defaults
  full[names(kpar)] <- kpar
  full[names(defaults)]
}

# Largest besseldot 'order' (BESSEL_MAX_ORDER in src/kernel.c).
bessel_max_order <- 50

check_kpar_value <- function(name, value) {
  label <- sprintf("'kpar$%s'", name)
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
kernel_code <- function(name) {
  if (identical(name, "precomputed")) 0L else match(name, kernel_names)
}

kpar_vector <- function(kpar) {
  v <- vapply(kpar_slots, function(p) if (is.null(kpar[[p]])) 0 else kpar[[p]],
              numeric(1))
  unname(v)
}

# The cross-kernel matrix k(z_i, x_j) (nrow(z) x nrow(x)), computed in C.
kernel_cross <- function(z, x, kernel, kpar, threads = 1L) {
  .Call(C_kernel_cross, z, x, kernel_code(kernel), kpar_vector(kpar),
        as.integer(threads))
}

# A one-line description of a kernel, e.g. "rbfdot (sigma = 0.1)".
describe_kernel <- function(name, kpar) {
  if (length(kpar) == 0L) return(name)
  paste0(name, " (", paste(names(kpar), format(unlist(kpar)), sep = " = ",
                           collapse = ", "), ")")
}
