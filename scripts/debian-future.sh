#!/usr/bin/env bash
# Runs the tests of work on future's workers (workers lost from outside,
# the backends, the chunked and matrix-free passes) against Debian's future
# and future.batchtools: the system library alone. scripts/test.sh's R CMD
# check runs them against CRAN's newer future, which the tidymodels library
# brings (scripts/tidymodels-lib.sh). The package is built from a copy of the
# sources into a temporary library. FASTKPCA_FUTURE_TESTS picks files by a
# regular expression. Prints one verdict line with the versions; exits 0
# (passed), 1 (a failure) or 2 (could not run).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
tests="${FASTKPCA_FUTURE_TESTS:-workers|backends|chunks|matrix-free}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/lib"
tar -C "$here" --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.Rcheck' \
  -cf - . | tar -C "$work/src" -xf -
# the system library only: no user library, no tidymodels library
export R_LIBS="$work/lib" R_LIBS_USER="$work/no-user-library" NOT_CRAN=true TZ="${TZ:-UTC}"
if ! R CMD INSTALL --no-test-load --library="$work/lib" "$work/src" >"$work/install.log" 2>&1; then
  tail -n 30 "$work/install.log"; echo "debian-future: FAIL - the package did not install"; exit 2
fi
versions="$(Rscript -e 'cat(vapply(c("future", "future.batchtools", "parallelly"), function(p)
  paste(p, tryCatch(format(packageVersion(p)), error = function(e) "missing")), ""), sep = ", ")')"
start=$(date +%s)
set +e
(cd "$work/src" && Rscript scripts/run-tests.R tests/testthat "$tests" strict) >"$work/tests.log" 2>&1
rc=$?
set -e
took=$(( $(date +%s) - start ))
. "$here/scripts/test-verdict.sh"
test_verdict debian-future "$work/tests.log" $rc "$took" "tests '$tests' with $versions"
