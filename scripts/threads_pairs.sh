#!/bin/bash
# threads_pairs.sh - wall time of `gpuxray sim --threads 1` against
# `--threads 2` on two pinned cores, in alternating rounds (one-thread run,
# then each build's two-thread run), medians and round-by-round ratios;
# the statistics (--json) compared between every run of a trace.
#
# usage: scripts/threads_pairs.sh BIN OUT [BIN_B ...]
#   BIN     the gpuxray binary whose one-thread run is the reference
#   OUT     folder for the traces' outputs, raw.txt (every run) and summary.txt
#   BIN_B   more builds whose `--threads 2` runs join each round (before/after)
# environment (all optional):
#   CORES=2,3        the two CPUs (default: two CPUs of distinct physical cores,
#                    CPU 0 avoided when there are more than two)
#   ROUNDS=7         rounds per trace; COUNT=10M accesses per trace
#   PROFILE=FILE     default profiles/seed-ampere-6mb.json beside this script
#   TRACES="r1 r8 r32 h1"  r<N>: random 4-byte reads over 64 MiB from N SMs
#                    (round robin); h1: over 1 MiB from 1 SM (hits); s1: stream;
#                    t<N>: as r<N>, written as text
#   TRACE_DIR=DIR    where the binary traces are made (default OUT/traces)
# Load matters: `uptime` is recorded before and after; run it on an idle host.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 BIN OUT [BIN_B ...]" >&2
    exit 2
fi
BIN=$1
OUTD=$2
shift 2
BINS=("$BIN" "$@")
for b in "${BINS[@]}"; do
    [ -x "$b" ] || { echo "$0: $b is not an executable" >&2; exit 2; }
done
HERE=$(cd "$(dirname "$0")" && pwd)
PROFILE=${PROFILE:-$HERE/../profiles/seed-ampere-6mb.json}
[ -r "$PROFILE" ] || { echo "$0: cannot read profile $PROFILE" >&2; exit 2; }
ROUNDS=${ROUNDS:-7}
COUNT=${COUNT:-10M}
TRACES=${TRACES:-r1 r8 r32 h1}
mkdir -p "$OUTD"
TD=${TRACE_DIR:-$OUTD/traces}
mkdir -p "$TD"

# two CPUs on distinct physical cores (SMT siblings share one core's units)
pick_cores() {
    lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' | awk -F, '
        { cpu[NR] = $1; core[NR] = $2; n = NR }
        END {
            start = n > 2 ? 2 : 1; got = 0
            for (i = start; i <= n && got < 2; i++) {
                if (got == 1 && core[i] == c0) continue
                if (got == 0) { c0 = core[i]; a = cpu[i] } else b = cpu[i]
                got++
            }
            if (got == 2) print a "," b
        }'
}
CORES=${CORES:-$(pick_cores)}
CORES=${CORES:-0,1}
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c "$CORES")

{
    echo "host: $(uname -n) $(nproc) CPUs; $(lscpu 2>/dev/null | grep -m1 'Model name' | sed 's/  */ /g')"
    echo "pinned: ${PIN[*]:-nothing}; rounds $ROUNDS; $COUNT accesses; profile $(basename "$PROFILE")"
    echo "builds: ${BINS[*]}"
    echo "load before: $(uptime)"
} > "$OUTD/summary.txt"
: > "$OUTD/raw.txt"

make_trace() { # NAME FILE
    case $1 in
    r*) "$BIN" trace gen random --footprint 64MiB --count "$COUNT" --size 4 --sms "${1#r}" \
            --binary -o "$2" ;;
    h*) "$BIN" trace gen random --footprint 1MiB --count "$COUNT" --size 4 --sms "${1#h}" \
            --binary -o "$2" ;;
    s*) "$BIN" trace gen stream --footprint 256MiB --count "$COUNT" --size 4 --sms "${1#s}" \
            --binary -o "$2" ;;
    t*) "$BIN" trace gen random --footprint 64MiB --count "$COUNT" --size 4 --sms "${1#t}" \
            --text -o "$2" ;;
    *) echo "$0: unknown trace $1" >&2; exit 2 ;;
    esac
}

one_run() { # TRACE BUILD-INDEX THREADS -> appends "trace build threads elapsed user sys"
    local t=$1 k=$2 th=$3 o="$OUTD/$1.b$2.t$3.json" s0 s1
    s0=$(date +%s.%N)
    "${PIN[@]}" "${BINS[$k]}" sim --profile "$PROFILE" --trace "$TD/$t.trace" --threads "$th" \
        --json --quiet -o "$o"
    s1=$(date +%s.%N)
    echo "$t $k $th $(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.4f", b - a }')" >> "$OUTD/raw.txt"
}

x2() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

for t in $TRACES; do
    [ -s "$TD/$t.trace" ] || make_trace "$t" "$TD/$t.trace"
    one_run "$t" 0 1 # warm the page cache
    : > "$OUTD/raw.txt.tmp"
    grep -v "^$t " "$OUTD/raw.txt" > "$OUTD/raw.txt.tmp" || true
    mv "$OUTD/raw.txt.tmp" "$OUTD/raw.txt"
    for ((r = 0; r < ROUNDS; r++)); do
        one_run "$t" 0 1
        for k in "${!BINS[@]}"; do one_run "$t" "$k" 2; done
    done
    ident=identical
    for k in "${!BINS[@]}"; do
        cmp -s "$OUTD/$t.b0.t1.json" "$OUTD/$t.b$k.t2.json" || ident="DIFFERENT (build $k)"
    done
    one=$(awk -v t="$t" '$1 == t && $3 == 1 { print $4 }' "$OUTD/raw.txt" | median)
    line="$t: one thread $one s"
    for k in "${!BINS[@]}"; do
        two=$(awk -v t="$t" -v k="$k" '$1 == t && $2 == k && $3 == 2 { print $4 }' "$OUTD/raw.txt" | median)
        # round by round: the round's one-thread time over this build's two-thread time
        rr=$(awk -v t="$t" -v k="$k" '$1 == t && $3 == 1 { one = $4 }
                 $1 == t && $2 == k && $3 == 2 { print one / $4 }' "$OUTD/raw.txt")
        lo=$(echo "$rr" | sort -g | head -1)
        hi=$(echo "$rr" | sort -g | tail -1)
        line="$line; build $k threads 2 $two s = $(x2 "$one" "$two")"
        line="$line (rounds: median $(x2 "$(echo "$rr" | median)" 1), $(x2 "$lo" 1)-$(x2 "$hi" 1))"
    done
    echo "$line; $ident" >> "$OUTD/summary.txt"
done
echo "load after: $(uptime)" >> "$OUTD/summary.txt"
cat "$OUTD/summary.txt"
