#!/usr/bin/env bash
# Headless Chromium for the browser tests (the RTI's live page, the diagrams rendered):
# Debian's chromium package, driven by playwright (the dev extra) with its executable path;
# playwright's own browser download is not used. Without --no-install-recommends it pulls
# ~107 packages; with it, ~23 (~117 MB to download, ~370 MB installed on a bookworm image).
# Prints the executable's path. Installs only as root or with a password-less sudo.
set -euo pipefail
# REACTORFED_CHROMIUM: a Chromium of your own (the tests use it too)
found=${REACTORFED_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$found" ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then sudo=(); elif command -v sudo >/dev/null 2>&1; then sudo=(sudo -n); else
    echo "chromium.sh: not root and no sudo: cannot install chromium" >&2; exit 1
  fi
  echo "chromium.sh: installing Debian's chromium (headless browser tests)" >&2
  "${sudo[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >&2
  found=$(command -v chromium)
fi
[ -n "$found" ] || { echo "chromium.sh: no chromium, and no apt-get to install it" >&2; exit 1; }
echo "$found"
