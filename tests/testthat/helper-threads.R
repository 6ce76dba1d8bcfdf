# The most threads a test may ask for: CRAN allows a check 2 cores, so
# off CRAN (NOT_CRAN=true) a test of many threads asks for up to k, on CRAN
# for 2 (scripts/check-nosuggests.sh watches that no R process of a check
# has more).
test_threads <- function(k) {
  if (identical(Sys.getenv("NOT_CRAN"), "true")) as.integer(k) else min(as.integer(k), 2L)
}
