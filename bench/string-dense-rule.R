# The rule of src/string_kernel.c that puts a node of the generalized
# suffix tree in the dense matrix (one dgemm per tile) rather than in the
# inverted index: a node shared by at least a share of the strings (0.5).
# This script times kernel_matrix() for "constant" and "exponential" on one
# thread with other shares (through the tuning setting string_dense_share,
# R/tuning.R; 2 means no dense node), and the
# index alone (the kernel of 2 strings against all: the index is built on
# all of them). Values do not depend on the share beyond rounding; the
# script checks it.
#
#   Rscript bench/string-dense-rule.R          (a few minutes)
suppressPackageStartupMessages(library(fastkpca))

random_dna <- function(n, lo = 200L, hi = 1000L) vapply(seq_len(n), function(i)
  paste(sample(c("a", "c", "g", "t"), sample(lo:hi, 1L), TRUE), collapse = ""), "")
words <- c("the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with",
           "be", "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which",
           "but", "have", "an", "had", "they", "you", "were", "their", "one", "all", "we",
           "can", "her", "has", "there", "been", "if", "more", "when", "will", "would",
           "who", "so", "no")
random_text <- function(n) vapply(seq_len(n), function(i)
  paste(sample(words, sample(30:150, 1L), TRUE), collapse = " "), "")

set.seed(1)
sets <- list(dna400 = random_dna(400), dna1000 = random_dna(1000),
             text1000 = random_text(1000), dna2000short = random_dna(2000, 50, 100))
shares <- c(0.02, 0.1, 0.3, 0.5, 0.8, 0.95, 2)
cpu <- function(expr) {
  t <- system.time(expr)
  t[["user.self"]] + t[["sys.self"]]
}
cat("load:", system("uptime", intern = TRUE), "\n")
for (type in c("constant", "exponential")) {
  k <- stringdot(type = type, lambda = 1.5)
  for (nm in names(sets)) {
    x <- sets[[nm]]
    ref <- NULL
    times <- vapply(shares, function(sh) {
      fastkpca:::set_tuning(string_dense_share = as.numeric(sh))
      t <- min(replicate(2, cpu(kernel_matrix(k, x, threads = 1L))))
      K <- kernel_matrix(k, x, threads = 1L)
      if (is.null(ref)) ref <<- K
      stopifnot(max(abs(K - ref)) < 1e-12)
      t
    }, numeric(1))
    index <- min(replicate(2, cpu(kernel_matrix(k, x[1:2], x, threads = 1L))))
    fastkpca:::set_tuning(string_dense_share = NULL)
    cat(sprintf("%-12s %-12s CPU s by share: %s; index alone %.3f s\n", type, nm,
                paste(sprintf("%s: %.3f", shares, times), collapse = ", "), index))
  }
}
