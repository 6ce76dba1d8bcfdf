# The engine's settings from R options: the vector path of the arithmetic
# layer (src/simd.h), the fewest multiply-adds per parallel region of the
# register tiles, and the string kernels' dense share. engine_call()
# (R/conditions.R) passes them to C before every call into the engine (the
# two .Call of engine_settings() below are the only ones made without it),
# so the C code reads no environment variable; .onLoad() (R/zzz.R) turns the
# environment variable FASTKPCA_SIMD into the option when the option is
# not set.

# The paths; the code of a name is its position less one (simd_path in
# src/simd.h).
simd_path_names <- c("auto", "plain", "sse2", "avx2", "avx512", "neon")

# The options, with what each holds.
engine_option_names <- c("fastkpca.simd", "fastkpca.tile_thread_work",
                         "fastkpca.string_dense_share", "fastkpca.wide_min_d",
                         "fastkpca.band_min_rows")

# The code of the path named by the option fastkpca.simd.
simd_code <- function(value = getOption("fastkpca.simd", "auto")) {
  if (!is.character(value) || length(value) != 1L || is.na(value) ||
      !(value %in% simd_path_names))
    stop_argument(sprintf("'getOption(\"fastkpca.simd\")' must be one of %s, not %s",
                          paste0("\"", simd_path_names, "\"", collapse = ", "),
                          paste(format(value), collapse = " ")))
  match(value, simd_path_names) - 1L
}

# The defaults of the numeric settings, from C (where they were measured),
# asked once per session.
engine_defaults <- local({
  known <- NULL
  function() {
    if (is.null(known)) known <<- .Call(C_engine_defaults)
    known
  }
})

# A numeric option: one non-negative number (positive when positive), or
# the default when unset.
engine_number_option <- function(name, default, positive = FALSE) {
  value <- getOption(name)
  if (is.null(value)) return(default)
  if (!is.numeric(value) || length(value) != 1L || !is.finite(value) || value < 0 ||
      (positive && value == 0))
    stop_argument(sprintf("'getOption(\"%s\")' must be one %s number", name,
                          if (positive) "positive" else "non-negative"))
  as.double(value)
}

# Pass the options to C (src/engine_settings.c); called by engine_call() before each
# call into the engine.
engine_settings <- function() {
  defaults <- engine_defaults()
  .Call(C_engine_settings, simd_code(),
        engine_number_option("fastkpca.tile_thread_work", defaults[["thread_work"]]),
        engine_number_option("fastkpca.string_dense_share", defaults[["dense_share"]],
                             positive = TRUE),
        engine_number_option("fastkpca.wide_min_d", defaults[["wide_min_d"]],
                             positive = TRUE),
        engine_number_option("fastkpca.band_min_rows", defaults[["band_rows"]]))
}

# The options as a list, for a worker process (R/workers.R), and code run
# with them set.
engine_options <- function() options()[intersect(engine_option_names, names(options()))]
with_engine_options <- function(settings, code) {
  old <- options(settings)
  on.exit(options(old))
  code
}

# The path each C entry point ran on at its last call since the last
# reading, named by the entry point (src/simd.c records it at each entry);
# reading clears the record. For the tests (test-engine-call.R, and
# entries_entered() in helper-work.R).
engine_entry_paths <- function() engine_call(.Call(C_engine_entry_paths))

# The name of the path a code gives on this CPU.
simd_path_resolve <- function(code) engine_call(.Call(C_simd_path_resolve, as.integer(code)))

#' The vector path of the arithmetic engine
#'
#' fastkpca's C engine computes kernel values and matrix products in
#' vector registers, with a copy of each kernel per instruction set:
#' `"sse2"` (two doubles a vector, every x86-64 CPU), `"avx2"` (four, with
#' fused multiply-adds), `"avx512"` (eight), `"neon"` (two, with fused
#' multiply-adds, every 64-bit ARM CPU), and `"plain"`, loops without
#' vector types (every system). `simd_path()` says which one this session
#' uses.
#'
#' The option `fastkpca.simd` chooses: `"auto"` (the default) is the
#' widest path this CPU runs; a path names the widest the engine may use,
#' and a CPU that lacks it runs the widest it has below it (`"neon"` ranks
#' with `"sse2"`). `options(fastkpca.simd = "plain")` switches the vector
#' code off. When the option is not set as the package loads, the
#' environment variable `FASTKPCA_SIMD` sets it (for example
#' `FASTKPCA_SIMD=plain R CMD check`).
#'
#' Each path sums every value in a fixed order, written out in the
#' engine's code (never left to the compiler), the same for any number of
#' threads, so the package gives the same bits on a path in every
#' session, on every machine that runs the path, built with gcc or clang,
#' with OpenMP or without (as checked on x86-64). Paths with fused
#' multiply-adds round differently from those without, and the vector
#' exponential of `rbfdot()` and
#' `laplacedot()` differs from the C library's `exp()` of `"plain"` in the
#' last bits: results of different paths agree to about `1e-15` relative.
#' The matrix products of `"plain"` and `"sse2"` give the same bits, as do
#' those of `"avx2"` and `"avx512"`.
#'
#' Two other options tune the engine and do not change its results:
#' `fastkpca.tile_thread_work`, the fewest multiply-adds a matrix product
#' spreads over threads (default `3e7`), and
#' `fastkpca.string_dense_share`, the share of the strings a common
#' substring must be in to go to the dense product of the string kernels
#' (default `0.5`). Two more change only last bits:
#' `fastkpca.wide_min_d`, the fewest columns for which the kernels of an
#' inner product or a distance are computed from a blocked matrix product
#' of the rows (default `256`; only `laplacedot()`'s values change, by about
#' `1e-15` relative), and `fastkpca.band_min_rows`, the smallest number of
#' rows from which the exact solver reduces the kernel matrix in two stages
#' (default 2000 with R's reference BLAS, none with an optimized BLAS; see
#' the Exact solver section of [kpca()]; the eigenpairs agree to about
#' `1e-13`).
#'
#' @param available `FALSE` (the default) for the path this session uses;
#'   `TRUE` for every path this CPU runs, narrowest first.
#' @return A character vector: the name of the path (one of `"plain"`,
#'   `"sse2"`, `"avx2"`, `"avx512"`, `"neon"`), or with `available = TRUE`
#'   the names of all the paths this CPU runs.
#' @examples
#' simd_path()
#' simd_path(available = TRUE)
#' old <- options(fastkpca.simd = "plain")
#' simd_path()
#' options(old)
#' @export
simd_path <- function(available = FALSE) {
  if (!is.logical(available) || length(available) != 1L || is.na(available))
    stop_argument("'available' must be TRUE or FALSE")
  if (available)
    return(unique(vapply(seq_along(simd_path_names[-1L]), simd_path_resolve, "")))
  simd_path_resolve(simd_code())
}
