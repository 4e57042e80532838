package devcli

import "cmp"

// The serverless-worker release asset the template fetches. In the tree both
// are empty; the release workflow writes the release's asset URL and SHA-256
// into the two lines below on the release commit (so `go install …@v1`
// carries them), and a build may set them with -ldflags -X. --worker-url and
// --worker-sha256 override them, and so do RPG_WORKER_URL and
// RPG_WORKER_SHA256 (what simcloud -env exports) in development.
var (
	DefaultWorkerURL    = ""
	DefaultWorkerSHA256 = ""
)

// The environment variables that name a development worker.
const (
	EnvWorkerURL    = "RPG_WORKER_URL"
	EnvWorkerSHA256 = "RPG_WORKER_SHA256"
)

// workerDefaults are the worker flags' defaults: the environment's, else the
// release's. A nil getenv (a command tree built without an environment)
// reads none.
func workerDefaults(getenv func(string) string) (url, sha256 string) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return cmp.Or(getenv(EnvWorkerURL), DefaultWorkerURL), cmp.Or(getenv(EnvWorkerSHA256), DefaultWorkerSHA256)
}
