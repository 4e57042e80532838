#!/usr/bin/env bash
# GPU check: builds the CUDA smoke proof and runs it against the CUDA driver of
# the NVIDIA machine this runs on (no stand-in), then prints one result line:
#
#   GPU-CHECK driver=<CUDA version> tier=<tier> cc=<x.y> vram_gb=<n> seconds=<t> result=PASS|FAIL
#
# The proof's step lines (and nvidia-smi's view, when present) go to stderr.
# Arguments are passed to the proof, e.g. --min-vram-gb 40. Exits 0 on PASS.
# Needs the go tool; run it from anywhere inside the repository checkout.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpucheck.XXXXXX")
trap 'rm -rf "$work"' EXIT

cd "$repo"
CGO_ENABLED=0 go build -o "$work/cuda-smoke" ./pkg/cmd/cuda-smoke
go build -o "$work/gpucheck" ./action-tests/gpucheck

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/nvidia-smi: /' >&2 || true
fi

# The proof refuses to run beside a runner credential; it needs none.
status=0
env -u RUNNER_JIT_CONFIG "$work/cuda-smoke" --report "$work/report.json" "$@" >&2 || status=$?
exec "$work/gpucheck" -report "$work/report.json" -exit-code "$status"
