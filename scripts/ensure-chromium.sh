#!/usr/bin/env bash
# The browser tests (test/web/) drive Debian's Chromium with puppeteer-core: puppeteer's own
# browser download cannot work here. This installs Debian's `chromium` package when no browser
# is found and it can (as root, with apt-get); otherwise it says why. It never fails `npm test`:
# without a browser the browser tests report themselves skipped, with the reason.
set -uo pipefail
skipped="the browser tests (test/web) will be skipped"
# CHROMIUM_PATH, when set, is the only browser the tests use: nothing is installed for it.
if [ -n "${CHROMIUM_PATH:-}" ]; then
  [ -x "$CHROMIUM_PATH" ] || echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable: $skipped." >&2
  exit 0
fi
for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
  if [ -x "$candidate" ]; then exit 0; fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "Chromium is not installed and this system has no apt-get: $skipped. Install Chromium and set CHROMIUM_PATH to run them." >&2
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "Chromium is not installed and installing it needs root: $skipped. Run: sudo apt-get install chromium" >&2
  exit 0
fi
echo "Installing Debian's chromium package for the browser tests (first run only)..." >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >&2; then
  echo "apt-get could not install chromium: $skipped." >&2
fi
exit 0
