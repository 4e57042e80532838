package devcli

import (
	"errors"
	"strings"

	"github.com/org/runpod-gpu/pkg/inputform"
)

// serviceURL reads the environment variable name holding the base URL of an
// API a key is sent to (RUNPOD_API_URL, RUNPOD_JOB_URL, GITHUB_API_URL):
// empty (the client's default), or a URL inputform.CheckServiceURL accepts.
// It is called before the client exists, so a plain-http or user-info URL
// never receives the RunPod key or a GitHub token.
func (a *app) serviceURL(name string) (string, error) {
	raw := strings.TrimSpace(a.env.Getenv(name))
	if raw == "" {
		return "", nil
	}
	if err := inputform.CheckServiceURL(raw); err != nil {
		var ue *inputform.URLError
		shown := raw
		if errors.As(err, &ue) {
			shown = ue.Shown()
		}
		return "", fail(ExitUsage, "%s=%q: want %v; unset it for the default", name, shown, err)
	}
	return raw, nil
}
