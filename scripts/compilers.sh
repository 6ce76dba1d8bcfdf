#!/usr/bin/env bash
# Builds fastkpca's C sources as CRAN's compilers would and fails on any
# warning from the package's own files:
#   gcc   with OpenMP      (Debian's R, CRAN's gcc flavours)
#   gcc   without OpenMP   (SHLIB_OPENMP_CFLAGS empty)
#   clang with OpenMP      (CRAN's clang flavours, a Mac with libomp; needs libomp-dev)
#   clang without OpenMP   (macOS's default)
#   aarch64 cross-compile  (Debian's gcc-aarch64-linux-gnu: every file compiled,
#                           with and without OpenMP, for arm64's NEON path;
#                           nothing linked: scripts/arm64.sh runs the tests there)
# The four native builds are real installs (R CMD INSTALL into a temporary
# library, loaded afterwards), with the flags given through a temporary
# Makevars named by R_MAKEVARS_USER (~/.R/Makevars is neither read nor
# touched). The flags are CRAN's: -Wall -pedantic -Wstrict-prototypes, at -O2.
# FASTKPCA_COMPILERS='gcc-omp clang' picks builds by name (clang-contract,
# clang with OpenMP and -ffp-contract=fast, only when named: every
# product that meets an addition fused where the code does not hold it
# apart); with
# FASTKPCA_LIBS_DIR set, each native build's library is kept there, in a
# folder of the build's name (scripts/stage2-bits.sh compares their bits).
# Installs what is missing (clang, libomp-dev, gcc-aarch64-linux-gnu) when
# run as root with apt-get. Exits 0 (every build clean), 1 (a warning or a
# failed build) or 2 (could not run).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
builds="${FASTKPCA_COMPILERS:-gcc-omp gcc clang-omp clang aarch64}"
flags="-O2 -Wall -pedantic -Wstrict-prototypes"

need=()
command -v clang >/dev/null 2>&1 || need+=(clang)
[ -e /usr/include/omp.h ] || ls /usr/lib/llvm-*/lib/clang/*/include/omp.h >/dev/null 2>&1 || need+=(libomp-dev)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "compilers: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "${need[@]}" >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "${need[@]}" >/dev/null; } ||
      { echo "compilers: could not install ${need[*]}"; exit 2; }
  else
    echo "compilers: missing ${need[*]} (run as root with apt-get to install)"; exit 2
  fi
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
tar -C "$here" --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.Rcheck' \
  -cf - . | tar -C "$work/src" -xf -
rm -f "$work/src/src/"*.o "$work/src/src/"*.so

# the package's own warnings: lines naming one of its files (src/*.c, *.h)
own_warnings() {
  grep -E "^([^ ]*/)?[A-Za-z0-9_]+\.(c|h):[0-9]+(:[0-9]+)?: warning" "$1" || true
}

status=0
native_build() {  # name cc openmp_flag [more CFLAGS]
  local name=$1 cc=$2 omp=$3 more=${4:-} dir="$work/$1"
  local lib="${FASTKPCA_LIBS_DIR:+$FASTKPCA_LIBS_DIR/$name}"
  lib="${lib:-$dir/lib}"
  mkdir -p "$dir" "$lib"
  cp -r "$work/src" "$dir/pkg"
  {
    echo "CC = $cc"
    echo "CFLAGS = $flags${more:+ $more}"
    echo "SHLIB_OPENMP_CFLAGS = $omp"
  } >"$dir/Makevars"
  local start=$(date +%s)
  if ! R_MAKEVARS_USER="$dir/Makevars" R CMD INSTALL --no-test-load \
       --library="$lib" "$dir/pkg" >"$dir/install.log" 2>&1; then
    tail -n 30 "$dir/install.log"
    echo "compilers: $name: FAIL - did not build"
    return 1
  fi
  local warn; warn="$(own_warnings "$dir/install.log")"
  if [ -n "$warn" ]; then
    echo "$warn" | head -n 40
    echo "compilers: $name: FAIL - $(echo "$warn" | wc -l) warning(s) from the package's files"
    return 1
  fi
  # it loads, and reports its vector path and OpenMP
  if ! R_LIBS="$lib" Rscript -e 'library(fastkpca); x <- as.matrix(iris[, 1:4]); f <- kpca(x, features = 2); stopifnot(all(is.finite(f$eig)))' \
       >"$dir/load.log" 2>&1; then
    cat "$dir/load.log"; echo "compilers: $name: FAIL - did not load or fit"; return 1
  fi
  # with OpenMP: a child forked after threaded work, and the two-stage
  # reduction (2100 rows) under a thread limit of 1, finish with the bits
  # of one thread (issue 50: both hung under libgomp; clang's libomp is the
  # other runtime CRAN's builds use)
  if [ -n "$omp" ] && ! R_LIBS="$lib" timeout 300 Rscript -e '
      library(fastkpca); set.seed(1); x <- matrix(rnorm(2100 * 4), 2100)
      k1 <- kernel_matrix(rbfdot(0.1), x[1:800, ], threads = 1)
      k2 <- kernel_matrix(rbfdot(0.1), x[1:800, ], threads = 2)
      r <- parallel::mclapply(1:2, function(i) kernel_matrix(rbfdot(0.1), x[1:800, ], threads = 2),
                              mc.cores = 2)
      stopifnot(identical(k1, k2), identical(r[[1]], k1), identical(r[[2]], k1))
      f1 <- kpca(x, threads = 1)
      f2 <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(paste(
        "library(fastkpca); set.seed(1); x <- matrix(rnorm(2100 * 4), 2100);",
        "saveRDS(eig(kpca(x, threads = 2)), \"'"$dir"'/eig.rds\")"))),
        env = "OMP_THREAD_LIMIT=1")
      stopifnot(f2 == 0, identical(readRDS("'"$dir"'/eig.rds"), eig(f1)))' \
       >"$dir/threads.log" 2>&1; then
    cat "$dir/threads.log"; echo "compilers: $name: FAIL - a forked child or a thread limit"; return 1
  fi
  echo "compilers: $name ($cc${omp:+, $omp}): clean, $(( $(date +%s) - start )) s"
}

cross_build() {
  local dir="$work/aarch64" f ok=0
  mkdir -p "$dir"
  local rinc; rinc="$(R RHOME)/include"
  [ -e "$rinc/R.h" ] || rinc=/usr/share/R/include
  for omp in "" "-fopenmp"; do
    for f in "$work/src/src/"*.c; do
      aarch64-linux-gnu-gcc -std=gnu11 -I"$rinc" -DNDEBUG -fpic $flags $omp \
        -c "$f" -o "$dir/$(basename "$f" .c).o" >>"$dir/build.log" 2>&1 || ok=1
    done
  done
  local warn; warn="$(own_warnings "$dir/build.log")"
  if [ $ok -ne 0 ] || [ -n "$warn" ] || grep -q "error" "$dir/build.log"; then
    head -n 40 "$dir/build.log"
    echo "compilers: aarch64: FAIL"
    return 1
  fi
  echo "compilers: aarch64 (aarch64-linux-gnu-gcc, with and without -fopenmp): clean"
}

# two builds at a time (two cores)
pids=()
names=()
run() {
  local name=$1
  case " $builds " in *" $name "*) ;; *) return 0 ;; esac
  case "$name" in
    gcc-omp)   native_build gcc-omp gcc -fopenmp >"$work/$name.out" 2>&1 & ;;
    gcc)       native_build gcc gcc "" >"$work/$name.out" 2>&1 & ;;
    clang-omp) native_build clang-omp clang -fopenmp >"$work/$name.out" 2>&1 & ;;
    clang)     native_build clang clang "" >"$work/$name.out" 2>&1 & ;;
    clang-contract) native_build clang-contract clang -fopenmp -ffp-contract=fast \
                 >"$work/$name.out" 2>&1 & ;;
    aarch64)   cross_build >"$work/$name.out" 2>&1 & ;;
  esac
  pids+=($!); names+=("$name")
  if [ ${#pids[@]} -ge 2 ]; then drain; fi
}
drain() {
  local i
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "$work/${names[$i]}.out"
  done
  pids=(); names=()
}
for b in gcc-omp gcc clang-omp clang clang-contract aarch64; do run "$b"; done
drain
if [ $status -eq 0 ]; then echo "compilers: every build clean"; else echo "compilers: FAIL"; fi
exit $status
