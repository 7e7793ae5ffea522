#!/bin/bash
# h200_threads.sh - `sim --threads 1|2` wall time on two pinned cores
# (taskset -c 2,3) of an otherwise idle host: 10 M random 4-byte reads on 1,
# 8 and 32 SMs, five alternating pairs each, statistics compared.
# usage: copy it beside gpuxray and profiles/seed-ampere-6mb.json in a
# carried folder (e.g. .dev-h200/), then `bash .dev-h200/h200_threads.sh`;
# output under $OUT/threads.
D=$(dirname "$0"); O=${OUT:-/tmp/out}; W=$O/threads; mkdir -p $W; G=$D/gpuxray; P=$D/seed-ampere-6mb.json
{ uptime; nproc; lscpu | grep -E "Model name|MHz"; } > $W/host.txt 2>&1
T=/tmp/tr; mkdir -p $T
for s in 1 8 32; do $G trace gen random --footprint 64MiB --count 10M --size 4 --sms $s --binary -o $T/r$s.bin; done
PIN=""; command -v taskset >/dev/null && PIN="taskset -c 2,3"
echo "pinned with: ${PIN:-nothing}" > $W/threads.txt
for s in 1 8 32; do for i in 1 2 3 4 5; do for th in 1 2; do
  TIMEFORMAT="r$s threads $th: %R s elapsed %U user"
  { time $PIN $G sim --profile $P --trace $T/r$s.bin --threads $th --json --quiet -o $W/r$s.t$th.json; } 2>> $W/threads.txt
done; done; cmp $W/r$s.t1.json $W/r$s.t2.json && echo "r$s identical" >> $W/threads.txt; done
cat $W/threads.txt
