# The engine's tuning (R/tuning.R): one internal option, fastkpca.tuning,
# checked against one table whose C rows come from ENGINE_TUNING in
# src/fastkpca.h (engine_defaults()), passed to C before every call into
# the engine and to future's workers with each batch.

test_that("the table holds C's settings and R's, at their measured defaults", {
  d <- fastkpca:::engine_defaults()
  expect_named(d, c("name", "default", "lower", "upper", "whole"))
  expect_false(anyDuplicated(d$name) > 0)
  expect_true(all(d$default >= d$lower & d$default <= d$upper))
  table <- fastkpca:::tuning_table()
  expect_identical(names(table), c(d$name, "exact_method", "memory_readers", "block_rows"))
  values <- fastkpca:::tuning()
  expect_identical(names(values), names(table))
  expect_identical(values[c("tile_thread_work", "string_dense_share", "wide_min_d",
                            "band_width", "band_chunk", "band_group", "eigen_check_work")],
                   list(tile_thread_work = 3e7, string_dense_share = 0.5, wide_min_d = 256L,
                        band_width = 48L, band_chunk = 64L, band_group = 24L,
                        eigen_check_work = 2^30))
  # two stages from 2000 rows with R's reference BLAS, never with an optimized one
  expect_true(values$band_min_rows %in% c(2000, .Machine$integer.max))
  expect_identical(values$exact_method, NA_character_)
  expect_identical(values$block_rows, NA_integer_)
  expect_identical(values$memory_readers, names(fastkpca:::memory_readers))
})

test_that("local_tuning() sets, merges and puts back; NULL is the default again", {
  expect_null(getOption("fastkpca.tuning"))
  local({
    local_tuning(band_min_rows = 0, exact_method = "mrrr")
    expect_identical(fastkpca:::tuning("band_min_rows"), 0)
    local_tuning(band_min_rows = NULL, block_rows = 7)
    expect_identical(getOption("fastkpca.tuning"), list(exact_method = "mrrr", block_rows = 7L))
    expect_identical(fastkpca:::tuning("band_min_rows"), fastkpca:::tuning_table()$band_min_rows$default)
    # C takes only its own settings
    expect_null(fastkpca:::tuning_for_engine())
    local_tuning(wide_min_d = 8)
    expect_identical(fastkpca:::tuning_for_engine(), c(wide_min_d = 8))
  })
  expect_null(getOption("fastkpca.tuning"))
})

test_that("a bad setting is an argument error that names it, set either way", {
  x <- matrix(rnorm(12), 4, 3)
  bad <- list(list(tile_thread_work = -1), list(string_dense_share = NA), list(wide_min_d = 0),
              list(band_min_rows = "a"), list(band_width = 1), list(band_chunk = 2.5),
              list(band_group = c(1, 2)), list(eigen_check_work = Inf),
              list(exact_method = "qr"), list(memory_readers = "proc"), list(block_rows = 0))
  for (b in bad) {
    label <- names(b)
    expect_error(with_tuning(b, NULL), paste0("'fastkpca.tuning$", names(b), "'"), fixed = TRUE,
                 class = "fastkpca_error_argument", label = label)
    # set around the checker: checked at the next call into the engine
    old <- options(fastkpca.tuning = b)
    expect_error(kernel_matrix("rbfdot", x), paste0("'fastkpca.tuning$", names(b), "'"),
                 fixed = TRUE, class = "fastkpca_error_argument", label = label)
    options(old)
  }
  expect_error(with_tuning(list(band_rows = 1), NULL), "has no setting 'band_rows'",
               class = "fastkpca_error_argument")
  expect_error(fastkpca:::set_tuning(1), "must be named", class = "fastkpca_error_argument")
  old <- options(fastkpca.tuning = list(1))
  on.exit(options(old))
  expect_error(kernel_matrix("rbfdot", x), "named list", class = "fastkpca_error_argument")
  options(old)
  # C checks what it is given too
  expect_error(.Call(fastkpca:::C_engine_settings, 0L, c(band_width = 1e9)),
               "'fastkpca.tuning$band_width'", fixed = TRUE, class = "fastkpca_error_argument")
  expect_error(.Call(fastkpca:::C_engine_settings, 0L, c(nothing = 1)), "no setting 'nothing'",
               class = "fastkpca_error_argument")
})

test_that("the tuning travels to workers with each batch", {
  local_tuning(block_rows = 9, band_min_rows = 0)
  job <- fastkpca:::batch_job("tuning", NULL, NULL)
  expect_identical(job$settings$fastkpca.tuning, list(block_rows = 9L, band_min_rows = 0))
  # a worker's own option replaced for the batch, then put back
  old <- options(fastkpca.tuning = list(block_rows = 3L))
  on.exit(options(old))
  expect_identical(fastkpca:::with_engine_options(job$settings, fastkpca:::tuning()$block_rows),
                   9L)
  expect_identical(getOption("fastkpca.tuning"), list(block_rows = 3L))
})
