#!/usr/bin/env bash
# tlb_page.sh - bench/tlb_page (how much arena one page-table walk
# translates) on the model of the H200 (profiles/nvidia-h200-model.json:
# 2 MiB pages, 128-byte fetches of 16 PTEs, 32 MiB TLB entries): a pass over
# 256 MiB in 64 KiB steps after the translations are evicted walks once per
# 32 MiB (8 walks, at every 32 MiB), and never inside a walked range; bad
# usage exits 2 and an unopenable target 3, each with a message; the tlb
# stage's report rows of the same measurement say 32 MiB and a 2 MiB page.
# Usage: bash tests/tlb_page.sh path/to/gpuxray (tlb_page beside it)
set -u
bin="${1:?usage: tlb_page.sh path/to/gpuxray}"
x="$(dirname "$bin")/tlb_page"
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -x "$x" ] || { echo "FAIL: $x not built (bench/tlb_page.c)"; exit 1; }
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail=0
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
if ! "$x" --target "sim:$root/profiles/nvidia-h200-model.json" --bytes 268435456 >"$t/out" 2>"$t/err"
then
    echo "FAIL: tlb_page on the model: $(cat "$t/err")"
    exit 1
fi
grep -q '^walks 8 of 4096 accesses 65536 bytes apart over 268435456 bytes: one per 33554432 bytes' \
    "$t/out" || { echo "FAIL: expected 8 walks, one per 32 MiB: $(tail -1 "$t/out")"; fail=1; }
awk '/^walk at/ { if ($3 + 0 != n * 33554432) bad = 1; n++ } END { exit bad || n != 8 }' \
    "$t/out" || { echo "FAIL: walks not at every 32 MiB: $(grep '^walk at' "$t/out" | tr '\n' ' ')"; fail=1; }
# the tlb stage's own measurement of it (tlb_page.c): one walk per 32 MiB,
# a 2 MiB translation page (the bounds 32 MiB / 16 PTEs and the granule meet)
if ! "$bin" discover --target "sim:$root/profiles/nvidia-h200-model.json" --only tlb -o /dev/null \
    >"$t/disc.txt" 2>"$t/disc.err"; then
    echo "FAIL: discover --only tlb: $(tail -3 "$t/disc.err")"
    fail=1
else
    grep -Eq '^tlb\.walk_bytes +32 MiB ' "$t/disc.txt" ||
        { echo "FAIL: tlb.walk_bytes: $(grep walk_bytes "$t/disc.txt")"; fail=1; }
    grep -Eq '^tlb\.translation_page +2 MiB ' "$t/disc.txt" ||
        { echo "FAIL: tlb.translation_page: $(grep translation_page "$t/disc.txt")"; fail=1; }
fi
expect_exit 2 "$x" --step 3
expect_exit 2 "$x" --bytes 4 --step 8192
expect_exit 2 "$x" --reps 0
expect_exit 2 "$x" --walk
expect_exit 2 "$x" --bogus 1
expect_exit 3 "$x" --target "sim:$t/missing.json"
[ "$fail" -eq 0 ] && echo "tlb_page: ok"
exit "$fail"
