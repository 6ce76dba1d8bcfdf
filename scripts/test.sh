#!/usr/bin/env bash
# The test command: installs what is missing, builds the package tarball
# (vignettes included) and the pkgdown site, and runs R CMD check --as-cran
# on the tarball, which runs the whole test suite (the site's test too).
# Fails on any ERROR or WARNING, or any failed test.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/scripts/install-deps.sh"
# the tidymodels packages of the tune and dials tests, and the newer
# tidyverse they need, from their own library (scripts/install-cran-suggests.R)
tidymodels_lib="$(bash "$here/scripts/tidymodels-lib.sh")"
# the vignettes', the site's and the check's installs compile once
. "$here/scripts/ccache-env.sh"
export R_LIBS="$tidymodels_lib${R_LIBS:+:$R_LIBS}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
R CMD build "$here"
tarball="$(ls fastkpca_*.tar.gz)"
status=0

# The pkgdown site (scripts/site.sh, about a minute), with the package
# installed from the tarball into a library of its own; the help pages'
# examples are left out (the check runs them). tests/testthat/test-site.R
# opens it in headless Chromium during the check (FASTKPCA_SITE_DIR).
mkdir site-lib
if R CMD INSTALL --no-test-load --library=site-lib "$tarball" >site-install.log 2>&1; then
  FASTKPCA_SITE_LIB="$work/site-lib" FASTKPCA_SITE_EXAMPLES=false \
    bash "$here/scripts/site.sh" "$work/site" >site.log 2>&1 || {
      tail -n 40 site.log; echo "test: the site did not build"; status=1; }
else
  cat site-install.log; echo "test: the package did not install for the site"; status=1
fi
export FASTKPCA_SITE_DIR="$work/site"
# ARCHITECTURE.md is not in the tarball: tests/testthat/test-src-maps.R
# reads the checkout's, beside the sources the check unpacks
export FASTKPCA_ARCHITECTURE_MD="$here/ARCHITECTURE.md"

# checks that need the network are switched off (offline machine); the
# future-file-timestamps check cannot be (--as-cran forces it on), so it ends
# in the one NOTE allowed: "unable to verify current time"
export _R_CHECK_CRAN_INCOMING_REMOTE_=false
export _R_CHECK_FORCE_SUGGESTS_=true
export NOT_CRAN=true
# without TZ, R asks timedatectl for the time zone, which machines without
# systemd lack (a warning in the tests, a NOTE in the check)
export TZ="${TZ:-UTC}"
# the PDF manual with fonts from texlive-fonts-recommended (see install-deps.sh)
export R_RD4PDF="times,hyper"
R CMD check --as-cran "$tarball" || status=$?

log=fastkpca.Rcheck/00check.log
tests_out=fastkpca.Rcheck/tests/testthat.Rout
[ -f "$tests_out" ] || tests_out=fastkpca.Rcheck/tests/testthat.Rout.fail
if [ -f "$tests_out" ]; then
  # testthat's own report: the skipped tests with their reasons, the
  # warnings and the failures (a skip in CI tests nothing: it must show)
  first=$(grep -n -m 1 -E "^══ (Skipped|Warnings|Failed)" "$tests_out" | cut -d: -f1 || true)
  if [ -n "$first" ]; then sed -n "${first},$((first + 299))p" "$tests_out"
  else tail -n 40 "$tests_out"; fi
fi
echo "---- check status"
grep -E "^Status:|^\* checking .*(ERROR|WARNING|NOTE)$" "$log" || true
grep -A15 -E "\.\.\. (ERROR|WARNING|NOTE)$" "$log" || true

# the test counts, as one plain line
counts=$(grep -E "^\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]" "$tests_out" 2>/dev/null | tail -n 1 || true)
if [ -n "$counts" ]; then
  fail=$(echo "$counts" | sed -E 's/.*FAIL ([0-9]+).*/\1/')
  skip=$(echo "$counts" | sed -E 's/.*SKIP ([0-9]+).*/\1/')
  pass=$(echo "$counts" | sed -E 's/.*PASS ([0-9]+).*/\1/')
  echo "testthat: $pass passed, $fail failed, $skip skipped"
  [ "$fail" -eq 0 ] || status=1
else
  echo "testthat: no test summary found"
  status=1
fi
if grep -qE "^Status:.*(ERROR|WARNING)" "$log"; then status=1; fi
if ! grep -qE "^Status:" "$log"; then status=1; fi
exit $status
