# Which BLAS and LAPACK a benchmark child process runs on, switched per
# process with LD_PRELOAD, so the system's setting is left as it is.
# Sourced by bench/run.R and bench/openblas-threads.R.
#
#   "reference": R's reference BLAS and LAPACK (Debian's libblas3 and
#                liblapack3, which R was built against);
#   "openblas":  OpenBLAS (Debian's libopenblas0-pthread, which also provides
#                a libblas.so.3 and a liblapack.so.3);
#   "default":   whatever R loads without LD_PRELOAD.
#
# The libraries are found at run time, in this order:
#   1. the environment variables FASTKPCA_BENCH_REFERENCE and
#      FASTKPCA_BENCH_OPENBLAS, each the two files "libblas.so.3 liblapack.so.3"
#      (space separated) or a directory holding both;
#   2. the files of the Debian packages (dpkg -L libblas3 liblapack3, or
#      dpkg -L libopenblas0-pthread, -openmp, -serial);
#   3. ldconfig -p, for OpenBLAS only (the directory libopenblas.so.0
#      resolves to, when it holds a libblas.so.3 and a liblapack.so.3).
# A child reports the libraries it really ran on (extSoftVersion(),
# La_library()), and run.R prints them, so a switch that did not take is
# visible.

`%||%` <- function(a, b) if (is.null(a)) b else a

# The two shared objects in a directory, if both are there.
blas_pair_in <- function(dir) {
  files <- file.path(dir, c("libblas.so.3", "liblapack.so.3"))
  if (all(file.exists(files))) files else NULL
}

# The value of an environment variable naming the pair, or a directory.
blas_pair_from_env <- function(var) {
  value <- Sys.getenv(var)
  if (!nzchar(value)) return(NULL)
  parts <- strsplit(trimws(value), "[[:space:]]+")[[1]]
  if (length(parts) == 1L && dir.exists(parts)) return(blas_pair_in(parts))
  if (length(parts) == 2L && all(file.exists(parts))) return(parts)
  stop(sprintf("%s must name libblas.so.3 and liblapack.so.3, or their directory", var),
       call. = FALSE)
}

# The installed files of Debian packages ending in libblas.so.3 / liblapack.so.3.
blas_pair_from_dpkg <- function(packages) {
  if (!nzchar(Sys.which("dpkg"))) return(NULL)
  for (pkgs in packages) {
    files <- suppressWarnings(system2("dpkg", c("-L", pkgs), stdout = TRUE,
                                      stderr = FALSE))
    if (!is.null(attr(files, "status"))) next
    blas <- grep("/libblas\\.so\\.3$", files, value = TRUE)
    lapack <- grep("/liblapack\\.so\\.3$", files, value = TRUE)
    if (length(blas) && length(lapack) && all(file.exists(c(blas[1], lapack[1]))))
      return(c(blas[1], lapack[1]))
  }
  NULL
}

blas_pair_from_ldconfig <- function() {
  ldconfig <- Sys.which("ldconfig") # on the PATH (it is not, for some users)
  if (!nzchar(ldconfig)) return(NULL)
  lines <- suppressWarnings(system2(ldconfig, "-p", stdout = TRUE, stderr = FALSE))
  hits <- sub(".*=> *", "", grep("libopenblas[^ ]*\\.so", lines, value = TRUE))
  # resolved: libopenblas.so.0 is often a link (Debian's alternatives) into
  # the directory that holds OpenBLAS's own libblas.so.3 and liblapack.so.3
  for (lib in unique(normalizePath(hits, mustWork = FALSE))) {
    pair <- blas_pair_in(dirname(lib))
    if (!is.null(pair)) return(pair)
  }
  NULL
}

# The two files to preload for a BLAS, or NULL (with the reason as an
# attribute) if they cannot be found.
blas_libraries <- function(blas) {
  pair <- switch(blas,
    default = character(),
    reference = blas_pair_from_env("FASTKPCA_BENCH_REFERENCE") %||%
      blas_pair_from_dpkg("libblas3 liblapack3"),
    openblas = blas_pair_from_env("FASTKPCA_BENCH_OPENBLAS") %||%
      blas_pair_from_dpkg(c("libopenblas0-pthread", "libopenblas0-openmp",
                            "libopenblas0-serial")) %||%
      blas_pair_from_ldconfig(),
    stop(sprintf("unknown BLAS \"%s\" (reference, openblas or default)", blas),
         call. = FALSE))
  pair
}

# The environment setting (for system2's env) that runs a child on a BLAS;
# extra: further settings such as "OPENBLAS_NUM_THREADS=1".
blas_env <- function(blas, extra = character()) {
  pair <- blas_libraries(blas)
  if (is.null(pair))
    stop(sprintf(paste0("cannot find the %s BLAS and LAPACK; set FASTKPCA_BENCH_%s ",
                        "to \"/path/libblas.so.3 /path/liblapack.so.3\""),
                 blas, toupper(blas)), call. = FALSE)
  env <- extra
  if (length(pair)) env <- c(sprintf("LD_PRELOAD='%s'", paste(pair, collapse = " ")), env)
  env
}
