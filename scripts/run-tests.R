# Runs the test files whose names match a filter, with the installed
# fastkpca, and prints one summary line. Used by valgrind.sh and
# sanitizers.sh (which judge by their tools' reports, so a failed test
# does not change the exit status), arm64.sh and plain-path.sh (with
# "strict": the exit status is 1 when a test failed or raised an error).
#   Rscript scripts/run-tests.R TESTS_DIR [FILTER] [strict]   (FILTER: a
#   regular expression on file names without "test-" and ".R", "!" and one
#   for the files it does not match, or "all", the default)
args <- commandArgs(trailingOnly = TRUE)
# Without TZ, R asks timedatectl for the time zone the first time it needs
# it (loading recipes does), and on machines without systemd timedatectl
# prints "System has not been booted with systemd ..." and "Failed to
# connect to bus" into the test log (scripts/test.sh sets TZ for R CMD check)
if (!nzchar(Sys.getenv("TZ"))) Sys.setenv(TZ = "UTC")
suppressPackageStartupMessages({ library(testthat); library(fastkpca) })
strict <- "strict" %in% args[-1L]
args <- c(args[1L], setdiff(args[-1L], "strict"))
filter <- if (length(args) > 1L && args[2L] != "all") args[2L] else NULL
invert <- !is.null(filter) && startsWith(filter, "!")
if (invert) filter <- substring(filter, 2L)
res <- as.data.frame(test_dir(args[1L], filter = filter, invert = invert,
                              reporter = "summary", stop_on_failure = FALSE))
cat(sprintf("testthat: %d files, %d expectations, %d failed, %d errors, %d skipped\n",
            length(unique(res$file)), sum(res$nb), sum(res$failed), sum(res$error),
            sum(res$skipped)))
if (strict && sum(res$failed) + sum(res$error) > 0L) quit(save = "no", status = 1L)
