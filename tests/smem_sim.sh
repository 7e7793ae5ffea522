#!/usr/bin/env bash
# smem_sim.sh - shared-memory records through `gpuxray sim`: a transposed
# read of a 32 x 32 float tile (one warp instruction, 32-way on the H200's
# 32 x 4 B banks) and the same read of the 32 x 33 padded tile
# (conflict-free), lanes given one by one, a global access in between;
# text and JSON statistics must show one 32-way and one 1-way access and
# the model's cycles (28.5 + 31 x 2 and 28.5).
# Usage: bash tests/smem_sim.sh path/to/gpuxray   (from the source dir)
set -u
bin="${1:?usage: smem_sim.sh path/to/gpuxray}"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
{
    for i in $(seq 0 31); do printf '0 SR %x 4 warp=1 lane=%d\n' $((i * 128)) "$i"; done
    echo "0 R 7f0000001000 4"
    for i in $(seq 0 31); do printf '0 SR %x 4 warp=2 lane=%d\n' $((i * 132)) "$i"; done
} >"$T/t.trace"
fail=0
"$bin" sim --profile profiles/nvidia-h200-model.json --trace "$T/t.trace" >"$T/out.txt" 2>&1 || {
    echo "FAIL: sim exited $?"; cat "$T/out.txt"; exit 1; }
cat "$T/out.txt"
grep -q '^shared memory (32 banks x 4 B' "$T/out.txt" || { echo "FAIL: no shared-memory block"; fail=1; }
grep -q 'warp accesses  2 (2 reads, 0 writes), 64 lanes' "$T/out.txt" || { echo "FAIL: accesses"; fail=1; }
grep -q 'by degree      1-way 1 32-way 1' "$T/out.txt" || { echo "FAIL: degrees"; fail=1; }
grep -q 'cycles         119 ' "$T/out.txt" || { echo "FAIL: cycles"; fail=1; }
grep -q '^ignored' "$T/out.txt" && { echo "FAIL: shared records reported as ignored"; fail=1; }
"$bin" sim --profile profiles/nvidia-h200-model.json --trace "$T/t.trace" --json >"$T/out.json" 2>&1 || {
    echo "FAIL: sim --json exited $?"; exit 1; }
grep -q '"smem": {"banks": 32, "bank_bytes": 4, "transfer_bytes": 512, "broadcast": true, "accesses": 2,' "$T/out.json" ||
    { echo "FAIL: JSON smem object"; grep smem "$T/out.json"; fail=1; }
grep -q '"by_degree": {"1": 1, "32": 1}, "cycles": 119.000}' "$T/out.json" || { echo "FAIL: JSON degrees"; fail=1; }
[ $fail -eq 0 ] && echo "smem_sim: ok"
exit $fail
