#!/usr/bin/env bash
# Obtains schemathesis (the API fuzzer of the contract test, test/contract/schemathesis.test.ts)
# once, in a Python virtual environment of its own, cached outside the repo and keyed by the
# pinned requirements (every package pinned, so that a seed always generates the same cases).
# A test tool only: the service never runs Python. Prints the environment's schemathesis on
# stdout. Without Python 3.11 or later (with venv and pip), or without PyPI, it says why on
# stderr and exits 1; `npm test` goes on and the contract test reports itself skipped, with why.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/tools/contract/requirements-schemathesis.txt"
key="$(sha256sum "$requirements" | cut -c1-12)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/forecasting-service/venvs/schemathesis-$key"
skipped="the contract test (test/contract/schemathesis.test.ts) will be skipped"
if [ ! -x "$venv/bin/schemathesis" ] || [ ! -f "$venv/.complete" ]; then
  python="${PYTHON:-python3}"
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    found="$("$python" --version 2>/dev/null || echo 'not found')"
    echo "schemathesis needs Python 3.11 or later ($python: $found): $skipped. Install it, or set PYTHON to one." >&2
    exit 1
  fi
  echo "Installing schemathesis into $venv (first run only; under a minute)..." >&2
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" >&2; then
    echo "$python -m venv failed (on Debian: apt-get install python3-venv): $skipped." >&2
    rm -rf "$venv"
    exit 1
  fi
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2; then
    echo "pip could not install $requirements from PyPI: $skipped." >&2
    rm -rf "$venv"
    exit 1
  fi
  touch "$venv/.complete"
fi
echo "$venv/bin/schemathesis"
