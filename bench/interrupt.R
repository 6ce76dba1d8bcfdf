# How long kpca(x) (the default call) takes to stop after a real SIGINT in
# a child R process (the child of tests/testthat/test-interrupt.R), for the
# fastkpca installed in the libraries R_LIBS names. One line per run.
#   Rscript bench/interrupt.R N SHARE [RUNS]
# SHARE: when to signal, as a share of the fit's time (estimated by the
# child from a fit on half the rows). Prefix LD_PRELOAD=<libopenblas.so.0>
# for OpenBLAS.
suppressPackageStartupMessages(library(testthat))
args <- commandArgs(TRUE)
n <- as.integer(args[1]); share <- as.numeric(args[2])
runs <- if (length(args) > 2) as.integer(args[3]) else 1L
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
src <- readLines(file.path(here, "..", "tests", "testthat", "test-interrupt.R"))
from <- grep("^# The child process of the SIGINT test", src)
to <- grep("^test_that\\(\"SIGINT", src) - 1
eval(parse(text = src[from:to]))
for (r in seq_len(runs)) {
  res <- interrupt_child_fit(n, share)
  cat(sprintf(paste("n = %d, signal at %.0f%% of the fit (estimated %.1f s): %s,",
                    "latency %.3f s (test bound %.2f s), memory after - before %.0f MB\n"),
              n, 100 * share, res$full, res$status, res$latency, 0.1 * res$full + 0.25,
              res$memory / 2^20))
}
