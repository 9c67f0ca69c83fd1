#!/usr/bin/env bash
# Usage: python-venv.sh NAME REQUIREMENTS — makes, once, a Python virtual environment for a
# reference or benchmark tool from its pinned requirements file, cached outside the repo and
# keyed by that file's contents, then prints its python on stdout. Tools only: the service never
# imports Python.
set -euo pipefail
name="$1"
requirements="$2"
key="$(sha256sum "$requirements" | cut -c1-12)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/forecasting-service/venvs/$name-$key"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.complete" ]; then
  echo "Installing $name into $venv (first run only; a minute or two)..." >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  touch "$venv/.complete"
fi
echo "$venv/bin/python"
