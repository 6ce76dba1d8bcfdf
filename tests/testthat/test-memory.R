# The memory a fit needs, checked before anything is allocated (R/memory.R).

test_that("fit_bytes() counts the n x n buffer and the n x features parts", {
  expect_equal(fastkpca:::fit_bytes(1000, 0),
               8 * (1000^2 + 1000 * (3 * 1 + 20 + 10)))
  expect_equal(fastkpca:::fit_bytes(1000, 50),
               8 * (1000^2 + 1000 * (3 * 50 + 110 + 10)))
  # no integer overflow for large n
  expect_gt(fastkpca:::fit_bytes(1e6, 5), 8e12)
})

test_that("check_memory() refuses a fit that cannot fit, with the amounts", {
  expect_error(fastkpca:::check_memory(1e5, 5, available = 1e9),
               "a fit on 100000 rows needs about 74\\.[0-9] GB .* only 953\\.7 MB")
  expect_error(fastkpca:::check_memory(1e5, 5, available = 1e9), "landmarks = \"auto\"")
  expect_equal(fastkpca:::check_memory(100, 2, available = 1e9),
               fastkpca:::fit_bytes(100, 2))
  # unknown available memory: only the impossible is refused
  expect_silent(fastkpca:::check_memory(1000, 2, available = NA))
  expect_error(fastkpca:::check_memory(1e10, 2, available = NA), "a fit on 10000000000 rows needs")
})

test_that("format_bytes() picks the unit", {
  expect_identical(fastkpca:::format_bytes(512), "512.0 bytes")
  expect_identical(fastkpca:::format_bytes(2048), "2.0 KB")
  expect_identical(fastkpca:::format_bytes(3 * 1024^3), "3.0 GB")
  expect_identical(fastkpca:::format_bytes(0), "0.0 bytes")
})

test_that("available_bytes() is a positive number or NA", {
  a <- fastkpca:::available_bytes()
  expect_length(a, 1L)
  expect_true(is.na(a) || a > 0)
})
