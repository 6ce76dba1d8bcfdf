# Classed conditions (?fastkpca_conditions): the bad-input and argument tests
# record every error they catch here, and a test at the end of each file
# lists them with their classes and checks each one.

# The kinds of error fastkpca raises, as documented in ?fastkpca_conditions.
fastkpca_error_kinds <- c("argument", "data", "memory", "chunk", "numerical",
                          "object", "dependency", "worker")

caught_errors <- new.env()

# Keep the error a case produced, under the case's label and the file's
# group; returns the error.
record_error <- function(group, label, err) {
  if (inherits(err, "error")) {
    seen <- get0(group, envir = caught_errors, inherits = FALSE)
    seen[[length(seen) + 1L]] <- list(label = label, class = class(err),
                                      message = conditionMessage(err))
    assign(group, seen, envir = caught_errors)
  }
  err
}

# The class an error of fastkpca must have: one specific kind, then
# fastkpca_error, error, condition. NA when it is right, else what is wrong.
condition_class_problem <- function(class) {
  kinds <- paste0("fastkpca_error_", fastkpca_error_kinds)
  if (!identical(class[-1L], c("fastkpca_error", "error", "condition")))
    return(paste("class is", paste(class, collapse = ", ")))
  if (!class[1L] %in% kinds) return(paste("unknown kind", class[1L]))
  NA_character_
}

# Check the errors one group recorded: each is classed; the listing (label,
# kind, message) is shown as a message so that a run shows what was checked.
expect_recorded_errors_classed <- function(group, at_least) {
  seen <- get0(group, envir = caught_errors, inherits = FALSE)
  expect_gte(length(seen), at_least)
  for (s in seen)
    expect_identical(condition_class_problem(s$class), NA_character_,
                     info = paste(s$label, "->", s$message))
  kinds <- vapply(seen, function(s) sub("^fastkpca_error_", "", s$class[1L]), "")
  message(sprintf("%s: %d errors, by class: %s", group, length(seen),
                  paste(names(table(kinds)), table(kinds), sep = " ", collapse = ", ")))
  invisible(seen)
}
