# Runs the test files whose names match a filter, with the installed
# fastkpca, and prints one summary line. Used by valgrind.sh and
# sanitizers.sh.
#   Rscript scripts/run-tests.R TESTS_DIR [FILTER]   (FILTER: a regular
#   expression on file names, or "all", the default)
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages({ library(testthat); library(fastkpca) })
filter <- if (length(args) > 1L && args[2L] != "all") args[2L] else NULL
res <- as.data.frame(test_dir(args[1L], filter = filter, reporter = "summary",
                              stop_on_failure = FALSE))
cat(sprintf("testthat: %d files, %d expectations, %d failed, %d errors, %d skipped\n",
            length(unique(res$file)), sum(res$nb), sum(res$failed), sum(res$error),
            sum(res$skipped)))
