# holdout.bash - sourced by the holdout tests (tests/holdout20.sh,
# tests/holdout_tlb20.sh): run `gpuxray holdout --count 20 --seed 1` with
# the test's options and judge its output. Fails when a field misses
# WITHOUT being flagged by the tool, when a discovery fails outright, when
# the summary is missing, or when the caller's required line is absent;
# skips (77) only when the holdout command reports it is not built.
# usage: holdout_test NAME BIN REQUIRED_REGEX REQUIRED_WHAT [holdout options...]
#   REQUIRED_REGEX "": nothing more required
holdout_test() {
    local name=$1 bin=$2 need=$3 what=$4
    shift 4
    if [ ! -x "$bin" ]; then
        echo "$name: $bin is not executable" >&2
        exit 1
    fi
    local jobs out rc
    jobs=$(nproc 2>/dev/null || echo 2)
    out="$(mktemp)"
    trap 'rm -f "$out"' EXIT
    "$bin" holdout --count 20 --seed 1 "$@" --jobs "$jobs" >"$out" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && grep -qi 'not built' "$out"; then
        echo "$name: skipped: $(grep -i 'not built' "$out" | head -1)"
        exit 77
    fi
    cat "$out"
    # The run must have happened: the summary names the 20 profiles.
    if ! grep -Eq '^holdout: 20 hidden profiles' "$out"; then
        echo "$name: FAILED: no holdout summary (exit $rc)" >&2
        exit 1
    fi
    if [ -n "$need" ] && ! grep -Eq "$need" "$out"; then
        echo "$name: FAILED: $what" >&2
        exit 1
    fi
    local failed unflagged
    failed=$(sed -n 's/^profiles whose discovery failed: \([0-9]*\).*/\1/p' "$out" | head -1)
    if [ -z "$failed" ] || [ "$failed" -ne 0 ]; then
        echo "$name: FAILED: ${failed:-?} discoveries failed" >&2
        exit 1
    fi
    # Misses table: the last column says "yes" (flagged) or "NO (conf x)".
    unflagged=$(awk '/^misses:/ {m = 1; next} m && / NO( |$)/' "$out")
    if [ -n "$unflagged" ]; then
        echo "$name: FAILED: fields missed without being flagged:" >&2
        echo "$unflagged" >&2
        exit 1
    fi
    echo "$name: ok (every miss flagged by the tool)"
    exit 0
}
