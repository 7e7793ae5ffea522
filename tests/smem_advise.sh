#!/usr/bin/env bash
# smem_advise.sh - `gpuxray advise --smem-tile` on the measured H200
# profile: the classic transposed read of a 32 x 32 float tile is 32-way and
# one element of row padding removes it (1984 cycles saved per tile read
# under 28.5 + 2 cycles per extra transfer); JSON agrees; a profile without
# an smem section and a malformed tile spec are bad input (exit 2).
# Usage: bash tests/smem_advise.sh path/to/gpuxray   (from the source dir)
set -u
bin="${1:?usage: smem_advise.sh path/to/gpuxray}"
fail=0
out=$("$bin" advise --profile profiles/nvidia-h200.json --smem-tile 32x32,elem=4) || {
    echo "FAIL: advise exited $?"; fail=1; }
echo "$out"
echo "$out" | grep -q 'transposed pad 0   32-way' || { echo "FAIL: no 32-way transposed read"; fail=1; }
echo "$out" | grep -q 'advice: pad each row by 1 element (row pitch 132 B): saves 1984 of 3808 cycles' ||
    { echo "FAIL: advice line"; fail=1; }
js=$("$bin" advise --profile profiles/nvidia-h200.json --smem-tile 32x32,elem=4,read=col --json)
echo "$js" | grep -q '"best_pad": 1, .*"saved_cycles": 1984.000, "extra_bytes": 128' ||
    { echo "FAIL: JSON advice: $js"; fail=1; }
"$bin" advise --profile profiles/seed-ampere-6mb.json --smem-tile 32x32,elem=4 >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: a profile without smem must be bad input"; fail=1; }
"$bin" advise --profile profiles/nvidia-h200.json --smem-tile 32x32 >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: a tile without elem= must be bad usage"; fail=1; }
[ $fail -eq 0 ] && echo "smem_advise: ok"
exit $fail
