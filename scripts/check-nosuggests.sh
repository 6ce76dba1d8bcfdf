#!/usr/bin/env bash
# R CMD check --as-cran as CRAN's "noSuggests" check runs it: the tarball
# (built as usual, vignettes included) checked with _R_CHECK_FORCE_SUGGESTS_
# false against a library of the hard dependencies only (Depends, Imports,
# LinkingTo, recursively) plus the tools that run the tests and vignettes
# (testthat, knitr, rmarkdown, and their own hard dependencies); none of the
# other suggested packages (kernlab, future, recipes, progressr, DBI, the
# tidymodels packages, ...) is on the library path. NOT_CRAN is unset, as on
# CRAN. Tests, examples and vignettes must skip what they cannot run.
#
# The threads: CRAN allows a check at most 2 cores. OMP_THREAD_LIMIT is not
# set (it would hide a test that asks for more); instead, the threads of
# every R process of the check are watched every half second, and a process
# with more than 2 threads busy in the same half second fails the check. A
# thread is busy if it ran a quarter of the half second or more (and 20 ms
# at least): a third thread of a team computing runs most of it, even with
# the other chain of .ci/run on the same cores. Threads that exist but idle
# do not count: OpenMP's pool between parallel regions, and cli's timer,
# which wakes for microseconds but, woken by the timer interrupt, can be
# charged a whole 10 ms tick per wake-up (twice in one half second, seen
# once in CI: main and OpenMP's worker computing, cli's thread 2 ticks;
# the rule was 2 ticks then). The timing
# checks of examples and vignettes with CPU time over 2.5 times the elapsed
# time are switched on too, as CRAN does (on a machine of 2 cores they
# cannot fire; the watch can).
#
# Fails on any ERROR or WARNING, any failed test, either of those timing
# notes, or more than 2 busy threads. Usage: scripts/check-nosuggests.sh [source dir]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
src="$(cd "${1:-$here}" && pwd)"
start=$(date +%s)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export TZ="${TZ:-UTC}"

# the tarball, built with the libraries as they are (as CRAN builds it)
R CMD build "$src" >build.log 2>&1 ||
  { cat build.log; echo "nosuggests: R CMD build failed"; exit 1; }
tarball="$(ls fastkpca_*.tar.gz)"

# the library: links to the hard dependencies and the test and vignette
# tools, from wherever they are installed; base and recommended packages
# come with R itself
mkdir lib empty
Rscript --vanilla - "$src/DESCRIPTION" "$work/lib" <<'EOF'
args <- commandArgs(trailingOnly = TRUE)
desc <- read.dcf(args[1])
field <- function(f) if (f %in% colnames(desc)) desc[, f] else ""
deps <- unlist(lapply(c("Depends", "Imports", "LinkingTo"), function(f) {
  x <- trimws(strsplit(field(f), ",")[[1]])
  sub("[[:space:](].*$", "", x[nzchar(x)])
}))
hard <- setdiff(deps, "R")
tools_needed <- c("testthat", "knitr", "rmarkdown")
db <- installed.packages()
db <- db[!duplicated(db[, "Package"]), , drop = FALSE]
rownames(db) <- db[, "Package"]
wanted <- c(hard, tools_needed)
missing <- setdiff(wanted, rownames(db))
if (length(missing)) stop("not installed: ", paste(missing, collapse = ", "))
rec <- tools::package_dependencies(wanted, db = db, which = c("Depends", "Imports", "LinkingTo"),
                                   recursive = TRUE)
all <- unique(c(wanted, unlist(rec)))
with_r <- rownames(installed.packages(.Library))
link <- setdiff(all, with_r)
for (p in link) file.symlink(file.path(db[p, "LibPath"], p), file.path(args[2], p))
suggests <- trimws(strsplit(field("Suggests"), ",")[[1]])
suggests <- sub("[[:space:](].*$", "", suggests[nzchar(suggests)])
cat("nosuggests: hard dependencies:", paste(hard, collapse = ", "), "\n")
cat("nosuggests: suggested packages on the library path (test and vignette tools,",
    "their dependencies, R's recommended ones):",
    paste(intersect(suggests, c(link, with_r)), collapse = ", "), "\n")
EOF

# only that library (and R's own): the site and user libraries left out,
# and the site Renviron without its library settings
grep -v '^[[:space:]]*R_LIBS' "$(R RHOME)/etc/Renviron.site" >Renviron.site 2>/dev/null ||
  : >Renviron.site
export R_ENVIRON_SITE="$work/Renviron.site"
export R_LIBS="$work/lib" R_LIBS_SITE="$work/empty" R_LIBS_USER="$work/empty"
Rscript --vanilla -e '
absent <- c("kernlab", "future", "future.apply", "recipes", "progressr", "DBI", "RSQLite",
            "tidymodels", "tune", "dials", "workflows", "parsnip", "ggplot2")
there <- absent[vapply(absent, requireNamespace, NA, quietly = TRUE)]
cat("nosuggests: library path:", .libPaths(), "\n")
if (length(there))
  stop("these should not be installed for this check: ", paste(there, collapse = ", "))'

export _R_CHECK_FORCE_SUGGESTS_=false
# the checks that need the network are switched off (offline machines);
# --as-cran always checks for orphaned packages, which, with suggested
# packages missing, reads CRAN's package database: here an empty one, so
# that no package counts as orphaned
export _R_CHECK_CRAN_INCOMING_REMOTE_=false
mkdir -p cran-web/web/packages
Rscript --vanilla -e 'saveRDS(data.frame(Package = character(), Maintainer = character()),
                              "cran-web/web/packages/packages.rds")'
export R_CRAN_WEB="file://$work/cran-web"
export _R_CHECK_EXAMPLE_TIMING_CPU_TO_ELAPSED_THRESHOLD_=2.5
export _R_CHECK_VIGNETTE_TIMING_CPU_TO_ELAPSED_THRESHOLD_=2.5
unset NOT_CRAN OMP_THREAD_LIMIT OMP_NUM_THREADS

# the check in a session of its own, so that its processes can be told
# from the machine's other R processes
setsid R CMD check --as-cran --no-manual "$tarball" >check.out 2>&1 &
check_pid=$!
: >threads.log
: >ticks.prev
# the clock's ticks per second, for the CPU times in /proc's stat files
hz=$(getconf CLK_TCK)
then_ns=$(date +%s%N)
# processes come and go between the steps below: nothing here may stop
# the script
set +e
while kill -0 "$check_pid" 2>/dev/null; do
  # the CPU ticks of every thread of the check's R processes (R's
  # executable is named R; Rscript and R CMD start it)
  for pid in $(ps -s "$check_pid" -o pid=,comm= 2>/dev/null | awk '$2 == "R" { print $1 }'); do
    cat /proc/"$pid"/task/*/stat 2>/dev/null | awk -v pid="$pid" '{ print pid, $1, $14 + $15 }'
  done >ticks.now
  now_ns=$(date +%s%N)
  # a thread busy since the last look: CPU for a quarter of the time
  # between them, and 2 ticks (20 ms) at least
  awk -v need="$(( (now_ns - then_ns) * hz / 4000000000 ))" '
       NR == FNR { prev[$2] = $3; next }
       { if ($3 - (($2 in prev) ? prev[$2] : 0) >= (need > 2 ? need : 2)) busy[$1]++ }
       END { for (p in busy) if (busy[p] > 2) print p, busy[p] }' ticks.prev ticks.now |
    while read -r pid n; do
      command=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)
      echo "$n busy threads: pid $pid: $command"
    done >>threads.log
  mv ticks.now ticks.prev
  then_ns=$now_ns
  sleep 0.5
done
wait "$check_pid"
set -e
status=0

log=fastkpca.Rcheck/00check.log
tests_out=fastkpca.Rcheck/tests/testthat.Rout
[ -f "$tests_out" ] || tests_out=fastkpca.Rcheck/tests/testthat.Rout.fail
if [ -f "$tests_out" ]; then
  # what was skipped, and why (a skip must say what it cannot run)
  first=$(grep -n -m 1 -E "^══ (Skipped|Warnings|Failed)" "$tests_out" | cut -d: -f1 || true)
  if [ -n "$first" ]; then sed -n "${first},$((first + 199))p" "$tests_out"
  else tail -n 40 "$tests_out"; fi
fi
echo "---- nosuggests check status"
grep -E "^Status:|^\* checking .*(ERROR|WARNING|NOTE)$" "$log" || tail -n 40 check.out
grep -A15 -E "\.\.\. (ERROR|WARNING|NOTE)$" "$log" || true

counts=$(grep -E "^\[ FAIL [0-9]+ \| WARN [0-9]+ \| SKIP [0-9]+ \| PASS [0-9]+ \]" "$tests_out" \
  2>/dev/null | tail -n 1 || true)
if [ -n "$counts" ]; then
  fail=$(echo "$counts" | sed -E 's/.*FAIL ([0-9]+).*/\1/')
  skip=$(echo "$counts" | sed -E 's/.*SKIP ([0-9]+).*/\1/')
  pass=$(echo "$counts" | sed -E 's/.*PASS ([0-9]+).*/\1/')
  echo "nosuggests testthat: $pass passed, $fail failed, $skip skipped"
  [ "$fail" -eq 0 ] || status=1
else
  echo "nosuggests: no test summary found"; status=1
fi
if grep -qE "^Status:.*(ERROR|WARNING)" "$log"; then status=1; fi
if ! grep -qE "^Status:" "$log"; then status=1; fi
if grep -qE "with CPU time > .* times elapsed time" "$log"; then
  echo "nosuggests: examples or vignettes used more than 2.5 cores (see above)"; status=1
fi
if [ -s threads.log ]; then
  echo "nosuggests: R processes of the check with more than 2 threads busy at once:"
  sort -u threads.log | head -n 20
  status=1
else
  echo "nosuggests: no R process of the check had more than 2 threads busy at once"
fi
echo "nosuggests: $(( $(date +%s) - start )) s"
exit $status
