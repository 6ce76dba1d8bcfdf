# Hooks run when the namespace is loaded and unloaded.

.onLoad <- function(libname, pkgname) {
  # the vector path from the environment, for a whole session or check
  # (R/simd.R); the C engine reads no environment variable
  simd <- Sys.getenv("FASTKPCA_SIMD")
  if (nzchar(simd) && is.null(getOption("fastkpca.simd"))) options(fastkpca.simd = simd)
  # kernlab's accessors (R/kernlab_accessors.R): methods for fastkpca's fits
  # go on kernlab's S4 generics now if kernlab is loaded, or when it is;
  # kernlab stays a suggested package.
  if (isNamespaceLoaded("kernlab")) register_kernlab_methods()
  setHook(packageEvent("kernlab", "onLoad"), kernlab_load_hook)
}

.onUnload <- function(libpath) {
  # take our hook off kernlab's load event, so that a reloaded fastkpca
  # (devtools::load_all(), say) does not leave one per load behind
  event <- packageEvent("kernlab", "onLoad")
  hooks <- getHook(event)
  keep <- Filter(function(h) !identical(h, kernlab_load_hook), hooks)
  setHook(event, keep, action = "replace")
}

kernlab_load_hook <- function(...) register_kernlab_methods()
