#!/usr/bin/env bash
# The two-stage reduction's bits from every compiler (issue 51): builds
# fastkpca with gcc and clang, each with and without OpenMP, and clang
# with -ffp-contract=fast (scripts/compilers.sh, the libraries kept in a
# temporary folder), runs the same two-stage fit under every vector path
# with each build (scripts/stage2-bits.R fit) and compares them with
# identical(), path by path (scripts/stage2-bits.R compare).
# FASTKPCA_COMPILERS picks the builds (default: those five). Exits 0 (the
# same bits everywhere), 1 (a build failed or gave other bits) or 2 (could
# not run).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
builds="${FASTKPCA_COMPILERS:-gcc-omp gcc clang-omp clang clang-contract}"
libs="$(mktemp -d)"
trap 'rm -rf "$libs"' EXIT

status=0
FASTKPCA_COMPILERS="$builds" FASTKPCA_LIBS_DIR="$libs" bash "$here/scripts/compilers.sh" || status=$?
[ $status -eq 0 ] || { echo "stage2-bits: the builds failed (compilers.sh: $status)"; exit $status; }
rds=()
for b in $builds; do
  R_LIBS="$libs/$b" Rscript "$here/scripts/stage2-bits.R" fit "$libs/$b.rds" || exit 1
  rds+=("$libs/$b.rds")
done
Rscript "$here/scripts/stage2-bits.R" compare "${rds[@]}"
