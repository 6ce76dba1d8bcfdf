#!/usr/bin/env bash
# Installs fastkpca from this checkout (it needs only base R) and runs the
# main job: kernel PCA on the bundled two-rings data, printing the summary
# and writing rings-kpca.png in the current folder.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# fastkpca needs only base R: nothing else to install
log="$(mktemp)"
if ! R CMD INSTALL --no-test-load "$here" >"$log" 2>&1; then
  cat "$log"
  echo "demo: fastkpca did not install"
  exit 1
fi
rm -f "$log"
Rscript "$here/scripts/demo.R" "${1:-rings-kpca.png}"
