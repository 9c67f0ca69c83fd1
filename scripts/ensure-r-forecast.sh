#!/usr/bin/env bash
# Obtains R with the forecast package (the reference the accuracy and arima-speed benchmarks
# compare with) once, from the system's Debian packages. A benchmark tool only: the service never
# runs R. Needs root and apt-get; elsewhere it says what to install and fails.
set -euo pipefail
if Rscript -e 'suppressPackageStartupMessages(library(forecast))' >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing R's forecast package (apt-get install r-cran-forecast; first run only, a few minutes)..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q r-cran-forecast >&2 ||
    { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q r-cran-forecast >&2; }
  Rscript -e 'suppressPackageStartupMessages(library(forecast))' >/dev/null 2>&1 && exit 0
fi
echo "R's forecast package is not available: install it (Debian: apt-get install r-cran-forecast) to compare with R." >&2
exit 1
