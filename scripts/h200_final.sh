#!/bin/bash
# h200_final.sh - one device call for an integrated build on the H200: the
# whole discovery once (with its raw data), the tlb stage once more (a third
# run for the agreement of its discrete fields), and `sim --threads 1|2` on
# two pinned cores (taskset -c 2,3), three alternating runs of 10 M random
# reads on 1 and on 8 SMs. Output under $OUT/final and $OUT/final.tgz.
# usage: copy it beside a CUDA build's gpuxray and profiles/seed-ampere-6mb.json
# in a carried folder (e.g. .dev-h200/), then `bash .dev-h200/h200_final.sh`.
D=$(dirname "$0"); O=${OUT:-/tmp/out}; W=$O/final; mkdir -p $W
G=$D/gpuxray; mkdir -p $W/disc $W/tlb3
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv; uptime; nproc; lscpu | grep -E "Model name|MHz"; } > $W/gpu.txt 2>&1
s=$(date +%s.%N); timeout 200 $G discover --target cuda --seed 1 --data $W/disc/data -o $W/disc/profile.json > $W/disc.txt 2> $W/disc.log; echo "discover rc=$? $(awk "BEGIN{print $(date +%s.%N) - $s}") s" >> $W/summary.txt
grep -E "^(timer|levels|line|slices|ways|sets|policy|smem|tlb|total) " $W/disc.txt >> $W/summary.txt
s=$(date +%s.%N); timeout 60 $G discover --target cuda --only tlb --seed 3 --data $W/tlb3/data -o $W/tlb3/tlb.json > $W/tlb3.txt 2> $W/tlb3.log; echo "tlb run 3 rc=$? $(awk "BEGIN{print $(date +%s.%N) - $s}") s" >> $W/summary.txt
grep -E "^tlb" $W/tlb3.txt >> $W/summary.txt
T=/tmp/tr; mkdir -p $T
$G trace gen random --footprint 64MiB --count 10M --size 4 --binary -o $T/r1.bin
$G trace gen random --footprint 64MiB --count 10M --size 4 --sms 8 --binary -o $T/r8.bin
P=$D/seed-ampere-6mb.json
PIN=""; command -v taskset >/dev/null && PIN="taskset -c 2,3"
echo "pinned with: ${PIN:-nothing (no taskset)}" >> $W/threads.txt
for tr in r1 r8; do for th in 1 2 1 2 1 2; do
  TIMEFORMAT="$tr threads $th: %R s elapsed %U user"
  { time $PIN $G sim --profile $P --trace $T/$tr.bin --threads $th --json --quiet -o $W/$tr.t$th.json; } 2>> $W/threads.txt; done; done
cmp $W/r1.t1.json $W/r1.t2.json && cmp $W/r8.t1.json $W/r8.t2.json && echo "threads: identical" >> $W/threads.txt
cat $W/threads.txt >> $W/summary.txt
tar czf $O/final.tgz -C $O final; cat $W/summary.txt
