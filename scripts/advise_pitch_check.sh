#!/usr/bin/env bash
# advise_pitch_check.sh - the advisor's predictions for the H200 pitch
# check (docs/advise-h200.md): for each base pitch, the padding the advisor
# picks (col pattern, 2048 x 1024 floats, --max-pad 64) and its predicted
# per-wave slice and partition imbalance before and after, as CSV; the
# measured times are data/nvidia-h200/advise/pitch*.csv (bench/pitch_bench.cu).
# Usage: scripts/advise_pitch_check.sh path/to/gpuxray [profile] > predictions.csv
set -eu
gx=${1:?usage: advise_pitch_check.sh path/to/gpuxray [profile]}
prof=${2:-profiles/nvidia-h200.json}
echo "pitch_elems,flagged,best_pad,predicted_gain,imb_before,imb_after,random_baseline,part_before,part_after"
for p in 1024 32768 65536 131072 262144 524288 1048576; do
  "$gx" advise --profile "$prof" --array "rows=2048,cols=1024,elem=4,pitch=$p" --pattern col \
    --max-pad 64 --json | python3 -c '
import json, sys
d = json.load(sys.stdin); b = d["before"]; a = d["after"]
print("%d,%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f" % (d["pitch"], str(d["flagged"]).lower(), d["best_pad"], d["predicted_gain"],
      b["wave_slice_imbalance"], a["wave_slice_imbalance"], b["random_wave_slice_imbalance"],
      b["wave_partition_imbalance"], a["wave_partition_imbalance"]))'
done
