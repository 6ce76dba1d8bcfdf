# Memory needed by a fit, checked before anything is allocated.

# Bytes a fit allocates: the n x n buffer plus O(n * (features + basis))
# for eigenvectors, the Lanczos basis and the results.
fit_bytes <- function(n, features) {
  basis <- max(20, 2 * features + 10)
  8 * (as.double(n)^2 + as.double(n) * (3 * max(features, 1) + basis + 10))
}

# Memory the system can still give, in bytes (NA where unknown): Linux's
# MemAvailable plus free swap.
available_bytes <- function() {
  info <- tryCatch(readLines("/proc/meminfo", warn = FALSE), error = function(e) character())
  field <- function(name) {
    line <- grep(paste0("^", name, ":"), info, value = TRUE)
    if (length(line) != 1L) return(NA_real_)
    as.double(sub("^[^:]+:\\s*([0-9]+).*$", "\\1", line)) * 1024
  }
  avail <- field("MemAvailable")
  if (is.na(avail)) return(NA_real_)
  swap <- field("SwapFree")
  avail + if (is.na(swap)) 0 else swap
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
  if (is.null(limit)) return(available_bytes())
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
