#!/usr/bin/env bash
# Runs the test suite with the vector layer switched off: every product
# and kernel block on the plain C path, as on a CPU with no vector path
# (FASTKPCA_SIMD=plain, which the package reads into
# options(fastkpca.simd) when it loads). The package is built from a copy of
# the sources into a temporary library; the tune and dials tests' packages
# come from their own library (scripts/tidymodels-lib.sh), as in
# scripts/test.sh. By default every file but those of R-level plumbing, whose
# C calls the other files make too: the site, the README, the vignette's
# figures, future's workers and backends, kernlab's examples and its
# kernels both ways, recipes, tune, tidiers, printing, accessors, progress
# and interrupts, and the files whose C stops before any vector code or
# does not depend on it: garbage at the entry points, bad input, the
# thread limits, the chunked sources' plumbing (about 60% of the suite's
# time; R CMD check runs them on the vector path). FASTKPCA_PLAIN_TESTS picks files by a regular expression
# (scripts/run-tests.R: "all", or "!" and one for the files to leave out).
# Prints one verdict line; exits 0 (passed), 1 (a failure, or not on the
# plain path) or 2 (could not run).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
plumbing='!^(site|readme|vignette-figures|workers|backends|kernlab-examples|kernlab-both-ways|recipes|recipes-port|tune|tidiers|print-widths|accessors|progress|interrupt|entry-points|bad-input|thread-limits|chunks)$'
tests="${FASTKPCA_PLAIN_TESTS:-$plumbing}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/lib"
tar -C "$here" --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.Rcheck' \
  -cf - . | tar -C "$work/src" -xf -
if ! R CMD INSTALL --no-test-load --library="$work/lib" "$work/src" >"$work/install.log" 2>&1; then
  tail -n 30 "$work/install.log"; echo "plain-path: FAIL - the package did not install"; exit 2
fi
tidymodels_lib="$(bash "$here/scripts/tidymodels-lib.sh")"
export R_LIBS="$work/lib:$tidymodels_lib${R_LIBS:+:$R_LIBS}"
export FASTKPCA_SIMD=plain NOT_CRAN=true TZ="${TZ:-UTC}"
path="$(Rscript -e 'cat(format(fastkpca::simd_path()))')"
case "$path" in
  plain*) ;;
  *) echo "plain-path: FAIL - FASTKPCA_SIMD=plain gave the vector path '$path'"; exit 1 ;;
esac
start=$(date +%s)
set +e
(cd "$work/src" && Rscript scripts/run-tests.R tests/testthat "$tests" strict) >"$work/tests.log" 2>&1
rc=$?
set -e
took=$(( $(date +%s) - start ))
. "$here/scripts/test-verdict.sh"
test_verdict plain-path "$work/tests.log" $rc "$took" "tests '$tests' on the plain path ($path)"
