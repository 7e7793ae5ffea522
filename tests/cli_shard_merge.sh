#!/bin/bash
# cli_shard_merge.sh - `gpuxray sim --threads N` and `--shard I/N` with
# `gpuxray merge`: the statistics of every split run are byte-identical to
# one thread's (text and --json), on uniform and near-far profiles, traces
# of single-sector, line-crossing and shared-memory accesses; a run the
# model cannot split falls back to one thread (--threads) or is refused
# (--shard, exit 2); bad merges (a shard missing or twice, partials of
# different profiles or traces, malformed or foreign JSON) exit 2 naming
# the problem, with nothing on stdout.
#
# usage: bash tests/cli_shard_merge.sh path/to/gpuxray
set -u
GX=${1:?usage: cli_shard_merge.sh path/to/gpuxray}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
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
expect_err() {
    grep -qF -- "$2" "$T/$1.err" || { fail "$1: stderr lacks '$2':"; sed 's/^/    /' "$T/$1.err" >&2; }
    [ ! -s "$T/$1.out" ] || fail "$1: printed something on stdout"
}
same() { # same A B WHAT
    cmp -s "$T/$1" "$T/$2" || { fail "$3: $1 and $2 differ"; diff "$T/$1" "$T/$2" | head -5 >&2; }
}

# Splittable profiles: the seed card and hopper-like as shipped (plru-rand:
# one random stream per slice) and with a deterministic policy, the H200
# model without far_stream_extra (it couples an SM's accesses over every
# slice), gem5-vega without its tlb section.
P=$ROOT/profiles
cp "$P/seed-ampere-6mb.json" "$T/seedrand.json"
cp "$P/hopper-like.json" "$T/hopperrand.json"
sed 's/"policy": "plru-rand:[0-9.]*"/"policy": "plru"/' "$P/seed-ampere-6mb.json" >"$T/seed.json"
sed 's/"policy": "plru-rand:[0-9.]*"/"policy": "plru"/' "$P/hopper-like.json" >"$T/hopper.json"
python3 - "$P/nvidia-h200-model.json" "$T/h200.json" "$T/h200fse.json" <<'PY' || fail "cannot write the h200 profiles"
import json, sys
d = json.load(open(sys.argv[1]))
d["tlb"] = None  # the L2's paths: translation does not split (checked with vega below)
json.dump(d, open(sys.argv[3], "w"), indent=1)
d["l2"]["latency_cycles"]["far_stream_extra"] = None
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
python3 - "$P/gem5-vega.json" "$T/vega.json" <<'PY' || fail "cannot write the vega profile"
import json, sys
d = json.load(open(sys.argv[1]))
d["l2"]["policy"] = "plru"
d["tlb"] = None
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
for p in seed hopper h200 vega seedrand hopperrand; do
    "$GX" validate "$T/$p.json" >/dev/null || fail "profile $p does not validate"
done

# Traces: 4-byte random reads; 100-byte accesses (many cross a line, so
# their sectors fall in several slices); a text trace with shared-memory
# records, writes and atomics.
"$GX" trace gen random --count 60k --footprint 32MiB --sms 8 --size 4 -o "$T/r.bin" || fail "gen r"
"$GX" trace gen random --count 20k --footprint 8MiB --sms 4 --size 100 --write-ratio 0.3 \
    --atomic-ratio 0.1 --seed 3 -o "$T/u.bin" || fail "gen u"
{
    for i in $(seq 0 31); do printf '0 SR %x 4 warp=1 lane=%d\n' $((i * 132)) "$i"; done
    for i in $(seq 0 400); do printf '%d R %x 64\n' $((i % 3)) $((i * 4160 + 96)); done
    for i in $(seq 0 200); do printf '1 W %x 32\n' $((i * 8192)); done
    for i in $(seq 0 31); do printf '0 SW %x 4 warp=2 lane=%d\n' $((i * 4)) "$i"; done
} >"$T/m.trace"

for p in seed hopper h200 vega seedrand hopperrand; do
    for t in r.bin u.bin m.trace; do
        k="$p-$t"
        run "$k-1" 0 "$GX" sim --profile "$T/$p.json" --trace "$T/$t" --quiet
        run "$k-1j" 0 "$GX" sim --profile "$T/$p.json" --trace "$T/$t" --quiet --json
        run "$k-2" 0 "$GX" sim --profile "$T/$p.json" --trace "$T/$t" --quiet --threads 2
        run "$k-4" 0 "$GX" sim --profile "$T/$p.json" --trace "$T/$t" --quiet --threads 4
        run "$k-3j" 0 "$GX" sim --profile "$T/$p.json" --trace "$T/$t" --quiet --json --threads 3
        same "$k-1.out" "$k-2.out" "$k --threads 2 text"
        same "$k-1.out" "$k-4.out" "$k --threads 4 text"
        same "$k-1j.out" "$k-3j.out" "$k --threads 3 json"
        for i in 0 1 2; do
            run "$k-s$i" 0 "$GX" sim --profile "$T/$p.json" --trace "$T/$t" --quiet \
                --shard $i/3 --threads $((i + 1)) -o "$T/$k-part$i.json"
        done
        run "$k-m" 0 "$GX" merge "$T/$k-part2.json" "$T/$k-part0.json" "$T/$k-part1.json"
        run "$k-mj" 0 "$GX" merge "$T/$k-part0.json" "$T/$k-part1.json" "$T/$k-part2.json" --json
        same "$k-1.out" "$k-m.out" "$k merge of 3 shards, text"
        same "$k-1j.out" "$k-mj.out" "$k merge of 3 shards, json"
    done
done
grep -q '^shared memory' "$T/h200-m.trace-m.out" || fail "the merged H200 run lost its shared-memory block"
grep -q '"split":\[\[' "$T/seed-u.bin-part0.json" || fail "no access split between shards in the 100-byte trace"

# One shard of one: the whole run, translation included (gem5-vega's tlb).
V=$P/gem5-vega.json
"$GX" trace gen pages --count 300 --page-size 4KiB --order random -o "$T/pg.bin" || fail "gen pages"
run vx-1 0 "$GX" sim --profile "$V" --trace "$T/pg.bin" --quiet
run vx-1j 0 "$GX" sim --profile "$V" --trace "$T/pg.bin" --quiet --json
run vx-s 0 "$GX" sim --profile "$V" --trace "$T/pg.bin" --quiet --shard 0/1 -o "$T/vx-part.json"
run vx-m 0 "$GX" merge "$T/vx-part.json"
run vx-mj 0 "$GX" merge "$T/vx-part.json" --json
same vx-1.out vx-m.out "gem5-vega (translation) shard 0/1 merged, text"
same vx-1j.out vx-mj.out "gem5-vega (translation) shard 0/1 merged, json"
grep -q 'translation' "$T/vx-m.out" || fail "the merged translated run lost its translation lines"

# Runs the model cannot split: --threads falls back with a note, --shard N>1 is refused.
run vx-2 0 "$GX" sim --profile "$V" --trace "$T/pg.bin" --quiet --threads 2
same vx-1.out vx-2.out "gem5-vega (translation) --threads 2 fallback"
grep -q 'runs on one thread: translation' "$T/vx-2.err" || fail "vx-2: no fallback note"
run no-vx 2 "$GX" sim --profile "$V" --trace "$T/pg.bin" --shard 0/2
expect_err no-vx "cannot be split into shards: translation"
run rand-2 0 "$GX" sim --profile "$P/seed-ampere-6mb.json" --trace "$T/r.bin" --threads 2
grep -q 'runs on one thread' "$T/rand-2.err" && fail "rand-2: plru-rand fell back to one thread"
run no-fse 2 "$GX" sim --profile "$T/h200fse.json" --trace "$T/r.bin" --shard 0/2
expect_err no-fse "far_stream_extra"
run no-noise 2 "$GX" sim --profile "$T/seed.json" --trace "$T/r.bin" --noise --shard 0/2
expect_err no-noise "--noise"

# Bad options.
run bad-shard1 2 "$GX" sim --profile "$T/seed.json" --trace "$T/r.bin" --shard 3/3
run bad-shard2 2 "$GX" sim --profile "$T/seed.json" --trace "$T/r.bin" --shard 2
expect_err bad-shard2 "I/N expected"
run bad-shard3 2 "$GX" sim --profile "$T/seed.json" --trace "$T/r.bin" --shard -1/2
run bad-thr0 2 "$GX" sim --profile "$T/seed.json" --trace "$T/r.bin" --threads 0
run bad-thr 2 "$GX" sim --profile "$T/seed.json" --trace "$T/r.bin" --threads 65

# Bad merges.
S=$T/seed-r.bin
run m-missing 2 "$GX" merge "$S-part0.json" "$S-part2.json"
expect_err m-missing "shard 1 of 3 is missing"
run m-twice 2 "$GX" merge "$S-part0.json" "$S-part1.json" "$S-part1.json"
expect_err m-twice "shard 1 of 3 given twice"
run m-profile 2 "$GX" merge "$S-part0.json" "$T/hopper-r.bin-part1.json" "$S-part2.json"
expect_err m-profile "differs from"
run m-trace 2 "$GX" merge "$S-part0.json" "$T/seed-u.bin-part1.json" "$S-part2.json"
expect_err m-trace "trace_digest differs from"
head -c 300 "$S-part1.json" >"$T/cut.json"
run m-cut 2 "$GX" merge "$S-part0.json" "$T/cut.json" "$S-part2.json"
expect_err m-cut "cut.json: not JSON"
run m-foreign 2 "$GX" merge "$T/seed-r.bin-1j.out"
expect_err m-foreign "not partial statistics"
sed 's/"slice_accesses":\[/"slice_accesses":[1,/' "$S-part1.json" >"$T/slices.json"
run m-slices 2 "$GX" merge "$S-part0.json" "$T/slices.json" "$S-part2.json"
expect_err m-slices "l2.slice_accesses"
run m-none 2 "$GX" merge
run m-nofile 2 "$GX" merge "$T/nonexistent.json"
expect_err m-nofile "cannot read"
run m-opt 2 "$GX" merge --bogus "$S-part0.json"

if [ "$fails" -gt 0 ]; then
    echo "cli_shard_merge: $fails failure(s)" >&2
    exit 1
fi
echo "cli_shard_merge: ok"
