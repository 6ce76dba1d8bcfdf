# The engine's tuning (R/tuning.R: the internal option fastkpca.tuning)
# for the code that follows in the caller's frame (a test, a function):
# local_tuning(band_min_rows = 0) sets it, checked, and puts the option
# back as the frame exits; NULL puts a setting back to its default.
local_tuning <- function(..., .frame = parent.frame()) {
  old <- fastkpca:::set_tuning(...)
  do.call(on.exit, list(bquote(options(.(old))), add = TRUE, after = FALSE), envir = .frame)
  invisible(old)
}

# code run with the tuning settings given, then the option put back
with_tuning <- function(settings, code) {
  old <- do.call(fastkpca:::set_tuning, settings)
  on.exit(options(old))
  code
}
