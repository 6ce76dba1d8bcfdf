# The most threads a test may ask for: CRAN allows a check 2 cores, so
# off CRAN (NOT_CRAN=true) a test of many threads asks for up to k, on CRAN
# for 2 (scripts/check-nosuggests.sh watches that no R process of a check
# has more); never more than the process may run (OMP_THREAD_LIMIT, as
# scripts/arm64.sh sets: fastkpca cuts any count to it, R/threads.R).
test_threads <- function(k) {
  k <- if (identical(Sys.getenv("NOT_CRAN"), "true")) as.integer(k) else min(as.integer(k), 2L)
  min(k, fastkpca:::thread_limits()$cap)
}
