#!/usr/bin/env bash
# The main job: builds fastkpca's tarball from this checkout (vignettes
# included), installs it, and runs kernel PCA on the bundled two-rings
# data, printing the summary and writing the picture rings-kpca.png.
#   bash scripts/demo.sh [OUTPUT_DIR]
# Where things go, said as they happen:
# - the package: into the library FASTKPCA_LIB if set, else R's personal
#   library of the user (R_LIBS_USER, which every R session of the user
#   searches: afterwards library(fastkpca), vignette("fastkpca") and
#   browseVignettes("fastkpca") work in any R session). Never R's site
#   library.
# - the picture: OUTPUT_DIR (default: fastkpca-demo/ in the current
#   folder, created if missing).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out_dir="${1:-fastkpca-demo}"
mkdir -p "$out_dir"
lib="${FASTKPCA_LIB:-}"
if [ -z "$lib" ]; then
  lib="$(Rscript -e 'cat(path.expand(Sys.getenv("R_LIBS_USER")))')"
fi
mkdir -p "$lib"
lib="$(cd "$lib" && pwd)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/log"
# Building the vignettes needs knitr, rmarkdown and pandoc (install-deps.sh
# installs them); without them the package is installed without vignettes.
echo "demo: building fastkpca's tarball with its vignettes (about a minute)"
if (cd "$work" && R CMD build "$here" >"$log" 2>&1); then
  src="$(ls "$work"/fastkpca_*.tar.gz)"
else
  tail -n 20 "$log"
  echo "demo: could not build the vignettes (see above): installing without them"
  src="$here"
fi
if ! R_LIBS="$lib${R_LIBS:+:$R_LIBS}" R CMD INSTALL --library="$lib" "$src" >"$log" 2>&1; then
  cat "$log"
  echo "demo: fastkpca did not install"
  exit 1
fi
echo "demo: installed fastkpca into $lib"
R_LIBS="$lib${R_LIBS:+:$R_LIBS}" Rscript "$here/scripts/demo.R" "$out_dir/rings-kpca.png"
echo "demo: vignettes: vignette(\"fastkpca\") or browseVignettes(\"fastkpca\") in R$(
  [ -n "${FASTKPCA_LIB:-}" ] && echo " started with R_LIBS=$lib")"
