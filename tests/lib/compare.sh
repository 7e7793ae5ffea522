# tests/lib/compare.sh - sourced by the shell tests that read `gpuxray compare`:
# a scratch folder $T (removed on exit), fail=0, and verdict.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
# verdict COMPARE_OUTPUT FIELD -> match / mismatch / missing (empty: no row)
verdict() {
  awk -v f="$2" '$1 == f { for (i = 2; i <= NF; i++) if ($i ~ /^(match|mismatch|missing)$/) { print $i; exit } }' "$1"
}
