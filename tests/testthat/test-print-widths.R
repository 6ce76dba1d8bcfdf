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

# The expectations below need the changes of /work/notes/i22-for-i18.patch
# (R/methods.R, R/nystrom.R, R/memory.R, R/tune.R).
test_that("summary() of a Nystrom fit names the method and its landmarks", {
  fits <- fits_to_print()
  sm <- capture_output_lines(print(summary(fits$nystrom)))
  expect_match(sm[1], "^Centered Nystr\u00f6m kernel PCA \\(fastkpca\\), 300 observations$")
  expect_true(any(grepl("^Landmarks: 40 \\(uniform; rank [0-9]+\\)$", sm)))
  ex <- capture_output_lines(print(summary(fits$exact)))
  expect_match(ex[1], "^Kernel PCA \\(fastkpca\\), 300 observations$")
  expect_false(any(grepl("^Landmarks", ex)))
})

test_that("summary() shows each row of the importance table in one format", {
  fits <- fits_to_print()
  s <- summary(fits$exact)
  sm <- capture_output_lines(print(s), width = 200)
  for (row in rownames(s$importance)) {
    line <- grep(paste0("^", row, " "), sm, value = TRUE)
    numbers <- strsplit(trimws(sub(row, "", line, fixed = TRUE)), " +")[[1]]
    decimals <- nchar(sub("^[^.]*\\.?", "", numbers))
    expect_length(unique(decimals), 1L)
    # and the numbers are the table's, to the digits shown
    expect_equal(as.numeric(numbers), unname(s$importance[row, ]),
                 tolerance = 10^-(min(decimals) - 1))
  }
})

test_that("memory sizes are in binary units, named as such", {
  expect_identical(fastkpca:::format_bytes(8 * 20000^2), "3.0 GiB")
  expect_identical(fastkpca:::format_bytes(1024), "1.0 KiB")
  expect_identical(fastkpca:::format_bytes(512), "512.0 bytes")
})

test_that("kpca_cv() prints every setting up to 25, the best 20 beyond", {
  set.seed(7)
  x <- matrix(rnorm(60 * 2), 60)
  cv21 <- kpca_cv(x, "rbfdot", grid = list(sigma = 10^seq(-2, 1, length.out = 21)), features = 1,
                  folds = 2, criterion = "residual")
  out <- capture_output_lines(print(cv21), width = 80)
  expect_false(any(grepl("best 20", out, ignore.case = TRUE)))
  cv30 <- kpca_cv(x, "rbfdot", grid = list(sigma = 10^seq(-2, 1, length.out = 30)), features = 1,
                  folds = 2, criterion = "residual")
  out <- capture_output_lines(print(cv30), width = 80)
  expect_true(any(grepl("^The 20 best of 30 settings", out)))
})
