#!/usr/bin/env bash
# Usage: python-venv.sh NAME REQUIREMENTS [KEY_NOTE] — makes, once, a Python virtual environment
# for a reference, benchmark or test tool from its pinned requirements file, cached outside the
# repo and keyed by that file's contents (and KEY_NOTE, e.g. the Python version, when given), then
# prints its python on stdout. PYTHON names the interpreter that creates it (default: python3).
# When the environment cannot be made, it says why on stderr, leaves nothing half made, and exits
# 1. Tools only: the service never imports Python.
set -euo pipefail
name="$1"
requirements="$2"
note="${3:-}"
python="${PYTHON:-python3}"
key="$( (cat "$requirements"; [ -z "$note" ] || echo "$note") | sha256sum | cut -c1-12)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/forecasting-service/venvs/$name-$key"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.complete" ]; then
  echo "Installing $name into $venv (first run only; a minute or two, more for torch)..." >&2
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" >&2; then
    echo "$python -m venv failed (on Debian: apt-get install python3-venv)." >&2
    rm -rf "$venv"
    exit 1
  fi
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2; then
    echo "pip could not install $requirements from PyPI." >&2
    rm -rf "$venv"
    exit 1
  fi
  touch "$venv/.complete"
fi
echo "$venv/bin/python"
