# Two rules of the C engine's arithmetic, checked on its sources (as
# test-engine-call.R checks the .Call sites):
# 1. src/blas.c is the only caller of the level-2 and level-3 BLAS: it
#    alone decides, by one rule, whether a product runs on the register
#    tiles or in the BLAS, so no other file may call those routines
#    (LAPACK's, such as dsyevr or dgeqrf, stay with their callers).
# 2. In vector code (the files compiled once per vector path: they use
#    VOP() or the vd types of simd.h, carry an instruction set's target
#    attribute, are a header included once per copy or include one, or ask
#    for "omp simd"), every multiply-add goes through simd.h's helpers
#    (VOP(FMA), VD4_FMA, SD_MUL_ADD, ...), never `acc += x * y`, whose
#    rounding would follow the compiler's contraction flags rather than
#    the copy's rule. And no file asks for "omp simd": its reductions are
#    split as the compiler chooses (and not at all without OpenMP), so
#    the bits would follow the compiler; sums are written out in lanes.
# 3. Two small kernels are written once, in simd.h, and used everywhere:
#    the squared distance from the norms (an + bn - 2 ab, clamped at 0:
#    sq_distance_from_norms()) and the test of a value for Inf or NaN
#    (simd_not_finite(); R_FINITE stays for the checks of arguments), so
#    that no file keeps its own overflow policy or idiom.

# The package's C sources, from the source tree (tests run from
# tests/testthat) or, under R CMD check, from the sources it unpacks beside
# the tests (00_pkg_src); none where neither is.
engine_sources <- function() {
  for (dir in file.path(testthat::test_path(), c("../../src", "../../00_pkg_src/fastkpca/src")))
    if (file.exists(file.path(dir, "init.c")))
      return(list.files(dir, pattern = "\\.(c|h)$", full.names = TRUE))
  character()
}

# Lines of a C file with comments blanked (block and line comments), so
# that a comment naming dgemm or showing `c += a * b` is not counted.
code_lines <- function(file) {
  text <- paste(readLines(file, warn = FALSE), collapse = "\n")
  text <- gsub("(?s)/\\*.*?\\*/", " ", text, perl = TRUE)
  lines <- strsplit(text, "\n", fixed = TRUE)[[1]]
  sub("//.*$", "", lines)
}

# A `+=` (or `-=`) whose right side multiplies: a `*` between two operands
# (not a pointer's type or a dereference), outside a for loop's header
# (whose steps, such as i += 4 * W, are integer arithmetic).
multiply_add_pattern <- "[-+]=[^;]*[]_[:alnum:])][[:space:]]*[*][[:space:]]*[_[:alnum:](]"


blas_routines <- c(
  "dgemv", "dgbmv", "dsymv", "dsbmv", "dspmv", "dtrmv", "dtbmv", "dtpmv", "dtrsv",
  "dtbsv", "dtpsv", "dger", "dsyr", "dspr", "dsyr2", "dspr2",
  "dgemm", "dsymm", "dsyrk", "dsyr2k", "dtrmm", "dtrsm")
blas_call_pattern <- sprintf("F77_(CALL|NAME)\\((%s)\\)", paste(blas_routines, collapse = "|"))

# "file:line: code" for each call of a level-2 or level-3 BLAS routine
blas_calls <- function(files) {
  unlist(lapply(files, function(f) {
    lines <- code_lines(f)
    at <- grep(blas_call_pattern, lines)
    sprintf("%s:%d: %s", basename(f), at, trimws(lines[at]))
  }))
}

multiply_adds <- function(files) {
  unlist(lapply(files, function(f) {
    lines <- gsub("for[[:space:]]*\\([^;]*;[^;]*;[^)]*\\)", "for ()", code_lines(f))
    at <- grep(multiply_add_pattern, lines)
    sprintf("%s:%d: %s", basename(f), at, trimws(lines[at]))
  }))
}

# Code compiled once per instruction set: simd.h's copies (VOP()) or
# vector types, a target attribute (SIMD_AVX2_ATTR, SIMD_AVX512_ATTR or
# written out), or "omp simd".
per_isa_pattern <- paste0("\\bVOP\\(|\\bvd[248]u?\\b|\\bSIMD_AVX(2|512)_ATTR\\b|",
                          "__attribute__[[:space:]]*\\(\\([[:space:]]*target\\b|omp[[:space:]]+simd")

# The headers each file includes more than once (once per copy, as tiles.c
# includes tiles_vector.h), by name.
per_copy_includes <- function(files) {
  lapply(files, function(f) {
    lines <- code_lines(f)
    inc <- sub('^.*"([^"]+)".*$', "\\1", grep('^[[:space:]]*#[[:space:]]*include[[:space:]]*"', lines,
                                               value = TRUE))
    unique(inc[duplicated(inc)])
  })
}

# Vector code: the files with code of an instruction set
# (per_isa_pattern), the headers included once per copy and the files that
# include them, simd.h itself (where the helpers are written) excepted.
vector_files <- function(files) {
  uses <- vapply(files, function(f) any(grepl(per_isa_pattern, code_lines(f))), logical(1))
  copies <- per_copy_includes(files)
  uses <- uses | lengths(copies) > 0L | basename(files) %in% unlist(copies)
  files[uses & basename(files) != "simd.h"]
}

# "file:line: code" for each line of files matching pattern
lines_matching <- function(files, pattern) {
  unlist(lapply(files, function(f) {
    lines <- code_lines(f)
    at <- grep(pattern, lines)
    sprintf("%s:%d: %s", basename(f), at, trimws(lines[at]))
  }))
}

# "omp simd", in a pragma or a macro's _Pragma
omp_simd_pattern <- "omp[[:space:]]+simd"


test_that("the patterns catch what they are meant to", {
  f <- tempfile(fileext = ".c")
  writeLines(c(
    "F77_CALL(dgemm)(\"N\", \"N\", &m, &n, &k, &one, A, &m, B, &k, &zero, C, &m FCONE FCONE);",
    "/* F77_CALL(dgemv) in a comment */",
    "F77_CALL(dgeqrf)(&n, &l, Y, &n, tau, work, &lwork, &info);",
    "c0 += ap[0] * y;",
    "t += *(const vd4u *) (a0 + i) * y0;",
    "double *p = (double *) R_alloc(n, sizeof(double)); s += x[i];",
    "c0 = VOP(FMA)(x0, y, c0); /* c += a * b */",
    "for (; i + 4 * W <= n; i += 4 * W) {",
    "for (int k = 0; k < d; k++) s += (a[k] - b[k]) * (a[k] - b[k]);"), f)
  expect_equal(blas_calls(f), sprintf("%s:1: %s", basename(f), readLines(f)[1]))
  expect_equal(sub("^[^:]*:", "", multiply_adds(f)),
               c("4: c0 += ap[0] * y;", "5: t += *(const vd4u *) (a0 + i) * y0;",
                 "9: for () s += (a[k] - b[k]) * (a[k] - b[k]);"))
  # vector code: each way a file can be compiled per instruction set (as
  # band_reduction.c was, with "omp simd" loops and target attributes, but
  # no vd type), and not a plain file or a header included once
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  write_c <- function(name, ...) writeLines(c(...), file.path(dir, name))
  write_c("attr.c", "SIMD_AVX2_ATTR", "static void f_avx2(double *y) { y[0] += y[1] * y[2]; }")
  write_c("target.c", "__attribute__((target(\"avx2,fma\"))) static void g(void) {}")
  write_c("pragma.c", "#pragma omp simd reduction(+:sum)", "for (i = 0; i < n; i++) sum += a[i];")
  write_c("pragma_macro.c", "# define BAND_SIMD _Pragma(\"omp simd\")")
  write_c("copies.c", "#include \"fastkpca.h\"", "#define K(n) n##_a", "#include \"kern.h\"",
          "#define K(n) n##_b", "#include \"kern.h\"")
  write_c("kern.h", "static void K(f)(double *y) { y[0] = y[1]; }")
  write_c("plain.c", "#include \"fastkpca.h\"", "#include \"kern_once.h\"",
          "/* SIMD_AVX2_ATTR and omp simd named in a comment */", "double s = a * b;")
  write_c("kern_once.h", "static double h(double a) { return a; }")
  files <- list.files(dir, full.names = TRUE)
  expect_setequal(basename(vector_files(files)),
                  c("attr.c", "target.c", "pragma.c", "pragma_macro.c", "copies.c", "kern.h"))
  expect_equal(sub("^[^:]*:", "", multiply_adds(file.path(dir, c("attr.c", "pragma.c")))),
               c("2: static void f_avx2(double *y) { y[0] += y[1] * y[2]; }"))
  expect_setequal(sub(":.*$", "", lines_matching(files, omp_simd_pattern)),
                  c("pragma.c", "pragma_macro.c"))
})

test_that("src/blas.c is the only caller of the level-2 and level-3 BLAS", {
  files <- engine_sources()
  skip_if(length(files) == 0L, "the package's C sources are not here")
  expect_true("blas.c" %in% basename(files))
  expect_gt(length(blas_calls(files[basename(files) == "blas.c"])), 0L)
  expect_identical(blas_calls(files[basename(files) != "blas.c"]), character())
})

test_that("vector code multiplies and adds through simd.h's helpers", {
  files <- engine_sources()
  skip_if(length(files) == 0L, "the package's C sources are not here")
  vector <- vector_files(files)
  expect_true(all(c("tiles.c", "tiles_vector.h", "kernel_simd.h", "kernel_fast.c",
                    "band_reduction.c", "band_sweep.h") %in% basename(vector)))
  expect_identical(multiply_adds(vector), character())
})

test_that("no file leaves a sum to the compiler (omp simd)", {
  files <- engine_sources()
  skip_if(length(files) == 0L, "the package's C sources are not here")
  expect_identical(lines_matching(files, omp_simd_pattern), character())
})

# a comparison with DBL_MAX itself (the idioms !(fabs(v) <= DBL_MAX) and
# !(v <= DBL_MAX) of a not-finite test; DBL_MAX / 4 as a bound is not one)
not_finite_idiom <- "[<>]=?[[:space:]]*DBL_MAX[[:space:]]*[);&|?]"
# a sum of two terms less twice a third: a distance from the norms
distance_idiom <- "[+][^;]*-[[:space:]]*2(\\.0)?[[:space:]]*[*]"

test_that("the distance from the norms and the not-finite test are simd.h's", {
  f <- tempfile(fileext = ".c")
  writeLines(c("bad |= !(fabs(col[i]) <= DBL_MAX);", "if (!(s <= DBL_MAX)) s = 0;",
               "double d2 = aa + bb - 2.0 * dot(a, b, d);", "int big = top < DBL_MAX / 4;",
               "*at_edge = fabs(t - c) > half - 2.0 * tol;"), f)
  expect_equal(sub("^[^:]*:", "", lines_matching(f, not_finite_idiom)),
               c("1: bad |= !(fabs(col[i]) <= DBL_MAX);", "2: if (!(s <= DBL_MAX)) s = 0;"))
  expect_equal(sub("^[^:]*:", "", lines_matching(f, distance_idiom)),
               "3: double d2 = aa + bb - 2.0 * dot(a, b, d);")
  files <- engine_sources()
  skip_if(length(files) == 0L, "the package's C sources are not here")
  others <- files[basename(files) != "simd.h"]
  simd <- files[basename(files) == "simd.h"]
  expect_length(lines_matching(simd, "static inline [a-z]+ (sq_distance_from_norms|simd_not_finite)[(]"),
                2L)
  expect_identical(lines_matching(others, not_finite_idiom), character())
  expect_identical(lines_matching(others, distance_idiom), character())
})
