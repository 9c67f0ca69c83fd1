#!/usr/bin/env bash
# Obtains a foundation model's reference implementation (the PyTorch pipeline the ONNX benchmark,
# `npm run bench -- onnx`, compares our adapters with) once, in a Python virtual environment of its
# own, cached outside the repo and keyed by the pinned requirements file. A benchmark tool only:
# the service never imports Python.
#
#   scripts/ensure-onnx-reference.sh requirements.txt                      # chronos-2, timesfm-2p5
#   scripts/ensure-onnx-reference.sh requirements-timesfm2.txt             # timesfm-2 (timesfm 1.3)
#   scripts/ensure-onnx-reference.sh requirements-toto.txt 3.12            # a package needing another Python
#
# The first argument names a file of tools/export/, the second the Python version that creates
# the environment (python<version> on the PATH, else pyenv's; default: python3). Prints the
# environment's python on stdout (scripts/python-venv.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
file="${1:?usage: scripts/ensure-onnx-reference.sh <requirements file of tools/export/> [python]}"
version="${2:-}"
interpreter=python3
if [ -n "$version" ]; then
  interpreter=""
  for candidate in "python$version" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version"*/bin/python3; do
    if "$candidate" -c '' 2>/dev/null; then interpreter="$candidate"; break; fi
  done
  [ -n "$interpreter" ] || { echo "no Python $version found (python$version, or pyenv's versions/$version*)" >&2; exit 2; }
fi
requirements="$root/tools/export/$(basename "$file")"
[ -f "$requirements" ] || { echo "no such requirements file: $requirements" >&2; exit 2; }
# requirements.txt -> onnx-reference, requirements-timesfm2.txt -> onnx-reference-timesfm2
suffix="$(basename "$requirements" .txt)"
suffix="${suffix#requirements}"
PYTHON="$interpreter" exec bash "$root/scripts/python-venv.sh" "onnx-reference${suffix}" "$requirements" "${version:+python $version}"
