# Installs the tidymodels packages that fastkpca's tune and dials tests need
# (Suggests: tune, dials, workflows, parsnip, rsample, yardstick), and
# future.mirai for the backend tests, into a
# library of their own, from CRAN, taking from Debian whatever Debian has
# in a version that is new enough.
#   Rscript scripts/install-cran-suggests.R LIBRARY
# They need newer versions of much of the tidyverse than Debian ships
# (vctrs, rlang, dplyr, recipes, ...). Those go into LIBRARY too, never into
# R's site library, so they take effect only where LIBRARY is put first in
# R_LIBS (scripts/test.sh and .ci/run do that); R's own library and the
# packages every other program sees are left as they are.
# Only packages that are missing, or older than a version some package of
# the set requires, are installed: a machine that has run this before
# installs nothing.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1L) stop("usage: Rscript install-cran-suggests.R LIBRARY")
lib <- args[1L]
dir.create(lib, recursive = TRUE, showWarnings = FALSE)
.libPaths(c(lib, .libPaths()))
# future.mirai (with mirai and nanonext, compiled: 1 min 45 s more on 2
# busy cores, measured) for the chunked fits on mirai's backend
# (tests/testthat/test-backends.R); not in Debian
wanted <- c("tune", "dials", "workflows", "parsnip", "rsample", "yardstick", "future.mirai")
fields <- c("Depends", "Imports", "LinkingTo")

# "pkg (>= 1.2.3)" entries of a DESCRIPTION field, as a data frame
parse_requirements <- function(text) {
  if (is.na(text)) return(NULL)
  parts <- trimws(strsplit(gsub("\n", " ", text), ",")[[1L]])
  parts <- parts[nzchar(parts)]
  name <- sub("^([A-Za-z0-9.]+).*$", "\\1", parts)
  op <- ifelse(grepl("\\(", parts), sub("^[^(]*\\(\\s*([<>=]+).*$", "\\1", parts), "")
  version <- ifelse(nzchar(op), sub("^[^(]*\\([<>=]+\\s*([^)]+)\\).*$", "\\1", parts), "")
  data.frame(name = name, op = op, version = trimws(version))
}

satisfies <- function(have, op, version) {
  if (!nzchar(op)) return(TRUE)
  do.call(op, list(package_version(have), package_version(version)))
}

installed_version <- function(p) {
  v <- tryCatch(as.character(utils::packageVersion(p, lib.loc = .libPaths())),
                error = function(e) NA_character_)
  v
}

# the packages to install: every package of the dependency closure (from
# CRAN's metadata) that is missing or fails a version requirement
needed_packages <- function(db) {
  closure <- unique(c(wanted, unlist(tools::package_dependencies(
    wanted, db = db, which = fields, recursive = TRUE))))
  base <- rownames(utils::installed.packages(priority = "base"))
  # base packages come with R; recommended ones (Matrix, survival) are not
  # always in CRAN's current list for this R version: installed ones serve
  closure <- setdiff(closure, c(base, "R"))
  closure <- closure[closure %in% rownames(db) | is.na(vapply(closure, installed_version, ""))]
  reqs <- do.call(rbind, lapply(closure, function(p)
    if (p %in% rownames(db))
      do.call(rbind, lapply(fields, function(f) parse_requirements(db[p, f])))))
  reqs <- reqs[reqs$name %in% closure, , drop = FALSE]
  need <- character()
  for (p in closure) {
    have <- installed_version(p)
    r <- reqs[reqs$name == p, , drop = FALSE]
    ok <- !is.na(have) &&
      all(mapply(satisfies, have, r$op, r$version))
    if (!ok) need <- c(need, p)
  }
  list(need = need, reqs = reqs)
}

# Debian's r-cran-* package for p, if apt offers one that meets every
# requirement on p (only as root, where apt-get can install)
debian_candidate <- function(p, reqs) {
  if (Sys.info()[["effective_user"]] != "root" || !nzchar(Sys.which("apt-cache")))
    return(NA_character_)
  deb <- paste0("r-cran-", tolower(p))
  out <- suppressWarnings(system2("apt-cache", c("policy", deb), stdout = TRUE,
                                  stderr = FALSE))
  cand <- sub("^\\s*Candidate:\\s*", "", grep("Candidate:", out, value = TRUE))
  if (!length(cand) || cand == "(none)") return(NA_character_)
  version <- sub("^[0-9]+:", "", sub("[-+][^-+]*$", "", sub("\\+dfsg.*$", "", cand)))
  version <- gsub("[^0-9.-]", "", version)
  r <- reqs[reqs$name == p, , drop = FALSE]
  ok <- tryCatch(all(mapply(satisfies, version, r$op, r$version)),
                 error = function(e) FALSE)
  if (ok) deb else NA_character_
}

db <- utils::available.packages()
missing_on_cran <- setdiff(wanted, rownames(db))
if (length(missing_on_cran))
  stop("not on CRAN: ", paste(missing_on_cran, collapse = ", "))
plan <- needed_packages(db)
if (!length(plan$need)) {
  cat("install-cran-suggests: nothing to install in", lib, "\n")
  quit(status = 0)
}
debs <- vapply(plan$need, debian_candidate, "", reqs = plan$reqs)
debs <- debs[!is.na(debs)]
if (length(debs)) {
  cat("install-cran-suggests: from Debian:", debs, "\n")
  Sys.setenv(DEBIAN_FRONTEND = "noninteractive")
  system2("apt-get", c("install", "-y", "-qq", "--no-install-recommends", debs))
}
plan <- needed_packages(db)
if (length(plan$need)) {
  cat("install-cran-suggests: from CRAN into", lib, ":", plan$need, "\n")
  utils::install.packages(plan$need, lib = lib, dependencies = FALSE,
                          Ncpus = max(1L, parallel::detectCores()), quiet = TRUE)
}
left <- needed_packages(db)$need
if (length(left)) {
  cat("install-cran-suggests: still missing or too old:", left, "\n")
  quit(status = 1)
}
cat("install-cran-suggests: done\n")
