#!/usr/bin/env bash
# The secured-Temporal tests (test/jobs/temporal-tls.test.ts) put Debian's nginx, with its stream
# module, in front of a Temporal dev server to require TLS with client certificates. This installs
# both packages when they are missing and it can (as root, with apt-get); otherwise it says why.
# Tests only: the service itself never runs nginx. Without it those tests report themselves
# skipped with the reason, except under CI, where they fail.
set -uo pipefail
skipped="the secured-Temporal tests (test/jobs/temporal-tls.test.ts) will be skipped"
nginx="${NGINX_BIN:-/usr/sbin/nginx}"
module=/usr/lib/nginx/modules/ngx_stream_module.so
if [ -x "$nginx" ] && [ -f "$module" ]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "nginx with its stream module is not installed and this system has no apt-get: $skipped." >&2
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "nginx with its stream module is not installed and installing it needs root: $skipped. Run: sudo apt-get install nginx libnginx-mod-stream" >&2
  exit 0
fi
echo "Installing Debian's nginx and libnginx-mod-stream for the secured-Temporal tests (first run only)..." >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx libnginx-mod-stream; } >&2; then
  echo "apt-get could not install nginx: $skipped." >&2
fi
exit 0
