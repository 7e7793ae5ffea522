# identical_common.sh - sourced by sim_identical.sh and translation_identical.sh
# (not run on its own): their arguments (BEFORE_BIN AFTER_BIN [WORKDIR]) and
# gen NAME ARGS..., a trace generated once by BEFORE_BIN into the work folder;
# one LABEL SIM_ARGS..., `sim --json --quiet` of both builds compared byte for
# byte, JSON and standard error (less any timing line; a refused run's JSON
# is empty, its message compared), counted in runs and bad.
# Sets before, after, work, here (the repository) and prof (its profiles/).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BIN AFTER_BIN [WORKDIR]" >&2; exit 2; }
before=$1 after=$2 work=${3:-$(mktemp -d)}
mkdir -p "$work"
here=$(cd "$(dirname "$0")/.." && pwd)
prof=$here/profiles

gen() { # name, gen arguments...
    name=$1
    shift
    [ -s "$work/$name" ] || "$before" trace gen "$@" -o "$work/$name"
}

runs=0
bad=0
one() { # label, sim arguments...
    label=$1
    shift
    runs=$((runs + 1))
    "$before" sim "$@" --json --quiet -o "$work/b.json" 2>"$work/b.err" || true
    "$after" sim "$@" --json --quiet -o "$work/a.json" 2>"$work/a.err" || true
    grep -v 'accesses/s\|seconds' "$work/b.err" >"$work/b.e2" || true
    grep -v 'accesses/s\|seconds' "$work/a.err" >"$work/a.e2" || true
    [ -e "$work/b.json" ] || : >"$work/b.json"
    [ -e "$work/a.json" ] || : >"$work/a.json"
    if ! cmp -s "$work/b.json" "$work/a.json" || ! cmp -s "$work/b.e2" "$work/a.e2"; then
        echo "DIFFERS: $label: sim $*"
        bad=$((bad + 1))
    fi
    rm -f "$work/b.json" "$work/a.json"
}
