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

# Every object the package prints, with the longest lines it can have: a
# kernel expression, a conformal kernel, strings, chunks, kpca_cv() over
# kernel expressions, kica(), kcca().
objects_to_print <- function() {
  set.seed(28)
  x <- matrix(rnorm(120 * 3), 120)
  k <- rbfdot(sigma = 0.2) + 0.01 * polydot(degree = 2, scale = 1, offset = 1)
  conformal <- kern_conformal(rbfdot(sigma = 0.5), function(z) exp(-rowSums(z^2)))
  dir <- tempfile("print")
  dir.create(dir)
  files <- file.path(dir, sprintf("a-rather-long-file-name-for-chunk-%d.rds", 1:2))
  for (i in 1:2) saveRDS(x[(60 * i - 59):(60 * i), ], files[i])
  dna <- c("acgtacgtgg", "ggccaattac", "acgtttaagc", "cattcattgg", "gattacaacc", "ttgacgatca")
  list(expression = kpca(x, kernel = k, features = 2),
       conformal = kpca(x, kernel = conformal, features = 2),
       kernel = k,
       strings = kpca(dna, kernel = stringdot(length = 2), features = 2),
       chunks = row_chunks(files),
       chunked = kpca(row_chunks(files), kpar = list(sigma = 0.3), features = 2,
                      landmarks = 20),
       cv = kpca_cv(x[1:60, ], grid = list(k, rbfdot(sigma = 1) * polydot(degree = 3)),
                    features = 1:2, folds = 2),
       kica = kica(cbind(runif(200), rexp(200)) %*% matrix(c(1, 0.5, 0.3, 1), 2)),
       kcca = suppressWarnings(kcca(x[, 1:2], x[, 3, drop = FALSE])))
}

# Every line that print() (and summary(), where there is one) writes.
printed_lines <- function(obj, width) {
  out <- capture_output_lines(print(obj), width = width)
  if (!inherits(obj, c("fastkpca_kernel", "fastkpca_row_chunks", "fastkpca_cv", "kica",
                       "fastkpca_kcca", "fastkpca_string")))
    out <- c(out, capture_output_lines(print(summary(obj)), width = width))
  out
}

test_that("no line of any print() or summary() runs past the width: 40, 80, 120", {
  objs <- c(fits_to_print(), objects_to_print())
  for (width in c(40L, 80L, 120L)) {
    old <- options(width = width)
    for (name in names(objs)) {
      out <- printed_lines(objs[[name]], width)
      expect_gt(length(out), 0L)
      expect_true(all(nchar(out) <= width),
                  label = sprintf("%s at width %d: %s", name, width,
                                  paste(out[nchar(out) > width], collapse = " | ")))
    }
    options(old)
  }
})

test_that("kernel expressions wrap between terms, whole, and are cut only in tables", {
  objs <- objects_to_print()
  k <- format(objs$kernel)
  for (width in c(40L, 80L)) {
    old <- options(width = width)
    out <- capture_output_lines(print(objs$kernel), width = width)
    # the lines put back together are the whole expression
    expect_identical(paste(trimws(out), collapse = " "), paste("Kernel:", k))
    # and no break falls inside "name = value"
    expect_false(any(grepl("=$", out)) || any(grepl("^\\s*=", out)))
    options(old)
  }
  expect_length(capture_output_lines(print(objs$kernel), width = 120), 1L)
  # kpca_cv()'s header fits at 80, and at 40 its table cuts the kernels
  # with "..." while the best one is shown whole
  old <- options(width = 80)
  out <- capture_output_lines(print(objs$cv), width = 80)
  expect_match(out[1], "^Cross-validated kernel PCA \\(fastkpca\\): 2 folds, criterion")
  options(width = 40)
  out <- capture_output_lines(print(objs$cv), width = 40)
  expect_true(any(grepl("\\.\\.\\.$", out)))
  best <- grep("^Best: ", out)
  expect_identical(paste(trimws(out[best:length(out)]), collapse = " "),
                   paste0("Best: ", format(objs$cv$best$kernel), ", features = ",
                          objs$cv$best$features))
  options(old)
})

test_that("a trained step_fastkpca_rbf prints within the width (80 and 120)", {
  skip_if_not_installed("recipes")
  rec <- recipes::recipe(~ ., data = iris[, 1:4])
  rec <- step_fastkpca_rbf(rec, recipes::all_numeric_predictors(), num_comp = 2)
  trained <- recipes::prep(rec)
  for (width in c(80L, 120L)) {
    old <- options(width = width)
    # recipes 1.0.4 prints with cat(), later versions through cli's messages
    messages <- capture.output(out <- capture_output_lines(print(trained), width = width),
                               type = "message")
    out <- c(out, messages)
    expect_true(any(grepl("RBF kernel PCA extraction with", out)))
    expect_true(all(nchar(out) <= width),
                label = paste(out[nchar(out) > width], collapse = " | "))
    options(old)
  }
})
