package lanes

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
)

// readmeServerlessSection is the Serverless lane's page, whole.
func readmeServerlessSection(t *testing.T) string {
	t.Helper()
	page := docText(t, docServerless)
	assert.Assert(t, strings.HasPrefix(page, "# The Serverless lane\n"), "%s is not the Serverless lane's page", docServerless)
	return page
}

var shBlockRE = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestReadmeServerlessWalkThroughRunsOffline runs every command of the
// Serverless page as written, in a shell, against simcloud: the
// offline block in this repository's checkout, the by-hand block in the
// worked example's project, and the prose's command that stops simcloud.
func TestReadmeServerlessWalkThroughRunsOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs and runs the whole lane")
	}
	section := readmeServerlessSection(t)
	blocks := shBlockRE.FindAllStringSubmatch(section, -1)
	assert.Assert(t, is.Len(blocks, 2), "the offline block and the by-hand block")
	offline, byHand := blocks[0][1], blocks[1][1]
	assert.Assert(t, is.Contains(offline, "simcloud -env"))
	assert.Assert(t, is.Contains(byHand, "runpod-gpu serverless run --execute"))
	const stop = "kill $SIMCLOUD"
	assert.Assert(t, is.Contains(section, "`"+stop+"`"))

	home, project := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"src/kernel.cu": "__global__ void k() {}\n", "tests/run.sh": "echo running GPU tests\n", "tests/helper.py": "print('ok')\n",
		"pyproject.toml": "[project]\nname = \"gpu-project\"\n", "README.md": "# gpu project\n", ".env": "SECRET=never-sent\n", ".git/HEAD": "ref: refs/heads/main\n",
	} {
		p := filepath.Join(project, filepath.FromSlash(name))
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	script := "set -euo pipefail\ncd \"$REPO\"\n" + offline + "trap 'kill $SIMCLOUD 2>/dev/null || true' EXIT\ncd \"$PROJECT\"\n" + byHand + stop + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "REPO=" + harness.RepoRoot, "PROJECT=" + project,
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOPATH=" + goEnv(t, "GOPATH"),
		"GOFLAGS=" + os.Getenv("GOFLAGS"), "GOTOOLCHAIN=local", "CGO_ENABLED=0"}
	out, err := cmd.CombinedOutput()
	text := string(out)
	assert.NilError(t, err, "the Serverless walk-through of %s failed:\n%s", docServerless, text)
	for _, want := range []string{
		"endpoint ", "healthy: settings verified",
		"ended COMPLETED; cuda_executed true",
		"cleanup confirmed: endpoint",
		"$2.61 reserved of the $10.00 cap, 2 reservations, 1 attempts",
	} {
		assert.Check(t, is.Contains(text, want))
	}
	for _, f := range []string{"provider-response.json", "results/test.log", "results/smoke-report.json", "results/metadata.json"} {
		_, err := os.Stat(filepath.Join(home, "rpg", "results", f))
		assert.Check(t, err, "%s", f)
	}
	log, err := os.ReadFile(filepath.Join(home, "rpg", "results", "results", "test.log"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(log), "running GPU tests"), "the project's tests ran")
	assert.Check(t, !strings.Contains(text, "SECRET=never-sent"))
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	assert.NilError(t, err)
	return strings.TrimSpace(string(out))
}
