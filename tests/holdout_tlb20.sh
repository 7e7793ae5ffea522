#!/usr/bin/env bash
# holdout_tlb20.sh - the tlb stage on 20 random hidden translation
# hierarchies (issue 11's proof, the CI-sized part): `gpuxray holdout
# --count 20 --only tlb` generates profiles with tlb sections, runs the tlb
# stage through the sim target and compares every tlb field it measures.
# Fails when a field misses WITHOUT being flagged by the tool, or when a
# discovery fails outright. Skips (77) only when the holdout command reports
# it is not built.
# Usage: bash tests/holdout_tlb20.sh path/to/gpuxray
set -u
bin="${1:?usage: holdout_tlb20.sh path/to/gpuxray}"
if [ ! -x "$bin" ]; then
    echo "holdout_tlb20: $bin is not executable" >&2
    exit 1
fi
jobs=$(nproc 2>/dev/null || echo 2)
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$bin" holdout --count 20 --seed 1 --only tlb --jobs "$jobs" >"$out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -qi 'not built' "$out"; then
    echo "holdout_tlb20: skipped: $(grep -i 'not built' "$out" | head -1)"
    exit 77
fi
cat "$out"
if ! grep -Eq '^holdout: 20 hidden profiles' "$out"; then
    echo "holdout_tlb20: FAILED: no holdout summary (exit $rc)" >&2
    exit 1
fi
# the tlb rows were compared: at least the first level's entries of all 20
if ! grep -Eq '^tlb\.levels\[0\]\.entries +20 ' "$out"; then
    echo "holdout_tlb20: FAILED: tlb.levels[0].entries not compared on 20 profiles" >&2
    exit 1
fi
failed=$(sed -n 's/^profiles whose discovery failed: \([0-9]*\).*/\1/p' "$out" | head -1)
if [ -z "$failed" ] || [ "$failed" -ne 0 ]; then
    echo "holdout_tlb20: FAILED: ${failed:-?} discoveries failed" >&2
    exit 1
fi
unflagged=$(awk '/^misses:/ {m = 1; next} m && / NO( |$)/' "$out")
if [ -n "$unflagged" ]; then
    echo "holdout_tlb20: FAILED: fields missed without being flagged:" >&2
    echo "$unflagged" >&2
    exit 1
fi
echo "holdout_tlb20: ok (every miss flagged by the tool)"
exit 0
