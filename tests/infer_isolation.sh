#!/usr/bin/env bash
# infer_isolation.sh - discovery must treat the target as silicon it cannot
# open: no file under src/infer/ may include model internals (src/model/*,
# l2.h, cache.h, placement.h, noise.h) or open / parse a profile (the truth).
# Usage: bash tests/infer_isolation.sh [path/to/gpuxray]   (the binary is unused)
# Exit 0 clean, 1 a violation (listed). Self-checks its own patterns first.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Patterns: an #include of a model header, or a call that reads a profile.
inc_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*/)?(model/[^">]*|l2\.h|cache\.h|placement\.h|noise\.h|target_impl\.h)[">]'
call_re='\b(gx_profile_load|gx_profile_parse|gx_sim_target_open|gx_l2_[a-z_]+|gx_cache_[a-z_]+|gx_placement_[a-z_]+|fopen|open)[[:space:]]*\('

scan() { # dir -> prints violations, returns 1 if any
    local dir="$1" bad=0
    while IFS= read -r -d '' f; do
        if grep -nE "$inc_re" "$f" >/dev/null; then
            grep -nHE "$inc_re" "$f"
            bad=1
        fi
        # strip // and /* */ comments on a line before looking for calls
        if sed -e 's://.*$::' -e 's:/\*.*\*/::g' "$f" | grep -nE "$call_re" >/dev/null; then
            echo "$f: reads a profile or drives the model directly:"
            sed -e 's://.*$::' -e 's:/\*.*\*/::g' "$f" | grep -nE "$call_re"
            bad=1
        fi
    done < <(find "$dir" -type f \( -name '*.c' -o -name '*.h' \) -print0)
    return $bad
}

# Self-check: the scanner must catch a planted violation.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '#include "../model/noise.h"\nint x;\n' >"$tmp/a.c"
printf '#include "gpuxray/l2.h"\n' >"$tmp/b.h"
printf 'int f(void) { return gx_profile_load("p.json", 0, 0); }\n' >"$tmp/c.c"
printf '/* gx_profile_load( in a comment is fine */\n#include "gpuxray/profile.h"\n' >"$tmp/ok.c"
n=$(scan "$tmp" | grep -c '' || true)
if scan "$tmp" >/dev/null; then
    echo "infer_isolation: self-check failed: planted violations not detected" >&2
    exit 1
fi
if scan "$tmp" | grep -q 'ok.c'; then
    echo "infer_isolation: self-check failed: a comment was flagged" >&2
    exit 1
fi
[ "$n" -ge 3 ] || { echo "infer_isolation: self-check found only $n lines" >&2; exit 1; }

if [ ! -d "$root/src/infer" ]; then
    echo "infer_isolation: $root/src/infer not found" >&2
    exit 1
fi
if out=$(scan "$root/src/infer"); then
    echo "infer_isolation: ok ($(find "$root/src/infer" -name '*.[ch]' | wc -l) files under src/infer)"
    exit 0
fi
echo "infer_isolation: src/infer must use only target.h primitives (no model internals, no profile reading):" >&2
echo "$out" >&2
exit 1
