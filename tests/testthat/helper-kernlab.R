# kernlab's own help-page examples, run in child R processes with fastkpca
# attached in different orders (test-kernlab-examples.R).

# The examples of the installed kernlab, one string of code per help topic
# that has examples, as example() runs them (\dontrun and \donttest left
# out), so the test follows whatever version of kernlab is installed.
kernlab_example_code <- function() {
  db <- tools::Rd_db("kernlab")
  code <- lapply(db, function(rd) {
    file <- tempfile(fileext = ".R")
    on.exit(unlink(file))
    tools::Rd2ex(rd, file, commentDontrun = TRUE, commentDonttest = TRUE)
    if (file.exists(file)) paste(readLines(file), collapse = "\n")
  })
  code <- Filter(Negate(is.null), code)
  names(code) <- sub("\\.Rd$", "", names(code))
  code
}

# The child's work: `setup` attaches the packages; then each topic's
# examples run in a fresh environment, one top-level expression at a time,
# with the random seed set before each expression from the topic's and the
# expression's numbers, the same in every child, so that examples without
# set.seed() draw the same numbers in every configuration (and a function
# that draws a different count of random numbers cannot shift the draws of
# the next expressions). For each expression the child keeps its printed
# output (what it prints, and its value when visible, printed as the
# console would), the class of its visible value, a fingerprint of that
# value, and whether it failed; after each topic, the fingerprints of the
# variables the examples assigned. Fingerprints are plain lists of numbers
# and strings, so that the parent compares them without the child's
# packages. `progress` is a file the child writes each topic's name to
# before running it: if the child crashes, it names the topic.
kernlab_examples_session <- function(setup, examples, progress) {
  grDevices::pdf(NULL)  # the examples' plots go nowhere
  eval(parse(text = setup), envir = globalenv())
  has_kernlab_class <- function(v, cls) isS4(v) && methods::is(v, cls)
  # a kcca fit of kernlab's formulation up to what the problem leaves free:
  # within each pair (+rho, -rho) +rho first (kernlab's eigensolver orders
  # the two as its rounding falls; fastkpca puts +rho first), and each
  # column's sign, set by its largest x coefficient
  kcca_fingerprint <- function(kcor, xcoef, ycoef) {
    o <- seq_along(kcor)
    for (j in seq(1L, length(kcor) - 1L, by = 2L))
      if (kcor[j] < kcor[j + 1L]) o[c(j, j + 1L)] <- o[c(j + 1L, j)]
    xcoef <- xcoef[, o, drop = FALSE]
    s <- sign(xcoef[cbind(max.col(abs(t(xcoef)), ties.method = "first"), seq_along(o))])
    s[s == 0] <- 1
    list(kcor = kcor[o], xcoef = sweep(xcoef, 2L, s, "*"),
         ycoef = sweep(ycoef[, o, drop = FALSE], 2L, s, "*"))
  }
  # a value as numbers and strings: kernels by their class and parameters;
  # fits of kpca() and kcca() by what kernlab's accessors return, so that
  # kernlab's fits and fastkpca's (which kernlab's kpca() and kcca() give
  # with fastkpca attached after kernlab) compare; other S4 objects by their
  # slots; functions, environments and language left out
  fingerprint <- function(v, depth = 0L) {
    if (depth > 8L || is.null(v)) return(NULL)
    if (is.function(v) && inherits(v, "kernel")) {
      kpar <- tryCatch(kernlab::kpar(v), error = function(e) NULL)
      # the kernel's name: a fastkpca kernel's own, or from kernlab's class
      # ("rbfkernel" is rbfdot's)
      tree <- attr(v, "kernel", exact = TRUE)
      name <- if (is.list(tree) && identical(tree$op, "base")) tree$name
              else sub("kernel$", "dot", class(v)[1L])
      return(list(kernel_class = class(v)[1L], kernel = name, kpar = fingerprint(kpar, depth + 1L)))
    }
    if (is.function(v) || is.environment(v) || is.language(v)) return(NULL)
    if (inherits(v, "fastkpca")) {
      ns <- asNamespace("fastkpca")
      return(list(pcv = ns$pcv(v), eig = unname(ns$eig(v)),
                  rotated = tryCatch(ns$rotated(v), error = function(e) NULL)))
    }
    if (has_kernlab_class(v, "kpca"))
      return(list(pcv = v@pcv, eig = unname(v@eig), rotated = v@rotated))
    if (inherits(v, "fastkpca_kcca")) return(kcca_fingerprint(v$kcor, v$xcoef, v$ycoef))
    if (has_kernlab_class(v, "kcca")) return(kcca_fingerprint(v@kcor, v@xcoef, v@ycoef))
    if (isS4(v)) {
      slots <- methods::slotNames(v)
      if (!length(slots)) return(NULL)
      out <- lapply(slots, function(s) fingerprint(methods::slot(v, s), depth + 1L))
      names(out) <- slots
      return(out)
    }
    if (is.factor(v)) return(list(levels = levels(v), codes = as.integer(v)))
    if (is.list(v)) return(lapply(unclass(v), fingerprint, depth = depth + 1L))
    if (is.character(v)) return(as.vector(v))
    if (is.numeric(v) || is.logical(v) || is.complex(v)) {
      num <- if (is.complex(v)) c(Re(v), Im(v)) else as.double(v)
      if (length(dim(v)) == 2L && !is.complex(v)) return(matrix(num, nrow(v), ncol(v)))
      return(num)
    }
    NULL
  }
  results <- list()
  for (t in seq_along(examples)) {
    topic <- names(examples)[t]
    cat(topic, "\n", file = progress, append = TRUE)
    env <- new.env(parent = globalenv())
    exprs <- parse(text = examples[[t]], keep.source = FALSE)
    steps <- vector("list", length(exprs))
    for (i in seq_along(exprs)) {
      set.seed(1000L * t + i)
      res <- NULL
      printed <- utils::capture.output(res <- tryCatch(
        withCallingHandlers({
          r <- withVisible(eval(exprs[[i]], env))
          if (r$visible) {
            if (isS4(r$value)) methods::show(r$value) else print(r$value)
          }
          r
        }, warning = function(w) invokeRestart("muffleWarning"),
           message = function(m) invokeRestart("muffleMessage")),
        error = function(e) e))
      failed <- inherits(res, "error")
      visible <- !failed && isTRUE(res$visible)
      steps[[i]] <- list(
        printed = printed, failed = failed,
        kernelf = is.call(exprs[[i]]) && identical(exprs[[i]][[1L]], as.name("kernelf")),
        error = if (failed) conditionMessage(res),
        class = if (visible) class(res$value)[1L],
        value = if (visible) fingerprint(res$value))
    }
    assigned <- mget(ls(env, all.names = TRUE), envir = env)
    results[[topic]] <- list(steps = steps, assigned = lapply(assigned, fingerprint))
  }
  results
}

# Run the examples in one configuration in a child process. A crash of the
# child is a test failure that names the topic it was running.
run_kernlab_examples <- function(setup, examples) {
  progress <- tempfile()
  on.exit(unlink(progress))
  tryCatch(
    callr::r(kernlab_examples_session, args = list(setup, examples, progress),
             libpath = .libPaths(), env = c(callr::rcmd_safe_env(), R_TESTS = "")),
    error = function(e) {
      done <- if (file.exists(progress)) trimws(readLines(progress)) else character()
      stop(sprintf("the child R process (%s) failed in topic %s: %s", setup,
                   if (length(done)) done[length(done)] else "(none)", conditionMessage(e)),
           call. = FALSE)
    })
}

# The numbers in printed text.
printed_numbers <- function(lines) {
  text <- paste(lines, collapse = "\n")
  pattern <- "(?<![A-Za-z_.0-9])-?[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?"
  as.numeric(regmatches(text, gregexpr(pattern, text, perl = TRUE))[[1]])
}

# Whether two sets of numbers agree to `tol`, relative to the size of each
# number (absolute below 1), with NA where NA is.
numbers_agree <- function(a, b, tol) {
  if (length(a) != length(b)) return(FALSE)
  if (!identical(is.na(a), is.na(b))) return(FALSE)
  ok <- !is.na(a)
  all(abs(a[ok] - b[ok]) <= tol * pmax(1, abs(a[ok]), abs(b[ok])))
}

# The columns of m with the signs that bring them closest to those of ref
# (eigenvector columns are defined up to sign).
align_column_signs <- function(m, ref) {
  if (!identical(dim(m), dim(ref))) return(m)
  s <- sign(colSums(m * ref, na.rm = TRUE))
  s[s == 0] <- 1
  sweep(m, 2L, s, "*")
}

# The differences between two fingerprints, as descriptions (none: they are
# equal). sign_free: matrices are compared up to the sign of each column.
fingerprint_differences <- function(a, b, path, tol, sign_free) {
  if (is.null(a) && is.null(b)) return(character())
  if (is.list(a) || is.list(b)) {
    if (!is.list(a) || !is.list(b) || length(a) != length(b) ||
        !identical(names(a), names(b)))
      return(sprintf("%s: different structure", path))
    out <- character()
    for (j in seq_along(a)) {
      nm <- if (!is.null(names(a)) && nzchar(names(a)[j])) names(a)[j] else j
      out <- c(out, fingerprint_differences(a[[j]], b[[j]], paste0(path, "$", nm), tol, sign_free))
    }
    return(out)
  }
  if (is.character(a) || is.character(b)) {
    if (identical(a, b)) return(character())
    return(sprintf("%s: different strings", path))
  }
  if (!identical(dim(a), dim(b)) || length(a) != length(b))
    return(sprintf("%s: different shapes", path))
  if (sign_free && is.matrix(a)) a <- align_column_signs(a, b)
  if (numbers_agree(as.vector(a), as.vector(b), tol)) return(character())
  sprintf("%s: numbers differ (largest difference %.3g)", path,
          max(abs(as.vector(a) - as.vector(b)), na.rm = TRUE))
}

# Everything that differs between a configuration's results and kernlab's.
# Printed numbers are compared where both printed a value of one class (a
# kernlab fit and fastkpca's print differently: their values are compared
# through their fingerprints); the topics in sign_free_topics compare
# eigenvector columns and printed numbers up to sign.
kernlab_example_differences <- function(res, ref, tol, sign_free_topics) {
  out <- character()
  for (topic in names(ref)) {
    r <- ref[[topic]]
    x <- res[[topic]]
    if (is.null(x)) {
      out <- c(out, sprintf("%s: not run", topic))
      next
    }
    sign_free <- topic %in% sign_free_topics
    for (i in seq_along(r$steps)) {
      a <- x$steps[[i]]
      b <- r$steps[[i]]
      where <- sprintf("%s, expression %d", topic, i)
      if (!identical(a$failed, b$failed)) {
        out <- c(out, sprintf("%s: %s", where, if (a$failed) paste("fails:", a$error) else
          "runs where kernlab's fails"))
        next
      }
      if (identical(a$class, b$class)) {
        na <- printed_numbers(a$printed)
        nb <- printed_numbers(b$printed)
        if (sign_free) { na <- abs(na); nb <- abs(nb) }
        if (!numbers_agree(na, nb, tol))
          out <- c(out, sprintf("%s: printed numbers differ", where))
      }
      # kernelf() of a fastkpca fit (the kpca() that masks kernlab's) is
      # fastkpca's kernel function in every session, kernlab's own object
      # in kernlab's: the same kernel and parameters, another class
      if (isTRUE(b$kernelf) && is.list(a$value) && is.list(b$value)) {
        a$value$kernel_class <- NULL
        b$value$kernel_class <- NULL
      }
      out <- c(out, fingerprint_differences(a$value, b$value, paste(where, "value"), tol, sign_free))
    }
    if (!identical(sort(names(x$assigned)), sort(names(r$assigned)))) {
      out <- c(out, sprintf("%s: assigns different variables", topic))
      next
    }
    for (v in names(r$assigned))
      out <- c(out, fingerprint_differences(x$assigned[[v]], r$assigned[[v]],
                                            sprintf("%s, variable %s", topic, v), tol, sign_free))
  }
  out
}

# A kernel as fastkpca's generators (rbfdot() ... stringdot()) return it:
# kernlab's own object while kernlab is attached (not merely loaded),
# fastkpca's kernel function otherwise (R/kernel_function.R).
expect_kernel_object <- function(k, label = "kernel") {
  kernlab_object <- isS4(k) && methods::is(k, "kernel") && !inherits(k, "fastkpca_kernel")
  expected_kernlab <- "package:kernlab" %in% search() && identical(k$op, "base")
  expect_true(if (expected_kernlab) kernlab_object else !isS4(k) && inherits(k, "fastkpca_kernel"),
              label = label)
}

# A kernel as kern(), the algebra and kernelf() return it: fastkpca's kernel
# function, whatever is loaded or attached.
expect_fastkpca_kernel <- function(k, label = "kernel") {
  expect_false(isS4(k), label = paste(label, "is an S4 object"))
  expect_true(inherits(k, "fastkpca_kernel_function"), label = label)
}

# Whether two kernels are the same kernel: the same tree (kernlab's objects
# made by two calls hold different closures, so identical() cannot say).
expect_same_kernel <- function(a, b) {
  expect_identical(fastkpca:::kernel_tree(a), fastkpca:::kernel_tree(b))
}
