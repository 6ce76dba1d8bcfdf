#!/usr/bin/env bash
# Installs fastkpca from this checkout (with what it needs) and runs the
# main job: kernel PCA on the bundled two-rings data, printing the summary
# and writing rings-kpca.png in the current folder.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# fastkpca needs only base R: nothing else to install
R CMD INSTALL --no-test-load "$here" >/dev/null
Rscript "$here/scripts/demo.R" "${1:-rings-kpca.png}"
