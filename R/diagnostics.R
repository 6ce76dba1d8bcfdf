# Diagnostics of a fit's inputs and settings that would otherwise fail in
# silence: a kernel that makes the centered kernel matrix nearly diagonal or
# nearly constant (kernlab's default sigma = 0.1 on columns in the hundreds
# gives the identity to machine precision), and kernel parameters given as
# arguments of their own (kpca(x, sigma = 1)) instead of in kpar.

# Cut-offs of kernel_flatness(), with the reasons:
# - nearly diagonal: every non-zero eigenvalue of Kc/n alike. With K = I
#   (each row like itself only) the n - 1 non-zero eigenvalues of Kc/n all
#   equal trace(Kc/n) / (n - 1), so the largest is 1 times that average;
#   data with structure put many times the average on the first component
#   (iris: 100; Gaussian noise in 5 or 50 dimensions with the median
#   heuristic: 60 and 10). Below 2 the leading component is hardly more
#   than any other direction.
flat_diagonal_ratio <- 2
# With few rows the ratio cannot be large whatever the data (at most n - 1),
# so it is judged from this many rows on.
flat_diagonal_min_rows <- 20L
# - nearly constant: Kc within a thousand rounding units of zero. Kc's
#   trace, relative to K's mean diagonal, below 1000 eps means the centered
#   entries are differences of nearly equal numbers and the components are
#   rounding noise. (A small sigma alone is not that: rbfdot with sigma =
#   1e-12 on unit-scale data still gives linear PCA's components.)
flat_constant_share <- 1000 * .Machine$double.eps

# Which way, if any, the centered kernel matrix of an exact or precomputed
# fit is flat, from what the fit already holds: eig (the leading
# eigenvalues of Kc/n), variance_total (trace(Kc)/n, the sum of all of
# them), kernel_mean (mean(K)) and kernel_colmeans (n of them). Since
# trace(Kc)/n = mean(diag(K)) - mean(K), K's mean diagonal is
# variance_total + kernel_mean. Returns list(kind = "diagonal", "constant"
# or NA, ratio, share); fits without these fields (Nystrom) give NA.
kernel_flatness <- function(fit) {
  none <- list(kind = NA_character_, ratio = NA_real_, share = NA_real_)
  n <- length(fit$kernel_colmeans)
  total <- fit$variance_total
  if (n < 3L || is.null(total) || is.null(fit$kernel_mean) || length(fit$eig) == 0L)
    return(none)
  diag_mean <- total + fit$kernel_mean
  share <- if (diag_mean > 0) total / diag_mean else NA_real_
  if (!is.na(share) && share < flat_constant_share)
    return(list(kind = "constant", ratio = NA_real_, share = share))
  ratio <- if (total > 0) fit$eig[[1L]] / (total / (n - 1L)) else NA_real_
  if (!is.na(ratio) && ratio < flat_diagonal_ratio && n >= flat_diagonal_min_rows)
    return(list(kind = "diagonal", ratio = ratio, share = share))
  list(kind = NA_character_, ratio = ratio, share = share)
}

# One warning when the fit's centered kernel matrix is flat (see
# kernel_flatness()), naming what to try. Returns the fit, invisibly, so
# that a constructor can end with warn_if_flat_kernel(fit).
warn_if_flat_kernel <- function(fit) {
  flat <- kernel_flatness(fit)
  if (is.na(flat$kind)) return(invisible(fit))
  has_sigma <- "sigma" %in% names(fit$kpar)
  try <- if (has_sigma) "scale. = TRUE or kpar = list(sigma = median_sigma(x))"
         else if (uses_strings(fit$kernel)) "other kernel parameters (a shorter 'length')"
         else "scale. = TRUE or other kernel parameters"
  what <- switch(flat$kind,
    diagonal = sprintf(paste(
      "the centered kernel matrix is nearly diagonal (its largest eigenvalue is",
      "%.3g times the average of all): the kernel sees every row as unlike all",
      "the others, and the components mean little; try %s"), flat$ratio, try),
    constant = sprintf(paste(
      "the centered kernel matrix is nearly constant (its trace is %.2g of the",
      "kernel's diagonal): the kernel sees all rows as alike, and the components",
      "are rounding noise; try %s"), flat$share, try))
  # classed, so that kpca_cv() can quiet it in its fold fits, where some
  # settings of a grid are flat by design
  warning(warningCondition(what, class = c("fastkpca_flat_kernel", "fastkpca_warning_data",
                                          "fastkpca_warning")))
  invisible(fit)
}

# kernlab's kernel parameter names: given to kpca() as arguments of their
# own they are unused; the hint says where they belong.
kpar_names <- c("sigma", "degree", "scale", "offset", "order")

# The error for arguments a function does not take, given as list(...):
# "unused argument: sigma; did you mean kpar = list(sigma = 1)?" when they
# are kernel parameters.
stop_unused_arguments <- function(...) {
  n <- ...length()
  nms <- names(list(...))
  nms <- if (is.null(nms)) rep("", n) else nms
  shown <- ifelse(nms == "", "(unnamed)", nms)
  stop_argument("unused argument", if (n > 1L) "s" else "", ": ", paste(shown, collapse = ", "),
                kpar_hint(list(...)))
}

# "; did you mean kpar = list(sigma = 1)?" for the kernel parameters among
# the named arguments in args, or "" if there are none.
kpar_hint <- function(args) {
  nms <- names(args)
  if (is.null(nms)) return("")
  hit <- nms %in% kpar_names
  if (!any(hit)) return("")
  shown <- vapply(args[hit], function(v)
    paste(deparse(v, width.cutoff = 60L, control = NULL), collapse = " "), "")
  sprintf("; did you mean kpar = list(%s)?",
          paste(nms[hit], "=", shown, collapse = ", "))
}
