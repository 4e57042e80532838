package lanes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// The developer's command line, built once from pkg/cmd/runpod-gpu
// and run as a developer would run it, against the simulated RunPod.
var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

func cliBinary(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		if cliErr = harness.TouchSources(harness.RepoRoot, "pkg", "go.mod", "go.sum"); cliErr != nil {
			return
		}
		cliPath = filepath.Join(harness.BinDir(), "runpod-gpu")
		cmd := exec.Command("go", "build", "-o", cliPath, "./pkg/cmd/runpod-gpu")
		cmd.Dir = harness.RepoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = errors.New(string(out))
		}
	})
	assert.NilError(t, cliErr)
	return cliPath
}

const (
	cliKey        = "rpa_CLI_SESSION_SECRET_42"
	cliUserKey    = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICliUser dev@laptop"
	cliAccountKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICliAccount dev@desktop"
)

// cliWorld is a real-clock simulated RunPod with quick boots, a developer's
// home with a key pair and a fake ssh on PATH that records its arguments.
type cliWorld struct {
	sim  *runpodsim.Server
	url  string
	home string
	bin  string // holds the fake ssh
}

func newCLIWorld(t *testing.T, faults runpodsim.Faults) *cliWorld {
	t.Helper()
	market := runpodsim.DefaultMarket()
	for i := range market.Hosts {
		market.Hosts[i].BootSeconds = 1
	}
	sim, err := runpodsim.New(runpodsim.WithClock(simclock.Real{}), runpodsim.WithAPIKey(cliKey), runpodsim.WithMarket(market),
		runpodsim.WithSSHKeys(cliAccountKey), runpodsim.WithProvisioningDelay(200*time.Millisecond), runpodsim.WithFaults(faults))
	assert.NilError(t, err)
	url, shutdown, err := sim.ListenLoopback()
	assert.NilError(t, err)
	t.Cleanup(shutdown)
	w := &cliWorld{sim: sim, url: url, home: t.TempDir(), bin: t.TempDir()}
	assert.NilError(t, os.MkdirAll(filepath.Join(w.home, ".ssh"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(w.home, ".ssh", "id_ed25519.pub"), []byte(cliUserKey+"\n"), 0o644))
	// The key comes from the config file here, as a developer keeps it.
	assert.NilError(t, os.MkdirAll(filepath.Join(w.home, ".runpod"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(w.home, ".runpod", "config.toml"), []byte("[runpod]\napi_key = \""+cliKey+"\"\n"), 0o600))
	fakeSSH := "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$HOME/ssh-args\"\necho 'GPU 0: NVIDIA L4'\n"
	assert.NilError(t, os.WriteFile(filepath.Join(w.bin, "ssh"), []byte(fakeSSH), 0o755))
	return w
}

// run runs the binary with only the developer's environment.
func (w *cliWorld) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliBinary(t), args...)
	cmd.Env = []string{"PATH=" + w.bin + ":" + os.Getenv("PATH"), "HOME=" + w.home, "USER=dev", "RUNPOD_API_URL=" + w.url}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		assert.NilError(t, err)
	}
	assert.Check(t, !strings.Contains(stdout.String()+stderr.String(), cliKey), "the API key was printed")
	return code, stdout.String(), stderr.String()
}

func TestCLISessionFromOffersToDown(t *testing.T) {
	w := newCLIWorld(t, runpodsim.Faults{})

	code, out, errOut := w.run(t, "offers", "--gpus", "L4:1", "--region", "europe")
	assert.Equal(t, code, 0, errOut)
	assert.Check(t, is.Contains(out, "NVIDIA L4 x1 secure  europe  EU-NL-1"))

	code, out, errOut = w.run(t, "up", "--name", "dev", "--gpus", "L4:1", "--region", "europe", "--poll", "100ms")
	assert.Equal(t, code, 0, errOut)
	assert.Check(t, is.Contains(errOut, "/ 15m00s] RUNNING, SSH reachable"))
	assert.Check(t, is.Contains(out, "Host dev\n"))
	pods := w.sim.Pods()
	assert.Equal(t, len(pods), 1)
	assert.Equal(t, pods[0].DataCenterID, "EU-NL-1")
	assert.Equal(t, pods[0].Env["PUBLIC_KEY"], cliUserKey+"\n"+cliAccountKey)
	assert.Equal(t, pods[0].Env["RUNPOD_GPU_OWNER"], "runpod-gpu-dev:dev")

	code, out, errOut = w.run(t, "ls", "--json")
	assert.Equal(t, code, 0, errOut)
	var listed []map[string]any
	assert.NilError(t, json.Unmarshal([]byte(out), &listed))
	assert.Equal(t, len(listed), 1)
	assert.Equal(t, listed[0]["owner"], "developer:dev")
	host, port := listed[0]["ssh_host"].(string), int(listed[0]["ssh_port"].(float64))

	code, out, errOut = w.run(t, "ssh", "dev", "--", "nvidia-smi", "-L")
	assert.Equal(t, code, 0, errOut)
	assert.Equal(t, out, "GPU 0: NVIDIA L4\n")
	args, err := os.ReadFile(filepath.Join(w.home, "ssh-args"))
	assert.NilError(t, err)
	assert.Equal(t, string(args), strings.Join([]string{"-p", itoaCLI(port), "-o", "StrictHostKeyChecking=accept-new", "--", "root@" + host, "nvidia-smi", "-L"}, "\n")+"\n")

	code, out, errOut = w.run(t, "down", "dev")
	assert.Equal(t, code, 0, errOut)
	assert.Check(t, is.Contains(out, "deleted"))
	assert.Check(t, !w.sim.Pods()[0].TerminatedAt.IsZero())

	// The account's key list was read and never written.
	assert.DeepEqual(t, w.sim.SSHKeys(), []string{cliAccountKey})
	for _, r := range w.sim.Requests() {
		assert.Check(t, !(r.Method == "PUT" && r.Path == "/v2/account/ssh-keys"))
	}
}

func TestCLIStaleOfferAndRefusedFlagsCreateNothing(t *testing.T) {
	w := newCLIWorld(t, runpodsim.Faults{StockChanges: []runpodsim.StockChange{{
		Match: runpodsim.Match{Route: "GET /v2/catalog/gpus"}, When: runpodsim.Trigger{Nth: []int{1}},
		DataCenterID: "EU-NL-1", GPUTypeID: "NVIDIA L4", Cloud: runpodsim.Secure,
	}}})
	for _, flag := range [][]string{{"--port", "8888"}, {"--spot"}, {"--k8s"}} {
		code, _, errOut := w.run(t, append([]string{"up", "--name", "dev", "--gpus", "L4"}, flag...)...)
		assert.Equal(t, code, 2, errOut)
		assert.Check(t, is.Contains(errOut, flag[0]+" is not supported on RunPod: "))
	}
	assert.Equal(t, len(w.sim.Requests()), 0)

	code, _, errOut := w.run(t, "up", "--name", "dev", "--gpus", "L4", "--region", "europe", "--cloud", "secure", "--poll", "100ms")
	assert.Equal(t, code, 3, errOut)
	assert.Check(t, is.Contains(errOut, "stale offer"))
	assert.Equal(t, len(w.sim.Pods()), 0)
}

func itoaCLI(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
