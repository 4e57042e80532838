package devcli

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

func TestServerlessWorkerDefaultsComeFromTheEnvironment(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{name: "development without RPG_WORKER_*", want: "worker_sha256 (unset: pass --worker-sha256 or set RPG_WORKER_SHA256)"},
		{name: "simcloud -env's exports", env: map[string]string{EnvWorkerSHA256: "5e" + strings.Repeat("0", 62)}, want: "worker_sha256 5e" + strings.Repeat("0", 62)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSlsWorld(t, runpodsim.ServerlessFaults{})
			for k, v := range tt.env {
				s.env[k] = v
			}
			r := s.run("serverless", "prepare", "--payload", s.path("payload.json"), "--source", s.path("src"))
			assert.Equal(t, r.code, ExitOK, r.stderr)
			assert.Check(t, is.Contains(r.stdout, tt.want+"\n"))
		})
	}
	url, sha := workerDefaults(func(k string) string { return map[string]string{EnvWorkerURL: "https://x/w"}[k] })
	assert.Check(t, is.Equal(url, "https://x/w"))
	assert.Check(t, is.Equal(sha, DefaultWorkerSHA256))
}

// TestReleaseSetsTheWorkerDefaults runs release.yml's step that writes the
// command line's worker defaults on a copy of workerdefaults.go: the file
// still parses and holds the release's asset URL and SHA-256.
func TestReleaseSetsTheWorkerDefaults(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	raw, err := os.ReadFile("../../.github/workflows/release.yml")
	assert.NilError(t, err)
	var wf struct {
		Jobs map[string]struct {
			Steps []struct{ Name, Run string }
		}
	}
	assert.NilError(t, yaml.Unmarshal(raw, &wf))
	script := ""
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if st.Name == "Set the command line's worker defaults" {
				script = st.Run
			}
		}
	}
	assert.Assert(t, script != "", "release.yml has the step")

	dir := t.TempDir()
	src, err := os.ReadFile("workerdefaults.go")
	assert.NilError(t, err)
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "pkg/devcli"), 0o755))
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "dist"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "pkg/devcli/workerdefaults.go"), src, 0o644))
	sha := strings.Repeat("ab", 32)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "dist/serverless-worker.sha256"), []byte(sha+"  serverless-worker\n"), 0o644))
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "VERSION=v1.2.3", "REPOSITORY=org/runpod-gpu")
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", out)

	got, err := os.ReadFile(filepath.Join(dir, "pkg/devcli/workerdefaults.go"))
	assert.NilError(t, err)
	_, err = parser.ParseFile(token.NewFileSet(), "workerdefaults.go", got, 0)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(got), "\tDefaultWorkerURL    = \"https://github.com/org/runpod-gpu/releases/download/v1.2.3/serverless-worker\"\n"))
	assert.Check(t, is.Contains(string(got), "\tDefaultWorkerSHA256 = \""+sha+"\"\n"))
}
