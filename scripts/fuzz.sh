#!/usr/bin/env bash
# fuzz.sh BUILD_DIR SECONDS [HARNESS...] - run the libFuzzer harnesses built in BUILD_DIR
# (`make fuzz` builds them) for SECONDS each, one after another, from the seed corpus in
# fuzz/corpus/NAME. SECONDS 0 runs the seed corpus once (a smoke test).
#
# - New inputs and crash artifacts go to a scratch folder (GX_FUZZ_WORK, default a fresh
#   temporary folder), never into the repository: fuzz/corpus/ stays the small, reviewed
#   seed set (a crash found becomes a file there plus a regression test, by hand).
# - Each run's log is GX_FUZZ_WORK/NAME.log; its last lines (executions, coverage) are
#   printed. Exit 1 when a harness finds a crash, a leak or undefined behaviour.
# - The command-line harness runs with -close_fd_mask=3: the commands' messages would
#   otherwise fill the log.
set -euo pipefail
b="${1:?usage: fuzz.sh BUILD_DIR SECONDS [HARNESS...]}"
secs="${2:?usage: fuzz.sh BUILD_DIR SECONDS [HARNESS...]}"
shift 2
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(profile trace_text trace_binary cli)
work="${GX_FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/gpuxray-fuzz-XXXXXX")}"
mkdir -p "$work"
# Largest input tried per harness: a few times the largest seed, so the fuzzer
# explores structure rather than length.
declare -A max_len=([profile]=16384 [trace_text]=4096 [trace_binary]=4096 [cli]=1024)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=0
for h in "${harnesses[@]}"; do
  exe="$b/fuzz_$h"
  [ -x "$exe" ] || { echo "fuzz.sh: $exe not built (make fuzz builds it)" >&2; exit 2; }
  mkdir -p "$work/$h/corpus"
  opts=(-max_len="${max_len[$h]:-4096}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/$h/")
  [ "$h" = cli ] && opts+=(-close_fd_mask=3)
  if [ "$secs" -eq 0 ]; then
    opts+=(-runs=0)
  else
    opts+=(-max_total_time="$secs")
  fi
  echo "fuzz: $h for ${secs}s (log $work/$h.log)"
  if ! "$exe" "${opts[@]}" "$work/$h/corpus" "fuzz/corpus/$h" >"$work/$h.log" 2>&1; then
    echo "fuzz: $h FAILED; artifacts in $work/$h/:" >&2
    grep -E "ERROR|SUMMARY|Test unit written" "$work/$h.log" | head -20 >&2 || true
    failed=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|^#[0-9]+.*(DONE|INITED)" \
    "$work/$h.log" | sed 's/^/  /' || true
done
exit $failed
