# The package's C sources as the static tests read them (test-src-layout.R,
# test-src-maps.R, test-thread-regions.R): from a source checkout, or under R CMD check
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

# The functions a file defines: a definition starts at the start of a line
# with a type and ends its parameter list with a brace; static ones too
# (with_static = TRUE).
c_definitions <- function(code, with_static = FALSE) {
  starts <- regmatches(code, gregexpr(
    "(?m)^[A-Za-z_][A-Za-z0-9_ \\*]*?[A-Za-z_][A-Za-z0-9_]*\\s*\\([^;{}]*\\)\\s*\\{",
    code, perl = TRUE))[[1]]
  if (!with_static) starts <- starts[!grepl("^static\\b", starts)]
  unique(sub("\\s*\\($", "", regmatches(starts, regexpr("[A-Za-z_][A-Za-z0-9_]*\\s*\\(",
                                                        starts))))
}
