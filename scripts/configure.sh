#!/usr/bin/env bash
# configure.sh BUILD_DIR [CMAKE_ARGS...] - configure a build folder once, and recover
# one an earlier run left half-configured. Called by `make` before every build.
#
# A folder counts as configured when CMake finished there: CMakeCache.txt, the generated
# Makefile and CMakeFiles/Makefile.cmake all exist, and the cache belongs to this source
# tree. Anything less (a configure that failed for a missing package, was interrupted, or
# a folder copied from another tree) is configured again from scratch: the cache and
# CMakeFiles/ are removed first, so no stale answer survives. Only those two CMake-owned
# entries are removed; other files in the folder stay.
set -euo pipefail
b="${1:?usage: configure.sh BUILD_DIR [CMAKE_ARGS...]}"
shift
src="$(pwd -P)"
cache="$b/CMakeCache.txt"
if [ -f "$cache" ] && [ -f "$b/Makefile" ] && [ -f "$b/CMakeFiles/Makefile.cmake" ]; then
  home="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")"
  if [ "$home" = "$src" ]; then
    exit 0
  fi
  echo "gpuxray: $b was configured for another source tree ($home): configuring again" >&2
elif [ -e "$cache" ] || [ -d "$b/CMakeFiles" ]; then
  echo "gpuxray: $b is half-configured (an earlier configure did not finish): configuring again from scratch" >&2
fi
rm -rf "$cache" "$b/CMakeFiles"
if ! cmake -S . -B "$b" "$@"; then
  rm -rf "$cache" "$b/CMakeFiles" # the next make starts afresh
  echo "gpuxray: configuring $b failed (see above)" >&2
  exit 1
fi
