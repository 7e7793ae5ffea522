# expect.bash - sourced by the tests of a command's bad usage
# (tests/xchase_curve.sh, tests/tlb_page.sh).
# usage: expect_exit WANT PROG ARGS...: PROG ARGS must exit WANT and write a
#   message on stderr; else a FAIL line and the caller's `fail` set to 1.
#   Its stderr goes to a file of its own (removed afterwards).
expect_exit() {
    local want=$1 prog=$2 err rc
    shift 2
    err=$(mktemp)
    "$prog" "$@" >/dev/null 2>"$err"
    rc=$?
    if [ "$rc" -ne "$want" ] || [ ! -s "$err" ]; then
        echo "FAIL: $(basename "$prog") $* -> $rc (want $want, with a message)"
        fail=1
    fi
    rm -f "$err"
}
