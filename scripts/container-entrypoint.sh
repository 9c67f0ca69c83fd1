#!/bin/sh
# The container image's entry point. The first argument names the role: `api` (the default)
# starts the HTTP API, `worker` a job worker, `keys` the key command with the arguments after it.
# Anything else runs as given. `exec` makes the service process 1, so it gets SIGTERM and drains.
set -e
cd /app
role="${1:-api}"
[ $# -gt 0 ] && shift
case "$role" in
  api) exec node dist/bin/server.js "$@" ;;
  worker) exec node dist/bin/worker.js "$@" ;;
  keys) exec node dist/bin/keys.js "$@" ;;
  *) exec "$role" "$@" ;;
esac
