# print() and summary() of every kind of fit at console widths 40, 80 and
# 120 (issue 22): nothing errors, every line of the fixed text fits, and
# what depends on the fit reads right.

fits_to_print <- function() {
  set.seed(22)
  x <- matrix(rnorm(300 * 3), 300)
  list(exact = kpca(x, features = 3),
       threshold = kpca(x[1:60, ]),
       nystrom = kpca(x, features = 3, landmarks = 40),
       precomputed = kpca(kernel_matrix(x[1:50, ], kernel = "rbfdot",
                                        kpar = list(sigma = 0.5)),
                          kernel = "precomputed", features = 2))
}

test_that("print() and summary() work at widths 40, 80 and 120", {
  fits <- fits_to_print()
  for (width in c(40L, 80L, 120L)) {
    old <- options(width = width)
    for (name in names(fits)) {
      out <- capture_output_lines(print(fits[[name]]), width = width)
      expect_gt(length(out), 2L)
      sm <- capture_output_lines(print(summary(fits[[name]])), width = width)
      expect_true(any(grepl("Importance of components", sm)), label = name)
      # matrices wrap at the width: the component table's lines fit
      table_lines <- sm[-(1:4)]
      expect_true(all(nchar(table_lines) <= width), label = paste(name, width))
    }
    options(old)
  }
})

