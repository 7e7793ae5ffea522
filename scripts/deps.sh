#!/usr/bin/env bash
# deps.sh - install the Debian packages the build needs (scripts/debian-packages.txt)
# when some are missing. Called by `make` before every build and by .ci/run.
#
# - Nothing missing: silent, exit 0 (one dpkg-query call; cheap enough for every make).
# - Missing and root: apt-get update, then apt-get install -y of the missing ones.
# - Missing and not root (or apt-get unavailable): print the exact command to run
#   and exit 2 (bad set-up: the build cannot start).
# - No dpkg-query (not Debian): say so once and continue; the configure step then
#   names what it cannot find.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
list="${GX_DEBIAN_PACKAGES:-$here/debian-packages.txt}"
mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "gpuxray: dpkg-query not found (not a Debian system?): not checking $list" >&2
  exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
  st="$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)"
  # "ii " = installed; a virtual package (no status) counts as installed when something
  # provides it
  if [[ "$st" != ii* ]]; then
    if [[ -z "$st" ]] && dpkg-query -W -f='${Provides}\n' 2>/dev/null | grep -qw -- "$p"; then
      continue
    fi
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "gpuxray: the build needs these Debian packages: ${missing[*]}" >&2
  echo "gpuxray: run as root:  apt-get update && $cmd" >&2
  exit 2
fi
echo "gpuxray: installing the Debian packages the build needs: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends "${missing[@]}"
