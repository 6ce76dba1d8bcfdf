# scikit-learn as an oracle: a Python on the PATH that imports sklearn, if
# there is one. Each executable named python3 or python on the PATH is tried
# (the first on the PATH may lack scikit-learn while another has it).
find_sklearn_python <- function() {
  dirs <- unique(strsplit(Sys.getenv("PATH"), .Platform$path.sep, fixed = TRUE)[[1L]])
  dirs <- dirs[nzchar(dirs)]
  candidates <- unique(file.path(rep(dirs, each = 2L), c("python3", "python")))
  candidates <- candidates[file.exists(candidates) & !dir.exists(candidates)]
  for (py in candidates) {
    ok <- tryCatch(suppressWarnings(system2(py, c("-c", shQuote("import sklearn, numpy")),
                                            stdout = FALSE, stderr = FALSE)),
                   error = function(e) 1L)
    if (identical(as.integer(ok), 0L)) return(py)
  }
  NULL
}

sklearn_python <- local({
  cached <- NA
  function() {
    if (identical(cached, NA)) cached <<- find_sklearn_python()
    cached
  }
})

# Run a Python script with scikit-learn on named matrices written to CSV
# files; the script reads them with numpy.loadtxt from the paths in a dict
# `inp` and writes its results with numpy.savetxt to the paths in `out`.
run_sklearn <- function(py, script, inputs, outputs) {
  dir <- tempfile("sklearn")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  inp <- vapply(names(inputs), function(nm) {
    path <- file.path(dir, paste0(nm, ".csv"))
    utils::write.table(format(inputs[[nm]], digits = 17), path, sep = ",",
                       row.names = FALSE, col.names = FALSE, quote = FALSE)
    path
  }, "")
  out <- stats::setNames(file.path(dir, paste0(outputs, ".out.csv")), outputs)
  dict <- function(paths) paste0("{", paste0("'", names(paths), "': r'", paths, "'",
                                             collapse = ", "), "}")
  code <- paste0("import numpy as np\n",
                 "inp = {k: np.loadtxt(v, delimiter=',', ndmin=2) for k, v in ",
                 dict(inp), ".items()}\n",
                 "out = ", dict(out), "\n", script)
  file <- file.path(dir, "script.py")
  writeLines(code, file)
  status <- system2(py, shQuote(file), stdout = TRUE, stderr = TRUE)
  if (!is.null(attr(status, "status")))
    stop("python failed: ", paste(status, collapse = "\n"))
  lapply(out, function(p) as.matrix(utils::read.csv(p, header = FALSE)))
}
