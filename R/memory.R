# Memory needed by a fit, checked before anything is allocated.

# Bytes a fit allocates: the n x n buffer plus O(n * (features + basis))
# for eigenvectors, the Lanczos basis and the results.
fit_bytes <- function(n, features) {
  basis <- max(20, 2 * features + 10)
  8 * (as.double(n)^2 + as.double(n) * (3 * max(features, 1) + basis + 10))
}

# The ways of reading the available memory (src/memory.c), in the order
# they are tried; each applies on its own system and gives nothing elsewhere.
memory_readers <- c(meminfo = 1L, sysconf = 2L, mach = 3L, windows = 4L)

# Memory the system can still give, in bytes, from the operating system's
# own calls (src/memory.c): Linux's MemAvailable plus free swap from
# /proc/meminfo, else sysconf()'s free pages plus free swap (no /proc
# needed); macOS's free and inactive pages plus free swap; Windows' free
# commit charge. NA where no reader answers; the reader that did is the
# attribute "reader". readers: which to try, by name (the tests leave the
# system's out to reach the unknown case, through the tuning setting
# memory_readers, R/tuning.R).
available_bytes <- function(readers = tuning("memory_readers")) {
  codes <- memory_readers[intersect(readers, names(memory_readers))]
  res <- engine_call(.Call(C_available_bytes, unname(codes)))
  structure(res[1L], reader = names(memory_readers)[match(res[2L], memory_readers)])
}

# Said once per session where the available memory is unknown (no reader
# answered): a message of class fastkpca_message_memory, not a warning, as
# the fit goes on (see ?fastkpca_conditions).
memory_unknown_noted <- new.env(parent = emptyenv())
note_memory_unknown <- function() {
  if (isTRUE(memory_unknown_noted$done)) return(invisible())
  memory_unknown_noted$done <- TRUE
  message(fastkpca_condition("message", "memory", paste0(
    "fastkpca cannot tell how much memory this system has available, so ",
    "solver = \"auto\" takes the n x n buffer of an exact fit as if it fit ",
    "(a failed allocation is an error of class fastkpca_error_memory); ",
    "options(fastkpca.memory_limit = <bytes>) sets a budget. ",
    "This is said once per session.\n")))
}

# Binary units (1 GiB = 1024^3 bytes), named as such: "GB" would be 10^9
format_bytes <- function(b) {
  units <- c("bytes", "KiB", "MiB", "GiB", "TiB")
  p <- max(0, min(length(units) - 1, floor(log(max(b, 1), 1024))))
  sprintf("%.1f %s", b / 1024^p, units[p + 1])
}

# The memory a fit may use: options(fastkpca.memory_limit = bytes) where
# set (a budget, which the tests use to reach the matrix-free solver on
# small data), else what the system can still give.
memory_budget <- function() {
  limit <- getOption("fastkpca.memory_limit")
  if (is.null(limit)) {
    available <- available_bytes()
    if (is.na(available)) note_memory_unknown()
    return(as.double(available))
  }
  if (!is.numeric(limit) || length(limit) != 1L || is.na(limit) || limit <= 0)
    stop_argument("option 'fastkpca.memory_limit' must be a positive number of bytes")
  as.double(limit)
}

# Whether the n x n buffer of an exact fit fits in the budget.
buffer_fits <- function(n, features, available = memory_budget()) {
  need <- fit_bytes(n, features)
  (is.na(available) || need <= available) && need <= 8 * .Machine$integer.max^2
}

# Refuse a fit whose memory cannot fit, with the amount it would need and
# the ways on: Nystrom, or the matrix-free exact solver for some features.
check_memory <- function(n, features, available = memory_budget()) {
  need <- fit_bytes(n, features)
  ways <- paste0("landmarks = \"auto\" fits centered Nystr\u00f6m kernel PCA ",
                 "without that matrix, and with 'features' > 0, ",
                 "solver = \"matrix_free\" (or \"auto\") computes them exactly ",
                 "without it")
  if (!is.na(available) && need > available)
    stop_memory(sprintf(paste0("a fit on %.0f rows needs about %s (one %.0f x %.0f double matrix), ",
                               "but only %s of memory is available; %s"),
                        n, format_bytes(need), n, n, format_bytes(available), ways))
  # where the available memory is unknown, R_alloc in C still refuses what
  # cannot be allocated
  if (need > 8 * .Machine$integer.max^2)
    stop_memory(sprintf("a fit on %.0f rows needs about %s; %s", n, format_bytes(need), ways))
  invisible(need)
}
