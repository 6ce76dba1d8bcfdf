#!/usr/bin/env bash
# Builds fastkpca with AddressSanitizer and UndefinedBehaviorSanitizer
# (gcc: -fsanitize=address,undefined -fno-omit-frame-pointer), runs its
# tests, and fails on any sanitizer report ("ERROR: AddressSanitizer",
# "runtime error").
#
# The flags go into a temporary Makevars named by R_MAKEVARS_USER (the
# user's own ~/.R/Makevars is neither read nor touched). R itself is not
# instrumented, so gcc's libasan is preloaded into R with LD_PRELOAD.
# ASAN_OPTIONS: detect_leaks=0 (R keeps memory until exit on purpose),
# allocator_may_return_null=1 (the tests ask for impossible buffers and
# expect R's "cannot allocate" error rather than an abort).
#
# By default every test file runs; select some with
#   FASTKPCA_SANITIZER_TESTS='bad-input|entry-points|fuzz'
# Prints one verdict line; exits 0 (clean), 1 (reports, or R crashed) or 2
# (could not build or run). Failing expectations are listed in the verdict
# but do not decide it.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cc="${CC:-gcc}"
command -v "$cc" >/dev/null 2>&1 || { echo "sanitizers: $cc not found"; exit 2; }
libasan="$("$cc" -print-file-name=libasan.so)"
if [ ! -e "$libasan" ] || [ "$libasan" = "libasan.so" ]; then
  echo "sanitizers: libasan.so not found for $cc"; exit 2
fi
tests="${FASTKPCA_SANITIZER_TESTS:-all}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" "$work/lib"
tar -C "$here" --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.Rcheck' \
  -cf - . | tar -C "$work/src" -xf -

san="-fsanitize=address,undefined -fno-omit-frame-pointer"
cat >"$work/Makevars" <<EOF
CC = $cc $san
CFLAGS = -g -O1 -Wall
LDFLAGS = $san
EOF

export R_MAKEVARS_USER="$work/Makevars"
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:abort_on_error=0:print_summary=1"
export UBSAN_OPTIONS="print_stacktrace=1"

echo "sanitizers: building with $san"
# the install loads the package (lazy loading), so it needs libasan too
if ! LD_PRELOAD="$libasan" R CMD INSTALL --no-test-load --library="$work/lib" "$work/src" \
     >"$work/install.log" 2>&1; then
  tail -n 30 "$work/install.log"
  echo "sanitizers: FAIL - the package did not build"
  exit 2
fi
grep -q -- "-fsanitize=address" "$work/install.log" ||
  { echo "sanitizers: FAIL - the sanitizer flags did not reach the compiler"; exit 2; }


echo "sanitizers: running tests matching '$tests'"
start=$(date +%s)
status=0
FASTKPCA_MEMCHECK=sanitizers NOT_CRAN=true R_LIBS="$work/lib" LD_PRELOAD="$libasan" \
  Rscript --vanilla "$work/src/scripts/run-tests.R" "$work/src/tests/testthat" "$tests" >"$work/tests.out" 2>&1 || status=$?
elapsed=$(( $(date +%s) - start ))
tail -n 25 "$work/tests.out"

asan=$(grep -c "ERROR: AddressSanitizer" "$work/tests.out" || true)
ubsan=$(grep -c "runtime error" "$work/tests.out" || true)
tests_line=$(grep -E "^testthat: " "$work/tests.out" | tail -n 1 || true)
summary="$asan AddressSanitizer errors, $ubsan UndefinedBehaviorSanitizer runtime errors, ${elapsed}s; ${tests_line:-testthat: no summary (R crashed?)}"
if [ "$asan" -eq 0 ] && [ "$ubsan" -eq 0 ] && [ -n "$tests_line" ]; then
  echo "sanitizers: OK - $summary"
  exit 0
fi
echo "---- sanitizer reports"
grep -n -B 2 -A 25 -E "ERROR: AddressSanitizer|runtime error" "$work/tests.out" | head -n 120 || true
echo "sanitizers: FAIL - $summary (exit status $status)"
exit 1
