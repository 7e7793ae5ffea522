#!/usr/bin/env bash
# cli_report.sh - report, export and advise from the command line: outputs
# exist and say what they should, bad usage and bad input exit 2.
# Usage: bash tests/cli_report.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: cli_report.sh /path/to/gpuxray}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
seed=profiles/seed-ampere-6mb.json
expect_rc() { # expected-rc command...
  local want=$1; shift
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  [ "$rc" -eq "$want" ] || { cat "$T/err"; fail "'$*' exited $rc, expected $want"; }
}
# report of a profile alone (no model run: fast), then its files
expect_rc 0 "$gx" report "$seed" --no-model -o "$T/r.html"
for f in r.html r.md r.json; do [ -s "$T/$f" ] || fail "$f missing"; done
grep -q 'the model run was not asked for' "$T/r.json" || fail "report.json does not say why the model is absent"
expect_rc 2 "$gx" report
expect_rc 2 "$gx" report "$seed" --data "$T/nonexistent"
expect_rc 2 "$gx" report "$seed" --bogus
expect_rc 2 "$gx" report profiles/does-not-exist.json
# export
expect_rc 0 "$gx" export accel-sim "$seed"
grep -q '^-gpgpu_cache:dl2 S:64:128:12,' "$T/out" || fail "accel-sim dl2 line"
expect_rc 0 "$gx" export gem5 "$seed" -o "$T/g5.opts"
grep -q '^--num-tccs=64$' "$T/g5.opts" || fail "gem5 --num-tccs"
expect_rc 2 "$gx" export ramulator "$seed"
expect_rc 2 "$gx" export accel-sim "$seed" --core-mhz -5
expect_rc 2 "$gx" export accel-sim
# advise
expect_rc 0 "$gx" advise --profile "$seed" --array rows=256,cols=256,elem=4,pitch=4096 --pattern col --max-pad 32
grep -q '^advice: pad each row' "$T/out" || fail "advise does not pad a 16 KiB column walk"
expect_rc 0 "$gx" advise --profile "$seed" --array rows=256,cols=256,elem=4 --pattern row --max-pad 8
grep -q '^advice: keep the pitch' "$T/out" || fail "advise pads coalesced rows"
printf '0 R 1000 4 warp=1\n0 R 1004 4 warp=1\n1 W 2000 32\n' >"$T/t.trace"
expect_rc 0 "$gx" advise --profile "$seed" --trace "$T/t.trace" --json
grep -q '"warp_insts": 2' "$T/out" || fail "advise --trace warp instructions"
expect_rc 0 "$gx" advise persist --bytes 4MiB --profile "$seed"
grep -q 'accessPolicyWindow.hitRatio' "$T/out" || fail "persist snippet"
grep -q 'unknown' "$T/out" || fail "persist does not say the carve-out is unknown"
expect_rc 2 "$gx" advise persist
expect_rc 2 "$gx" advise --profile "$seed" --array rows=1,cols=2 --pattern row
expect_rc 2 "$gx" advise --profile "$seed" --array rows=4,cols=4,elem=4 --pattern diag
expect_rc 2 "$gx" advise --profile "$seed" --array rows=4,cols=4,elem=4 --pattern row --sms -1
printf '0 R zz\n' >"$T/bad.trace"
expect_rc 2 "$gx" advise --profile "$seed" --trace "$T/bad.trace"
echo "ok: report, export and advise from the command line"
