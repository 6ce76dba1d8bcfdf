# The README's code runs as written, every R block in order, in a fresh R
# session (issue 22: a snippet used an undefined `newdata`; issue 28: the
# chunked example read files nobody had). From a source checkout, or under
# R CMD check from the sources it unpacks beside the tests (00_pkg_src).
readme_path <- function() {
  for (p in c("../../README.md", "../../../README.md",
              "../../00_pkg_src/fastkpca/README.md"))
    if (file.exists(p)) return(p)
  ""
}

# Every ```r block of the README, in order.
readme_chunks <- function(path) {
  lines <- readLines(path, encoding = "UTF-8")
  opens <- grep("^```r$", lines)
  closes <- grep("^```$", lines)
  lapply(opens, function(o) lines[(o + 1L):(closes[closes > o][1] - 1L)])
}

test_that("the README is short and every R block runs in a fresh session", {
  skip_on_cran()
  skip_if_not_installed("callr")
  skip_if_not_installed("future")
  path <- readme_path()
  skip_if(!nzchar(path), "no README.md (not a source checkout)")
  expect_lte(length(readLines(path, encoding = "UTF-8")), 150L)
  chunks <- readme_chunks(path)
  expect_gte(length(chunks), 2L)
  # a fresh R session with this session's libraries (its tempdir(), with
  # the example's files, goes when it ends); plots go nowhere
  res <- callr::r(function(chunks) {
    grDevices::pdf(NULL)
    for (code in chunks) eval(parse(text = code), envir = globalenv())
    # the chunked fit again on one matrix, with the same landmarks
    x <- do.call(rbind, lapply(files, readRDS))
    one <- kpca(x, kpar = list(sigma = 0.5), features = 2,
                landmarks = big$landmarks)
    list(rotated = fit$rotated, ring = rings$ring, big_eig = big$eig,
         one_eig = one$eig, scores = do.call(rbind, scores),
         one_scores = predict(one, x))
  }, args = list(chunks = chunks), libpath = .libPaths())
  # the example's claim: the first kernel component separates the rings
  inner <- res$rotated[res$ring == "inner", 1]
  outer <- res$rotated[res$ring == "outer", 1]
  expect_true(min(inner) > max(outer) || max(inner) < min(outer))
  # the chunked fit is the fit on all rows at once
  expect_equal(res$big_eig, res$one_eig, tolerance = 1e-10)
  expect_equal(res$scores, res$one_scores, tolerance = 1e-8,
               ignore_attr = TRUE)
  expect_identical(nrow(res$scores), 20000L)
})
