# prcomp's `center` and `scale.` for the data, applied before the kernel:
# resolved and applied by kpca(), stored in the fit, applied again by
# predict() to new rows.

# Center and scale the data as prcomp() does (scale_columns(), R/rows.R:
# through base::scale() for a data matrix, so that TRUE, FALSE and numeric
# vectors mean exactly what they mean there). Returns the data as the
# kernel will see them, and the settings as prcomp stores them: the vectors
# used, or FALSE. A precomputed kernel matrix has no columns to scale: it
# is returned untouched (not copied), and setting either argument is an
# error.
scale_data <- function(x, center, scale., precomputed = FALSE) {
  if (precomputed) {
    for (arg in c("center", "scale.")) {
      if (!identical(get(arg), FALSE))
        stop_argument(sprintf(paste0("'%s' does not apply to kernel = \"precomputed\": ",
                                     "center or scale the data before computing the kernel matrix"),
                              arg))
    }
    return(list(x = x, center = FALSE, scale = FALSE))
  }
  center <- check_scaling_arg(center, "center", ncol(x))
  scale. <- check_scaling_arg(scale., "scale.", ncol(x))
  scale_columns(x, center, scale.)
}

# TRUE, FALSE, or a numeric vector with one finite entry per column (positive
# for 'scale.'), as prcomp() accepts.
check_scaling_arg <- function(value, arg, d) {
  if (is.logical(value) && length(value) == 1L && !is.na(value)) return(value)
  positive <- arg == "scale."
  if (!is.numeric(value) || is.object(value) || length(value) != d ||
      any(!is.finite(value)) || (positive && any(value <= 0)))
    stop_argument(sprintf("'%s' must be TRUE, FALSE or a vector of %d %snumbers, one per column of 'x'",
                          arg, d, if (positive) "positive " else "finite "))
  as.double(value)
}

# A fit's stored center and scale are applied to new rows by
# apply_scaling() (R/rows.R), in the training columns' order.

# The stored center and scale of a fit, checked for predict(): FALSE (or
# absent, for fits made before these settings existed) or one finite number
# per column (non-zero for scale).
check_fit_scaling <- function(object, d, bad) {
  for (nm in c("center", "scale")) {
    v <- object[[nm]]
    if (is.null(v) || isFALSE(v)) next
    if (!is.double(v) || length(v) != d || any(!is.finite(v)) ||
        (nm == "scale" && any(v == 0)))
      bad(sprintf("'%s' must be FALSE or a finite double vector of length %d", nm, d))
  }
}
