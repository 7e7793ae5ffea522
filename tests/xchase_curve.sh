#!/usr/bin/env bash
# xchase_curve.sh - bench/xchase_curve (raw translation-chase curves, the
# tool the H200 TLB data is read with) on the sim target: on a hidden
# translation hierarchy a chase far past every level costs more than one
# that fits the first; the quantiles are ordered; bad usage exits 2 and an
# unopenable target 3, each with a message.
# Usage: bash tests/xchase_curve.sh path/to/gpuxray (xchase_curve beside it)
set -u
bin="${1:?usage: xchase_curve.sh path/to/gpuxray}"
x="$(dirname "$bin")/xchase_curve"
[ -x "$x" ] || { echo "FAIL: $x not built (bench/xchase_curve.c)"; exit 1; }
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail=0
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
"$bin" gen-profile --seed 112 --tlb -o "$t/p.json" || { echo "FAIL: gen-profile"; exit 1; }
if ! "$x" --target "sim:$t/p.json" --steps 4,16384 6 >"$t/c.csv" 2>"$t/err"; then
    echo "FAIL: xchase_curve on sim: $(cat "$t/err")"
    exit 1
fi
awk -F, 'NR == 1 { if ($0 != "stride_bytes,steps,rounds,mean,min,q10,q50,q90,max") bad = "header" }
         NR > 1 { n++; m[n] = $4
                  if (!($5 <= $6 && $6 <= $7 && $7 <= $8 && $8 <= $9)) bad = "quantiles not ordered" }
         END { if (n != 2) bad = "rows: " n; else if (m[2] < m[1] + 20) bad = "no step: " m[1] " " m[2]
               if (bad) { print "FAIL: " bad; exit 1 } }' "$t/c.csv" || fail=1
# a thrashing thread: three more columns naming it
if ! "$x" --target "sim:$t/p.json" --steps 16 --thrash-sm 1 --thrash-steps 64 --thrash-stride 6 6 \
    >"$t/th.csv" 2>"$t/err"; then
    echo "FAIL: xchase_curve --thrash-* on sim: $(cat "$t/err")"
    fail=1
elif ! awk -F, 'NR == 2 && NF == 12 && $10 == 1 && $11 == 64 && $12 == 6291456 { ok = 1 }
                END { exit !ok }' "$t/th.csv"; then
    echo "FAIL: thrash columns: $(cat "$t/th.csv")"
    fail=1
fi
expect_exit 2 "$x"
expect_exit 2 "$x" --steps 0 6
expect_exit 2 "$x" --steps 4,x 6
expect_exit 2 "$x" --sm -1 6
expect_exit 2 "$x" -- 6
expect_exit 2 "$x" 6 0
expect_exit 2 "$x" --thrash-sm 1 6
expect_exit 2 "$x" --thrash-sm 0 --thrash-steps 4 --thrash-stride 2 6
expect_exit 2 "$x" --thrash-sm 1 --thrash-steps 0 --thrash-stride 2 6
expect_exit 3 "$x" --target "sim:$t/missing.json" 6
[ "$fail" -eq 0 ] && echo "xchase_curve: ok"
exit "$fail"
