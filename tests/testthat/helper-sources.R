# The package's C sources as the static tests read them (test-src-layout.R,
# test-thread-regions.R): from a source checkout, or under R CMD check
# from the sources it unpacks beside the tests (00_pkg_src).
src_dir <- function() {
  for (p in c("../../src", "../../00_pkg_src/fastkpca/src"))
    if (file.exists(file.path(p, "init.c"))) return(p)
  ""
}

# The C code of a file without its comments and the contents of its string
# literals (so that neither names a function).
c_code <- function(path) {
  txt <- paste(readLines(path, warn = FALSE), collapse = "\n")
  txt <- gsub("(?s)/\\*.*?\\*/", " ", txt, perl = TRUE)
  txt <- gsub("//[^\n]*", " ", txt, perl = TRUE)
  gsub("\"(\\\\.|[^\"\\\\])*\"", "\"\"", txt, perl = TRUE)
}

