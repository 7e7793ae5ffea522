#!/usr/bin/env bash
# report_browser.sh - the report page in headless Chromium: `discover
# --report DIR` on the simulated seed card, then the page loads without a
# console message (no script errors, no blocked resource), makes no network
# request (Chromium's net log holds no request whose network isolation key
# is the file:// page), and its screenshot shows the plots (pixels of the
# plot colours: the measured curve's blue, the model's orange, the heat
# maps' ramp). Chromium's own background requests (updates, accounts) are
# not the page's and are ignored.
# Skips (exit 77) when chromium or python3 is missing.
# Usage: bash tests/report_browser.sh /path/to/gpuxray   (from the source dir)
set -u
gx=${1:?usage: report_browser.sh /path/to/gpuxray}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: chromium is not installed (Debian package chromium, listed in scripts/debian-packages.txt)"
  exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$gx" discover --target sim:profiles/seed-ampere-6mb.json --report "$T/r" >"$T/out" 2>"$T/err" ||
  { echo "FAIL: discover --report failed"; cat "$T/err"; exit 1; }
for f in report.html report.md report.json profile.json curve.json sm_slice.json slice_classes.json \
         ways.json policy.json stages.json rows.json; do
  [ -s "$T/r/$f" ] || { echo "FAIL: $f missing from the report directory"; exit 1; }
done
size=$(wc -c <"$T/r/report.html")
[ "$size" -lt 1000000 ] || { echo "FAIL: report.html is $size bytes (budget 1 MB)"; exit 1; }
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$T/profile" --enable-logging=stderr --v=0 --log-net-log="$T/net.json" \
  --window-size=1000,1600 --screenshot="$T/shot.png" "file://$T/r/report.html" \
  >"$T/chrome.out" 2>"$T/chrome.err"
[ -s "$T/shot.png" ] || { echo "FAIL: no screenshot"; tail -20 "$T/chrome.err"; exit 1; }
if grep -q ':CONSOLE' "$T/chrome.err"; then
  echo "FAIL: the page wrote to the console:"; grep ':CONSOLE' "$T/chrome.err"; exit 1
fi
python3 - "$T/net.json" "$T/shot.png" <<'PY' || exit 1
import json, struct, sys, zlib
net = json.load(open(sys.argv[1]))
page = set()
for e in net.get("events", []):
    p = e.get("params", {})
    if "url" in p and "file://" in str(p.get("network_isolation_key", "")) and \
       not p["url"].startswith(("file:", "data:")):
        page.add(p["url"])
if page:
    print("FAIL: the page made network requests:", sorted(page)); sys.exit(1)
# decode the screenshot (8-bit RGB or RGBA PNG) and count plot-coloured pixels
data = open(sys.argv[2], "rb").read()
pos, idat, w, h, ct = 8, b"", 0, 0, 0
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR":
        w, h, depth, ct = struct.unpack(">IIBB", body[:10])
    elif typ == b"IDAT":
        idat += body
    pos += 12 + n
bpp = 4 if ct == 6 else 3
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
blue = orange = ramp = 0
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    for x in range(0, stride, bpp):
        r, g, bb = line[x], line[x + 1], line[x + 2]
        if abs(r - 0x1f) < 30 and abs(g - 0x5f) < 30 and abs(bb - 0xbf) < 30: blue += 1
        if abs(r - 0xe0) < 30 and abs(g - 0x7b) < 30 and bb < 60: orange += 1
        if r < 120 and g > 60 and bb > 60 and abs(g - bb) < 70 and g - r > 40: ramp += 1
print("screenshot %dx%d: %d blue (measured), %d orange (model), %d ramp (heat map) pixels" % (w, h, blue, orange, ramp))
if blue < 200 or orange < 100 or ramp < 2000:
    print("FAIL: the screenshot does not show the plots"); sys.exit(1)
PY
echo "ok: report.html ($size bytes) loads in $("$browser" --version 2>/dev/null | head -1) with no console message and no network request; the screenshot shows the plots"
