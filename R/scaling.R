# prcomp's `center` and `scale.` for the data, applied before the kernel:
# resolved and applied by kpca(), stored in the fit, applied again by
# predict() to new rows.

# Center and scale the data as prcomp() does, through base::scale(), so that
# TRUE, FALSE and numeric vectors mean exactly what they mean there. Returns
# the data as the kernel will see them, and the settings as prcomp stores
# them: the vectors used, or FALSE. A precomputed kernel matrix has no
# columns to scale: it is returned untouched (not copied), and setting
# either argument is an error.
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
  if (inherits(x, "fastkpca_sparse_rows")) return(scale_sparse_rows(x, center, scale.))
  if (isFALSE(center) && isFALSE(scale.))
    return(list(x = x, center = FALSE, scale = FALSE))
  x <- scale(x, center = center, scale = scale.)
  cen <- attr(x, "scaled:center")
  sc <- attr(x, "scaled:scale")
  attr(x, "scaled:center") <- NULL
  attr(x, "scaled:scale") <- NULL
  if (isTRUE(scale.) && any(!(sc > 0))) {
    # prcomp refuses these too ("cannot rescale a constant/zero column")
    which_cols <- if (is.null(colnames(x))) which(!(sc > 0)) else colnames(x)[!(sc > 0)]
    stop_data(sprintf("'scale.' = TRUE cannot rescale a constant column to unit variance: %s",
                      paste(which_cols, collapse = ", ")))
  }
  if (any(!is.finite(x)))
    stop_data("'x' is not finite after centering and scaling: check 'center' and 'scale.'")
  list(x = x, center = if (is.null(cen)) FALSE else cen,
       scale = if (is.null(sc)) FALSE else sc)
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

# Apply a fit's stored center and scale to new rows, in the training
# columns' order. The same sweep() steps as base::scale(), so the training
# rows come out exactly as the fit saw them.
apply_scaling <- function(z, center, scale) {
  if (inherits(z, "fastkpca_sparse_rows")) {
    # a sparse fit has no center (scale_sparse_rows())
    return(if (is.numeric(scale)) scale_sparse_columns(z, scale) else z)
  }
  if (is.numeric(center)) z <- sweep(z, 2L, center, check.margin = FALSE)
  if (is.numeric(scale)) z <- sweep(z, 2L, scale, "/", check.margin = FALSE)
  z
}

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
