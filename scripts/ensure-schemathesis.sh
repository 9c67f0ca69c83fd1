#!/usr/bin/env bash
# Obtains schemathesis (the API fuzzer of the contract test, test/contract/schemathesis.test.ts)
# once, in a Python virtual environment of its own (scripts/python-venv.sh), keyed by the pinned
# requirements (every package pinned, so that a seed always generates the same cases). A test tool
# only: the service never runs Python. Prints the environment's schemathesis on stdout. Without
# Python 3.11 or later (with venv and pip), or without PyPI, it says why on stderr and exits 1;
# `npm test` goes on and the contract test reports itself skipped, with why.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
skipped="the contract test (test/contract/schemathesis.test.ts) will be skipped"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  found="$("$python" --version 2>/dev/null || echo 'not found')"
  echo "schemathesis needs Python 3.11 or later ($python: $found): $skipped. Install it, or set PYTHON to one." >&2
  exit 1
fi
if ! venv_python="$(PYTHON="$python" bash "$root/scripts/python-venv.sh" schemathesis "$root/tools/contract/requirements-schemathesis.txt")"; then
  echo "No schemathesis: $skipped." >&2
  exit 1
fi
echo "$(dirname "$venv_python")/schemathesis"
