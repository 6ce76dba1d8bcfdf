# The engine's tuning: the crossovers, block sizes and overrides that the
# tests and benchmarks move and users never need, as one internal option,
# fastkpca.tuning, a named list (NULL: every setting at its default). Not
# documented for users: it may change with any release. Set through
# set_tuning() (tests: local_tuning() in helper-tuning.R), read through
# tuning(); either checks it against the one table, tuning_table(), whose
# rows are C's (ENGINE_TUNING in src/fastkpca.h, read through
# engine_defaults(): engine_settings() passes them to C before every call
# into the engine, R/simd.R) and R's own (r_tuning_rows()). The option
# travels to future's workers with the vector path (engine_options(),
# R/simd.R).

# The settings R reads itself: the exact solver's tridiagonal method
# (exact_method(), R/eigen.R; NA: its rule), the memory readers tried
# (available_bytes(), R/memory.R; the tests leave the system's out to reach
# the unknown case), the rows of a block (block_size(), R/predict.R; NA:
# its rule). A row: the kind of check (check_tuning_value()), the default,
# and the bounds or the values allowed.
r_tuning_rows <- function() list(
  exact_method = list(kind = "choice", default = NA_character_,
                      values = names(exact_method_codes)),
  memory_readers = list(kind = "subset", default = names(memory_readers),
                        values = names(memory_readers)),
  block_rows = list(kind = "whole", default = NA_integer_, lower = 1,
                    upper = .Machine$integer.max))

# The table: a row per setting, by name, C's first (kind "whole" or
# "number", its default the one in force on this system), asked once per
# session.
tuning_table <- local({
  known <- NULL
  function() {
    if (is.null(known)) {
      d <- engine_defaults()
      c_rows <- lapply(seq_along(d$name), function(i)
        list(kind = if (d$whole[i]) "whole" else "number",
             default = if (d$whole[i]) as.integer(d$default[i]) else d$default[i],
             lower = d$lower[i], upper = d$upper[i], engine = TRUE))
      known <<- c(stats::setNames(c_rows, d$name), r_tuning_rows())
    }
    known
  }
})

# One setting's value checked against its row; the message names the
# setting as fastkpca.tuning$<name>.
check_tuning_value <- function(value, row, name) {
  arg <- paste0("fastkpca.tuning$", name)
  switch(row$kind,
    number = check_number(value, arg, row$lower, row$upper),
    whole = check_whole(value, arg, row$lower, row$upper),
    choice = check_choice(if (length(value) == 1L) value else NA_character_,
                          row$values, arg),
    subset = {
      if (!is.character(value) || anyNA(value) || !all(value %in% row$values))
        stop_argument(sprintf("'%s' must be a character vector of %s", arg,
                              paste0("\"", row$values, "\"", collapse = ", ")))
      value
    })
}

# The option's value checked: a named list of known settings, each within
# its row's bounds. Returns the list, each value as its row's kind.
check_tuning <- function(value) {
  table <- tuning_table()
  if (!is.list(value) || length(value) && (is.null(names(value)) ||
      anyNA(names(value)) || any(!nzchar(names(value))) || anyDuplicated(names(value))))
    stop_argument("'getOption(\"fastkpca.tuning\")' must be NULL or a named list")
  unknown <- setdiff(names(value), names(table))
  if (length(unknown))
    stop_argument(sprintf("'fastkpca.tuning' has no setting %s (its settings: %s)",
                          paste0("'", unknown, "'", collapse = ", "),
                          paste(names(table), collapse = ", ")))
  for (name in names(value))
    value[[name]] <- check_tuning_value(value[[name]], table[[name]], name)
  value
}

# The settings in force: those the option sets, checked, and the defaults
# of the others; one by name, or all as a named list.
tuning <- function(name = NULL) {
  table <- tuning_table()
  if (!is.null(name) && !name %in% names(table))
    stop_argument(sprintf("'fastkpca.tuning' has no setting '%s'", name))
  values <- lapply(table, `[[`, "default")
  set <- getOption("fastkpca.tuning")
  if (length(set)) values[names(set)] <- check_tuning(set)
  if (is.null(name)) values else values[[name]]
}

# The settings C takes, as engine_settings() passes them (NULL where the
# option sets none of them): a named double vector.
tuning_for_engine <- function() {
  set <- getOption("fastkpca.tuning")
  if (!length(set)) return(NULL)
  set <- check_tuning(set)
  engine <- names(set)[vapply(tuning_table()[names(set)], function(r) isTRUE(r$engine), TRUE)]
  if (length(engine)) vapply(set[engine], as.double, 0) else NULL
}

# Settings changed by name (NULL puts one back to its default), checked;
# returns the option's old value as options() does, for options(old).
set_tuning <- function(...) {
  new <- list(...)
  if (length(new) && (is.null(names(new)) || any(!nzchar(names(new)))))
    stop_argument("the settings of 'set_tuning()' must be named")
  value <- as.list(getOption("fastkpca.tuning"))
  for (name in names(new)) value[name] <- list(new[[name]])
  value <- value[!vapply(value, is.null, TRUE)]
  options(fastkpca.tuning = if (length(value)) check_tuning(value))
}
