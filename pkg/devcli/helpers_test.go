package devcli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	testKey    = "rpa_DEVCLI_SECRET_0123456789"
	userPubKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIUserKey alice@laptop"
	accountKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAccountKey alice@desktop"
)

// testMarket is the default market plus the look-alikes name matching must
// keep apart: an L40 beside the L40S, and an H100 NVL beside the other H100s.
func testMarket() runpodsim.Market {
	m := runpodsim.DefaultMarket()
	m.GPUTypes = append(m.GPUTypes,
		runpodsim.GPUType{ID: "NVIDIA L40", Name: "L40", Pool: "ADA_48", MemoryGB: 48, SecurePrice: 0.69, CommunityPrice: 0.6},
		runpodsim.GPUType{ID: "NVIDIA H100 NVL", Name: "H100 NVL", Pool: "ADA_80_PRO", MemoryGB: 94, SecurePrice: 2.59, CommunityPrice: 2.29},
	)
	m.Hosts = append(m.Hosts,
		runpodsim.HostProfile{ID: "eu-nl-1-l40-s-1", DataCenterID: "EU-NL-1", GPUTypeID: "NVIDIA L40", Cloud: runpodsim.Secure, GPUCount: 4, DriverCUDA: "12.8", BootSeconds: 40, Healthy: true},
		runpodsim.HostProfile{ID: "us-tx-3-h100-nvl-s-1", DataCenterID: "US-TX-3", GPUTypeID: "NVIDIA H100 NVL", Cloud: runpodsim.Secure, GPUCount: 8, DriverCUDA: "12.8", BootSeconds: 50, Healthy: true},
	)
	return m
}

// world is the simulated RunPod on a virtual clock and a developer's home.
type world struct {
	t     *testing.T
	sim   *runpodsim.Server
	clock *simclock.Virtual
	url   string
	home  string
	env   map[string]string

	mu  sync.Mutex
	ssh [][]string // argv of every ssh run
	// sshCode is what the fake ssh exits with.
	sshCode int
	// stdin is what the next runs read on standard input.
	stdin string
	// rewrite, when set, rewrites the body of every GET /v2/pods answer the
	// command line receives (what RunPod could send).
	rewrite func(body string) string
}

// rewriting is a transport that passes pod list answers through rewrite.
type rewriting struct{ rewrite func(string) string }

func (r rewriting) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || req.URL.Path != "/v2/pods" {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	out := r.rewrite(string(body))
	resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(out)), int64(len(out))
	resp.Header.Del("Content-Length")
	return resp, nil
}

func newWorld(t *testing.T, opts ...runpodsim.Option) *world {
	t.Helper()
	clock := simclock.NewVirtual(runpodsim.Epoch)
	base := []runpodsim.Option{runpodsim.WithClock(clock), runpodsim.WithAPIKey(testKey),
		runpodsim.WithMarket(testMarket()), runpodsim.WithSSHKeys(accountKey)}
	sim, err := runpodsim.New(append(base, opts...)...)
	assert.NilError(t, err)
	ts := httptest.NewServer(sim)
	t.Cleanup(ts.Close)
	home := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(userPubKey+"\n"), 0o644))
	return &world{t: t, sim: sim, clock: clock, url: ts.URL, home: home,
		env: map[string]string{"RUNPOD_API_KEY": testKey, "RUNPOD_API_URL": ts.URL}}
}

// result is one invocation's outcome.
type result struct {
	code           int
	stdout, stderr string
}

// run runs the command line in-process; its waits advance the virtual clock.
func (w *world) run(args ...string) result {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var client *http.Client
	if w.rewrite != nil {
		client = &http.Client{Transport: rewriting{w.rewrite}}
	}
	code := Main(ctx, Env{
		Args: args, Getenv: func(k string) string { return w.env[k] }, Stdout: &stdout, Stderr: &stderr,
		Stdin: strings.NewReader(w.stdin), HTTPClient: client,
		Home: w.home, User: "alice", Clock: w.clock, Sleep: w.clock.Sleep,
		RunSSH: func(_ context.Context, argv []string) (int, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.ssh = append(w.ssh, argv)
			return w.sshCode, nil
		},
	})
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	// The key is never printed, whatever happened.
	assert.Check(w.t, !strings.Contains(r.stdout+r.stderr, testKey), "the API key leaked:\n%s\n%s", r.stdout, r.stderr)
	return r
}

// requests counts the simulator's answered requests by route ("GET /v2/pods").
func (w *world) requests() map[string]int {
	out := map[string]int{}
	for _, r := range w.sim.Requests() {
		out[r.Method+" "+r.Path]++
	}
	return out
}

// live returns the pods that are not deleted.
func (w *world) live() []runpodsim.PodInfo {
	var out []runpodsim.PodInfo
	for _, p := range w.sim.Pods() {
		if p.TerminatedAt.IsZero() {
			out = append(out, p)
		}
	}
	return out
}
