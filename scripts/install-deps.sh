#!/usr/bin/env bash
# Installs what building, checking and testing fastkpca needs, where it is
# missing: R packages (kernlab, testthat, knitr, rmarkdown) and the tools
# R CMD check --as-cran uses (pandoc for the vignette, qpdf, pdflatex for
# the PDF manual, tidy for the HTML manual, valgrind for scripts/valgrind.sh,
# chromium for the site's test, ccache for scripts/ccache-env.sh).
# Debian's packages are used when running as root with apt-get; otherwise R
# packages come from CRAN through install.packages() with the repository R
# is set up with.
set -euo pipefail

r_packages=(kernlab testthat knitr rmarkdown callr)
# the tidyverse methods (Imports: generics; Suggests: the rest), all in Debian
# as r-cran-*. The tidymodels packages of the tune and dials tests (tune,
# dials, workflows, parsnip, rsample, yardstick; Suggests too) are not in
# Debian: they come last, from CRAN, into a library of their own.
r_packages+=(generics recipes ggplot2 tibble rlang)
# chunked Nystrom on future's backends (future.batchtools: the batchtools
# backend of tests/testthat/test-backends.R; future.mirai comes from CRAN
# with the tidymodels packages, below), with progress, and a real database
# for the chunked-source tests (Suggests; all in Debian as r-cran-*)
r_packages+=(future future.apply future.batchtools progressr DBI RSQLite)
# the default thread count's rules (R/threads.R; Suggests, in Debian)
r_packages+=(parallelly)
# the pkgdown site (scripts/site.sh), which scripts/test.sh builds and
# tests/testthat/test-site.R opens in headless Chromium (not an R
# dependency of the package: Debian's r-cran-pkgdown, or CRAN)
r_packages+=(pkgdown)
# sparse data (Suggests): slam's triplet matrices and tm's document-term
# matrices, and a real corpus, Jane Austen's novels (all in Debian)
r_packages+=(slam tm janeaustenr)
missing_r=()
for p in "${r_packages[@]}"; do
  Rscript -e "quit(status = if (requireNamespace('$p', quietly = TRUE)) 0 else 1)" \
    >/dev/null 2>&1 || missing_r+=("$p")
done
missing_tools=()
for t in pandoc qpdf tidy valgrind chromium ccache; do
  command -v "$t" >/dev/null 2>&1 || missing_tools+=("$t")
done
# scikit-learn, the oracle of the pre-image tests (they skip without it):
# Debian's python3-sklearn
if command -v dpkg >/dev/null 2>&1 && ! dpkg -s python3-sklearn >/dev/null 2>&1; then
  missing_tools+=(python3-sklearn)
fi
# the PDF manual: pdflatex with the fonts of R_RD4PDF="times,hyper" (set by
# scripts/test.sh; CRAN's default inconsolata needs 1.4 GB of extra fonts)
latex_debs=()
if ! command -v pdflatex >/dev/null 2>&1 ||
   ! kpsewhich times.sty >/dev/null 2>&1; then
  latex_debs=(texlive-latex-base texlive-latex-recommended texlive-fonts-recommended)
  missing_tools+=(pdflatex)
fi

here="$(cd "$(dirname "$0")/.." && pwd)"
# tune, dials, workflows, parsnip, rsample and yardstick (and future.mirai,
# with mirai and nanonext) need newer vctrs,
# rlang, dplyr, recipes, ... than Debian's: scripts/install-cran-suggests.R
# takes from Debian what it has new enough and the rest from CRAN, into
# the library scripts/tidymodels-lib.sh names (about 45 packages and 20
# minutes of compiling on 2 cores the first time; nothing afterwards)
install_tidymodels() {
  local lib
  lib="$(bash "$here/scripts/tidymodels-lib.sh")"
  Rscript "$here/scripts/install-cran-suggests.R" "$lib" ||
    echo "install-deps: warning: the tune and dials tests will skip"
}

if [ ${#missing_r[@]} -eq 0 ] && [ ${#missing_tools[@]} -eq 0 ]; then
  echo "install-deps: nothing missing from Debian's part"
  install_tidymodels
  exit 0
fi
echo "install-deps: missing R packages: ${missing_r[*]:-none}; tools: ${missing_tools[*]:-none}"

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  debs=("${latex_debs[@]}")
  for t in "${missing_tools[@]}"; do [ "$t" = pdflatex ] || debs+=("$t"); done
  for p in "${missing_r[@]}"; do debs+=("r-cran-$(echo "$p" | tr '[:upper:]' '[:lower:]')"); done
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null ||
    echo "install-deps: apt-get could not install all of: ${debs[*]}"
fi

# whatever is still missing, from CRAN
still=()
for p in "${missing_r[@]}"; do
  Rscript -e "quit(status = if (requireNamespace('$p', quietly = TRUE)) 0 else 1)" \
    >/dev/null 2>&1 || still+=("$p")
done
if [ ${#still[@]} -gt 0 ]; then
  pkgs=$(printf "'%s'," "${still[@]}")
  Rscript -e "install.packages(c(${pkgs%,}))"
fi
for t in "${missing_tools[@]}"; do
  [ "$t" = python3-sklearn ] && continue
  command -v "$t" >/dev/null 2>&1 || echo "install-deps: warning: $t is still missing"
done
install_tidymodels
