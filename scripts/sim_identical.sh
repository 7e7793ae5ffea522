#!/bin/sh
# sim_identical.sh BEFORE_BIN AFTER_BIN [WORKDIR]
#
# Proof that a change to the trace-driven model moved no statistic: runs
# `gpuxray sim --json` of two builds over one set of traces and profiles and
# compares the outputs byte for byte. The traces are generated once by
# BEFORE_BIN (random / stream / stride / tile / pages, binary and text, reads,
# writes and atomics, one and several SMs); the runs cover the uniform and the
# near-far profiles of profiles/ (gem5-vega and nvidia-h200-model with their
# translation on), --noise, --no-skew, another seed and --threads 2.
# Prints one line a differing run and a summary; exit 0 only when all match.
. "$(dirname "$0")/identical_common.sh"

# Trace length: big enough that the L2's batch runs and their blocks wrap,
# small enough that the whole set runs in a few minutes under valgrind-free runs.
n=200k

gen r64.bin random --footprint 64MiB --count $n --size 4
gen r64.txt random --footprint 64MiB --count $n --size 4 --text
gen r1.bin random --footprint 1MiB --count $n --size 4
gen r1w.txt random --footprint 1MiB --count $n --size 8 --write-ratio 0.3 --text
gen st.bin stream --footprint 64MiB --count $n --size 4
gen st32.txt stream --footprint 16MiB --count $n --text
gen sd.bin stride --footprint 64MiB --stride 128 --count $n --size 16
gen sd64.bin stride --footprint 8MiB --stride 64 --count $n --size 128 --sms 8
gen tile.bin tile --rows 512 --cols 1024 --elem 4 --tile 32 --sms 4
gen rw8.bin random --footprint 32MiB --count $n --size 32 --sms 8 \
    --write-ratio 0.25 --atomic-ratio 0.05 --seed 7
gen r84.bin random --footprint 64MiB --count $n --size 4 --sms 84 --sm-assign random
gen r84.txt random --footprint 8MiB --count $n --size 4 --sms 84 --sm-assign block --text
gen pg.bin pages --count 4096 --order random --unmapped-every 7
# Text lines of every shape the decoders tell apart: SMs of 1-2 digits,
# ops in either case, 0x / 0X, upper-case digits, sizes omitted or 1-128,
# comments, two blanks, shared records (the word path, the byte-wise ones).
[ -s "$work/mix.txt" ] || awk 'BEGIN { srand(5); split("0 0 0 1 7 12 45 83", sms, " ");
    split("R R R R W W A a r w", ops, " "); split("4 4 4 8 16 32 64 128 1 0", szs, " ");
    for (i = 0; i < 200000; i++) {
        sm = rand() < 0.9 ? sms[1 + int(rand() * 8)] : int(rand() * 84);
        a = sprintf(rand() < 0.1 ? "%X" : "%x", int(rand() * 2 ^ (rand() < 0.5 ? 26 : 34)));
        sz = szs[1 + int(rand() * 10)];
        l = sm " " ops[1 + int(rand() * 10)] (rand() < 0.2 ? " 0X" : " 0x") a (sz ? " " sz : "");
        if (rand() < 0.01) l = l "  # c";
        if (rand() < 0.005) l = sm "  R 0x" a " 4";
        if (rand() < 0.005) l = sm " SR 0x" a " 4";
        print l } }' >"$work/mix.txt"


# The reference card with its other replacement policies (the L2's batch run
# specialises on the policy).
for pol in plru plru-rand:1 lru; do
    sed "s/\"policy\": \"plru-rand:0.05\"/\"policy\": \"$pol\"/" \
        "$prof/seed-ampere-6mb.json" >"$work/seed-$pol.json"
    for t in r64.bin r1.bin st.bin rw8.bin r84.bin; do
        one "seed $pol $t" --profile "$work/seed-$pol.json" --trace "$work/$t"
    done
done

for p in seed-ampere-6mb hopper-like nvidia-h200-model gem5-vega; do
    for t in r64.bin r64.txt r1.bin r1w.txt st.bin st32.txt sd.bin sd64.bin tile.bin \
        rw8.bin r84.bin r84.txt pg.bin mix.txt; do
        one "$p $t" --profile "$prof/$p.json" --trace "$work/$t"
    done
    for t in r64.bin rw8.bin r84.bin; do
        one "$p $t noise" --profile "$prof/$p.json" --trace "$work/$t" --noise --seed 3
        one "$p $t threads" --profile "$prof/$p.json" --trace "$work/$t" --threads 2
    done
    one "$p r1.bin no-skew" --profile "$prof/$p.json" --trace "$work/r1.bin" --no-skew \
        --frames-seed 5
done
# Standard input and the text summary (not JSON) of the reference card.
runs=$((runs + 1))
"$before" sim --profile "$prof/seed-ampere-6mb.json" --trace - --quiet <"$work/r64.txt" >"$work/b.txt"
"$after" sim --profile "$prof/seed-ampere-6mb.json" --trace - --quiet <"$work/r64.txt" >"$work/a.txt"
cmp -s "$work/b.txt" "$work/a.txt" || { echo "DIFFERS: stdin text summary"; bad=$((bad + 1)); }

echo "sim_identical: $((runs - bad)) of $runs runs identical"
[ "$bad" -eq 0 ]
