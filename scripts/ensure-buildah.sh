#!/usr/bin/env bash
# The container-image test (test/build/container-image.test.ts) builds the Containerfile with
# Debian's buildah and runs the API and a worker from the image. It also builds a base image from
# Debian packages with debootstrap, as no image registry may be reachable. This installs both when
# they are missing and it can (as root, with apt-get); otherwise it says why.
# Tests only: the service never runs buildah. Without it that test reports itself skipped.
set -uo pipefail
skipped="the container-image test (test/build/container-image.test.ts) will be skipped"
if command -v buildah >/dev/null 2>&1 && command -v debootstrap >/dev/null 2>&1; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "buildah or debootstrap is not installed and this system has no apt-get: $skipped." >&2
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "buildah or debootstrap is not installed and installing them needs root: $skipped. Run: sudo apt-get install buildah debootstrap" >&2
  exit 0
fi
echo "Installing Debian's buildah and debootstrap for the container-image test (first run only)..." >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends buildah debootstrap; } >&2; then
  echo "apt-get could not install buildah and debootstrap: $skipped." >&2
fi
exit 0
