#!/bin/sh
# translation_identical.sh BEFORE_BIN AFTER_BIN [WORKDIR]
#
# Proof that a change to the translated path (coalescer, TLB levels, walker,
# page-walk caches, vmem) moved no statistic: runs `gpuxray sim --json` of
# two builds over a matrix of translation profiles and traces and compares
# the JSON and the standard error (less its timing line) byte for byte.
# Profiles: gem5-vega and variants of its tlb section (2 MiB and 64 KiB
# default pages, 64 KiB pages under 1 MiB entries, plru TLBs, sets not a
# power of two with a small set-associative plru PWC, regions of 2 MiB
# pages, 2 walkers with a queue of 3 and 2 or 8 outstanding misses,
# 100-cycle fixed page-table reads with a 0-cycle first level, a GPU-wide
# 2.5-cycle first level, no neighbour PWC, a set-associative neighbour
# PWC), hopper-like and nvidia-h200-model with gem5-vega's tlb section.
# Traces (generated once by BEFORE_BIN): random 64 MiB / 1 MiB / 512 MiB on
# 4 SMs with writes, strided, stream, `trace gen pages` sequential, random
# and strided with --unmapped-every, and a text trace of warp
# instructions, cycles, multi-sector accesses, MAP and INV records and
# faults (also with --noise).
# Prints one line a differing run and a summary; exit 0 only when all match.
. "$(dirname "$0")/identical_common.sh"
n=200k

gen r64.bin random --footprint 64MiB --count $n --size 4 --sms 4 --write-ratio 0.2
gen r1.bin random --footprint 1MiB --count $n --size 4
gen r512.bin random --footprint 512MiB --count $n --size 8 --sms 4
gen sd.bin stride --footprint 64MiB --stride 4096 --count $n --size 4
gen st.bin stream --footprint 16MiB --count $n --size 4
gen pseq.bin pages --count 8192 --page-size 4KiB --order sequential
gen prnd.bin pages --count 8192 --page-size 4KiB --order random --unmapped-every 3
gen pstr.bin pages --count 4096 --page-size 4KiB --order strided --stride 3 --unmapped-every 5
gen p64.bin pages --count 4096 --page-size 64KiB --order random
gen p2s.bin pages --count 1024 --page-size 2MiB --order strided --stride 3
gen p2r.bin pages --count 1024 --page-size 2MiB --order random --unmapped-every 4
# Text: single accesses, warp instructions of 2-32 lanes, cycles, multi-sector
# reads, writes and atomics, MAP at 4 KiB / 64 KiB / 2 MiB (no INV after
# some), INV of a range and of everything, unmapped VAs (faults).
[ -s "$work/mix.txt" ] || awk 'BEGIN { srand(11); w = 0; cyc = 0;
    # VA = 0x7f + region digit + 0 + 8 hex digits of the offset (awk prints 32-bit hex)
    print "0 MAP 0x7f0000000000 bytes=0x4000000 page=0x1000";
    print "0 MAP 0x7f1000000000 bytes=0x4000000 page=0x10000";
    print "0 MAP 0x7f2000000000 bytes=0x40000000 page=0x200000";
    split("R R R R W A", ops, " ");
    for (i = 0; i < 30000; i++) {
        r = rand(); g = r < 0.4 ? 0 : r < 0.6 ? 1 : r < 0.95 ? 2 : 3;
        span = g == 2 ? 2 ^ 30 : 2 ^ 26;
        sm = int(rand() * 4); op = ops[1 + int(rand() * 6)];
        if (rand() < 0.3) cyc += int(rand() * 400);
        ctext = rand() < 0.3 ? sprintf(" cycle=%d", cyc) : "";
        if (rand() < 0.3) {
            w++; lanes = 2 + int(rand() * 31); a0 = int(rand() * (span - 2 ^ 22));
            for (l = 0; l < lanes; l++) {
                a = a0 + (rand() < 0.7 ? l * 4 : int(rand() * 65536) * 64);
                printf "%d %s 0x7f%d0%08x 4%s warp=%d lane=%d\n", sm, op, g, a, ctext, w, l % 32 }
        } else {
            sz = rand() < 0.1 ? 64 : 4; a = int(rand() * (span - 64));
            printf "%d %s 0x7f%d0%08x %d%s\n", sm, op, g, a, sz, ctext }
        if (rand() < 0.001) print "0 INV 0x7f0000000000 bytes=4096";
        if (rand() < 0.0005) print "0 INV 0";
        if (rand() < 0.0005) printf "0 MAP 0x7f20%08x bytes=0x200000 page=0x1000\n", int(rand() * 512) * 2097152;
    } }' >"$work/mix.txt"

# Variants of gem5-vega (python: json in, json out).
variant() { # name, python statements over t = d['tlb']
    [ -s "$work/$1.json" ] || python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); t = d["tlb"]; L = t["levels"]; W = t["walker"]
exec(sys.argv[2])
json.dump(d, open(sys.argv[3], "w"), indent=1)' "$prof/gem5-vega.json" "$2" "$work/$1.json"
}
variant v2m 't["page_table"]["default_page_bytes"] = 2097152'
variant v64k 't["page_table"]["page_sizes"] = [4096, 65536, 2097152]; t["page_table"]["default_page_bytes"] = 65536
for l in L: l["entry_bytes"] = 1048576'
variant v64k4 't["page_table"]["page_sizes"] = [4096, 65536, 2097152]
for l in L: l["entry_bytes"] = 1048576'
variant vplru 'for l in L: l["policy"] = "plru"'
variant vnp2 'L[1]["entries"] = 96 * 32; L[2]["entries"] = 3 * 32; W["pwc"] = {"entries": 16, "ways": 4, "policy": "plru", "hit_latency_cycles": 1}'
variant vreg 't["page_table"]["regions"] = [{"va_base": 0, "bytes": 33554432, "page_bytes": 2097152}]'
variant vw2 'W["walkers"] = 2; W["queue_entries"] = 3
for l in L: l["outstanding_misses"] = 2'
variant vw8 'W["walkers"] = 2; W["queue_entries"] = 3
for l in L: l["outstanding_misses"] = 8'
variant vfix 'W["fixed_read_cycles"] = 100; L[0]["hit_latency_cycles"] = 0'
variant vgpu 'L[0]["sharing"] = "gpu"; L[0]["hit_latency_cycles"] = 2.5'
variant vnonb 'del W["neighbour_pwc"]'
variant vnbsa 'W["neighbour_pwc"] = {"entries": 64, "ways": 8, "policy": "lru", "hit_latency_cycles": 1}'
variant vhit 't["hit_fills_entry"] = True; t["page_table"]["page_sizes"] = [4096, 65536, 2097152]
for l in L: l["entry_bytes"] = 1048576'
for p in hopper-like nvidia-h200-model; do
    [ -s "$work/$p-vega.json" ] || python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2])); d["tlb"] = v["tlb"]
json.dump(d, open(sys.argv[3], "w"), indent=1)' "$prof/$p.json" "$prof/gem5-vega.json" "$work/$p-vega.json"
done

traces="r64.bin r1.bin r512.bin sd.bin st.bin pseq.bin prnd.bin pstr.bin p64.bin p2s.bin p2r.bin mix.txt"
for p in "$prof/gem5-vega.json" "$work"/v*.json "$work"/*-vega.json; do
    for t in $traces; do
        one "$(basename "$p") $t" --profile "$p" --trace "$work/$t"
    done
done
one "gem5-vega mix.txt noise" --profile "$prof/gem5-vega.json" --trace "$work/mix.txt" --noise --seed 3
one "nvidia-h200-model r64" --profile "$prof/nvidia-h200-model.json" --trace "$work/r64.bin"
one "nvidia-h200 r64" --profile "$prof/nvidia-h200.json" --trace "$work/r64.bin"
echo "translation_identical: $((runs - bad)) of $runs runs identical"
[ "$bad" -eq 0 ]
