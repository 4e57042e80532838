package startup

import (
	"slices"
	"strings"
)

// DebugKeyEnv is the pod environment variable holding the maintainer's
// public key of a kept pod (RunPod's own images read the same name).
const DebugKeyEnv = "PUBLIC_KEY"

// SSHPort is the port a kept pod publishes for the maintainer's SSH.
const SSHPort = "22/tcp"

// debugShellFirstLine starts every debug-shell wrapper (ServesSSH).
const debugShellFirstLine = "set -uo pipefail # runpod-gpu debug shell"

// DebugShellLine is what the wrapper prints when the script ended, before
// it lets the key in; %d is the script's exit status.
const DebugShellLine = "runpod-gpu: the startup script and the job ended (status %d): opening SSH for the maintainer key"

// debugShellTemplate wraps the startup script for a pod a maintainer may
// enter. It runs the script to its end as a child — the CUDA proof, then the
// runner and so the GPU job's tests — and only then installs the key in
// PUBLIC_KEY for root and starts sshd. While the tests run, 22/tcp is mapped
// but nothing listens and no key is installed, so nobody has a shell on a pod
// whose runner holds its registration. The wrapper runs as root, out of reach
// of the job's code, which runs as the image's non-root user.
const debugShellTemplate = debugShellFirstLine + `
if [ "$(id -u)" -ne 0 ]; then
  exec sudo -n -E /bin/bash -c "$BASH_EXECUTION_STRING"
fi
status=0
/bin/bash -c {{script}} || status=$?
printf '` + DebugShellLine + `\n' "$status"
if [ -z "${PUBLIC_KEY:-}" ]; then
  printf 'runpod-gpu: no PUBLIC_KEY in the pod environment: not opening SSH\n'
  exit "$status"
fi
mkdir -p /root/.ssh /run/sshd
chmod 700 /root/.ssh
printf '%s\n' "$PUBLIC_KEY" > /root/.ssh/authorized_keys
chmod 600 /root/.ssh/authorized_keys
if ! command -v sshd >/dev/null 2>&1 && [ ! -x /usr/sbin/sshd ]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null
fi
ssh-keygen -A >/dev/null
exec /usr/sbin/sshd -D -e -o PasswordAuthentication=no -o PermitRootLogin=prohibit-password -o AuthorizedKeysFile=/root/.ssh/authorized_keys
`

// WithDebugShell returns the container command that runs script and, once it
// has ended, lets the key in PUBLIC_KEY in over SSH (see debugShellTemplate).
func WithDebugShell(script string) []string {
	return []string{strings.Replace(debugShellTemplate, "{{script}}", Quote(script), 1)}
}

// ServesSSH reports whether a container command is WithDebugShell's: once
// its script ends, the container stays up serving SSH instead of exiting.
func ServesSSH(cmd []string) bool {
	return len(cmd) == 1 && strings.HasPrefix(cmd[0], debugShellFirstLine+"\n")
}

// DebugSSHOpen reports whether a pod record's ports and environment show the
// maintainer's SSH that provision opens with debug-ssh-public-key: 22/tcp
// published and a key in DebugKeyEnv. With the record's keep-failed tag it
// marks a pod cleanup keeps when its GPU tests failed, and the watchdog leaves.
func DebugSSHOpen(ports []string, env map[string]string) bool {
	return env[DebugKeyEnv] != "" && slices.Contains(ports, SSHPort)
}
