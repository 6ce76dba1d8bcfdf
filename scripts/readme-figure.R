# Draws the README's picture, man/figures/README-rings.png, by running the R
# block of the README's section "An example" with a PNG device open, so the
# picture is what that code draws. From the repository's top folder, with
# fastkpca installed:
#   Rscript scripts/readme-figure.R
lines <- readLines("README.md", encoding = "UTF-8")
start <- grep("^## An example", lines)
stopifnot(length(start) == 1L)
open <- grep("^```r$", lines)
open <- open[open > start][1]
close <- grep("^```$", lines)
close <- close[close > open][1]
code <- lines[(open + 1L):(close - 1L)]

out <- file.path("man", "figures", "README-rings.png")
dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
grDevices::png(out, width = 1200, height = 420, res = 110)
eval(parse(text = code), envir = new.env())
invisible(grDevices::dev.off())
cat("wrote", out, "\n")
