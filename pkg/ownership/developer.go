package ownership

import (
	"strings"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

// DeveloperMarkerPrefix starts the owner marker (EnvOwner) of a pod a
// developer started by hand with the runpod-gpu command line. It is not
// the CI marker prefix, so FromPod rejects such a pod and neither cleanup
// nor the reaper ever touches it: its life is the developer's to end.
const DeveloperMarkerPrefix = "runpod-gpu-dev:"

// EnvDeveloperTool records the tool that started a developer pod.
const EnvDeveloperTool = "RUNPOD_GPU_DEV_TOOL"

var userRE = lazyre.Regexp{Pattern: `[^A-Za-z0-9_.@-]+`}

// DeveloperEnv returns the ownership tags of a developer pod started by
// user (sanitised to a short, printable name; "unknown" when empty).
func DeveloperEnv(user string) map[string]string {
	u := userRE.ReplaceAllString(strings.TrimSpace(user), "-")
	if len(u) > 64 {
		u = u[:64]
	}
	if u == "" || strings.Trim(u, "-") == "" {
		u = "unknown"
	}
	return map[string]string{EnvOwner: DeveloperMarkerPrefix + u, EnvDeveloperTool: "runpod-gpu"}
}

// Developer returns who started a developer pod, and false for any other
// pod (a CI pod, a foreign or hand-made one).
func Developer(env map[string]string) (string, bool) {
	user, ok := strings.CutPrefix(env[EnvOwner], DeveloperMarkerPrefix)
	return user, ok && user != ""
}
