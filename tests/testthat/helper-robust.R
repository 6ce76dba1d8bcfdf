# Helpers of the robustness tests (test-bad-input.R, test-fuzz.R).

# Whether the exact solver keeps its writes in bounds on spectra with many
# tied eigenvalues, checked once per session in a child R process (a heap
# overrun there crashes R later, at an unrelated place). Tests that fit such
# spectra in this process skip when it does not, so that the suite reports
# the failure instead of dying; test-entry-points.R fails on it.
exact_solver_is_memory_safe <- function() {
  known <- getOption("fastkpca.tests.exact_solver_safe")
  if (!is.null(known)) return(known)
  rscript <- file.path(R.home("bin"), "Rscript")
  code <- c(
    "suppressPackageStartupMessages(library(fastkpca))",
    "for (n in c(10, 40, 120)) for (f in c(1, 2, 5, 20)) if (f < n) {",
    "  try(kpca(matrix(1, n, 3), features = f, solver = 'exact', threads = 1), silent = TRUE)",
    "  y <- matrix(rep(c(0, 1), length.out = 3 * n), n, 3)",
    "  try(suppressWarnings(kpca(y, kernel = 'vanilladot', features = f, solver = 'exact', threads = 1)), silent = TRUE)",
    "  for (i in 1:2) invisible(gc(full = TRUE))",
    "}",
    "cat('child finished\\n')")
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  on.exit(unlink(script))
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  out <- suppressWarnings(system2(rscript, c("--vanilla", shQuote(script)), stdout = TRUE,
                                  stderr = TRUE, env = paste0("R_LIBS=", shQuote(libs)),
                                  timeout = 120))
  safe <- any(grepl("child finished", out))
  options(fastkpca.tests.exact_solver_safe = safe)
  safe
}

# Whether valgrind or a sanitizer runs the tests (scripts/valgrind.sh and
# scripts/sanitizers.sh set FASTKPCA_MEMCHECK).
under_memcheck <- function() nzchar(Sys.getenv("FASTKPCA_MEMCHECK"))

# How many random cases a fuzzing test draws: all of them natively (R CMD
# check, the plain path, arm64), a quarter under a memory checker, which
# runs R about 30 times slower and whose report needs each code path once,
# not each random value (every deterministic case still runs there).
random_cases <- function(n) if (under_memcheck()) max(1L, n %/% 4L) else n

skip_if_exact_solver_unsafe <- function() {
  # under valgrind or the sanitizers (scripts/*.sh), run: the checker should see it
  if (under_memcheck()) return(invisible())
  skip_if_not(exact_solver_is_memory_safe(),
              "the exact solver overruns its eigenvalue buffer (see test-entry-points.R)")
}
