#!/usr/bin/env bash
# holdout_tlb20.sh - the tlb stage on 20 random hidden translation
# hierarchies (issue 11's proof, the CI-sized part): `gpuxray holdout
# --count 20 --only tlb` generates profiles with tlb sections, runs the tlb
# stage through the sim target and compares every tlb field it measures.
# Fails when a field misses WITHOUT being flagged by the tool, when a
# discovery fails outright, or when the first level's entries were not
# compared on all 20. Skips (77) only when the holdout command reports it
# is not built. The judging: tests/lib/holdout.bash.
# Usage: bash tests/holdout_tlb20.sh path/to/gpuxray
set -u
bin="${1:?usage: holdout_tlb20.sh path/to/gpuxray}"
# shellcheck source=lib/holdout.bash
. "$(dirname "$0")/lib/holdout.bash"
holdout_test holdout_tlb20 "$bin" '^tlb\.levels\[0\]\.entries +20 ' \
    "tlb.levels[0].entries not compared on 20 profiles" --only tlb
