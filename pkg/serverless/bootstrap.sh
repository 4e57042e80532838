#!/bin/bash
# Started by the template: installs the pinned worker SDK (120 s bound), fetches
# the Go worker and checks its SHA-256 before it can run, then starts the handler.
# Every value arrives through the environment, none is spliced into this text.
set -euo pipefail
timeout 120 python -m pip install --no-cache-dir --disable-pip-version-check "runpod==1.12.0"
curl -fsSL --proto '=https' --max-time 120 -o /usr/local/bin/serverless-worker "$RPG_WORKER_URL"
echo "$RPG_WORKER_SHA256  /usr/local/bin/serverless-worker" | sha256sum -c -
chmod 0755 /usr/local/bin/serverless-worker
echo "$RPG_HANDLER_B64" | base64 -d > /tmp/rpg_handler.py
exec python -u /tmp/rpg_handler.py
