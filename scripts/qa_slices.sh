#!/bin/bash
# qa_slices.sh - holdout check of the slice stage (l2.slices, l2.partitions,
# l2.hash.slice) on generated hidden profiles.
#
# usage: scripts/qa_slices.sh [-b BUILD_DIR] [-j JOBS] [-d WORKDIR] [-s DISCOVER_SEED]
#                             [FIRST [LAST]]
#        (default: build, 2 jobs, a fresh temp dir, discover's default seed,
#        profile seeds 1..200)
#
# For each seed S: gpuxray gen-profile --seed S; gpuxray discover --target
# sim:S.json --only slices (pulls in timer, levels, line); gpuxray compare.
# Prints one row per seed (truth shape, found values, verdicts, confidences,
# the slice stage's cost) and a summary: per field, exact / flagged (left
# out or confidence < 0.9) / silently wrong (in the profile, >= 0.9, and a
# mismatch). Needs jq.
#
# Notes: the tool never sees the truth; the truth is read here only to
# judge. Exit 1 when a field is silently wrong on some seed.
set -uo pipefail
BUILD=build
JOBS=2
WORK=
DSEED=
while getopts "b:j:d:s:" o; do
    case $o in
    b) BUILD=$OPTARG ;;
    j) JOBS=$OPTARG ;;
    d) WORK=$OPTARG ;;
    s) DSEED=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
FIRST=${1:-1}
LAST=${2:-200}
GX=$BUILD/gpuxray
[ -x "$GX" ] || { echo "qa_slices.sh: $GX not built" >&2; exit 2; }
command -v jq >/dev/null || { echo "qa_slices.sh: needs jq" >&2; exit 2; }
[ -n "$WORK" ] || WORK=$(mktemp -d)
mkdir -p "$WORK"

one() {
    local s=$1 w=$2 gx=$3 dseed=$4
    local seedopt=()
    [ -n "$dseed" ] && seedopt=(--seed "$dseed")
    "$gx" gen-profile --seed "$s" -o "$w/$s.json" >/dev/null 2>&1 || { echo "$s GENFAIL"; return; }
    local t0 t1
    t0=$(date +%s.%N)
    "$gx" discover --target "sim:$w/$s.json" --only slices "${seedopt[@]}" -o "$w/$s.found.json" \
        >"$w/$s.report.txt" 2>"$w/$s.err.txt"
    local drc=$?
    t1=$(date +%s.%N)
    "$gx" compare "$w/$s.json" "$w/$s.found.json" --json >"$w/$s.cmp.json" 2>/dev/null
    # slice stage cost: "slices  ok  calls  accesses  seconds"
    local cost
    cost=$(awk '$1 == "slices" && NF >= 5 && $3 ~ /^[0-9]+$/ {print $2, $3, $4; exit}' \
        "$w/$s.report.txt")
    [ -n "$cost" ] || cost="- 0 0"
    jq -r --arg s "$s" --arg rc "$drc" --arg cost "$cost" \
        --arg secs "$(echo "$t1 - $t0" | bc)" \
        --slurpfile t "$w/$s.json" --slurpfile f "$w/$s.found.json" '
        def row(n): (.fields[] | select(.field == n)) // {verdict: "absent", found: "-"};
        def conf(n): ($f[0].confidence[n] // "-") | tostring;
        ($t[0].l2) as $tl |
        [$s, $rc, $secs, $cost,
         ($tl.topology), ($tl.slices | tostring), ($tl.partitions | tostring),
         (($tl.hash.slice.table != null) | if . then "table" else "lin" end),
         ($t[0].sim.noise.jitter_cycles | tostring), ($t[0].sim.sm_slice_skew_cycles | tostring),
         (row("l2.slices").found), row("l2.slices").verdict, conf("l2.slices"),
         (row("l2.partitions").found), row("l2.partitions").verdict, conf("l2.partitions"),
         row("l2.hash.slice").verdict, conf("l2.hash.slice")] | join(" ")' \
        "$w/$s.cmp.json" 2>/dev/null || echo "$s NOCMP rc=$drc"
}
export -f one

echo "seed rc secs status calls accesses topo t.slices t.parts t.hash jitter skew" \
    "f.slices v.slices c.slices f.parts v.parts c.parts v.hash c.hash"
seq "$FIRST" "$LAST" | xargs -P "$JOBS" -I{} bash -c 'one "$@"' _ {} "$WORK" "$GX" "$DSEED" |
    sort -n >"$WORK/table.txt"
cat "$WORK/table.txt"
echo "work dir: $WORK"
awk '
function judge(v, c, col) {
    if (v == "match") ex[col]++;
    else if (v == "missing" || v == "absent" || (c != "-" && c + 0 < 0.9)) fl[col]++;
    else { wr[col]++; bad[col] = bad[col] " " $1; }
}
NF >= 20 {
    n++; acc += $6; if ($6 > maxacc) maxacc = $6; if ($3 > maxs) maxs = $3;
    judge($14, $15, "l2.slices"); judge($17, $18, "l2.partitions"); judge($19, $20, "l2.hash.slice");
}
NF < 20 { broken = broken " " $1 }
END {
    printf "\n%d profiles; slice stage accesses mean %.0f max %d; slowest discover %.2f s\n",
        n, n ? acc / n : 0, maxacc, maxs;
    printf "%-15s %8s %8s %8s  %s\n", "field", "exact", "flagged", "WRONG", "wrong seeds";
    split("l2.slices l2.partitions l2.hash.slice", f, " ");
    for (i = 1; i <= 3; i++) {
        c = f[i];
        printf "%-15s %7.1f%% %7.1f%% %7.1f%%  %s\n", c, n ? 100 * ex[c] / n : 0,
            n ? 100 * fl[c] / n : 0, n ? 100 * wr[c] / n : 0, bad[c];
        if (wr[c]) status = 1;
    }
    if (broken != "") { print "no result:" broken; status = 1 }
    exit status
}' "$WORK/table.txt"
