#!/usr/bin/env bash
# h200_contend.sh BIN OUT [RUNS]: slices by contention on a GPU. contend_classes from SM 0 over
# four pages and from SM 2 over two (bench/contend_classes.c), then RUNS whole discoveries
# (seeds 1..RUNS, default 3, --data kept, progress timestamped); one tarball back.
set -u
b="$1"; o="$2/contend"; runs="${3:-3}"; mkdir -p "$o"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; uptime; } >"$o/gpu.txt" 2>&1
ts() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
for sm in 0 2; do
  p=4; [ "$sm" = 2 ] && p=2
  t0=$(date +%s.%N)
  "$b/contend_classes" --target cuda --pages $p --sm $sm -o "$o/cc_sm$sm.csv" >"$o/cc_sm$sm.out" 2>"$o/cc_sm$sm.err"
  echo "contend_classes --sm $sm --pages $p: rc $? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
  cat "$o/cc_sm$sm.out" >>"$o/summary.txt"
  gzip -f "$o/cc_sm$sm.csv"
done
for r in $(seq 1 "$runs"); do
  t0=$(date +%s.%N)
  timeout 170 "$b/gpuxray" discover --target cuda --seed $r --progress --data "$o/data$r" -o "$o/disc$r.json" 2>&1 >"$o/disc$r.txt" | ts >"$o/disc$r.log"
  echo "discover seed $r: rc ${PIPESTATUS[0]} $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$o/summary.txt"
  grep -E "^(timer|levels|line|slices|ways|sets|policy|smem|tlb|total) " "$o/disc$r.txt" >>"$o/summary.txt"
  grep -E "^(l2\.|slices by|memory)" "$o/disc$r.txt" | cut -c1-150 >>"$o/summary.txt"
done
cat "$o/summary.txt"
tar -C "$2" -czf "$2/contend.tgz" contend
