#!/usr/bin/env bash
# h200_tlb_model.sh - the model with the H200's measured tlb section
# (profiles/nvidia-h200-model.json, written by scripts/h200_tlb_section.py)
# replays every translation-chase curve measured on the H200
# (data/nvidia-h200/tlb/curves-2026-12-02/curves.csv and fine.csv: 336
# points, strides 2 MiB to 1 GiB, 2 to 32768 pages) within 5% at every point.
# The model's and the GPU's costs of a chase whose translations all hit the
# first level differ by one constant (the xchase kernel's cost beyond an L2
# hit, and which slice holds the chase's line: 298-306 cycles across the
# GPU's runs): the model's curve is moved by the difference of the two at
# 2 MiB x 2 pages, once; every other point is the model's own.
# Usage: bash tests/h200_tlb_model.sh path/to/gpuxray (xchase_curve beside it)
set -u
bin="${1:?usage: h200_tlb_model.sh path/to/gpuxray}"
x="$(dirname "$bin")/xchase_curve"
root="$(cd "$(dirname "$0")/.." && pwd)"
[ -x "$x" ] || { echo "FAIL: $x not built (bench/xchase_curve.c)"; exit 1; }
d="$root/data/nvidia-h200/tlb/curves-2026-12-02"
prof="$root/profiles/nvidia-h200-model.json"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
tail -n +2 "$d/curves.csv" >"$t/meas.csv"
tail -n +2 "$d/fine.csv" >>"$t/meas.csv"
: >"$t/model.csv"
for stride in $(cut -d, -f1 "$t/meas.csv" | sort -n | uniq); do
    steps=$(awk -F, -v s="$stride" '$1 == s { print $2 }' "$t/meas.csv" | sort -n | uniq |
            paste -sd, -)
    if ! "$x" --target "sim:$prof" --steps "$steps" $((stride >> 20)) >"$t/one.csv" 2>"$t/err"
    then
        echo "FAIL: xchase_curve on the model at $((stride >> 20)) MiB: $(cat "$t/err")"
        exit 1
    fi
    tail -n +2 "$t/one.csv" >>"$t/model.csv"
done
awk -F, 'FNR == NR { m[$1 "," $2] = $4; next }
         { k = $1 "," $2; meas[k] = $4; order[++n] = k }
         END {
             if (!("2097152,2" in m) || !("2097152,2" in meas)) { print "FAIL: no base point"; exit 1 }
             off = meas["2097152,2"] - m["2097152,2"]
             for (i = 1; i <= n; i++) {
                 k = order[i]
                 if (!(k in m)) { print "FAIL: the model has no point " k; bad++; continue }
                 e = (m[k] + off - meas[k]) / meas[k]
                 if (e < 0) e = -e
                 if (e > worst) { worst = e; at = k }
                 if (e > 0.05) { printf "FAIL: %s: measured %.1f, model %.1f\n", k, meas[k], m[k] + off; bad++ }
             }
             printf "h200_tlb_model: %d points, offset %.1f cycles, worst %.1f%% at %s\n", n, off, 100 * worst, at
             exit bad > 0
         }' "$t/model.csv" "$t/meas.csv" || exit 1
echo "h200_tlb_model: ok"
