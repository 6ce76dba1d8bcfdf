# The maps of src/ kept true (issue 51): the map at the top of
# src/fastkpca.h and the file table of ARCHITECTURE.md name every source
# file; every function the table names in a row of src/ exists: defined in
# one of the row's files, or in another source file (a row names the
# functions of the files it calls), or an R function of the package
# (R/), or one of the few functions of C's, R's and the systems' own the
# table names (a function removed or renamed is caught: band_gemm(),
# data_rows()); every function of the engine that is not static has a
# caller. Read from a source checkout,
# or under R CMD check from its copy of the sources (00_pkg_src), where
# ARCHITECTURE.md is not shipped: scripts/test.sh names the checkout's in
# FASTKPCA_ARCHITECTURE_MD (without it, the table's rules skip).

architecture_md <- function() {
  for (p in c("../../ARCHITECTURE.md", Sys.getenv("FASTKPCA_ARCHITECTURE_MD")))
    if (file.exists(p)) return(p)
  ""
}

# The C and header files of src/, but fastkpca.h itself.
src_files <- function(dir) {
  setdiff(basename(list.files(dir, pattern = "[.][ch]$")), "fastkpca.h")
}

# The files fastkpca.h's opening comment maps.
header_map_files <- function(dir) {
  txt <- paste(readLines(file.path(dir, "fastkpca.h"), warn = FALSE), collapse = "\n")
  map <- regmatches(txt, regexpr("(?s)^/\\*.*?\\*/", txt, perl = TRUE))
  unique(regmatches(map, gregexpr("\\b[A-Za-z0-9_]+[.][ch]\\b", map))[[1]])
}

# The rows of ARCHITECTURE.md's table for src/: list of (files, names),
# files the row's first cell names, names the functions it writes as
# `name()` anywhere in the row, and the files it names anywhere.
architecture_rows <- function(path) {
  lines <- grep("^\\| `src/", readLines(path, warn = FALSE), value = TRUE)
  lapply(lines, function(l) {
    cells <- strsplit(l, "|", fixed = TRUE)[[1]]
    first <- cells[2]
    list(files = sub("^src/", "", regmatches(first, gregexpr("src/[A-Za-z0-9_.]+", first))[[1]]),
         named_files = unique(sub("^src/", "", regmatches(l, gregexpr(
           "\\b(src/)?[A-Za-z0-9_]+[.][ch]\\b", l))[[1]])),
         functions = unique(sub("\\(\\)`$", "", sub("^`", "", regmatches(l, gregexpr(
           "`[A-Za-z_][A-Za-z0-9_]*\\(\\)`", l))[[1]]))))
  })
}

# Every function defined in each file (static or not, and the copies a
# macro names, KF(name) and the like, by their inner name).
defined_by_file <- function(dir) {
  files <- list.files(dir, pattern = "[.][ch]$", full.names = TRUE)
  setNames(lapply(files, function(f) {
    code <- c_code(f)
    plain <- c_definitions(code, with_static = TRUE)
    wrapped <- regmatches(code, gregexpr("(?m)^[A-Za-z_][A-Za-z0-9_ \\*]*?\\b[A-Z]+\\(([a-z_][a-z0-9_]*)\\)\\s*\\(",
                                         code, perl = TRUE))[[1]]
    macro_defs <- regmatches(code, gregexpr("#\\s*define\\s+([A-Za-z_][A-Za-z0-9_]*)\\(", code))[[1]]
    c(plain, sub("^.*\\(([a-z_][a-z0-9_]*)\\)\\s*\\($", "\\1", wrapped),
      sub("^#\\s*define\\s+", "", sub("\\($", "", macro_defs)))
  }), basename(files))
}

# The functions of C's, R's and the systems' that the table names.
external_functions <- c("exp", "sysconf", "sysinfo", "GlobalMemoryStatusEx", "Rf_error")

# The functions of the package's R code.
r_functions <- function(r_dir) {
  files <- list.files(r_dir, pattern = "[.]R$", full.names = TRUE)
  code <- unlist(lapply(files, readLines, warn = FALSE))
  unique(sub("^\\s*`?([A-Za-z0-9_.]+)`?\\s*(<-|=).*$", "\\1",
             grep("^\\s*`?[A-Za-z0-9_.]+`?\\s*(<-|=)\\s*(local\\(|function)", code, value = TRUE)))
}

# The names in the table's rows that exist nowhere, as "files: name".
unknown_names <- function(rows, defined, known = character()) {
  everywhere <- c(unique(unlist(defined)), known, external_functions)
  out <- character()
  for (r in rows) {
    missing <- setdiff(r$functions, everywhere)
    if (length(missing))
      out <- c(out, paste0(paste(r$files, collapse = ","), ": ", missing))
  }
  out
}

# The functions that are not static and that no file calls or names (the
# .Call entry points are named in init.c's table; R_init_fastkpca is R's).
uncalled_functions <- function(dir) {
  files <- list.files(dir, pattern = "[.][ch]$", full.names = TRUE)
  code <- vapply(files, c_code, "")
  defs <- unlist(lapply(code[grepl("[.]c$", files)], c_definitions))
  defs <- setdiff(defs, "R_init_fastkpca")
  used <- vapply(defs, function(fn) {
    pattern <- paste0("\\b", fn, "\\b")
    hits <- sum(vapply(code, function(cd) lengths(regmatches(cd, gregexpr(pattern, cd, perl = TRUE))), 0))
    # less its definition, and its prototype where a header has one
    prototype <- any(vapply(code[grepl("[.]h$", files)], function(cd)
      grepl(paste0("\\b", fn, "\\s*\\([^;{}]*\\)\\s*;"), cd, perl = TRUE), logical(1)))
    hits - 1L - prototype > 0
  }, logical(1))
  sort(defs[!used])
}

test_that("fastkpca.h's map names every source file", {
  dir <- src_dir()
  skip_if(!nzchar(dir), "the C sources are not beside the tests")
  expect_identical(setdiff(src_files(dir), header_map_files(dir)), character())
  # and no file that is gone
  expect_identical(setdiff(header_map_files(dir), c(src_files(dir), "fastkpca.h")), character())
})

test_that("ARCHITECTURE.md's table names every source file, and its functions where they are", {
  dir <- src_dir()
  path <- architecture_md()
  skip_if(!nzchar(dir) || !nzchar(path), "the sources or ARCHITECTURE.md are not beside the tests")
  rows <- architecture_rows(path)
  expect_gt(length(rows), 20L)
  expect_identical(setdiff(src_files(dir), unlist(lapply(rows, `[[`, "files"))), character())
  r_dir <- file.path(dirname(dir), "R")
  known <- if (dir.exists(r_dir)) r_functions(r_dir) else character()
  expect_identical(unknown_names(rows, defined_by_file(dir), known), character())
})

test_that("the map's checks catch what they are for", {
  defined <- list(a.c = c("f", "g"), b.c = "h")
  rows <- list(list(files = "a.c", named_files = "a.c", functions = c("f", "h", "band_gemm")),
               list(files = "b.c", named_files = c("b.c", "a.c"), functions = c("h", "exp", "kpca")))
  expect_identical(unknown_names(rows, defined, known = "kpca"), "a.c: band_gemm")
  # the dead code of f4d838e: defined, with a prototype, and called nowhere
  dir <- tempfile()
  dir.create(dir)
  writeLines(c("int data_rows(SEXP x);", "int used(int a);", "static inline int tiny(int a);"),
             file.path(dir, "fastkpca.h"))
  writeLines(c("int data_rows(SEXP x)", "{", "    return 1;", "}",
               "int used(int a)", "{", "    return a;", "}",
               "int caller(int a)", "{", "    return used(a);", "}"),
             file.path(dir, "a.c"))
  writeLines(c("void R_init_fastkpca(void *dll)", "{", "    caller(1);", "}"), file.path(dir, "init.c"))
  expect_identical(uncalled_functions(dir), "data_rows")
})

test_that("every function of the engine that is not static has a caller", {
  dir <- src_dir()
  skip_if(!nzchar(dir), "the C sources are not beside the tests")
  expect_identical(uncalled_functions(dir), character())
})
