#!/usr/bin/env bash
# Obtains statsforecast (a peer the accuracy benchmark and the Theta reference fixtures compare
# with) once, in a Python virtual environment of its own (scripts/python-venv.sh). Prints the
# environment's python on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec bash "$root/scripts/python-venv.sh" statsforecast "$root/tools/reference/requirements-statsforecast.txt"
