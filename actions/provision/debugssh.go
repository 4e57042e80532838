package provisionaction

import (
	"fmt"
	"os"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/provision"
)

// debugKeyInput is the checked debug-ssh-public-key: empty without one, and
// refused without keep-failed-pods or when the event payload (text a pull
// request's author writes) holds it.
func debugKeyInput(io *actionio.IO, in Inputs) (string, error) {
	if in.DebugSSHKey == "" {
		return "", nil
	}
	if !in.KeepFailedPods {
		return "", fmt.Errorf("input debug-ssh-public-key is set but keep-failed-pods is false: the key only opens SSH on a kept pod; set keep-failed-pods: true or leave the key empty")
	}
	path := io.Getenv("GITHUB_EVENT_PATH")
	if path == "" {
		return "", fmt.Errorf("input debug-ssh-public-key: GITHUB_EVENT_PATH is unset, so the key cannot be checked against the event payload; not opening SSH")
	}
	event, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("input debug-ssh-public-key: reading the event payload to check the key against it: %w", err)
	}
	return provision.ParseDebugSSHKey(in.DebugSSHKey, event)
}
