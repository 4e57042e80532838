#!/bin/bash
# Started by the template: installs the pinned worker SDK (120 s bound), fetches
# the Go worker and checks its SHA-256 before it can run, then starts the handler.
# Every value arrives through the environment, none is spliced into this text.
# The whole of it runs under the seed's 25-minute wall timer: a worker that
# outlives its attempt's 30-minute cleanup deadline stops on its own.
set -euo pipefail
if [ "${RPG_BOOTSTRAP_TIMED:-}" != 1 ]; then
  export RPG_BOOTSTRAP_TIMED=1
  exec timeout --kill-after=30 1500 bash "$0"
fi
worker="${RPG_WORKER_BIN:-/usr/local/bin/serverless-worker}"
handler="${TMPDIR:-/tmp}/rpg_handler.py"
timeout 120 python -m pip install --no-cache-dir --disable-pip-version-check "runpod==1.12.0"
curl -fsSL --proto '=https' --max-time 120 -o "$worker" "$RPG_WORKER_URL"
echo "$RPG_WORKER_SHA256  $worker" | sha256sum -c -
chmod 0755 "$worker"
echo "$RPG_HANDLER_B64" | base64 -d > "$handler"
export RPG_WORKER_BIN="$worker"
exec python -u "$handler"
