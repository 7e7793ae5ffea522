#!/bin/bash
# bad_input.sh - the bad-input table (tests/bad_input.table) plus the output, signal and
# set-up cases a table row cannot express: FIFOs and devices written straight, symlinks
# written through, permissions kept, -o - on stdout, SIGINT / SIGTERM removing the
# temporary file (exit 130 / 143), a full device naming its reason, help for every
# command, the built-in seed card without profiles/, the Debian-package step without
# root, and a half-configured build folder.
# Usage: bash tests/bad_input.sh /path/to/gpuxray   (run from the source tree)
# Nothing outside fresh temporary folders is touched (no real /dev node: the full
# device is a private node made with mknod, root only).
set -u
GX=$(realpath "${1:?usage: bad_input.sh /path/to/gpuxray}")
SRC=$(pwd -P)
P=$SRC/profiles/seed-ampere-6mb.json
T=$(mktemp -d)  # the fixtures every row must leave untouched
W=$(mktemp -d)  # scratch for the special cases
trap 'rm -rf "$T" "$W"' EXIT
ROW_TIMEOUT=60 # seconds: a row that blocks (e.g. on the FIFO) fails instead of hanging
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# ------------------------------------------------------------------ fixtures
"$GX" gen-profile --seed 1 -o "$T/keep.json" || { echo "cannot make fixtures"; exit 1; }
chmod 0640 "$T/keep.json"
ln -s keep.json "$T/link.json"
ln -s nowhere.json "$T/dangling.json"
mkfifo "$T/fifo"
mkdir "$T/dir"
printf '0 R 0x0 32\n0 W 0x1000 32\n' >"$T/ok.trace"
printf '0 R 0x0 4\n0 R 0xfffffffffffffff0 32\n' >"$T/wrap.trace"
"$GX" trace gen stride --footprint 64MiB --stride 2MiB --text -o "$T/big.trace"
sed -e 's/"dram_latency_cycles": 430/"dram_latency_cycles": 1e308/' "$P" >"$T/huge-latency.json"
sed -e 's/"dram_latency_cycles": 430/"dram_latency_cycles": 70000/' "$P" >"$T/slow-dram.json"
sed -e 's/"page_bytes": 2097152/"page_bytes": 4611686018427387904/' "$P" >"$T/page62.json"
# 25 slice masks: 19 more single-bit masks (bits 34..52) after the seed card's first one
awk '{ print } /"0x1080",/ { for (b = 34; b <= 52; b++) printf "          \"0x%x\",\n", 2 ^ b }' \
    "$P" >"$T/masks25.json"
sed -e '0,/"seed": [0-9]*/s//"seed": -5/' "$T/keep.json" >"$T/seed-neg.json"
# a measured profile that holds the timer only: every other field of $P is missing
"$GX" discover --target "sim:$P" --only timer -o "$T/missing-field.json" >/dev/null 2>&1 ||
    { echo "cannot make the missing-field fixture"; exit 1; }

snapshot() { # every entry: path, type, inode, mode, size, link target; content of files
    find "$T" -printf '%P %y %i %m %s %l\n' | sort
    find "$T" -type f -exec md5sum {} + | sort
}

# ---------------------------------------------------------------------- rows
snapshot >"$W/before"
rows=0
while IFS= read -r line; do
    case "$line" in '#'* | '') continue ;; esac
    # fields are separated by " | " (a bare | inside the expression is alternation)
    id=${line%% | *} && line=${line#* | }
    want=${line%% | *} && line=${line#* | }
    re=${line%% | *} && args=${line#* | }
    id=$(echo $id) want=$(echo $want)
    re=$(echo "$re" | sed -e 's/^ *//' -e 's/ *$//')
    rows=$((rows + 1))
    eval "set -- $args"
    timeout "$ROW_TIMEOUT" "$GX" "$@" >"$W/out" 2>"$W/err" </dev/null
    rc=$?
    [ "$rc" -eq "$want" ] || fail "$id: exit $rc, want $want ($(head -c 300 "$W/err"))"
    # the message may be on stderr or, for a report such as compare's, on stdout
    cat "$W/err" "$W/out" | grep -Eq -- "$re" ||
        fail "$id: the output does not match /$re/: $(head -c 300 "$W/err")"
    snapshot >"$W/after"
    if ! cmp -s "$W/before" "$W/after"; then
        fail "$id: the fixtures changed: $(diff "$W/before" "$W/after" | head -5 | tr '\n' ' ')"
        snapshot >"$W/before" # report each change once
    fi
done <"$SRC/tests/bad_input.table"
[ "$rows" -ge 40 ] || fail "only $rows rows read from the table"

# ------------------------------------------------------------- special cases
# a FIFO is written straight (a reader gets the profile) and stays a FIFO
mkfifo "$W/fifo"
cat "$W/fifo" >"$W/from-fifo" &
reader=$!
timeout 30 "$GX" gen-profile --seed 2 -o "$W/fifo" || fail "gen-profile to a FIFO: exit $?"
wait "$reader"
[ -p "$W/fifo" ] || fail "the FIFO was replaced"
grep -q '"format"' "$W/from-fifo" || fail "the FIFO's reader got no profile"
# the same for a trace written to a FIFO
cat "$W/fifo" >"$W/from-fifo2" &
reader=$!
timeout 30 "$GX" trace gen stream --footprint 4KiB --text -o "$W/fifo" || fail "trace gen to a FIFO"
wait "$reader"
[ -p "$W/fifo" ] && [ "$(wc -l <"$W/from-fifo2")" -eq 128 ] || fail "trace through a FIFO"

# a symlink is written through; the link stays; the target keeps its mode
cp "$T/keep.json" "$W/target.json"
chmod 0600 "$W/target.json"
ln -s target.json "$W/link.json"
"$GX" gen-profile --seed 3 -o "$W/link.json" || fail "gen-profile through a symlink"
[ -L "$W/link.json" ] || fail "the symlink was replaced"
[ "$(stat -c %a "$W/target.json")" = 600 ] || fail "target mode $(stat -c %a "$W/target.json"), want 600"
"$GX" gen-profile --seed 3 >"$W/seed3.json"
cmp -s "$W/target.json" "$W/seed3.json" || fail "the symlink's target was not rewritten"
ls -a "$W" | grep -q '\.tmp-' && fail "a temporary file was left behind"

# -o - is standard output everywhere
"$GX" gen-profile --seed 1 -o - >"$W/stdout.json" && cmp -s "$W/stdout.json" "$T/keep.json" ||
    fail "gen-profile -o - differs from the file it writes"
"$GX" discover --target "sim:$P" --only timer -o - >"$W/d.json" 2>"$W/d.err" ||
    fail "discover -o -: exit $?"
"$GX" validate "$W/d.json" >/dev/null || fail "discover -o - did not put a valid profile on stdout"
grep -q "timer.overhead_cycles" "$W/d.err" || fail "discover -o -: the table goes to stderr"
"$GX" sim --profile "$P" --trace "$T/ok.trace" --json --quiet -o - >"$W/s.json" ||
    fail "sim -o -"
grep -q '"latency"' "$W/s.json" || fail "sim --json -o - wrote no statistics"

# seeds: 0 is recorded in the provenance, 2^64-1 round-trips through validate
"$GX" discover --target "sim:$P" --only timer --seed 0 -o "$W/s0.json" >/dev/null 2>&1 ||
    fail "discover --seed 0"
grep -q '"seed": 0' "$W/s0.json" || fail "seed 0 is not recorded in the provenance"
"$GX" discover --target "sim:$P" --only timer --seed 18446744073709551615 -o "$W/smax.json" >/dev/null \
    2>/dev/null || fail "discover --seed 2^64-1"
grep -q '"seed": "*18446744073709551615' "$W/smax.json" || fail "seed 2^64-1 not recorded"
"$GX" validate "$W/smax.json" >/dev/null || fail "a profile with seed 2^64-1 does not validate"

# SIGINT / SIGTERM: the temporary file is removed, exit 130 / 143, the old file kept
set -m # background jobs keep SIGINT (a non-interactive shell would ignore it for them)
for sig in INT TERM; do
    cp "$T/keep.json" "$W/big.bin"
    "$GX" trace gen random --count 2000M -o "$W/big.bin" &
    pid=$!
    for _ in $(seq 100); do
        ls -a "$W" | grep -q '^\.big\.bin\.tmp-' && break
        sleep 0.1
    done
    ls -a "$W" | grep -q '^\.big\.bin\.tmp-' || fail "SIG$sig: no temporary file appeared"
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    want=$([ $sig = INT ] && echo 130 || echo 143)
    [ "$rc" -eq "$want" ] || fail "SIG$sig: exit $rc, want $want"
    ls -a "$W" | grep -q '\.tmp-' && fail "SIG$sig: the temporary file was left behind"
    cmp -s "$W/big.bin" "$T/keep.json" || fail "SIG$sig: the old file was not kept"
done
set +m

# a full device: the reason is named, the node stays (root only: a private node)
if [ "$(id -u)" -eq 0 ] && mknod "$W/full" c 1 7 2>/dev/null; then
    "$GX" gen-profile --seed 1 -o "$W/full" 2>"$W/err"
    rc=$?
    [ "$rc" -eq 2 ] || fail "full device: exit $rc, want 2"
    grep -q "No space left on device" "$W/err" || fail "full device: $(cat "$W/err")"
    [ -c "$W/full" ] || fail "the device node was replaced"
    "$GX" trace gen stream --footprint 64MiB -o "$W/full" 2>"$W/err"
    grep -q "No space left on device" "$W/err" || fail "trace to a full device: $(cat "$W/err")"
    rm -f "$W/full"
fi

# help: every command, as `gpuxray help CMD` and `gpuxray CMD --help`
for c in discover compare validate sim trace holdout gen-profile; do
    "$GX" help "$c" >"$W/h1" || fail "help $c: exit $?"
    "$GX" "$c" --help >"$W/h2" || fail "$c --help: exit $?"
    grep -q "usage: gpuxray $c" "$W/h1" || fail "help $c does not show its usage"
    cmp -s "$W/h1" "$W/h2" || fail "help $c and $c --help differ"
done
"$GX" help trace | grep -q "trace convert" || fail "help trace does not describe convert"
for t in exit-codes output numbers; do
    "$GX" help "$t" >/dev/null || fail "help $t"
done

# the built-in seed card: a copy of the binary, run far from the source tree
mkdir -p "$W/bin" "$W/elsewhere"
cp "$GX" "$W/bin/gpuxray"
(cd "$W/elsewhere" && "$W/bin/gpuxray" discover --only timer >"$W/b.out" 2>"$W/b.err")
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "discover without profiles/: exit $rc ($(cat "$W/b.err"))"
grep -q "built in" "$W/b.err" || grep -q "usable CUDA GPU" "$W/b.err" ||
    fail "discover without profiles/: $(cat "$W/b.err")"

# the Debian-package step: missing packages, not root -> the apt-get line, exit 2
mkdir -p "$W/fakebin"
printf '#!/bin/sh\nexit 1\n' >"$W/fakebin/dpkg-query" # every package missing
chmod +x "$W/fakebin/dpkg-query"
chmod 0755 "$W" "$W/fakebin"
deps() { PATH="$W/fakebin:$PATH" bash "$SRC/scripts/deps.sh"; }
if [ "$(id -u)" -ne 0 ]; then
    deps >"$W/deps.out" 2>&1
    rc=$?
elif command -v setpriv >/dev/null; then
    cp "$SRC/scripts/deps.sh" "$SRC/scripts/debian-packages.txt" "$W/"
    chmod 0755 "$W/deps.sh" && chmod 0644 "$W/debian-packages.txt"
    PATH="$W/fakebin:$PATH" setpriv --reuid=65534 --regid=65534 --clear-groups \
        bash "$W/deps.sh" >"$W/deps.out" 2>&1
    rc=$?
else
    rc=2 && echo "apt-get install (setpriv missing: not checked)" >"$W/deps.out"
fi
[ "$rc" -eq 2 ] || fail "deps.sh without root: exit $rc, want 2 ($(cat "$W/deps.out"))"
grep -q "apt-get install -y --no-install-recommends .*libjansson-dev" "$W/deps.out" ||
    fail "deps.sh without root does not print the apt-get line: $(cat "$W/deps.out")"

# a half-configured build folder (a cache, no Makefile) is configured again from scratch
mkdir -p "$W/half/CMakeFiles"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere\nbroken\n' >"$W/half/CMakeCache.txt"
bash "$SRC/scripts/configure.sh" "$W/half" -DCMAKE_BUILD_TYPE=Release >"$W/conf.out" 2>&1 ||
    fail "configure.sh on a half-configured folder: $(tail -5 "$W/conf.out")"
[ -f "$W/half/Makefile" ] || fail "configure.sh left no Makefile"
grep -q "half-configured" "$W/conf.out" || fail "configure.sh did not say why it reconfigured"

if [ "$failures" -ne 0 ]; then
    echo "bad_input: $failures failure(s) ($rows table rows)"
    exit 1
fi
echo "bad_input: $rows table rows and the special cases passed"
