#!/bin/bash
# bench_access.sh - the per-access cost of `gpuxray sim` (issue 14, item 2):
# instructions per access (callgrind, whole process) and wall-clock rates
# (whole process, fastest of 3) for 4-byte reads on the seed card, binary
# version 2 and text, streaming, random over 64 MiB (miss-dominated) and
# random over 1 MiB (hit-dominated); resident memory of each run. Prints a
# Markdown section on stdout (scripts/bench.sh puts it in
# docs/performance.md).
#
# usage: scripts/bench_access.sh [BUILD_DIR]
#   GX_BENCH_RATE_COUNT (default 20M, the issue's count): accesses of the traces timed
#   GX_BENCH_RUNS (default 5): timed runs of each trace, the fastest kept
#   GX_BENCH_CG_COUNT (default 1M): accesses of the traces counted by callgrind
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
G=$BUILD/gpuxray
[ -x "$G" ] || { echo "bench_access.sh: $G not built (make build)" >&2; exit 2; }
PROFILE=$ROOT/profiles/seed-ampere-6mb.json
RC=${GX_BENCH_RATE_COUNT:-20M}
RUNS=${GX_BENCH_RUNS:-5}
CC=${GX_BENCH_CG_COUNT:-1M}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The traces: NAME PATTERN FOOTPRINT FORMAT
cases="stream-bin stream 64MiB binary
random-bin random 64MiB binary
hit-bin random 1MiB binary
stream-text stream 64MiB text
random-text random 64MiB text"

gen() { # gen NAME PATTERN FOOTPRINT FORMAT COUNT
    "$G" trace gen "$2" --footprint "$3" --count "$5" --size 4 --"$4" -o "$T/$1.$5"
}
sim() { "$G" sim --profile "$PROFILE" --trace "$1" --json --quiet -o /dev/null; }

# instructions per access: callgrind, whole process, and past the fixed cost
# (the same run over a one-access trace: reading the profile, building the model)
have_cg=0
command -v valgrind >/dev/null 2>&1 && have_cg=1
ir() { # ir TRACE -> instructions of the whole process
    valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$T/cg.out" \
        "$G" sim --profile "$PROFILE" --trace "$1" --json --quiet -o /dev/null 2>"$T/cg.log"
    sed -n 's/.*Collected : *//p' "$T/cg.log"
}
now_s() { # wall clock in seconds, to the microsecond (bash's EPOCHREALTIME, else date)
    if [ -n "${EPOCHREALTIME:-}" ]; then echo "$EPOCHREALTIME"; else date +%s.%N; fi
}
best_wall() { # best_wall TRACE -> fastest of RUNS wall times (s) and the max RSS (KiB)
    # timed to the microsecond around the process (/usr/bin/time's 10 ms
    # steps are 6% of a 0.16 s run), /usr/bin/time for the resident memory
    local best="" rss=0 t0 t1 w m
    for _ in $(seq "$RUNS"); do
        t0=$(now_s)
        /usr/bin/time -f '%e %M' -o "$T/time" "$G" sim --profile "$PROFILE" --trace "$1" \
            --json --quiet -o /dev/null
        t1=$(now_s)
        read -r _ m <"$T/time"
        w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
        best=$(awk -v a="$best" -v b="$w" 'BEGIN { print (a == "" || b < a) ? b : a }')
        [ "$m" -gt "$rss" ] && rss=$m
    done
    echo "$best $rss"
}

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: *//')
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
count() { # 10M -> 10000000 (the command line's decimal suffixes)
    awk -v c="$1" 'BEGIN { m = 1; u = toupper(substr(c, length(c)));
        if (u == "K") m = 1e3; else if (u == "M") m = 1e6; else if (u == "G") m = 1e9;
        if (m > 1) c = substr(c, 1, length(c) - 1); printf "%.0f", c * m }'
}
n_rc=$(count "$RC")
n_cc=$(count "$CC")
one=$T/one.trace
echo "0 R 0x0 4" >"$one"
base_ir=0
[ $have_cg = 1 ] && base_ir=$(ir "$one")
rows=""
while read -r name pat fp fmt; do
    gen "$name" "$pat" "$fp" "$fmt" "$CC"
    gen "$name" "$pat" "$fp" "$fmt" "$RC"
    cg="-" cgm="-"
    if [ $have_cg = 1 ]; then
        total=$(ir "$T/$name.$CC")
        cg=$(awk -v t="$total" -v n="$n_cc" 'BEGIN { printf "%.0f", t / n }')
        cgm=$(awk -v t="$total" -v b="$base_ir" -v n="$n_cc" 'BEGIN { printf "%.0f", (t - b) / n }')
    fi
    read -r wall rss < <(best_wall "$T/$name.$RC")
    rate=$(awk -v n="$n_rc" -v w="$wall" 'BEGIN { if (w > 0) printf "%.1f", n / w / 1e6; else print "-" }')
    rows="$rows| $name | $pat $fp, $fmt | $cg | $cgm | $rate | $(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }') |
"
done <<<"$cases"
load1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

echo "## Per-access cost"
echo
echo "The whole \`gpuxray sim\` process (reading and decoding the trace, the model, the"
echo "statistics; one thread) on seed-ampere-6mb (128 B lines, 32 B sectors), 4-byte reads,"
echo "one SM, measured by \`make bench\` (\`scripts/bench_access.sh build\`)."
echo
echo "- Machine: ${cpu:-$(uname -m)}, $(nproc) cores; $(date -u +%Y-%m-%d); load average"
echo "  $load0 at the start, $load1 at the end (other work on the machine slows the"
echo "  rates, not the instruction counts)."
echo "- Traces: \`gpuxray trace gen PATTERN --footprint F --count N --size 4 --binary|--text\`"
echo "  (stream: sequential passes; random 64 MiB: mostly L2 misses; random 1 MiB: hit-dominated)."
echo "- *instructions / access*: \`valgrind --tool=callgrind gpuxray sim --profile P --trace T"
echo "  --json --quiet\` over $n_cc accesses, the whole process divided by the accesses, and"
echo "  past the fixed cost (the same run over a one-access trace: $base_ir instructions)."
echo "- *M accesses/s*: $n_rc accesses, wall time of the whole process (timed to the"
echo "  microsecond around it), the fastest of $RUNS; *RSS*: the largest resident memory of those"
echo "  runs (\`/usr/bin/time\`)."
echo "- The bars (issue 14, item 2): binary stream >= 100 M accesses/s, binary random >= 60,"
echo "  text >= 40; hit-dominated not slower per access than miss-dominated."
echo
echo "| case | trace | instructions / access | past the fixed cost | M accesses/s | RSS (MiB) |"
echo "|---|---|---:|---:|---:|---:|"
printf "%s" "$rows"
echo
echo "Reproduce one row: \`gpuxray trace gen random --footprint 64MiB --count 20M --size 4 -o r.bin"
echo "&& /usr/bin/time gpuxray sim --profile profiles/seed-ampere-6mb.json --trace r.bin --quiet\`."
echo
