# Sourced by .ci/run and scripts/test.sh: the package's C compiled once per
# run, not once per install. Several steps install the same sources with
# R's own compiler and flags (the vignettes' install in R CMD build, the
# site's, R CMD check's, and those of valgrind.sh, debian-future.sh,
# plain-path.sh and check-nosuggests.sh: about 35 s of one core each);
# ccache compiles each file once and the others take its object. Only where
# ccache is on the path (install-deps.sh installs it), nothing has set
# R_MAKEVARS_USER already and there is no ~/.R/Makevars (which
# R_MAKEVARS_USER would replace: a user's own settings stay theirs); the
# steps with their own compilers or flags (compilers.sh, sanitizers.sh,
# the trixie and arm64 roots) set their own.
# The working directory is left out of ccache's hash (the installs build
# in different folders; only the debug information's paths differ).
if command -v ccache >/dev/null 2>&1 && [ -z "${R_MAKEVARS_USER:-}" ] &&
   [ ! -e "$HOME/.R/Makevars" ]; then
  fastkpca_ccache_makevars="${XDG_CACHE_HOME:-$HOME/.cache}/fastkpca/ccache-Makevars"
  mkdir -p "$(dirname "$fastkpca_ccache_makevars")"
  echo "CC = ccache $(R CMD config CC)" >"$fastkpca_ccache_makevars"
  export R_MAKEVARS_USER="$fastkpca_ccache_makevars"
  export CCACHE_NOHASHDIR=1
fi
