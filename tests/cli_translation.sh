#!/bin/bash
# cli_translation.sh - `gpuxray trace gen pages` + `gpuxray sim` with address
# translation (profiles/gem5-vega.json) end to end: the walker's leaf reads
# and skipped neighbours match the hand-derived counts of docs/translation.md
# through the command line, every order runs without a fault, the text
# output has its translation lines, and bad pages options exit 2.
#
# usage: bash tests/cli_translation.sh path/to/gpuxray
set -u
GX=${1:?usage: cli_translation.sh path/to/gpuxray}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VEGA=$ROOT/profiles/gem5-vega.json
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}
[ -f "$VEGA" ] || { echo "skip: $VEGA missing" >&2; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 needed to read the JSON" >&2; exit 77; }

# field FILE EXPR: a value of the sim JSON (python expression over d)
field() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# 4096 pages of 4 KiB in order, 128-byte fetches: one leaf read per 16 pages
"$GX" trace gen pages --count 4096 --page-size 4KiB --order sequential -o "$T/seq.bin" ||
    fail "gen pages sequential"
"$GX" sim --profile "$VEGA" --trace "$T/seq.bin" --json --quiet >"$T/seq.json" || fail "sim seq"
[ "$(field "$T/seq.json" "d['translation']['walker']['pageTableReadsByLevel'][:4]")" = \
  "[1, 1, 8, 256]" ] || fail "sequential 4 KiB pages: page-table reads by level $(field "$T/seq.json" "d['translation']['walker']['pageTableReadsByLevel']")"
[ "$(field "$T/seq.json" "d['translation']['faults']")" = 0 ] || fail "sequential: faults"

# every other page unmapped: 256 leaf fetches x 8 invalid neighbours
"$GX" trace gen pages --count 4096 --page-size 4KiB --unmapped-every 2 -o "$T/half.bin" ||
    fail "gen pages --unmapped-every"
"$GX" sim --profile "$VEGA" --trace "$T/half.bin" --json --quiet >"$T/half.json" || fail "sim half"
[ "$(field "$T/half.json" "d['translation']['walker']['pwc2InvalidNeighboursSkipped']")" = 2048 ] ||
    fail "unmapped-every 2: skipped neighbours $(field "$T/half.json" "d['translation']['walker']['pwc2InvalidNeighboursSkipped']")"
[ "$(field "$T/half.json" "d['translation']['maps']")" = 2048 ] || fail "unmapped-every 2: MAP records"

for order in strided random; do
    "$GX" trace gen pages --count 2048 --page-size 2MiB --order $order --stride 3 -o "$T/$order.bin" ||
        fail "gen pages $order"
    "$GX" sim --profile "$VEGA" --trace "$T/$order.bin" --json --quiet >"$T/$order.json" ||
        fail "sim $order"
    [ "$(field "$T/$order.json" "d['translation']['accesses']")" = 2048 ] || fail "$order: accesses"
    [ "$(field "$T/$order.json" "d['translation']['faults']")" = 0 ] || fail "$order: faults"
done
"$GX" sim --profile "$VEGA" --trace "$T/seq.bin" --quiet >"$T/seq.txt" || fail "sim text"
for w in xlate "TLB L1" walker PWC coalesce; do
    grep -q "^$w" "$T/seq.txt" || fail "text output lacks '$w'"
done

# a MAP without an INV after it: the page-walk caches may hold entries of
# the old table (here final entries of the default 2 MiB mapping where the
# first MAP left nothing mapped); the walk must take them as misses, not
# crash (a page size of 0 once divided a group): the two reads after the
# MAP, outside the range it maps, are faults
cat >"$T/remap.txt" <<'TRACE'
0 R 0x7f00329f21c0 4 warp=269
0 MAP 0x7f00238e4000 bytes=0x20000 page=0x1000
3 R 0x7f00329faf20 4 warp=440
3 R 0x7f00050bfe5c 4 warp=440
TRACE
"$GX" sim --profile "$VEGA" --trace "$T/remap.txt" --json --quiet >"$T/remap.json" ||
    fail "sim: a MAP without INV (stale page-walk cache entries)"
[ "$(field "$T/remap.json" "d['translation']['faults']")" = 2 ] || fail "remap: faults"
[ "$(field "$T/remap.json" "d['translation']['accesses']")" = 3 ] || fail "remap: accesses"

# bad options: exit 2, nothing written
for bad in "--count 10 --unmapped-every 1" "--count 10 --page-size 3000" "--page-size 4KiB" \
           "--count 10 --order sideways"; do
    # shellcheck disable=SC2086
    "$GX" trace gen pages $bad -o "$T/bad.bin" 2>"$T/bad.err"
    rc=$?
    [ "$rc" = 2 ] || fail "gen pages $bad: exit $rc, expected 2"
    [ -e "$T/bad.bin" ] && fail "gen pages $bad: wrote a file" && rm -f "$T/bad.bin"
done

[ "$fails" = 0 ] || exit 1
echo "cli_translation: ok"
