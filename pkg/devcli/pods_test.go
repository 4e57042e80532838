package devcli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// ciPod creates a pod like one the CI lane kept with debug-ssh-public-key:
// 22/tcp published (TestKeptPodIsReachableByRunpodGPUSSH has provision make one).
func (w *world) ciPod(t *testing.T) string {
	t.Helper()
	tags := ownership.Tags{Repository: "octo/gpu", Workflow: ".github/workflows/gpu.yml", RunID: 77, Attempt: 1, Candidate: 1, KeepFailed: true}
	env := tags.Env()
	env["RUNNER_JIT_CONFIG"] = "jit-SECRET-do-not-print"
	rp := runpod.New(w.url, testKey)
	p, err := rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: tags.PodName(), Image: "ghcr.io/actions/actions-runner:latest",
		GPU: &runpod.CreateGPU{ID: "NVIDIA L4"}, Ports: []string{"22/tcp"}, Env: env})
	assert.NilError(t, err)
	return p.ID
}

func TestLsShowsOwnersAndSSHWithoutEnvironments(t *testing.T) {
	w := newWorld(t)
	assert.Equal(t, w.run("up", "--name", "dev", "--gpus", "L4").code, ExitOK)
	ci := w.ciPod(t)
	w.clock.Advance(2 * time.Minute) // the CI pod boots

	r := w.run("ls", "--json")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, !strings.Contains(r.stdout, "SECRET"), "no pod environment is printed")
	var views []podJSON
	assert.NilError(t, json.Unmarshal([]byte(r.stdout), &views))
	assert.Equal(t, len(views), 2)
	byName := map[string]podJSON{}
	for _, v := range views {
		byName[v.Name] = v
	}
	assert.Equal(t, byName["dev"].Owner, "developer:alice")
	assert.Equal(t, byName["rgpu-77-1-c1"].Owner, "ci:octo/gpu run 77 (keep-failed)")
	assert.Equal(t, byName["rgpu-77-1-c1"].ID, ci)
	assert.Equal(t, byName["dev"].Status, "RUNNING")
	assert.Check(t, byName["dev"].PricePerHour > 0)

	table := w.run("ls")
	assert.Equal(t, table.code, ExitOK)
	assert.Check(t, is.Contains(table.stdout, "NAME"))
	assert.Check(t, is.Contains(table.stdout, "developer:alice"))
	assert.Check(t, !strings.Contains(table.stdout, "SECRET"))
}

func TestSSHBuildsTheCommandLineToTheDirectEndpoint(t *testing.T) {
	w := newWorld(t)
	assert.Equal(t, w.run("up", "--name", "dev", "--gpus", "L4").code, ExitOK)
	var views []podJSON
	assert.NilError(t, json.Unmarshal([]byte(w.run("ls", "--json").stdout), &views))
	host, port := views[0].SSHHost, views[0].SSHPort

	printed := w.run("ssh", "dev", "--print")
	assert.Equal(t, printed.code, ExitOK, printed.stderr)
	want := "# ssh -p " + itoa(port) + " -o StrictHostKeyChecking=accept-new -- root@" + host + "\n" +
		"Host dev\n    HostName " + host + "\n    Port " + itoa(port) + "\n    User root\n    StrictHostKeyChecking accept-new\n"
	assert.Equal(t, printed.stdout, want)
	assert.Equal(t, len(w.ssh), 0, "--print does not connect")

	r := w.run("ssh", "dev", "--", "nvidia-smi", "-L")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.DeepEqual(t, w.ssh[0], []string{"ssh", "-p", itoa(port), "-o", "StrictHostKeyChecking=accept-new", "--", "root@" + host, "nvidia-smi", "-L"})
	assert.Check(t, is.Contains(r.stderr, "Host dev\n"))

	// By id, with an identity, and ssh's own status passed through.
	w.sshCode = 255
	id := views[0].ID
	r = w.run("ssh", id, "-i", "/home/alice/.ssh/id_ed25519")
	assert.Equal(t, r.code, 255)
	assert.DeepEqual(t, w.ssh[1], []string{"ssh", "-p", itoa(port), "-o", "StrictHostKeyChecking=accept-new", "-i", "/home/alice/.ssh/id_ed25519", "--", "root@" + host})

	r = w.run("ssh", "nope")
	assert.Equal(t, r.code, ExitNotFound)
	assert.Check(t, is.Contains(r.stderr, `no pod has the name or id "nope"`))
	r = w.run("ssh", "dev", "extra")
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, "put the remote command after --"))
}

func TestSSHReachesAPodTheCILaneKept(t *testing.T) {
	w := newWorld(t)
	ci := w.ciPod(t)
	r := w.run("ssh", ci, "--print")
	assert.Equal(t, r.code, ExitFailure, "not running yet")
	assert.Check(t, is.Contains(r.stderr, "has no direct SSH endpoint yet"))
	w.clock.Advance(2 * time.Minute)
	r = w.run("ssh", "rgpu-77-1-c1", "--print")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "Host rgpu-77-1-c1\n"))
	assert.Check(t, is.Contains(r.stdout, " root@"))
}

func TestDownDeletesAndConfirms(t *testing.T) {
	w := newWorld(t)
	assert.Equal(t, w.run("up", "--name", "dev", "--gpus", "L4").code, ExitOK)
	r := w.run("down", "dev")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "deleted"))
	assert.Equal(t, len(w.live()), 0)
	r = w.run("down", "dev")
	assert.Equal(t, r.code, ExitNotFound)
}

func TestDownUnconfirmedExitsFive(t *testing.T) {
	w := newWorld(t, runpodsim.WithFaults(runpodsim.Faults{DeleteFailures: runpodsim.DeleteFault{FailFirst: 100}}))
	assert.Equal(t, w.run("up", "--name", "dev", "--gpus", "L4").code, ExitOK)
	r := w.run("down", "dev")
	assert.Equal(t, r.code, ExitUnconfirmed, r.stderr)
	assert.Check(t, is.Contains(r.stderr, "may still be billing"))
	assert.Equal(t, w.requests()["DELETE /v2/pods/"+w.live()[0].ID], 5, "bounded: at most 5 DELETEs")
}

func TestAPIKeyFromTheConfigFileAndNeverPrinted(t *testing.T) {
	w := newWorld(t)
	delete(w.env, "RUNPOD_API_KEY")
	r := w.run("ls")
	assert.Equal(t, r.code, ExitFailure)
	assert.Check(t, is.Contains(r.stderr, "no RunPod API key: set RUNPOD_API_KEY, or api_key under [runpod] in "))

	assert.NilError(t, os.MkdirAll(filepath.Join(w.home, ".runpod"), 0o700))
	cfg := filepath.Join(w.home, ".runpod", "config.toml")
	assert.NilError(t, os.WriteFile(cfg, []byte("apikey = \"runpodctl's\"\n[runpod]\napi_key = \""+testKey+"\"\n"), 0o600))
	r = w.run("ls")
	assert.Equal(t, r.code, ExitOK, r.stderr)

	// A broken file names the line, never its text (the key is there).
	assert.NilError(t, os.WriteFile(cfg, []byte("[runpod]\napi_key = \""+testKey+"\nimage = 3\n"), 0o600))
	r = w.run("ls")
	assert.Equal(t, r.code, ExitFailure)
	assert.Check(t, is.Contains(r.stderr, "line 2 is not valid TOML"))
	assert.NilError(t, os.WriteFile(cfg, []byte("[runpod]\napi_key = 42\n"), 0o600))
	r = w.run("ls")
	assert.Equal(t, r.code, ExitFailure)
	assert.Check(t, is.Contains(r.stderr, "must be strings"))

	// The environment wins over the file; a refused key says where to look.
	assert.NilError(t, os.WriteFile(cfg, []byte("[runpod]\napi_key = \""+testKey+"\"\n"), 0o600))
	w.env["RUNPOD_API_KEY"] = "rpa_wrong_key_value"
	r = w.run("ls")
	assert.Equal(t, r.code, ExitFailure)
	assert.Check(t, is.Contains(r.stderr, "RunPod refused the API key (401)"))
	assert.Check(t, !strings.Contains(r.stderr, "rpa_wrong_key_value"))
}

func itoa(n int) string { return strconv.Itoa(n) }

// otherPod creates a running pod with env and 22/tcp published, as another
// tool or developer would; it returns its id.
func (w *world) otherPod(t *testing.T, name string, env map[string]string) string {
	t.Helper()
	p, err := runpod.New(w.url, testKey).CreatePod(context.Background(), runpod.CreatePodRequest{Name: name, Image: DefaultImage,
		GPU: &runpod.CreateGPU{ID: "NVIDIA L4"}, Ports: []string{"22/tcp"}, Env: env})
	assert.NilError(t, err)
	w.clock.Advance(2 * time.Minute)
	return p.ID
}

// down deletes at once only a pod up started for this developer; any other
// pod it shows and asks about first (or --yes), and a CI lane pod it
// refuses without --force.
func TestDownDeletesOnlyYourPodsUnlessConfirmed(t *testing.T) {
	tests := []struct {
		name       string
		pod        map[string]string // the pod's env; nil: up starts it for alice
		args       []string
		stdin      string
		wantCode   int
		wantErr    []string
		wantAsked  bool
		wantDelete bool
	}{
		{name: "yours", wantCode: ExitOK, wantDelete: true},
		{name: "another developer's, unanswered", pod: ownership.DeveloperEnv("bob"), wantCode: ExitUsage, wantAsked: true,
			wantErr: []string{"developer:bob", "not deleted: not confirmed (answer y, or pass --yes)"}},
		{name: "another developer's, declined", pod: ownership.DeveloperEnv("bob"), stdin: "n\n", wantCode: ExitUsage, wantAsked: true},
		{name: "another developer's, confirmed", pod: ownership.DeveloperEnv("bob"), stdin: "y\n", wantCode: ExitOK, wantAsked: true, wantDelete: true},
		{name: "another developer's, --yes", pod: ownership.DeveloperEnv("bob"), args: []string{"--yes"}, wantCode: ExitOK, wantDelete: true},
		{name: "a pod made elsewhere", pod: map[string]string{}, wantCode: ExitUsage, wantAsked: true, wantErr: []string{"other"}},
		{name: "alice's name, another tool's tags", pod: map[string]string{ownership.EnvOwner: "runpod-gpu-dev:alice"}, stdin: "y\n",
			wantCode: ExitOK, wantAsked: true, wantDelete: true},
		{name: "a CI pod", pod: ciEnv(), args: []string{"--yes"}, wantCode: ExitUsage,
			wantErr: []string{"belongs to the CI lane (ci:octo/gpu run 77): its run's cleanup and the reaper delete it; pass --force"}},
		{name: "a CI pod, --force", pod: ciEnv(), args: []string{"--force"}, stdin: "y\n", wantCode: ExitOK, wantAsked: true, wantDelete: true},
		{name: "a CI pod, --force --yes", pod: ciEnv(), args: []string{"--force", "--yes"}, wantCode: ExitOK, wantDelete: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			name := "dev"
			if tc.pod == nil {
				assert.Equal(t, w.run("up", "--name", name, "--gpus", "L4").code, ExitOK)
			} else {
				if _, ci := tc.pod[ownership.EnvRunID]; ci {
					name = "rgpu-77-1-c1"
				}
				w.otherPod(t, name, tc.pod)
			}
			w.stdin = tc.stdin
			r := w.run(append([]string{"down", name}, tc.args...)...)
			assert.Equal(t, r.code, tc.wantCode, r.stderr)
			for _, want := range tc.wantErr {
				assert.Check(t, is.Contains(r.stderr, want))
			}
			asked := strings.Contains(r.stderr, "Delete pod ")
			assert.Check(t, asked == tc.wantAsked, "asked: %v\n%s", asked, r.stderr)
			if asked {
				assert.Check(t, is.Contains(r.stderr, "runpod-gpu up did not start this pod for you (developer:alice)"))
				assert.Check(t, is.Contains(r.stderr, "NAME"), "it shows the pod before asking")
			}
			assert.Equal(t, len(w.live()) == 0, tc.wantDelete, "deleted")
			if !tc.wantDelete {
				assert.Equal(t, w.requests()["DELETE /v2/pods/"+w.live()[0].ID], 0, "no DELETE was sent")
			}
		})
	}
}

func ciEnv() map[string]string {
	return ownership.Tags{Repository: "octo/gpu", Workflow: ".github/workflows/gpu.yml", RunID: 77, Attempt: 1, Candidate: 1}.Env()
}

// ssh checks what RunPod said about the endpoint and the pod before it
// reaches ssh's command line or the ssh_config block: a username of
// -oProxyCommand=… would run a local command, a newline would add config.
func TestSSHRefusesAnEndpointItCannotTrust(t *testing.T) {
	tests := []struct {
		name    string
		old     string // replaced in the pod list answer
		new     string
		wantErr string
	}{
		{name: "an option as the username", old: `"username":"root"`, new: `"username":"-oProxyCommand=touch /tmp/pwned"`,
			wantErr: `RunPod gave the SSH username "-oProxyCommand=touch /tmp/pwned": want a login name`},
		{name: "an option as the host", old: `"direct":{"host":"`, new: `"direct":{"host":"-oProxyCommand=x`, wantErr: "RunPod gave the SSH host"},
		{name: "a newline in the host", old: `"direct":{"host":"`, new: `"direct":{"host":"h\nProxyCommand x\n`, wantErr: "RunPod gave the SSH host"},
		{name: "a newline in the name", old: `"name":"dev"`, new: `"name":"dev\n    ProxyCommand touch /tmp/pwned"`, wantErr: "RunPod gave the pod name"},
		{name: "a port out of range", old: `,"username":"root"`, new: `0,"username":"root"`, wantErr: "0: want 1 to 65535"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			id := w.otherPod(t, "dev", ownership.DeveloperEnv("alice"))
			w.rewrite = func(body string) string {
				assert.Assert(t, strings.Contains(body, tc.old), "the answer holds no %s: %s", tc.old, body)
				return strings.Replace(body, tc.old, tc.new, 1)
			}
			for _, args := range [][]string{{"ssh", id}, {"ssh", id, "--print"}} {
				r := w.run(args...)
				assert.Equal(t, r.code, ExitFailure, r.stderr)
				assert.Check(t, is.Contains(r.stderr, tc.wantErr))
				assert.Check(t, !strings.Contains(r.stdout, "ProxyCommand"), "the ssh_config block was printed:\n%s", r.stdout)
			}
			assert.Check(t, is.Len(w.ssh, 0), "ssh ran")
		})
	}
}
