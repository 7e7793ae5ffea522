#!/usr/bin/env bash
# smem_holdout.sh - the shared-memory holdout at CI size: 20 hidden shared
# memories (gen-profile's draw), each discovered by the `smem` stage through
# its sim target; every smem field must be recovered on at least 98% of
# them (bench/smem_holdout.c; run it with --count 200 for the full proof).
# Usage: bash tests/smem_holdout.sh path/to/gpuxray
set -u
bin="${1:?usage: smem_holdout.sh path/to/gpuxray}"
holdout="$(dirname "$bin")/smem_holdout"
if [ ! -x "$holdout" ]; then
    echo "smem_holdout: $holdout is not built" >&2
    exit 1
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
"$holdout" --count 20 --seed 1001 --bar 0.98 --dir "$dir"
