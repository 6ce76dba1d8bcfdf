# The layout of src/ kept by tests (issues 46 and 51): the calls between
# the C files form no circle (each file calls only files below it, so the
# map in ARCHITECTURE.md has an order), and no chain of calls passes
# through more than 10 files (the floors: a reader follows a call down at
# most 10 files, from init.c's table to the bottom); no C function is
# longer than 60 lines, and no file longer than 1000 (one job per file).
# Read from a source checkout, or under R CMD check from the sources it
# unpacks beside the tests (00_pkg_src).
# The calls between the files of src/: one row per (from, to) pair, from
# calling or naming (a function pointer, init.c's table of entry points) a
# function that to defines. A name after "." or "->" is a member, not a
# function.
c_file_calls <- function(dir) {
  files <- list.files(dir, pattern = "[.]c$", full.names = TRUE)
  code <- setNames(vapply(files, c_code, ""), basename(files))
  defs <- lapply(code, c_definitions)
  owner <- setNames(rep(names(defs), lengths(defs)), unlist(defs, use.names = FALSE))
  rows <- lapply(names(code), function(f) {
    called <- regmatches(code[[f]], gregexpr("(?<![.>])\\b[A-Za-z_][A-Za-z0-9_]*\\b",
                                             code[[f]], perl = TRUE))[[1]]
    to <- setdiff(unique(owner[intersect(called, names(owner))]), f)
    if (length(to)) data.frame(from = f, to = unname(to)) else NULL
  })
  list(edges = do.call(rbind, rows), owner = owner)
}

# The files on a circle of calls: what is left once files that call no
# remaining file are taken away, again and again.
files_on_circles <- function(edges) {
  nodes <- unique(c(edges$from, edges$to))
  repeat {
    sinks <- setdiff(nodes, edges$from)
    if (!length(sinks)) break
    nodes <- setdiff(nodes, sinks)
    edges <- edges[!edges$to %in% sinks, , drop = FALSE]
  }
  sort(unique(edges$from))
}

# The longest chain of calls (the files on it, from the top down) in a
# graph without a circle: a file's longest chain is itself followed by the
# longest of the files it calls.
longest_chain <- function(edges) {
  memo <- list()
  chain_from <- function(f) {
    if (!is.null(memo[[f]])) return(memo[[f]])
    best <- character(0)
    for (to in edges$to[edges$from == f]) {
      below <- chain_from(to)
      if (length(below) > length(best)) best <- below
    }
    memo[[f]] <<- c(f, best)
  }
  chains <- lapply(sort(unique(c(edges$from, edges$to))), chain_from)
  chains[[which.max(lengths(chains))]]
}

# The length in lines of every function of a file, from its first line to
# its closing brace at the start of a line.
c_function_lengths <- function(path) {
  lines <- readLines(path, warn = FALSE)
  out <- integer(0)
  i <- 1L
  while (i <= length(lines)) {
    if (grepl("^[A-Za-z_].*\\(", lines[i]) && !grepl(";\\s*$", lines[i]) &&
        !grepl("^(typedef|struct|enum|union)\\b", lines[i])) {
      j <- i
      while (j <= length(lines) && !startsWith(lines[j], "{") && !grepl(";\\s*$", lines[j]))
        j <- j + 1L
      if (j <= length(lines) && startsWith(lines[j], "{")) {
        k <- j
        while (k <= length(lines) && !startsWith(lines[k], "}")) k <- k + 1L
        name <- regmatches(lines[i], regexpr("[A-Za-z_][A-Za-z0-9_]*(?=\\s*\\()", lines[i],
                                             perl = TRUE))
        out[paste0(basename(path), ":", i, " ", name)] <- k - i + 1L
        i <- k + 1L
        next
      }
    }
    i <- i + 1L
  }
  out
}

test_that("the C files call each other without a circle", {
  dir <- src_dir()
  skip_if(!nzchar(dir), "no src/ (not a source checkout)")
  calls <- c_file_calls(dir)
  # the reader finds the definitions and the calls it must
  expect_identical(unname(calls$owner["kernel_block"]), "kernel_plan.c")
  expect_identical(unname(calls$owner["kernel_of_product"]), "kernel_values.c")
  expect_true(any(calls$edges$from == "kernel.c" & calls$edges$to == "kernel_plan.c"))
  expect_true(any(calls$edges$from == "init.c" & calls$edges$to == "fit.c"))  # the table
  expect_false(any(calls$edges$to == "init.c"))
  expect_identical(files_on_circles(calls$edges), character(0))
  # the check finds a circle where there is one
  circle <- rbind(calls$edges, data.frame(from = "kernel_values.c", to = "kernel.c"))
  expect_true("kernel.c" %in% files_on_circles(circle))
})

test_that("the C files stand on 10 floors at most", {
  dir <- src_dir()
  skip_if(!nzchar(dir), "no src/ (not a source checkout)")
  edges <- c_file_calls(dir)$edges
  skip_if(length(files_on_circles(edges)) > 0L, "a circle of calls (the test above fails)")
  chain <- longest_chain(edges)
  expect(length(chain) <= 10L,
         sprintf("src/ stands on %d floors (at most 10): %s", length(chain),
                 paste(chain, collapse = " -> ")))
  expect_identical(chain[1], "init.c")
  # the reader counts what it must
  toy <- data.frame(from = c("a.c", "a.c", "b.c", "c.c", "d.c"),
                    to = c("b.c", "d.c", "c.c", "d.c", "e.c"))
  expect_identical(longest_chain(toy), c("a.c", "b.c", "c.c", "d.c", "e.c"))
})

test_that("no C function is over 60 lines, and no file over 1000", {
  dir <- src_dir()
  skip_if(!nzchar(dir), "no src/ (not a source checkout)")
  files <- list.files(dir, pattern = "[.](c|h)$", full.names = TRUE)
  lengths <- unlist(lapply(files, c_function_lengths))
  expect_gt(length(lengths), 300L)  # the reader sees the package's functions
  expect_identical(names(lengths)[lengths > 60L], character(0))
  file_lines <- setNames(vapply(files, function(f) length(readLines(f, warn = FALSE)), 0L),
                         basename(files))
  expect_identical(names(file_lines)[file_lines > 1000L], character(0))
})
