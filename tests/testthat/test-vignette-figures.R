# The vignette's figure of three kernels on the rings (chunk kern-rings):
# each panel's title must fit its third of the figure (issue 22: the sum's
# title was cut). Reads the vignette's source in a checkout or installed.
vignette_path <- function(name) {
  # a source checkout, or the installed package's doc/ (R CMD check)
  for (p in c(file.path(c("../../vignettes", "../../../vignettes"), name),
              system.file("doc", name, package = "fastkpca")))
    if (file.exists(p)) return(p)
  ""
}

test_that("the kern-rings titles fit their panels", {
  skip_on_cran()
  path <- vignette_path("fastkpca.Rmd")
  skip_if(!nzchar(path), "no vignettes/fastkpca.Rmd (not a source checkout)")
  lines <- readLines(path, encoding = "UTF-8")
  start <- grep("^```\\{r kern-rings", lines)
  expect_length(start, 1L)
  end <- grep("^```$", lines)
  end <- end[end > start][1]
  chunk <- lines[(start + 1L):(end - 1L)]
  # the chunk's title function, and the figure's size and title size
  env <- new.env()
  def <- grep("^wrap_title <- ", chunk)
  def_end <- grep("^}", chunk)
  def_end <- def_end[def_end > def][1]
  eval(parse(text = chunk[def:def_end]), envir = env)
  height <- as.numeric(sub(".*fig.height = ([0-9.]+).*", "\\1", lines[start]))
  setup <- grep("fig.width = ", lines, value = TRUE)[1]
  width <- as.numeric(sub(".*fig.width = ([0-9.]+).*", "\\1", setup))
  k_rbf <- kern("rbfdot", sigma = 0.2)
  k_poly <- kern("polydot", degree = 2, offset = 0)
  k_sum <- k_rbf + 0.01 * k_poly
  file <- tempfile(fileext = ".pdf")
  grDevices::pdf(file, width = width, height = height)
  on.exit({ grDevices::dev.off(); unlink(file) })
  op <- graphics::par(mfrow = c(1, 3), mar = c(4, 4, 3.5, 1))
  for (k in list(k_rbf, k_poly, k_sum)) {
    graphics::plot.new()
    title <- env$wrap_title(format(k))
    parts <- strsplit(title, "\n", fixed = TRUE)[[1]]
    # widths in inches: the title is centred on the plot region, and may use
    # the side margins too (the whole panel)
    text_in <- graphics::strwidth(parts, units = "inches", cex = 0.75, font = 2)
    expect_true(all(text_in < width / 3), label = format(k))
    expect_lte(length(parts), 3L)
  }
  graphics::par(op)
})
