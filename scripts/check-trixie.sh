#!/usr/bin/env bash
# R CMD check --as-cran on the R of Debian trixie (R 4.5 and gcc 14), where
# the rest of CI has Debian bookworm's R 4.2 and gcc 12: newer R checks more
# (non-API entry points in the compiled code, the Rd files, the HTML
# manual, ...) and newer gcc warns about more. An x86-64 Debian trixie root
# is built natively with mmdebstrap once per machine (about 1.5 minutes)
# and kept in FASTKPCA_TRIXIE_ROOT, by default a folder of its own under
# ~/.cache (as scripts/arm64.sh keeps its arm64 root); it is rebuilt when
# the package list below changes (a stamp in the root holds the list's
# hash). The sources are copied into the root, and R CMD build and R CMD
# check run there through chroot, with /proc mounted. The logs of the last
# check are kept beside the root (FASTKPCA_TRIXIE_ROOT.last-check).
#
# In the root: Debian's r-base-dev (R, gcc, make, BLAS and LAPACK), tidy
# (the HTML manual's check), and the suggested packages that Debian trixie
# has and the tests use (testthat, kernlab, Matrix, callr, future,
# future.apply, progressr, DBI, RSQLite, slam, tm, janeaustenr, recipes,
# ggplot2, tibble, rlang, batchtools, future.batchtools). Not there: the
# tidymodels packages Debian lacks (tune, dials, future.mirai, ...);
# knitr, rmarkdown and pandoc (the vignettes are neither built nor checked:
# R CMD build --no-build-vignettes, R CMD check --ignore-vignettes; without
# pandoc README.md and NEWS.md are not checked either: a NOTE); LaTeX
# (--no-manual; the HTML manual is checked). What they would run, the check
# on R 4.2 runs (scripts/test.sh). The tests that need them skip: this
# step counts the skips by kind and prints testthat's list with reasons.
#
# The check runs as CRAN's: NOT_CRAN unset (skip_on_cran() skips, at most
# 2 threads a test), _R_CHECK_FORCE_SUGGESTS_ false, offline (the remote
# incoming checks off; an empty CRAN package database for the orphaned
# check, as scripts/check-nosuggests.sh does), the C code compiled with
# CRAN's -Wall -pedantic -Wstrict-prototypes on top of Debian's flags.
#
# Exits 1 on any ERROR or WARNING of the check, any compiler warning from
# the package's files, or any failed test; 2 when it could not run (not
# root, no mmdebstrap, the root not built); 0 otherwise, with the line
# "trixie: passed - ...". Needs root and apt-get (installs mmdebstrap
# where missing) and Debian's mirror (FASTKPCA_TRIXIE_MIRROR, by default
# the machine's own) the first time.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
suite=trixie
root="${FASTKPCA_TRIXIE_ROOT:-$HOME/.cache/fastkpca/$suite-root}"
debs="r-base-dev,tidy,r-cran-testthat,r-cran-kernlab,r-cran-generics,r-cran-matrix"
debs+=",r-cran-callr,r-cran-future,r-cran-future.apply,r-cran-progressr"
debs+=",r-cran-dbi,r-cran-rsqlite,r-cran-slam,r-cran-tm,r-cran-janeaustenr"
debs+=",r-cran-recipes,r-cran-ggplot2,r-cran-tibble,r-cran-rlang"
debs+=",r-cran-batchtools,r-cran-future.batchtools"
mirror="${FASTKPCA_TRIXIE_MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}"
[ -n "$mirror" ] || mirror="$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)"
start_all=$(date +%s)

[ "$(id -u)" -eq 0 ] || { echo "trixie: needs root (mmdebstrap, chroot)"; exit 2; }
if ! command -v mmdebstrap >/dev/null 2>&1; then
  echo "trixie: installing mmdebstrap"
  export DEBIAN_FRONTEND=noninteractive
  # (scripts/arm64.sh, in CI's other chain, may hold apt's lock: wait for it)
  lock=(-o DPkg::Lock::Timeout=600)
  { apt-get install "${lock[@]}" -y -q mmdebstrap ||
      { apt-get update "${lock[@]}" -q && apt-get install "${lock[@]}" -y -q mmdebstrap; }; } \
    >/dev/null 2>&1 || { echo "trixie: could not install mmdebstrap"; exit 2; }
fi

# the root, built once per package list
stamp="$root/.fastkpca-root"
want="$(printf '%s %s\n' "$suite" "$debs" | sha256sum | cut -d' ' -f1)"
if [ ! -e "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "trixie: building the Debian $suite root in $root (once per package list)"
  start=$(date +%s)
  # (a run stopped by force may have left /proc mounted in the old root)
  if mountpoint -q "$root/proc" 2>/dev/null; then umount "$root/proc"; fi
  rm -rf --one-file-system "$root"
  mkdir -p "$(dirname "$root")"
  # dpkg under eatmydata while the root is built (its fsyncs tripled the
  # time); the root is left without it
  hooks=/usr/share/mmdebstrap/hooks/eatmydata
  [ -d "$hooks" ] || hooks=""
  if ! nice -n 10 mmdebstrap --variant=minbase --include="$debs" \
       ${hooks:+--hook-dir="$hooks"} "$suite" "$root" \
       ${mirror:+"$mirror"} >"$root.log" 2>&1; then
    tail -n 30 "$root.log"; echo "trixie: could not build the root"
    rm -rf --one-file-system "$root"; exit 2
  fi
  echo "$want" >"$stamp"
  echo "trixie: root built in $(( $(date +%s) - start )) s"
fi

# the sources copied into the root; the check in a folder of the root
work="$root/tmp/fastkpca-check"
rm -rf "$work"
mkdir -p "$work/src"
mounted_proc=0
# the check's logs are kept beside the root until the next run
logs="$root.last-check"
rm -rf "$logs"
cleanup() {
  if [ -d "$work/fastkpca.Rcheck" ]; then
    mkdir -p "$logs/tests"
    cp "$work"/*.log "$work"/check.out "$logs/" 2>/dev/null || true
    cp "$work"/fastkpca.Rcheck/00*.* "$logs/" 2>/dev/null || true
    cp "$work"/fastkpca.Rcheck/tests/*.Rout* "$logs/tests/" 2>/dev/null || true
  fi
  if [ $mounted_proc -eq 1 ]; then umount "$root/proc" || true; fi
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
if ! mountpoint -q "$root/proc"; then mount -t proc proc "$root/proc"; mounted_proc=1; fi
tar -C "$here" --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.Rcheck' \
  --exclude='fastkpca_*.tar.gz' -cf - . | tar -C "$work/src" -xf -
mkdir -p "$work/cran-web/web/packages"
in_root() { nice -n 10 chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin \
  LANG=C.UTF-8 TZ=UTC "$@"; }
in_root Rscript -e 'saveRDS(data.frame(Package = character(), Maintainer = character()),
                            "/tmp/fastkpca-check/cran-web/web/packages/packages.rds")'
echo "trixie: $(in_root R --version | head -n 1), $(in_root gcc --version | head -n 1)"

start=$(date +%s)
if ! in_root sh -c 'cd /tmp/fastkpca-check && R CMD build --no-build-vignettes src' \
     >"$work/build.log" 2>&1; then
  cat "$work/build.log"; echo "trixie: FAIL - R CMD build failed"; exit 1
fi
tarball="$(cd "$work" && ls fastkpca_*.tar.gz)"
# CRAN's warning flags (as scripts/compilers.sh's) on top of Debian's own
# (which harden: _FORTIFY_SOURCE, -fstack-protector-strong, ...), for gcc 14
echo 'CFLAGS += -Wall -pedantic -Wstrict-prototypes' >"$work/Makevars"
set +e
in_root env _R_CHECK_FORCE_SUGGESTS_=false _R_CHECK_CRAN_INCOMING_REMOTE_=false \
  R_CRAN_WEB=file:///tmp/fastkpca-check/cran-web R_MAKEVARS_USER=/tmp/fastkpca-check/Makevars \
  sh -c "cd /tmp/fastkpca-check && R CMD check --as-cran --no-manual --ignore-vignettes $tarball" \
  >"$work/check.out" 2>&1
set -e
took=$(( $(date +%s) - start ))

status=0
log="$work/fastkpca.Rcheck/00check.log"
tests_out="$work/fastkpca.Rcheck/tests/testthat.Rout"
[ -f "$tests_out" ] || tests_out="$work/fastkpca.Rcheck/tests/testthat.Rout.fail"
if [ -f "$tests_out" ]; then
  # what was skipped, and why (a suggested package not in the root, or
  # skip_on_cran()), then the warnings and failures
  first=$(grep -n -m 1 -E "^══ (Skipped|Warnings|Failed)" "$tests_out" | cut -d: -f1 || true)
  if [ -n "$first" ]; then sed -n "${first},$((first + 199))p" "$tests_out"
  else tail -n 40 "$tests_out"; fi
fi
echo "---- trixie check status"
if [ -f "$log" ]; then
  grep -E "^Status:|^\* checking .*(ERROR|WARNING|NOTE)$" "$log" || tail -n 40 "$work/check.out"
  grep -A15 -E "\.\.\. (ERROR|WARNING|NOTE)$" "$log" || true
else
  tail -n 40 "$work/check.out"
fi
# every warning the compiler gave on the package's own files (R CMD check
# shows those it deems significant; this step fails on all of them)
own="$(grep -E "^([^ ]*/)?[A-Za-z0-9_]+\.(c|h):[0-9]+(:[0-9]+)?: warning" \
  "$work/fastkpca.Rcheck/00install.out" 2>/dev/null || true)"
if [ -n "$own" ]; then
  echo "$own" | head -n 40
  echo "trixie: $(echo "$own" | wc -l) compiler warning(s) from the package's files"; status=1
fi
grep -m 1 -E "^gcc .*-c " "$work/fastkpca.Rcheck/00install.out" 2>/dev/null |
  sed 's/^/trixie: compiled as: /' || true
summary=""
counts=$(grep -E "^\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]" "$tests_out" \
  2>/dev/null | tail -n 1 || true)
if [ -n "$counts" ]; then
  fail=$(echo "$counts" | sed -E 's/.*FAIL ([0-9]+).*/\1/')
  warn=$(echo "$counts" | sed -E 's/.*WARN ([0-9]+).*/\1/')
  skip=$(echo "$counts" | sed -E 's/.*SKIP ([0-9]+).*/\1/')
  pass=$(echo "$counts" | sed -E 's/.*PASS ([0-9]+).*/\1/')
  summary="$pass passed, $fail failed, $skip skipped"
  echo "trixie testthat: $summary"
  # the skips by kind, from testthat's report ("• REASON (N): where", a
  # reason wrapped over lines): skip_on_cran(), a suggested package not in
  # the root, anything else (a tool or a system feature the root lacks)
  awk '/^══ Skipped/ { on = 1; next } on && /^(══|\[ FAIL)/ { on = 0 }
       on && /^• / { if (r != "") print r; r = $0; next }
       on && r != "" { r = r " " $0 }
       END { if (r != "") print r }' "$tests_out" |
    awk '{ n = 0; if (match($0, /\(([0-9]+)\):/)) n = substr($0, RSTART + 1, RLENGTH - 3) + 0
           if ($0 ~ /^• On CRAN/) cran += n; else if ($0 ~ /is not installed/) pkg += n; else other += n }
         END { printf "trixie skips: %d on CRAN (skip_on_cran), %d a suggested package not in the root, %d other\n",
               cran, pkg, other }'
  # testthat lists the warnings only off CRAN: their number
  echo "trixie testthat: $warn warnings (listed by the check on R 4.2, scripts/test.sh)"
  [ "$fail" -eq 0 ] || status=1
else
  echo "trixie: no test summary found"; status=1
fi
verdict="$(grep -E "^Status:" "$log" 2>/dev/null | tail -n 1 || true)"
[ -n "$verdict" ] || { verdict="the check did not finish"; status=1; }
if echo "$verdict" | grep -qE "ERROR|WARNING"; then status=1; fi
what="R CMD check --as-cran on $(in_root Rscript -e 'cat(R.version.string)') in ${took} s"
if [ $status -eq 0 ]; then
  echo "trixie: passed - $what: $verdict; tests: $summary ($(( $(date +%s) - start_all )) s in all)"
else
  echo "trixie: FAIL - $what: $verdict; tests: ${summary:-none counted}"
fi
exit $status
