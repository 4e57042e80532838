#!/usr/bin/env bash
# Runs the GPU tests from the unpacked archive (gpu-tests/run.sh): the GPU
# job's step "Run GPU tests" on the pod, or any machine with an NVIDIA GPU and
# driver. The results go to the log and, on GitHub, to the step summary: the
# tests are the GPU job's last step, so nothing uploads after them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi

status=0
"$here/vector_add_test" | tee "$here/results.txt" || status=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### CUDA vector add: exit ${status}"
    echo
    echo '```'
    cat "$here/results.txt"
    echo '```'
  } >>"$GITHUB_STEP_SUMMARY"
fi
exit "$status"
