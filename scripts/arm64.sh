#!/usr/bin/env bash
# Runs fastkpca's tests on arm64 (aarch64, the NEON path) under emulation:
# an arm64 Debian root (bookworm, with Debian's R, testthat and kernlab, and
# gcc to build the package natively there), entered with chroot through
# qemu-user-static and binfmt_misc. The package is installed in the root from
# a copy of the sources (its C compiled on the host by the cross compiler,
# where there is one: below) and the tests run there with
# scripts/run-tests.R.
#
# The root is built once (mmdebstrap; about 5 to 25 minutes, mostly package
# configuration under qemu) and kept for later runs in
# FASTKPCA_ARM64_ROOT, by default a folder of its own under ~/.cache; it is
# rebuilt when its package list changes. /proc is mounted in the root while
# the tests run (qemu reads /proc/self/maps).
#
# By default the core subset runs (kpca against the oracles, kernels,
# strings, Nystrom, matrix-free, tiles, kica, sparse rows; not the kernel
# algebra or bad input, whose C has no vector code: about 2 of its
# minutes), the files named exactly: kernlab's examples and the kernlab
# both-ways files, R-level and the slowest under qemu (about 13 of its 22
# minutes), run natively in R CMD check; FASTKPCA_ARM64_TESTS=all runs every
# file, or give a regular expression on file names without "test-" and ".R". Needs root and apt-get (installs qemu-user-static,
# binfmt-support and mmdebstrap where missing).
# Prints one verdict line; exits 0 (passed), 1 (a failure, or R crashed) or 2
# (could not run).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
core='^(kpca|kernels|string-kernels|nystrom|matrix-free|tiles|kica|sparse)$'
tests="${FASTKPCA_ARM64_TESTS:-$core}"
[ "$tests" = core ] && tests="$core"
root="${FASTKPCA_ARM64_ROOT:-$HOME/.cache/fastkpca/arm64-root-bookworm}"
debs="r-base-core,r-cran-generics,r-cran-testthat,r-cran-kernlab,r-cran-matrix,r-cran-slam,r-cran-tm,r-cran-janeaustenr,r-cran-future,r-cran-progressr,gcc,make,libc6-dev,libblas-dev,liblapack-dev,gfortran"
mirror="${FASTKPCA_ARM64_MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}"
[ -n "$mirror" ] || mirror="$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)"

[ "$(id -u)" -eq 0 ] || { echo "arm64: needs root (chroot, binfmt_misc)"; exit 2; }

# the host's part: qemu-user-static registered with binfmt_misc
need=()
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v update-binfmts >/dev/null 2>&1 || need+=(binfmt-support)
command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
if [ ${#need[@]} -gt 0 ]; then
  echo "arm64: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get install -y -q "${need[@]}" || { apt-get update -q && apt-get install -y -q "${need[@]}"; }; } \
    >/dev/null 2>&1 || { echo "arm64: could not install ${need[*]}"; exit 2; }
fi
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
    { echo "arm64: cannot mount binfmt_misc"; exit 2; }
fi
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
  { echo "arm64: qemu-aarch64 is not registered with binfmt_misc"; exit 2; }

# the root, built once per package list
stamp="$root/.fastkpca-root"
if [ ! -e "$stamp" ] || [ "$(cat "$stamp")" != "$debs" ]; then
  echo "arm64: building the arm64 Debian root in $root (once)"
  start=$(date +%s)
  rm -rf "$root"
  mkdir -p "$(dirname "$root")"
  if ! mmdebstrap --arch=arm64 --variant=minbase --include="$debs" bookworm "$root" \
       ${mirror:+"$mirror"} >"$root.log" 2>&1; then
    tail -n 30 "$root.log"; echo "arm64: could not build the root"; rm -rf "$root"; exit 2
  fi
  echo "$debs" >"$stamp"
  echo "arm64: root built in $(( $(date +%s) - start )) s"
fi

# the package, from a copy of the sources, into a library of the root's
work="$root/tmp/fastkpca-arm64"
rm -rf "$work"
mkdir -p "$work/src" "$work/lib"
mounted_proc=0
cleanup() {
  if [ $mounted_proc -eq 1 ]; then umount "$root/proc" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
if ! mountpoint -q "$root/proc"; then mount -t proc proc "$root/proc"; mounted_proc=1; fi
tar -C "$here" --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.Rcheck' \
  -cf - . | tar -C "$work/src" -xf -
# FASTKPCA_EMULATED: the tests of future's plans skip (each worker's R
# starts in seconds under qemu; they run natively in R CMD check)
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 TZ=UTC \
  NOT_CRAN=true OMP_THREAD_LIMIT=2 FASTKPCA_EMULATED=qemu "$@"; }
arch="$(in_root uname -m)"
[ "$arch" = aarch64 ] || { echo "arm64: the root runs as $arch, not aarch64"; exit 2; }
start=$(date +%s)
# The C compiled on the host by Debian's cross compiler (the root's gcc 12,
# built to run on x86-64) with the root's R flags (its Makeconf, R's
# headers), so that R CMD INSTALL under qemu finds the objects newer than
# their sources and only links them: compiling under emulation took 200 to
# 270 s of the run. Where the cross compiler is missing, the root compiles.
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
  objects=$(cd "$work/src/src" && ls *.c | sed 's/\.c$/.o/')
  # shellcheck disable=SC2086
  if ! make -C "$work/src/src" -f Makevars -f "$root/usr/lib/R/etc/Makeconf" \
       R_HOME="$root/usr/lib/R" R_SHARE_DIR="$root/usr/share/R/share" \
       R_INCLUDE_DIR="$root/usr/share/R/include" CC=aarch64-linux-gnu-gcc -j2 \
       $objects >"$work/cross.log" 2>&1; then
    tail -n 30 "$work/cross.log"; echo "arm64: FAIL - the cross compile failed"; exit 1
  fi
  echo "arm64: compiled on the host (aarch64-linux-gnu-gcc) in $(( $(date +%s) - start )) s"
fi
if ! in_root R CMD INSTALL --no-test-load --library=/tmp/fastkpca-arm64/lib \
     /tmp/fastkpca-arm64/src >"$work/install.log" 2>&1; then
  tail -n 30 "$work/install.log"; echo "arm64: FAIL - the package did not install"; exit 1
fi
echo "arm64: installed in $(( $(date +%s) - start )) s"
in_root env R_LIBS=/tmp/fastkpca-arm64/lib Rscript -e \
  'library(fastkpca); cat("arm64:", R.version$platform, "| vector path:", tryCatch(format(fastkpca::simd_path()), error = function(e) "unknown"), "\n")' || true

start=$(date +%s)
set +e
in_root env R_LIBS=/tmp/fastkpca-arm64/lib sh -c \
  "cd /tmp/fastkpca-arm64/src && Rscript scripts/run-tests.R tests/testthat '$tests' strict" \
  >"$work/tests.log" 2>&1
rc=$?
set -e
took=$(( $(date +%s) - start ))
. "$here/scripts/test-verdict.sh"
test_verdict arm64 "$work/tests.log" $rc "$took" "tests '$tests' on aarch64"
