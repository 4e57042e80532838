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
const BootstrapArgs = `bash -c 'f="${TMPDIR:-/tmp}/rpg-bootstrap.sh"; echo "$RPG_BOOTSTRAP_B64" | base64 -d > "$f" && exec bash "$f"'`

var sha256RE = lazyre.Regexp{Pattern: `^[0-9a-f]{64}$`}

// Names of the worker asset's values, as TemplateEnv's *ValueError gives them.
const (
	WorkerURLValue    = "worker URL"
	WorkerSHA256Value = "worker SHA-256"
)

// ValueError refuses one value the lane was given. Name says what the value
// is, never which CLI flag or action input carried it: each caller names its own.
type ValueError struct {
	Name  string // e.g. WorkerURLValue
	Value string
	Want  string
}

func (e *ValueError) Error() string { return fmt.Sprintf("%s %q: want %s", e.Name, e.Value, e.Want) }

// TemplateEnv is the template's environment: the worker's release URL and
// SHA-256, the handler, the bootstrap and ownership markers. Public values
// only: the RunPod API key never reaches the worker.
func TemplateEnv(workerURL, workerSHA256, repository, attempt string) (map[string]string, error) {
	u, err := url.Parse(workerURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, &ValueError{Name: WorkerURLValue, Value: workerURL, Want: "an https URL of the serverless-worker release asset"}
	}
	if !sha256RE.MatchString(workerSHA256) {
		return nil, &ValueError{Name: WorkerSHA256Value, Value: workerSHA256, Want: "64 lowercase hex digits"}
	}
	return map[string]string{
		"RPG_WORKER_URL": workerURL, "RPG_WORKER_SHA256": workerSHA256,
		"RPG_HANDLER_B64":   base64.StdEncoding.EncodeToString(handlerPy),
		"RPG_BOOTSTRAP_B64": base64.StdEncoding.EncodeToString(bootstrapSh),
		"RPG_OWNER":         repository, "RPG_ATTEMPT": attempt,
	}, nil
}
