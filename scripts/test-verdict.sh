# Sourced by the scripts that run test files through scripts/run-tests.R in
# strict mode (arm64.sh, plain-path.sh, debian-future.sh):
#   test_verdict NAME LOG STATUS SECONDS WHAT
# prints the log's tail and "NAME: FAIL - ..." when the run's exit status
# was not 0 or its log has no summary line (returns 1), else the skipped
# tests' reasons and "NAME: passed - WHAT in SECONDS s: <summary>"
# (returns 0).
test_verdict() {
  local name="$1" log="$2" rc="$3" took="$4" what="$5" summary
  summary="$(grep -E '^testthat: [0-9]+ files' "$log" | tail -n 1 || true)"
  if [ "$rc" -ne 0 ] || [ -z "$summary" ]; then
    tail -n 80 "$log"
    echo "$name: FAIL - $what (${took} s): ${summary:-R did not finish (exit $rc)}"
    return 1
  fi
  grep -E "^(══ Skipped|Reason|[0-9]+\. .*Reason)" "$log" | head -n 40 || true
  echo "$name: passed - $what in ${took} s: ${summary#testthat: }"
}
