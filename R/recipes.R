# recipes steps that extract kernel principal components with kpca(): the
# counterparts of recipes' step_kpca(), step_kpca_rbf() and step_kpca_poly().
# recipes is only suggested: its generics prep() and bake() get their methods
# through delayed registration (NAMESPACE entries S3method(recipes::prep, ...)),
# which R performs when recipes is loaded; tidy(), tunable() and
# required_pkgs() are generics of the generics package, which recipes uses too.

#' Kernel PCA feature extraction in a recipe
#'
#' Recipe steps that replace numeric columns by their kernel principal
#' components, computed by [kpca()]. They take the arguments of recipes'
#' `step_kpca()`, `step_kpca_rbf()` and `step_kpca_poly()`, and their
#' output equals those steps' output up to the sign of each component (see
#' the Scale and signs section of [kpca()]). `step_fastkpca()` takes any
#' kernel of [kpca()]; `step_fastkpca_rbf()` and `step_fastkpca_poly()` fix
#' the Gaussian and the polynomial kernel and expose their parameters as
#' arguments that can be tuned.
#'
#' [recipes::prep()] fits [kpca()] to the selected columns of the training
#' data with `features = num_comp`; [recipes::bake()] projects the rows of
#' `new_data` with [predict.fastkpca()], which reuses the centering terms of
#' the fit instead of rebuilding the training kernel matrix. The new
#' columns are named `prefix` followed by the component number (`kPC1`,
#' `kPC2`, ...). With `num_comp = 0`, or no column selected, the step leaves
#' the data as they are. If some of the `num_comp` leading eigenvalues are
#' not positive, [kpca()] drops those components with a warning and the
#' step makes fewer columns.
#'
#' The data are not scaled by the step: as for recipes' kernel PCA steps,
#' put `recipes::step_normalize()` before it when the columns have different
#' units.
#'
#' @section Tuning:
#' `num_comp` can be tuned in all three steps, `sigma` in
#' `step_fastkpca_rbf()`, and `degree`, `scale_factor` and `offset` in
#' `step_fastkpca_poly()`, with the dials parameters recipes uses for its
#' own steps: `dials::num_comp()` (range 1 to 4), `dials::rbf_sigma()`,
#' `dials::degree()`, `dials::scale_factor()` and `dials::kernel_offset()`
#' (`dials::offset()` in versions of dials before its renaming). Mark them
#' with `tune::tune()`.
#'
#' @section Tidying:
#' `tidy()` of the step returns a tibble with the columns `terms` (the
#' selectors, or after `prep()` the selected columns) and `id`.
#'
#' @param recipe A recipe object; the step is added to its sequence.
#' @param ... Selector functions choosing the numeric columns to use, such
#'   as `recipes::all_numeric_predictors()`; see `recipes::selections`.
#' @param role The role of the new columns (default `"predictor"`).
#' @param trained A logical saying whether the step has been prepped (set by
#'   recipes).
#' @param num_comp The number of components to keep, a whole number of at
#'   least 0 and at most the number of training rows; 0 makes the step do
#'   nothing.
#' @param res The [kpca()] fit, set by `prep()`.
#' @param columns The names of the selected columns, set by `prep()`.
#' @param kernel,kpar The kernel name and its parameters, as in [kpca()];
#'   parameters left out take the kernel's defaults. `kernel` may also be a
#'   kernel object from [kern()], such as a sum of kernels; `kpar` is then
#'   not used.
#' @param landmarks Landmarks for kpca()'s Nyström approximation, passed to
#'   [kpca()] as its `landmarks` argument when not `NULL` (kpca() of this
#'   version has no such argument yet, so any other value is an error at
#'   `prep()`).
#' @param options recipes' `step_kpca()` form of `kernel` and `kpar`: a list
#'   with entries `kernel` and (or) `kpar`, which then replace the arguments
#'   of those names. `NULL` (the default) uses `kernel` and `kpar`.
#' @param sigma The inverse width of the Gaussian kernel
#'   \eqn{\exp(-sigma \|x - y\|^2)}{exp(-sigma ||x - y||^2)}, a positive
#'   number.
#' @param degree,scale_factor,offset The polynomial kernel
#'   \eqn{(scale\_factor\, x'y + offset)^{degree}}{(scale_factor x'y + offset)^degree}:
#'   `degree` a whole number of at least 1, `scale_factor` and `offset`
#'   numbers (kernlab's `degree`, `scale` and `offset`).
#' @param prefix The prefix of the names of the new columns.
#' @param keep_original_cols Whether to keep the selected columns in the
#'   output beside the components (default `FALSE`: they are removed).
#' @param skip Whether `bake()` should skip the step (as recipes' `skip`).
#' @param id A character string identifying the step.
#' @return The recipe with the step added to its sequence.
#' @seealso [kpca()], [predict.fastkpca()]; [tidy.fastkpca()] for the fit
#'   itself, which `tidy(prepped_recipe, number = i)` does not return (use
#'   `prepped_recipe$steps[[i]]$res`).
#' @examplesIf requireNamespace("recipes", quietly = TRUE)
#' library(recipes)
#' rec <- recipe(Species ~ ., data = iris) |>
#'   step_normalize(all_numeric_predictors()) |>
#'   step_fastkpca_rbf(all_numeric_predictors(), num_comp = 2, sigma = 0.2)
#' prepped <- prep(rec)
#' head(bake(prepped, new_data = NULL))
#' tidy(prepped, number = 2)
#'
#' # any kernel of kpca()
#' rec2 <- recipe(~ ., data = USArrests) |>
#'   step_fastkpca(all_numeric(), num_comp = 3, kernel = "laplacedot",
#'                 kpar = list(sigma = 0.1))
#' rec2
#' @export
step_fastkpca <- function(recipe, ..., role = "predictor", trained = FALSE,
                          num_comp = 5, res = NULL, columns = NULL,
                          kernel = "rbfdot", kpar = list(sigma = 0.2),
                          landmarks = NULL, options = NULL, prefix = "kPC",
                          keep_original_cols = FALSE, skip = FALSE,
                          id = recipes::rand_id("fastkpca")) {
  check_recipes_installed("step_fastkpca")
  if (!is.null(options)) {
    # recipes' check_options() messages for the first two
    if (!is.list(options)) stop_step_arg("options", "a list", options)
    if (length(options) > 0L && is.null(names(options)))
      stop_argument("The list passed to `options` must be named.")
    if (!all(names(options) %in% c("kernel", "kpar")))
      stop_argument("'options' must be a list with entries named kernel and kpar only")
    if (!is.null(options$kernel)) kernel <- options$kernel
    if (!is.null(options$kpar)) kpar <- options$kpar
  }
  recipes::add_step(recipe, step_fastkpca_new(
    terms = rlang::enquos(...), role = role, trained = trained,
    num_comp = num_comp, res = res, columns = columns, kernel = kernel,
    kpar = kpar, landmarks = landmarks, prefix = prefix,
    keep_original_cols = keep_original_cols, skip = skip, id = id))
}

#' @rdname step_fastkpca
#' @export
step_fastkpca_rbf <- function(recipe, ..., role = "predictor", trained = FALSE,
                              num_comp = 5, res = NULL, columns = NULL,
                              sigma = 0.2, prefix = "kPC",
                              keep_original_cols = FALSE, skip = FALSE,
                              id = recipes::rand_id("fastkpca_rbf")) {
  check_recipes_installed("step_fastkpca_rbf")
  recipes::add_step(recipe, step_fastkpca_rbf_new(
    terms = rlang::enquos(...), role = role, trained = trained,
    num_comp = num_comp, res = res, columns = columns, sigma = sigma,
    prefix = prefix, keep_original_cols = keep_original_cols, skip = skip,
    id = id))
}

#' @rdname step_fastkpca
#' @export
step_fastkpca_poly <- function(recipe, ..., role = "predictor", trained = FALSE,
                               num_comp = 5, res = NULL, columns = NULL,
                               degree = 2, scale_factor = 1, offset = 1,
                               prefix = "kPC", keep_original_cols = FALSE,
                               skip = FALSE, id = recipes::rand_id("fastkpca_poly")) {
  check_recipes_installed("step_fastkpca_poly")
  recipes::add_step(recipe, step_fastkpca_poly_new(
    terms = rlang::enquos(...), role = role, trained = trained,
    num_comp = num_comp, res = res, columns = columns, degree = degree,
    scale_factor = scale_factor, offset = offset, prefix = prefix,
    keep_original_cols = keep_original_cols, skip = skip, id = id))
}

# The constructors: recipes::step() makes the object of class
# c("step_<subclass>", "step"); recipes' update() and tune rebuild steps
# from these fields.
step_fastkpca_new <- function(terms, role, trained, num_comp, res, columns,
                              kernel, kpar, landmarks, prefix,
                              keep_original_cols, skip, id) {
  recipes::step(subclass = "fastkpca", terms = terms, role = role,
                trained = trained, num_comp = num_comp, res = res,
                columns = columns, kernel = kernel, kpar = kpar,
                landmarks = landmarks, prefix = prefix,
                keep_original_cols = keep_original_cols, skip = skip, id = id)
}

step_fastkpca_rbf_new <- function(terms, role, trained, num_comp, res, columns,
                                  sigma, prefix, keep_original_cols, skip, id) {
  recipes::step(subclass = "fastkpca_rbf", terms = terms, role = role,
                trained = trained, num_comp = num_comp, res = res,
                columns = columns, sigma = sigma, prefix = prefix,
                keep_original_cols = keep_original_cols, skip = skip, id = id)
}

step_fastkpca_poly_new <- function(terms, role, trained, num_comp, res, columns,
                                   degree, scale_factor, offset, prefix,
                                   keep_original_cols, skip, id) {
  recipes::step(subclass = "fastkpca_poly", terms = terms, role = role,
                trained = trained, num_comp = num_comp, res = res,
                columns = columns, degree = degree, scale_factor = scale_factor,
                offset = offset, prefix = prefix,
                keep_original_cols = keep_original_cols, skip = skip, id = id)
}

check_recipes_installed <- function(step) {
  if (!requireNamespace("recipes", quietly = TRUE))
    stop_dependency(step, "() needs the recipes package: install.packages(\"recipes\")")
}

# ---- prep -----------------------------------------------------------------

#' @exportS3Method recipes::prep
prep.step_fastkpca <- function(x, training, info = NULL, ...) {
  fit_step <- prep_kpca_step(x, training, info, x$kernel, x$kpar, x$landmarks)
  step_fastkpca_new(terms = x$terms, role = x$role, trained = TRUE,
                    num_comp = x$num_comp, res = fit_step$res,
                    columns = fit_step$columns, kernel = x$kernel, kpar = x$kpar,
                    landmarks = x$landmarks, prefix = x$prefix,
                    keep_original_cols = recipes::get_keep_original_cols(x),
                    skip = x$skip, id = x$id)
}

#' @exportS3Method recipes::prep
prep.step_fastkpca_rbf <- function(x, training, info = NULL, ...) {
  check_step_decimal(x$sigma, "sigma", min = .Machine$double.eps)
  fit_step <- prep_kpca_step(x, training, info, "rbfdot",
                             list(sigma = x$sigma), NULL)
  step_fastkpca_rbf_new(terms = x$terms, role = x$role, trained = TRUE,
                        num_comp = x$num_comp, res = fit_step$res,
                        columns = fit_step$columns, sigma = x$sigma,
                        prefix = x$prefix,
                        keep_original_cols = recipes::get_keep_original_cols(x),
                        skip = x$skip, id = x$id)
}

#' @exportS3Method recipes::prep
prep.step_fastkpca_poly <- function(x, training, info = NULL, ...) {
  check_step_whole(x$degree, "degree", min = 1)
  check_step_decimal(x$scale_factor, "scale_factor", min = 0)
  check_step_decimal(x$offset, "offset")
  fit_step <- prep_kpca_step(x, training, info, "polydot",
                             list(degree = x$degree, scale = x$scale_factor,
                                  offset = x$offset), NULL)
  step_fastkpca_poly_new(terms = x$terms, role = x$role, trained = TRUE,
                         num_comp = x$num_comp, res = fit_step$res,
                         columns = fit_step$columns, degree = x$degree,
                         scale_factor = x$scale_factor, offset = x$offset,
                         prefix = x$prefix,
                         keep_original_cols = recipes::get_keep_original_cols(x),
                         skip = x$skip, id = x$id)
}

# The work shared by the three prep() methods: select the columns, check
# them, and fit kpca() to them. Returns list(res, columns); res is NULL when
# the step has nothing to do.
prep_kpca_step <- function(x, training, info, kernel, kpar, landmarks) {
  step <- class(x)[1L]
  columns <- recipes::recipes_eval_select(x$terms, training, info)
  recipes::check_type(training[columns], quant = TRUE)
  check_step_string(x$prefix, "prefix")
  check_step_whole(x$num_comp, "num_comp", min = 0)
  res <- NULL
  if (x$num_comp > 0 && length(columns) > 0L) {
    args <- kpca_step_args(kernel, kpar, x$num_comp, landmarks)
    res <- tryCatch(
      do.call(kpca_on_columns, c(list(training[columns]), args)),
      error = function(e)
        stop_from(e, sprintf("%s() could not fit kpca(): %s", step, conditionMessage(e))))
  }
  list(res = res, columns = columns)
}

# The arguments given to kpca() by a step: landmarks only when set, since
# kpca() takes it only once the Nyström method is there.
kpca_step_args <- function(kernel, kpar, num_comp, landmarks) {
  # a kernel object carries its parameters: kpca() refuses kpar beside it
  object <- is_kernel(kernel) || inherits(kernel, "kernel")
  args <- c(list(kernel = kernel), if (!object) list(kpar = kpar), list(features = num_comp))
  if (!is.null(landmarks)) args$landmarks <- landmarks
  args
}

# kpca() of the selected columns. A named function, so that the fit's call
# reads kpca(x = x, ...) instead of holding the data.
kpca_on_columns <- function(data, ...) {
  x <- as.matrix(data)
  kpca(x = x, ...)
}

# The argument checks of recipes' own kernel PCA steps, at prep() (after
# tune has filled in its values), with their messages: recipes makes them
# with rlang's type checkers, which it does not export.
check_step_whole <- function(value, arg, min = NULL) {
  whole <- is.numeric(value) && length(value) == 1L && !is.na(value) &&
    is.finite(value) && value == round(value)
  if (!whole)
    stop_step_arg(arg, "a whole number", value)
  if (!is.null(min) && value < min)
    stop_step_arg(arg, paste("a whole number larger than or equal to", format(min)), value)
  invisible(value)
}

check_step_decimal <- function(value, arg, min = NULL) {
  if (!(is.numeric(value) && length(value) == 1L && !is.na(value)))
    stop_step_arg(arg, "a number", value)
  if (!is.null(min) && value < min)
    stop_step_arg(arg, paste("a number larger than or equal to", format(min)), value)
  invisible(value)
}

check_step_string <- function(value, arg) {
  if (!(is.character(value) && length(value) == 1L && !is.na(value)))
    stop_step_arg(arg, "a single string", value)
  invisible(value)
}

stop_step_arg <- function(arg, what, value) {
  stop_argument(sprintf("`%s` must be %s, not %s.", arg, what, describe_value(value)))
}

# What a wrong value is, in the words of rlang's messages ("the number -1",
# "the string \"a\"", "a character vector").
describe_value <- function(x) {
  if (is.null(x)) return("NULL")
  if (!is.object(x) && is.atomic(x) && length(x) == 1L) {
    if (is.na(x))
      return(if (is.logical(x)) "`NA`" else sprintf("a %s `NA`", switch(
        typeof(x), integer = "integer", double = "numeric", character = "character",
        typeof(x))))
    if (is.logical(x)) return(sprintf("`%s`", x))
    if (is.numeric(x)) return(paste("the number", format(x)))
    if (is.character(x)) return(sprintf("the string \"%s\"", x))
  }
  if (is.list(x) && !is.object(x)) return("a list")
  if (is.atomic(x) && !is.object(x)) {
    type <- switch(typeof(x), double = "double", integer = "integer",
                   character = "character", logical = "logical", typeof(x))
    article <- if (grepl("^[aeiou]", type)) "an" else "a"
    return(sprintf("%s %s vector", article, type))
  }
  sprintf("a <%s> object", class(x)[1L])
}

# ---- bake -----------------------------------------------------------------

#' @exportS3Method recipes::bake
bake.step_fastkpca <- function(object, new_data, ...) bake_kpca_step(object, new_data)

#' @exportS3Method recipes::bake
bake.step_fastkpca_rbf <- function(object, new_data, ...) bake_kpca_step(object, new_data)

#' @exportS3Method recipes::bake
bake.step_fastkpca_poly <- function(object, new_data, ...) bake_kpca_step(object, new_data)

# Project new_data's columns with the fit's predict() and put the components
# in place of (or beside) them.
bake_kpca_step <- function(object, new_data) {
  if (is.null(object$res) || length(object$columns) == 0L) return(new_data)
  absent <- setdiff(object$columns, names(new_data))
  if (length(absent) > 0L)
    stop_argument(sprintf("'new_data' lacks the column%s %s needed by %s() (id %s)",
                          if (length(absent) > 1L) "s" else "",
                          paste(absent, collapse = ", "), class(object)[1L], object$id))
  comps <- predict(object$res, as.matrix(new_data[object$columns]))
  comps <- recipes::check_name(comps, new_data, object,
                               newname = recipes::names0(ncol(comps), object$prefix))
  for (j in colnames(comps)) new_data[[j]] <- unname(comps[, j])
  if (!recipes::get_keep_original_cols(object))
    new_data <- new_data[setdiff(names(new_data), object$columns)]
  new_data
}

# ---- print, tidy, tunable, required_pkgs ------------------------------------

#' @export
print.step_fastkpca <- function(x, width = max(20, options()$width - 40), ...) {
  print_kpca_step(x, "Kernel PCA extraction with ", width)
}

#' @export
print.step_fastkpca_rbf <- function(x, width = max(20, options()$width - 40), ...) {
  print_kpca_step(x, "RBF kernel PCA extraction with ", width)
}

#' @export
print.step_fastkpca_poly <- function(x, width = max(20, options()$width - 40), ...) {
  print_kpca_step(x, "Polynomial kernel PCA extraction with ", width)
}

# recipes' own titles and format. recipes gives the columns `width`
# characters after the title, and a trained step adds " [trained]"
# (recipes 1.0.4's format): the columns get at most what keeps that line
# within the console width.
print_kpca_step <- function(x, title, width) {
  width <- min(width, max(20, getOption("width") - nchar(title) - nchar(" [trained]")))
  recipes::print_step(x$columns, x$terms, x$trained, title, width)
  invisible(x)
}

#' @rdname step_fastkpca
#' @param x A `step_fastkpca`, `step_fastkpca_rbf` or `step_fastkpca_poly`
#'   object.
#' @export
tidy.step_fastkpca <- function(x, ...) {
  terms <- if (recipes::is_trained(x)) unname(x$columns)
           else recipes::sel2char(x$terms)
  tibble::tibble(terms = as.character(terms), id = rep(x$id, length(terms)))
}

#' @rdname step_fastkpca
#' @export
tidy.step_fastkpca_rbf <- tidy.step_fastkpca

#' @rdname step_fastkpca
#' @export
tidy.step_fastkpca_poly <- tidy.step_fastkpca

# dials parameters: the ones recipes gives its step_kpca_rbf() and
# step_kpca_poly() (num_comp over 1 to 4 components).
num_comp_param <- function() list(pkg = "dials", fun = "num_comp", range = c(1L, 4L))

tunable_table <- function(x, names, call_info) {
  tibble::tibble(name = names, call_info = call_info, source = "recipe",
                 component = class(x)[1L], component_id = x$id)
}

#' @export
tunable.step_fastkpca <- function(x, ...) {
  tunable_table(x, "num_comp", list(num_comp_param()))
}

#' @export
tunable.step_fastkpca_rbf <- function(x, ...) {
  tunable_table(x, c("num_comp", "sigma"),
                list(num_comp_param(), list(pkg = "dials", fun = "rbf_sigma")))
}

#' @export
tunable.step_fastkpca_poly <- function(x, ...) {
  tunable_table(x, c("num_comp", "degree", "scale_factor", "offset"),
                list(num_comp_param(), list(pkg = "dials", fun = "degree"),
                     list(pkg = "dials", fun = "scale_factor"),
                     list(pkg = "dials", fun = dials_offset_name())))
}

# dials renamed its offset() parameter kernel_offset() (and recipes followed);
# name the one the installed dials has, the new one when dials is absent.
dials_offset_name <- function() {
  if (!nzchar(system.file(package = "dials"))) return("kernel_offset")
  exports <- getNamespaceExports("dials")
  if (!"kernel_offset" %in% exports && "offset" %in% exports) "offset" else "kernel_offset"
}

#' @export
required_pkgs.step_fastkpca <- function(x, ...) "fastkpca"

#' @export
required_pkgs.step_fastkpca_rbf <- function(x, ...) "fastkpca"

#' @export
required_pkgs.step_fastkpca_poly <- function(x, ...) "fastkpca"
