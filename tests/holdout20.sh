#!/usr/bin/env bash
# holdout20.sh - discovery on 20 random hidden profiles (issue 3's proof,
# the CI-sized part): `gpuxray holdout --count 20` generates the profiles,
# runs discovery through the sim target and compares every field. This test
# fails when a field misses WITHOUT being flagged as low confidence by the
# tool itself (flagged misses are allowed here; the 98% bar is `make
# holdout`'s business), or when a discovery fails outright. Skips (77) only
# when the holdout command reports it is not built. The judging:
# tests/lib/holdout.bash.
# Usage: bash tests/holdout20.sh path/to/gpuxray
set -u
bin="${1:?usage: holdout20.sh path/to/gpuxray}"
# shellcheck source=lib/holdout.bash
. "$(dirname "$0")/lib/holdout.bash"
holdout_test holdout20 "$bin" "" ""
