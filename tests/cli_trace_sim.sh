#!/bin/bash
# cli_trace_sim.sh - `gpuxray trace gen` + `gpuxray sim` end to end: text and
# binary traces give the same stats, stdin works, --json is valid JSON, the
# golden stats of a small committed trace match exactly, and every bad input
# exits 2 naming the problem with no stats printed.
#
# usage: bash tests/cli_trace_sim.sh path/to/gpuxray
# GX_UPDATE_GOLDEN=1 rewrites the golden files (tests/golden/) instead of
# comparing: review the diff before committing.
set -u
GX=${1:?usage: cli_trace_sim.sh path/to/gpuxray}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SEED=$ROOT/profiles/seed-ampere-6mb.json
HOPPER=$ROOT/profiles/hopper-like.json
GOLD=$ROOT/tests/golden
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# run NAME EXPECTED_RC CMD...: stdout -> $T/NAME.out, stderr -> $T/NAME.err
run() {
    local name=$1 want=$2
    shift 2
    "$@" >"$T/$name.out" 2>"$T/$name.err"
    local rc=$?
    if [ "$rc" != "$want" ]; then
        fail "$name: exit $rc, expected $want: $*"
        sed 's/^/    /' "$T/$name.err" >&2
    fi
}

# expect_err NAME TEXT: stderr of NAME contains TEXT, stdout is empty
expect_err() {
    grep -qF -- "$2" "$T/$1.err" || { fail "$1: stderr lacks '$2':"; sed 's/^/    /' "$T/$1.err" >&2; }
    [ ! -s "$T/$1.out" ] || fail "$1: printed something on stdout (stats of a bad input?)"
}

json_ok() { # FILE: valid JSON (python3 when present, else a structural check)
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null
    else
        head -c1 "$1" | grep -q '{' && tail -n1 "$1" | grep -q '^}$' &&
            [ "$(grep -o '{' "$1" | wc -l)" = "$(grep -o '}' "$1" | wc -l)" ]
    fi
}

[ -f "$SEED" ] || { echo "skip: $SEED missing" >&2; exit 77; }

# ---- help ----
run help 0 "$GX" trace --help
grep -q "stream|stride|random|tile" "$T/help.out" || fail "trace --help lacks the patterns"
run simhelp 0 "$GX" sim --help
grep -q -- "--profile" "$T/simhelp.out" || fail "sim --help lacks --profile"

# ---- gen + sim, text and binary, stdin ----
run gen_bin 0 "$GX" trace gen random --footprint 64MiB --count 200k --sms 84 --sm-assign random \
    --write-ratio 0.1 --seed 9 -o "$T/r.bin"
run gen_txt 0 "$GX" trace gen random --footprint 64MiB --count 200k --sms 84 --sm-assign random \
    --write-ratio 0.1 --seed 9 --text -o "$T/r.txt"
head -c 8 "$T/r.bin" | grep -q GXTRACE2 || fail "binary trace lacks the magic"
[ "$(grep -c ' [RWA] 0x' "$T/r.txt")" = 200000 ] || fail "text trace does not hold 200000 lines"
ls "$T" | grep -q '\.tmp\.' && fail "a temporary file was left behind"

run sim_text 0 "$GX" sim --profile "$SEED" --trace "$T/r.bin"
for w in "L2 " "DRAM" "imbalance" "latency" "p99" "cycles"; do
    grep -q "$w" "$T/sim_text.out" || fail "text stats lack '$w'"
done
grep -q "accesses/s" "$T/sim_text.err" || fail "no throughput line on stderr"
grep -q "accesses/s" "$T/sim_text.out" && fail "throughput on stdout (stdout must be deterministic)"

run sim_json_bin 0 "$GX" sim --profile "$SEED" --trace "$T/r.bin" --json
run sim_json_txt 0 "$GX" sim --profile "$SEED" --trace "$T/r.txt" --json
"$GX" sim --profile "$SEED" --trace - --json <"$T/r.txt" >"$T/sim_json_stdin.out" 2>/dev/null ||
    fail "sim --trace - failed"
json_ok "$T/sim_json_bin.out" || fail "sim --json is not valid JSON"
cmp -s "$T/sim_json_bin.out" "$T/sim_json_txt.out" || fail "text and binary traces give different stats"
cmp -s "$T/sim_json_bin.out" "$T/sim_json_stdin.out" || fail "stdin gives different stats"
for k in '"l2"' '"near"' '"far"' '"dram"' '"slices"' '"imbalance"' '"latency"' '"p50_cycles"' \
    '"p99_cycles"' '"histogram"' '"cycles"' '"per_access"' '"hit_rate"' '"sector_misses"' \
    '"line_misses"'; do
    grep -q "$k" "$T/sim_json_bin.out" || fail "JSON lacks $k"
done
grep -q '"accesses": 200000,' "$T/sim_json_bin.out" || fail "JSON does not count 200000 accesses"

# noise: reproducible for a seed, different from noise off
run noise1 0 "$GX" sim --profile "$SEED" --trace "$T/r.bin" --json --noise --seed 5
run noise2 0 "$GX" sim --profile "$SEED" --trace "$T/r.bin" --json --noise --seed 5
cmp -s "$T/noise1.out" "$T/noise2.out" || fail "--noise --seed 5 is not reproducible"
cmp -s "$T/noise1.out" "$T/sim_json_bin.out" && fail "--noise changes nothing"

# trace convert: binary -> text -> binary is lossless
run conv1 0 "$GX" trace convert "$T/r.bin" --text -o "$T/c.txt"
run conv2 0 "$GX" trace convert "$T/c.txt" -o "$T/c.bin"
cmp -s "$T/r.bin" "$T/c.bin" || fail "convert binary -> text -> binary changed the trace"
cmp -s "$T/r.txt" "$T/c.txt" || fail "convert binary -> text differs from gen --text"

# ---- golden: a small committed trace, its stats exactly ----
# The trace is made by these commands (checked here, so generator drift shows).
make_golden_trace() {
    {
        echo "# golden trace for tests/cli_trace_sim.sh (regenerate: GX_UPDATE_GOLDEN=1)"
        echo "# a few hand-written accesses: unaligned, across sectors and a 2 MiB page"
        echo "0 R 0x1c 8"
        echo "1 W 1fffff 2     # crosses the page"
        echo "2 A 0x400000"
        echo "3 R 0x400000 128"
        echo "# stream: 64 KiB in 32 B accesses on 4 SMs"
        "$GX" trace gen stream --footprint 64KiB --sms 4 --text -o - || return 1
        echo "# random: 8 MiB, 64 B accesses, 84 SMs, writes and atomics"
        "$GX" trace gen random --footprint 8MiB --count 1500 --size 64 --sms 84 --sm-assign random \
            --write-ratio 0.2 --atomic-ratio 0.05 --seed 3 --text -o - || return 1
        echo "# tile: 32 x 64 matrix of 8 B, 8 x 8 tiles, 8 SMs in blocks, at 1 GiB"
        "$GX" trace gen tile --rows 32 --cols 64 --elem 8 --tile 8 --sms 8 --sm-assign block \
            --base 0x40000000 --text -o - || return 1
        echo "# the stream again: now L2 hits"
        "$GX" trace gen stream --footprint 64KiB --sms 4 --text -o - || return 1
    } >"$1"
}
make_golden_trace "$T/golden.trace" || fail "building the golden trace failed"
golden_profiles="seed-ampere-6mb"
[ -f "$HOPPER" ] && golden_profiles="$golden_profiles hopper-like"
if [ "${GX_UPDATE_GOLDEN:-0}" = 1 ]; then
    mkdir -p "$GOLD"
    cp "$T/golden.trace" "$GOLD/small.trace"
    for p in $golden_profiles; do
        "$GX" sim --profile "$ROOT/profiles/$p.json" --trace "$GOLD/small.trace" --json --quiet \
            >"$GOLD/small.$p.json" || fail "golden sim on $p failed"
        echo "updated $GOLD/small.$p.json" >&2
    done
else
    [ -f "$GOLD/small.trace" ] || fail "tests/golden/small.trace missing (GX_UPDATE_GOLDEN=1 makes it)"
    cmp -s "$T/golden.trace" "$GOLD/small.trace" ||
        fail "the generators no longer produce tests/golden/small.trace (diff below; GX_UPDATE_GOLDEN=1 to accept)"
    diff "$GOLD/small.trace" "$T/golden.trace" | head -n 10 >&2
    for p in $golden_profiles; do
        g="$GOLD/small.$p.json"
        if [ ! -f "$g" ]; then
            fail "$g missing (GX_UPDATE_GOLDEN=1 makes it)"
            continue
        fi
        "$GX" sim --profile "$ROOT/profiles/$p.json" --trace "$GOLD/small.trace" --json --quiet \
            >"$T/golden.$p.json" || fail "golden sim on $p failed"
        if ! cmp -s "$g" "$T/golden.$p.json"; then
            fail "sim stats on $p differ from $g (GX_UPDATE_GOLDEN=1 to accept):"
            diff -u "$g" "$T/golden.$p.json" | head -n 40 >&2
        fi
    done
fi

# ---- bad inputs: exit 2, the problem named, no stats ----
printf '0 R 0x100\n1 W 0x200 64\n2 Q 0x300\n3 R 0x400\n' >"$T/bad_op.trace"
run bad_op 2 "$GX" sim --profile "$SEED" --trace "$T/bad_op.trace"
expect_err bad_op "bad_op.trace:3: bad op 'Q'"
printf '# header\n0 R 0x100\n\n0 R 0x100 4 extra\n' >"$T/bad_extra.trace"
run bad_extra 2 "$GX" sim --profile "$SEED" --trace "$T/bad_extra.trace" --json
expect_err bad_extra ":4: extra token 'extra'"
printf '0 R 0x100\n84 R 0x200\n' >"$T/bad_sm.trace"
run bad_sm 2 "$GX" sim --profile "$SEED" --trace "$T/bad_sm.trace"
expect_err bad_sm ":2: bad SM 84 (the profile has 84 SMs"
printf '0 R 0xzz\n' | "$GX" sim --profile "$SEED" --trace - >"$T/bad_stdin.out" 2>"$T/bad_stdin.err"
[ $? = 2 ] || fail "bad stdin trace: exit is not 2"
expect_err bad_stdin "<stdin>:1: bad address '0xzz'"
# binary version 1: a corrupt record, a truncated file
run conv_v1 0 "$GX" trace convert "$T/r.bin" --binary-v1 -o "$T/r1.bin"
head -c 8 "$T/r1.bin" | grep -q GXTRACE1 || fail "--binary-v1 trace lacks the GXTRACE1 magic"
run sim_json_v1 0 "$GX" sim --profile "$SEED" --trace "$T/r1.bin" --json
cmp -s "$T/sim_json_bin.out" "$T/sim_json_v1.out" || fail "binary versions 1 and 2 give different stats"
cp "$T/r1.bin" "$T/corrupt.bin"
printf '\x09' | dd of="$T/corrupt.bin" bs=1 seek=$((16 + 16 * 12345 + 14)) conv=notrunc status=none
run bad_bin 2 "$GX" sim --profile "$SEED" --trace "$T/corrupt.bin"
expect_err bad_bin "record 12345: bad op 9"
head -c $((16 + 16 * 500 + 7)) "$T/r1.bin" >"$T/trunc.bin"
run trunc_bin 2 "$GX" sim --profile "$SEED" --trace "$T/trunc.bin"
expect_err trunc_bin "record 500: truncated"
# streaming: a malformed record after 200000 good ones (far past the first
# batch and buffer): exit 2, the line named, no statistics
{ cat "$T/r.txt"; echo "0 R 0x100 lane=40"; cat "$T/r.txt"; } >"$T/mid.trace"
run mid 2 "$GX" sim --profile "$SEED" --trace "$T/mid.trace" --json
expect_err mid "mid.trace:200001: bad lane 'lane=40'"
# version 2 from a pipe; version 2 cut short (no end marker)
cat "$T/r.bin" | "$GX" sim --profile "$SEED" --trace - --json >"$T/pipe_v2.out" 2>/dev/null ||
    fail "sim of a version 2 trace on stdin failed"
cmp -s "$T/sim_json_bin.out" "$T/pipe_v2.out" || fail "version 2 on stdin gives different stats"
head -c 100000 "$T/r.bin" >"$T/cut.bin"
run cut_v2 2 "$GX" sim --profile "$SEED" --trace "$T/cut.bin"
expect_err cut_v2 "truncated"
# Accel-Sim: a small NVBit trace runs, its shared-memory records counted
run accelsim 0 "$GX" sim --profile "$SEED" --trace "$ROOT/tests/data/accelsim-kernel-1.traceg" --json
grep -q '"accesses": 9,' "$T/accelsim.out" || fail "Accel-Sim trace: not 9 global accesses"
# two shared warp instructions (one LDS of two lanes, one STS of one lane) through the bank model
grep -q '"accesses": 2, "reads": 1, "writes": 1, "lanes": 3' "$T/accelsim.out" ||
    fail "Accel-Sim trace: shared records not counted"
# profiles and files
run no_trace 2 "$GX" sim --profile "$SEED" --trace "$T/nonexistent.trace"
expect_err no_trace "nonexistent.trace: cannot open"
echo '{"format": "gpuxray-profile", "version": 1,' >"$T/broken.json"
run bad_profile 2 "$GX" sim --profile "$T/broken.json" --trace "$T/r.bin"
expect_err bad_profile "broken.json"
run no_args 2 "$GX" sim --trace "$T/r.bin"
expect_err no_args "--profile"
run bad_flag 2 "$GX" sim --profile "$SEED" --trace "$T/r.bin" --bogus
expect_err bad_flag "--bogus"

# trace gen errors
run gen_pat 2 "$GX" trace gen zigzag -o "$T/z.bin"
expect_err gen_pat "unknown pattern 'zigzag'"
run gen_noout 2 "$GX" trace gen stream
expect_err gen_noout "-o FILE"
run gen_size 2 "$GX" trace gen stream --size 0 -o "$T/z.bin"
expect_err gen_size "--size: 0 is out of range (1..128)"
run gen_fp 2 "$GX" trace gen random --footprint 64QB -o "$T/z.bin"
expect_err gen_fp "--footprint: 64QB is not a size"
run gen_ratio 2 "$GX" trace gen random --write-ratio 1.5 -o "$T/z.bin"
expect_err gen_ratio "--write-ratio"
run gen_dir 2 "$GX" trace gen stream --footprint 1MiB -o "$T/no/such/dir/z.bin"
expect_err gen_dir "z.bin"
[ -e "$T/z.bin" ] && fail "a failed trace gen left a file"

# latencies past the histogram's range are reported in the JSON too (a 70000-cycle DRAM)
sed 's/"dram_latency_cycles": [0-9.]*/"dram_latency_cycles": 70000/' "$SEED" >"$T/slow.json"
"$GX" trace gen random --footprint 64MiB --count 2000 -o "$T/r2k.bin" 2>/dev/null
run slow 0 "$GX" sim --profile "$T/slow.json" --trace "$T/r2k.bin" --json --quiet
grep -q '"past_range": {"from_cycles": 8191, "count": 2000}' "$T/slow.out" ||
    fail "JSON does not say that latencies went past the histogram's range"

if [ "$fails" != 0 ]; then
    echo "cli_trace_sim: $fails failure(s)" >&2
    exit 1
fi
echo "cli_trace_sim: ok"
