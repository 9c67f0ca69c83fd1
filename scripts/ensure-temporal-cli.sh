#!/usr/bin/env bash
# Obtains the Temporal CLI (its dev server runs the service's jobs) once, cached outside the repo.
# The CLI is not on npm; it is built from the Go module proxy. v1.5.1 is the newest tag that
# `go install` accepts (later tags carry replace directives).
set -euo pipefail
bin="${TEMPORAL_CLI:-${XDG_CACHE_HOME:-$HOME/.cache}/forecasting-service/bin/temporal}"
[ -x "$bin" ] && exit 0
if ! command -v go >/dev/null 2>&1; then
  echo "The Temporal CLI is missing at $bin and Go is not installed to build it." >&2
  echo "Install Go (https://go.dev/dl/), or put a 'temporal' binary at $bin (or set TEMPORAL_CLI)," >&2
  echo "or set TEMPORAL_ADDRESS to use an existing Temporal cluster." >&2
  exit 1
fi
echo "Building the Temporal CLI into $(dirname "$bin") (first run only; a few minutes)..." >&2
mkdir -p "$(dirname "$bin")"
GOBIN="$(dirname "$bin")" GOFLAGS=-mod=mod go install github.com/temporalio/cli/cmd/temporal@v1.5.1
[ "$(dirname "$bin")/temporal" = "$bin" ] || mv "$(dirname "$bin")/temporal" "$bin"
