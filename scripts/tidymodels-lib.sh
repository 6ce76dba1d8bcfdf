#!/usr/bin/env bash
# Prints the library that holds the tidymodels packages of the tune and
# dials tests (tune, dials, workflows, parsnip, rsample, yardstick) and the
# newer tidyverse packages they need, installed from CRAN by
# scripts/install-cran-suggests.R: FASTKPCA_TIDYMODELS_LIB if set, else a
# folder of its own under ~/.local/lib/R, one per R version. It is used only
# where a script puts it first in R_LIBS (scripts/test.sh); R's own and the
# site libraries are never changed.
set -euo pipefail
if [ -n "${FASTKPCA_TIDYMODELS_LIB:-}" ]; then
  echo "$FASTKPCA_TIDYMODELS_LIB"
else
  version="$(Rscript -e 'cat(R.version$major, sub("[.].*", "", R.version$minor), sep = ".")')"
  echo "$HOME/.local/lib/R/fastkpca-tidymodels-$version"
fi
