# Hooks run when the namespace is loaded.

.onLoad <- function(libname, pkgname) {
  # kernlab's accessors (R/kernlab_accessors.R): methods for fastkpca's fits
  # go on kernlab's S4 generics now if kernlab is loaded, or when it is;
  # kernlab stays a suggested package.
  if (isNamespaceLoaded("kernlab")) register_kernlab_methods()
  setHook(packageEvent("kernlab", "onLoad"), function(...) register_kernlab_methods())
}
