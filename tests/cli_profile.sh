#!/bin/bash
# cli_profile.sh - end-to-end checks of `gpuxray validate`, `compare` and
# `gen-profile`: exit codes and that errors name the file, line or field.
# Usage: bash tests/cli_profile.sh /path/to/gpuxray   (run from the source tree)
set -u
GX=${1:?usage: cli_profile.sh /path/to/gpuxray}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
SEED=profiles/seed-ampere-6mb.json
fail() {
    echo "FAIL: $*"
    exit 1
}
expect_rc() { # expected-rc description command...
    local want=$1 what=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { cat "$T/out" "$T/err"; fail "$what: exit $rc, want $want"; }
}

# every shipped profile validates
expect_rc 0 "validate profiles/*.json" "$GX" validate profiles/*.json
grep -q "seed-ampere-6mb.json: ok" "$T/out" || fail "validate prints FILE: ok"

# a broken file: exit 2, the field and the rule named
sed 's/"ways": 16/"ways": 99/' "$SEED" >"$T/broken.json"
expect_rc 2 "validate broken" "$GX" validate "$T/broken.json"
grep -q "broken.json: l2.ways" "$T/err" || fail "message names the file and field: $(cat "$T/err")"
grep -q "1..64" "$T/err" || fail "message names the rule: $(cat "$T/err")"

# inconsistent capacity: the message of the contract
sed 's/"capacity_bytes": 6291456,/"capacity_bytes": 6291450,/' "$SEED" >"$T/cap.json"
expect_rc 2 "validate capacity" "$GX" validate "$T/cap.json"
grep -q "l2.capacity_bytes: 6291450 != slices\*sets_per_slice\*ways\*line_bytes = 6291456" \
    "$T/err" || fail "capacity message: $(cat "$T/err")"

# a syntax error: file, line and column
printf '{\n  "format": "gpuxray-profile",\n  "version": 1,,\n}\n' >"$T/syntax.json"
expect_rc 2 "validate syntax" "$GX" validate "$T/syntax.json"
grep -q "syntax.json:3:16:" "$T/err" || fail "syntax message: $(cat "$T/err")"

# a missing file; no files at all
expect_rc 2 "validate missing" "$GX" validate "$T/nope.json"
grep -q "nope.json" "$T/err" || fail "missing-file message names the path"
expect_rc 2 "validate without files" "$GX" validate

# compare: itself -> 0; a modified copy -> 1; bad input -> 2
expect_rc 0 "compare seed seed" "$GX" compare "$SEED" "$SEED"
grep -q "l2.hash.slice" "$T/out" || fail "compare prints the slice hash row"
sed -e 's/"hit": 210/"hit": 260/' "$SEED" >"$T/slow.json"
expect_rc 1 "compare modified" "$GX" compare "$SEED" "$T/slow.json"
grep -q "l2.latency_cycles.hit.*mismatch" "$T/out" || fail "mismatch row: $(cat "$T/out")"
expect_rc 0 "compare --json" "$GX" compare --json "$SEED" "$SEED"
grep -q '"verdict": "match"' "$T/out" || fail "compare --json output"
expect_rc 2 "compare broken" "$GX" compare "$SEED" "$T/broken.json"
expect_rc 2 "compare one file" "$GX" compare "$SEED"

# gen-profile: reproducible and valid
expect_rc 0 "gen-profile -o" "$GX" gen-profile --seed 42 -o "$T/g1.json"
"$GX" gen-profile --seed 42 >"$T/g2.json" || fail "gen-profile to stdout"
cmp -s "$T/g1.json" "$T/g2.json" || fail "gen-profile is not reproducible"
expect_rc 0 "validate generated" "$GX" validate "$T/g1.json"
expect_rc 0 "compare generated" "$GX" compare "$T/g1.json" "$T/g2.json"
expect_rc 2 "gen-profile without seed" "$GX" gen-profile
# strict numbers and the model's rules (docs/profile-format.md)
sed 's/"dram_latency_cycles": 430/"dram_latency_cycles": 1e308/' "$SEED" >"$T/huge.json"
expect_rc 2 "validate 1e308 latency" "$GX" validate "$T/huge.json"
grep -q "memory.dram_latency_cycles: 1e+308 must be" "$T/err" || fail "1e308: $(cat "$T/err")"
sed 's/"page_bytes": 2097152/"page_bytes": 4611686018427387904/' "$SEED" >"$T/page.json"
expect_rc 2 "validate page 2^62" "$GX" validate "$T/page.json"
grep -q "memory.page_bytes: 4611686018427387904 must be a power of two in 4096..68719476736" \
    "$T/err" || fail "page 2^62: $(cat "$T/err")"
sed 's/"ways": 16/"ways": 16.5/' "$SEED" >"$T/frac.json"
expect_rc 2 "validate fractional ways" "$GX" validate "$T/frac.json"
grep -q "l2.ways: expected a non-negative integer, got 16.5" "$T/err" || fail "16.5: $(cat "$T/err")"
expect_rc 0 "gen-profile seed 0" "$GX" gen-profile --seed 0 -o "$T/s0.json"
grep -q '"seed": 0' "$T/s0.json" || fail "seed 0 is recorded"
expect_rc 0 "gen-profile seed 2^64-1" "$GX" gen-profile --seed 18446744073709551615 -o "$T/smax.json"
grep -q '"seed": "18446744073709551615"' "$T/smax.json" || fail "seed 2^64-1 as a string"
expect_rc 0 "validate seed 2^64-1" "$GX" validate "$T/smax.json"
echo "cli_profile: ok"
