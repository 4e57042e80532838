#!/bin/bash
# Stand-in for the GitHub Actions runner's run.sh in a simulated pod. Like the
# real runner given ACTIONS_RUNNER_INPUT_JITCONFIG, it connects to GitHub with
# the single-use JIT config and then stays up until the container is stopped. The
# encoded config is base64 JSON whose connect_url names the simulated GitHub's
# runner endpoint. On SIGTERM it disconnects, as a runner that loses its host
# would appear offline.
set -euo pipefail

# The JIT config comes in ACTIONS_RUNNER_INPUT_JITCONFIG, as the real runner
# takes it, and is dropped from the environment at once. On the command line
# (--jitconfig) every process of the machine could read it: refused here, so a
# startup script that put it there fails every process-mode test.
if [ "$#" -ne 0 ]; then
  echo "run.sh: arguments given ($1 …): pass the JIT config in ACTIONS_RUNNER_INPUT_JITCONFIG, never on a command line" >&2
  exit 2
fi
jit_config=${ACTIONS_RUNNER_INPUT_JITCONFIG:-}
unset ACTIONS_RUNNER_INPUT_JITCONFIG
if [ -z "$jit_config" ]; then
  echo "run.sh: no JIT config in ACTIONS_RUNNER_INPUT_JITCONFIG" >&2
  exit 2
fi
# Like the real runner, refuse root unless told it is allowed.
if [ "$(id -u)" -eq 0 ] && [ -z "${RUNNER_ALLOW_RUNASROOT:-}" ]; then
  echo "run.sh: Must not run with sudo" >&2
  exit 1
fi
echo "runner user: $(id -un)"
# What the job's code could do: raise its privileges through sudo.
if sudo -n true >/dev/null 2>&1; then
  echo "runner sudo: allowed"
else
  echo "runner sudo: refused"
fi
# Base64 only, so it is safe to place inside a JSON string below.
if ! [[ $jit_config =~ ^[A-Za-z0-9+/=]+$ ]]; then
  echo "run.sh: the JIT config is not base64" >&2
  exit 2
fi
connect_url=$(printf '%s' "$jit_config" | base64 -d 2>/dev/null | sed -n 's/.*"connect_url":"\([^"]*\)".*/\1/p')
if [ -z "$connect_url" ]; then
  echo "run.sh: the JIT config names no connect_url" >&2
  exit 2
fi

# The config goes to curl on stdin, never on a command line others can read. The host's own curl,
# not the pod's recording wrapper: this is the runner's session with GitHub, not a download.
post() {
  printf '{"jit_config":"%s"}' "$jit_config" |
    "${SIM_REAL_CURL:-curl}" -fsS --max-time 10 -H 'Content-Type: application/json' --data-binary @- -o /dev/null "$1"
}

disconnect() {
  post "${connect_url%/connect}/disconnect" || true
  exit 143
}
trap disconnect TERM INT

post "$connect_url"
echo "√ Connected to GitHub"
echo "Listening for Jobs"
while :; do
  sleep 3600 &
  wait $! || true
done
