# The parallel regions of src/ read from the sources (issue 50). OpenMP may
# give a region fewer threads than its num_threads() asks for
# (OMP_DYNAMIC, OMP_THREAD_LIMIT, a nested region): a region that deals
# work by thread number over the count it asked for leaves the missing
# threads' work undone, and a thread that waits for that work waits
# forever. So:
#   1. a region that is not a loop shared by OpenMP ("parallel", not
#      "parallel for") and deals by omp_get_thread_num() takes its team's
#      size from omp_get_num_threads() (or both from fastkpca.h's
#      thread_team()), and does not name the count it asked for;
#   2. every wait of one thread on another goes through threads.c
#      (wait_for_count(): spins, then yields the core on a busy machine):
#      no atomic loads, pauses or yields of its own elsewhere.

# The statement that follows position `at` in code: a block in braces, or
# a for loop with its body, or a statement up to its semicolon; the
# preprocessor lines before it skipped (with an #else branch to its
# #endif).
statement_after <- function(code, at) {
  rest <- substring(code, at)
  repeat {
    rest <- sub("^\\s+", "", rest)
    if (startsWith(rest, "#else")) {
      rest <- substring(rest, regexpr("#endif", rest, fixed = TRUE) + 6L)
    } else if (startsWith(rest, "#")) {
      rest <- sub("^[^\n]*\n?", "", rest)
    } else break
  }
  chars <- strsplit(rest, "")[[1]]
  matching <- function(from, open, close) {
    depth <- 0L
    for (i in seq(from, length(chars))) {
      if (chars[i] == open) depth <- depth + 1L
      if (chars[i] == close) {
        depth <- depth - 1L
        if (depth == 0L) return(i)
      }
    }
    length(chars)
  }
  end <- if (startsWith(rest, "{")) {
    matching(1L, "{", "}")
  } else if (startsWith(rest, "for")) {
    header_end <- matching(regexpr("(", rest, fixed = TRUE), "(", ")")
    body <- sub("^\\s+", "", substring(rest, header_end + 1L))
    skip <- nchar(substring(rest, header_end + 1L)) - nchar(body)
    if (startsWith(body, "{")) matching(header_end + skip + 1L, "{", "}")
    else header_end + regexpr(";", body, fixed = TRUE) + skip
  } else {
    regexpr(";", rest, fixed = TRUE)
  }
  substring(rest, 1L, end)
}

# Every "#pragma omp parallel" of the C sources: file, line, whether a
# loop shared by OpenMP ("parallel for"), the count it asks for
# (num_threads()'s argument) and the region's code.
parallel_regions <- function(dir) {
  files <- list.files(dir, pattern = "[.][ch]$", full.names = TRUE)
  rows <- lapply(files, function(f) {
    code <- c_code(f)
    hits <- gregexpr("#pragma omp parallel[^\n]*(\\\\\n[^\n]*)*", code, perl = TRUE)[[1]]
    if (hits[1] < 0) return(NULL)
    lens <- attr(hits, "match.length")
    # the lines of the pragmas in the file as written (c_code() drops the
    # comments' lines)
    lines <- grep("^\\s*#pragma omp parallel", readLines(f, warn = FALSE))
    if (length(lines) != length(hits)) lines <- rep(NA_integer_, length(hits))
    do.call(rbind, lapply(seq_along(hits), function(i) {
      pragma <- substring(code, hits[i], hits[i] + lens[i] - 1L)
      asked <- regmatches(pragma, regexec("num_threads\\(\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*\\)",
                                          pragma))[[1]]
      data.frame(file = basename(f),
                 line = lines[i],
                 shared_loop = grepl("parallel\\s+for\\b", pragma),
                 asked = if (length(asked) == 2L) asked[2] else NA_character_,
                 body = statement_after(code, hits[i] + lens[i]))
    }))
  })
  do.call(rbind, rows)
}

# The regions that break rule 1, as "file:line".
regions_dealing_by_asked_count <- function(regions) {
  names_word <- function(body, word) grepl(paste0("\\b", word, "\\b"), body, perl = TRUE)
  bad <- vapply(seq_len(nrow(regions)), function(i) {
    r <- regions[i, ]
    # thread_team() (fastkpca.h) gives both the thread's number and the team's size
    if (r$shared_loop || !grepl("omp_get_thread_num\\s*\\(|\\bthread_team\\s*\\(", r$body))
      return(FALSE)
    !grepl("omp_get_num_threads\\s*\\(|\\bthread_team\\s*\\(", r$body) ||
      (!is.na(r$asked) && names_word(r$body, r$asked))
  }, logical(1))
  paste0(regions$file, ":", regions$line)[bad]
}

# The files that wait on another thread by hand (rule 2), outside threads.c.
files_waiting_by_hand <- function(dir) {
  files <- list.files(dir, pattern = "[.][ch]$", full.names = TRUE)
  files <- files[basename(files) != "threads.c"]
  own <- vapply(files, function(f) grepl(
    "__atomic_load|#pragma omp atomic read|sched_yield\\s*\\(|__builtin_ia32_pause|_mm_pause",
    c_code(f), perl = TRUE), logical(1))
  basename(files)[own]
}

test_that("the rules read the regions they are meant to", {
  dir <- src_dir()
  skip_if(!nzchar(dir), "the C sources are not beside the tests")
  regions <- parallel_regions(dir)
  # every region of the engine is found, with its count and body
  expect_gt(nrow(regions), 20L)
  expect_true(all(nzchar(regions$body)))
  expect_true(any(!regions$shared_loop))
  # the rule catches the stride of f4d838e's band_chase(): a region that
  # deals sweeps by the count it asked for
  old <- data.frame(file = "old.c", line = 1L, shared_loop = FALSE, asked = "nt",
                    body = paste("{ int id = 0; id = omp_get_thread_num();",
                                 "for (int s = s0 + id; s < s1; s += nt) sweep(s); }"))
  expect_identical(regions_dealing_by_asked_count(old), "old.c:1")
  fixed <- old
  fixed$body <- paste("{ int id = omp_get_thread_num(), team = omp_get_num_threads();",
                      "for (int s = s0 + id; s < s1; s += team) sweep(s); }")
  expect_identical(regions_dealing_by_asked_count(fixed), character())
  # thread_team() gives both; the stride must still be its team
  by_helper <- old
  by_helper$body <- paste("{ int id, team; thread_team(&id, &team);",
                          "for (int s = s0 + id; s < s1; s += team) sweep(s); }")
  expect_identical(regions_dealing_by_asked_count(by_helper), character())
  by_helper$body <- sub("s += team", "s += nt", by_helper$body, fixed = TRUE)
  expect_identical(regions_dealing_by_asked_count(by_helper), "old.c:1")
  # a region that only picks its scratch by thread number is fine
  scratch <- data.frame(file = "s.c", line = 1L, shared_loop = TRUE, asked = "threads",
                        body = "for (int i = 0; i < n; i++) { double *w = W + omp_get_thread_num() * threads; }")
  expect_identical(regions_dealing_by_asked_count(scratch), character())
  # the statement reader takes a for loop's body whole, past an #else branch
  code <- "#pragma omp parallel for num_threads(nt)\n#else\n(void) nt;\n#endif\nfor (i = 0; i < n; i++) { a(i); }\nb();"
  expect_identical(statement_after(code, regexpr("\n", code)[1]), "for (i = 0; i < n; i++) { a(i); }")
})

test_that("every region deals its work by the team OpenMP gave (rule 1)", {
  dir <- src_dir()
  skip_if(!nzchar(dir), "the C sources are not beside the tests")
  expect_identical(regions_dealing_by_asked_count(parallel_regions(dir)), character())
})

test_that("every wait between threads goes through threads.c (rule 2)", {
  dir <- src_dir()
  skip_if(!nzchar(dir), "the C sources are not beside the tests")
  expect_identical(files_waiting_by_hand(dir), character())
})
