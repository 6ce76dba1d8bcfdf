# The README's code runs as written (issue 22: its Nystrom snippet used an
# undefined `newdata`). From a source checkout, or under R CMD check from
# the sources it unpacks beside the tests (00_pkg_src).
readme_path <- function() {
  for (p in c("../../README.md", "../../../README.md",
              "../../00_pkg_src/fastkpca/README.md"))
    if (file.exists(p)) return(p)
  ""
}

# The R chunks of the README section whose heading starts with `heading`.
readme_chunks <- function(path, heading) {
  lines <- readLines(path, encoding = "UTF-8")
  start <- grep(paste0("^## ", heading), lines)[1]
  stopifnot(!is.na(start))
  end <- grep("^## ", lines)
  end <- c(end[end > start], length(lines) + 1L)[1] - 1L
  section <- lines[start:end]
  opens <- grep("^```r", section)
  closes <- grep("^```$", section)
  lapply(opens, function(o) section[(o + 1L):(closes[closes > o][1] - 1L)])
}

test_that("the README's Nystrom snippet runs in a fresh environment", {
  skip_on_cran()
  path <- readme_path()
  skip_if(!nzchar(path), "no README.md (not a source checkout)")
  chunks <- readme_chunks(path, "Beyond one n x n buffer")
  expect_gte(length(chunks), 1L)
  env <- new.env(parent = asNamespace("fastkpca"))
  for (code in chunks) expect_no_error(eval(parse(text = code), envir = env))
  expect_identical(dim(predict(env$fit, env$newdata)), c(nrow(env$newdata), 10L))
})
