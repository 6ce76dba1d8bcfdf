# The engine's settings from R options: the vector path of the arithmetic
# layer (src/simd.h), and the tuning (the internal option fastkpca.tuning,
# R/tuning.R). engine_call() (R/conditions.R) passes them to C before every
# call into the engine (the two .Call of engine_settings() and
# engine_defaults() below are the only ones made without it), so the C
# code reads no environment variable; .onLoad() (R/zzz.R) turns the
# environment variable FASTKPCA_SIMD into the option when the option is
# not set.

# The paths; the code of a name is its position less one (simd_path in
# src/simd.h).
simd_path_names <- c("auto", "plain", "sse2", "avx2", "avx512", "neon")

# The options that travel to workers (engine_options()).
engine_option_names <- c("fastkpca.simd", "fastkpca.tuning")

# The code of the path named by the option fastkpca.simd.
simd_code <- function(value = getOption("fastkpca.simd", "auto")) {
  if (!is.character(value) || length(value) != 1L || is.na(value) ||
      !(value %in% simd_path_names))
    stop_argument(sprintf("'getOption(\"fastkpca.simd\")' must be one of %s, not %s",
                          paste0("\"", simd_path_names, "\"", collapse = ", "),
                          paste(format(value), collapse = " ")))
  match(value, simd_path_names) - 1L
}

# The tuning's table from C (ENGINE_TUNING in src/fastkpca.h: each
# setting's name, default, bounds and whether it is whole), asked once per
# session (tuning_table(), R/tuning.R).
engine_defaults <- local({
  known <- NULL
  function() {
    if (is.null(known)) known <<- .Call(C_engine_defaults)
    known
  }
})

# Pass the path and the tuning C takes to C (src/engine_settings.c); called
# by engine_call() before each call into the engine.
engine_settings <- function() {
  .Call(C_engine_settings, simd_code(), tuning_for_engine())
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
#' The engine's crossovers and block sizes (the work from which a matrix
#' product spreads over threads, the columns from which the kernels of wide
#' data come from a blocked matrix product, the rows from which the exact
#' solver reduces in two stages: see the Exact solver section of [kpca()])
#' are internal tuning, set by the package's tests and benchmarks, not
#' options: they may change in any release.
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
