package serverless

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"net/url"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

//go:embed handler.py
var handlerPy []byte

//go:embed bootstrap.sh
var bootstrapSh []byte

// BootstrapArgs is the template's start command: it decodes the bootstrap
// script from the environment, so no value is ever quoted into shell text.
const BootstrapArgs = `bash -c 'echo "$RPG_BOOTSTRAP_B64" | base64 -d > /tmp/rpg-bootstrap.sh && exec bash /tmp/rpg-bootstrap.sh'`

var sha256RE = lazyre.Regexp{Pattern: `^[0-9a-f]{64}$`}

// TemplateEnv is the template's environment: the worker's release URL and
// SHA-256, the handler, the bootstrap and ownership markers. Public values
// only: the RunPod API key never reaches the worker.
func TemplateEnv(workerURL, workerSHA256, repository, attempt string) (map[string]string, error) {
	u, err := url.Parse(workerURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("worker-url %q: want an https URL of the serverless-worker release asset", workerURL)
	}
	if !sha256RE.MatchString(workerSHA256) {
		return nil, fmt.Errorf("worker-sha256 %q: want 64 lowercase hex digits", workerSHA256)
	}
	return map[string]string{
		"RPG_WORKER_URL": workerURL, "RPG_WORKER_SHA256": workerSHA256,
		"RPG_HANDLER_B64":   base64.StdEncoding.EncodeToString(handlerPy),
		"RPG_BOOTSTRAP_B64": base64.StdEncoding.EncodeToString(bootstrapSh),
		"RPG_OWNER":         repository, "RPG_ATTEMPT": attempt,
	}, nil
}
