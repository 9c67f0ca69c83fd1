#!/usr/bin/env bash
# Obtains MinIO (an S3-compatible server; the tests run the job store against it) once, cached
# outside the repo. MinIO publishes no npm package and its binaries are not reachable here, so it
# is built from the Go module proxy at a pinned commit (a few minutes, first run only). Tests only:
# the service itself talks to any S3-compatible store.
set -euo pipefail
bin="${MINIO_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/forecasting-service/bin/minio}"
[ -x "$bin" ] && exit 0
if ! command -v go >/dev/null 2>&1; then
  echo "MinIO is missing at $bin and Go is not installed to build it." >&2
  echo "Install Go (https://go.dev/dl/), or put a 'minio' server binary at $bin (or set MINIO_BIN)." >&2
  exit 1
fi
echo "Building MinIO into $(dirname "$bin") for the object-store tests (first run only; a few minutes)..." >&2
mkdir -p "$(dirname "$bin")"
GOBIN="$(dirname "$bin")" GOFLAGS=-mod=mod go install github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
[ "$(dirname "$bin")/minio" = "$bin" ] || mv "$(dirname "$bin")/minio" "$bin"
