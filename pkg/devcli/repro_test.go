package devcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/lanerecord"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/provision"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

const (
	reproGPU     = "NVIDIA RTX A5000"
	reproOldHost = "h-cuda-12-6" // cheaper in the listing's order, under the lane's floor
	reproNewHost = "h-cuda-12-8"
	reproTests   = "pytest -q tests/gpu"
	reproArchive = "runpod-gpu-tests-archive"

	// When the run's A5000 (24 GB) is out of stock: the A4000 is cheaper but
	// smaller, the 3090 as large but only on a driver under the floor, the
	// L40S as large as the A6000 but dearer; the A6000 is the nearest.
	reproSmaller   = "NVIDIA RTX A4000"
	reproOldDriver = "NVIDIA GeForce RTX 3090"
	reproNearest   = "NVIDIA RTX A6000"
	reproDearer    = "NVIDIA L40S"
)

// reproWorld is a finished lane run on the simulated cloud: provision ran
// (CUDA floor 12.8) and its pod was deleted, its lane record and test
// archive are artifacts of the run, and the provision job's log seals the
// record unless forged.
type reproWorld struct {
	t      *testing.T
	cloud  *cloud.Cloud
	clock  *simclock.Virtual
	cfg    *config.Config
	runID  int64
	record lanerecord.Record
	home   string
	env    map[string]string

	mu      sync.Mutex
	creates []runpod.CreatePodRequest // every pod create body repro sent
	onPod   map[string]string         // the pod's files under ReproDir: name → content
	ssh     [][]string
	// out is the running command's standard output; atCreate what it held
	// when the pod create was sent.
	out      *bytes.Buffer
	atCreate string
}

func newReproWorld(t *testing.T, forged bool) *reproWorld {
	t.Helper()
	host := func(id, cuda string) runpodsim.HostProfile {
		return runpodsim.HostProfile{ID: id, DataCenterID: "US-TX-3", GPUTypeID: reproGPU, DriverCUDA: cuda, BootSeconds: 30, Healthy: true}
	}
	// Other types for when the run's is out of stock (reproNearest).
	other := func(id, gpu, cuda string) runpodsim.HostProfile {
		h := host(id, cuda)
		h.GPUTypeID = gpu
		return h
	}
	c, err := cloud.Start(cloud.Options{Market: &runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{{ID: reproGPU, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16},
			{ID: reproSmaller, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.17},
			{ID: reproOldDriver, Name: "RTX 3090", MemoryGB: 24, SecurePrice: 0.22},
			{ID: reproNearest, Name: "RTX A6000", MemoryGB: 48, SecurePrice: 0.49},
			{ID: reproDearer, Name: "L40S", MemoryGB: 48, SecurePrice: 0.86}},
		DataCenters: []runpodsim.DataCenter{{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}},
		Hosts: []runpodsim.HostProfile{host(reproOldHost, "12.6"), host(reproNewHost, "12.8"), host("h-cuda-12-8-b", "12.8"),
			other("h-a4000", reproSmaller, "12.8"), other("h-3090", reproOldDriver, "12.6"), other("h-a6000", reproNearest, "12.8"),
			other("h-l40s", reproDearer, "12.8")},
	}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	clock := c.Clock.(*simclock.Virtual)
	rpPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy})
	assert.NilError(t, err)
	head, merge := strings.Repeat("a", 40), strings.Repeat("b", 40)
	pr, err := c.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "mallory", HeadSHA: head, HeadRef: "feature", MergeCommitSHA: merge})
	assert.NilError(t, err)
	runID, err := c.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: cloud.Workflow, Event: "pull_request", HeadSHA: head,
		Status: "completed", Conclusion: "failure"})
	assert.NilError(t, err)

	cfg := config.Default()
	cfg.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{reproGPU}}}
	cfg.MinCUDAVersion = config.CUDAVersion{Major: 12, Minor: 8}
	cfg.LifetimeSeconds = 5400
	assert.NilError(t, cfg.Validate())
	rp := runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(rpPolicy))
	res, err := provision.Run(context.Background(), provision.Deps{
		RunPod: rp, GitHub: gh, Images: &registry.Resolver{APIURL: c.RegistryURL}, Policy: rpPolicy, Observer: quietObserver{},
	}, provision.Request{
		Config: cfg, Owner: ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID, Attempt: 1},
		LabelPrefix: "runpod-gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo, PRNumber: pr, ExpectedHeadSHA: head, TestedRef: merge,
		ProofURL: c.ProofURL, ProofSHA256: c.ProofSHA256,
	})
	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	// The lane finished: cleanup deleted its pod.
	err = rp.DeletePod(context.Background(), res.Accepted.PodID)
	assert.NilError(t, err)

	rec := lanerecord.Record{Version: lanerecord.Version, Repository: cloud.Repository, RunID: runID, Attempt: 1,
		GPUType: res.Accepted.GPU, GPUCount: cfg.GPUCount, Image: res.Image, CUDAFloor: cfg.MinCUDAVersion.String(), TestedRef: merge,
		TestArchive: reproArchive, TestCommand: reproTests, LifetimeSeconds: cfg.LifetimeSeconds, DiskGB: cfg.DiskGB}
	data, err := rec.Marshal()
	assert.NilError(t, err)
	_, err = c.GitHub.AddArtifact(cloud.Repository, runID, githubsim.ArtifactSpec{Name: lanerecord.ArtifactName(runID, 1), Files: map[string]string{lanerecord.FileName: string(data)}})
	assert.NilError(t, err)
	_, err = c.GitHub.AddArtifact(cloud.Repository, runID, githubsim.ArtifactSpec{Name: reproArchive,
		Files: map[string]string{"tests/gpu/test_kernels.py": "def test_add(): assert 1 + 1 == 2\n", "pyproject.toml": "[project]\nname = \"model\"\n"}})
	assert.NilError(t, err)
	seal := cost.SealLine(data).Format()
	if forged {
		seal = cost.SealLine([]byte("another file")).Format()
	}
	// The GPU job (the pull request's code) printing the right seal proves nothing.
	assert.NilError(t, c.GitHub.SetRunLogs(cloud.Repository, runID, 1, map[string]string{
		"1_" + history.JobProvision + ".txt": "2026-01-01T00:00:00.0000000Z " + seal + "\n",
		"2_Run GPU tests (ampere).txt":       "2026-01-01T00:00:01.0000000Z " + cost.SealLine(data).Format() + "\n",
	}))
	clock.Advance(time.Minute)
	home := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(userPubKey+"\n"), 0o644))
	return &reproWorld{t: t, cloud: c, clock: clock, cfg: cfg, runID: runID, record: rec, home: home, onPod: map[string]string{},
		env: map[string]string{"RUNPOD_API_KEY": cloud.RunPodKey, "RUNPOD_API_URL": c.RunPodURL, "GH_TOKEN": cloud.GitHubToken, "GITHUB_API_URL": c.GitHubURL}}
}

// capture records the pod create bodies the command line sends.
type capture struct{ w *reproWorld }

func (c capture) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.URL.Path == "/v2/pods" && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var create runpod.CreatePodRequest
		if json.Unmarshal(body, &create) == nil {
			c.w.mu.Lock()
			c.w.creates = append(c.w.creates, create)
			c.w.atCreate = c.w.out.String()
			c.w.mu.Unlock()
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// run runs the command line in-process. Its ssh and scp reach a simulated
// pod: scp copies the local folder's files into onPod, and ssh running the
// record's test command prints what pytest would, from the files on the pod.
func (w *reproWorld) run(args ...string) result {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	w.out = &stdout
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := Main(ctx, Env{
		Args: args, Getenv: func(k string) string { return w.env[k] }, Stdout: &stdout, Stderr: &stderr,
		HTTPClient: &http.Client{Transport: capture{w}}, Home: w.home, User: "alice", Clock: w.clock, Sleep: w.clock.Sleep,
		RunSSH: func(_ context.Context, argv []string) (int, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.ssh = append(w.ssh, argv)
			switch argv[0] {
			case "scp":
				return 0, w.receive(argv[len(argv)-2])
			case "ssh":
				remote := argv[len(argv)-1]
				if cmd, ok := strings.CutPrefix(remote, "cd "+ReproDir+" && "); ok && cmd == reproTests {
					if _, ok := w.onPod["tests/gpu/test_kernels.py"]; !ok {
						fmt.Fprintln(&stdout, "ERROR: file or directory not found: tests/gpu")
						return 4, nil
					}
					fmt.Fprintln(&stdout, "tests/gpu/test_kernels.py .\n1 passed in 0.01s")
				}
			}
			return 0, nil
		},
	})
	r := result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	for _, secret := range []string{cloud.RunPodKey, cloud.GitHubToken} {
		assert.Check(w.t, !strings.Contains(r.stdout+r.stderr, secret), "a secret leaked:\n%s\n%s", r.stdout, r.stderr)
	}
	return r
}

// receive is the pod's side of scp -r DIR host:/root/: DIR's files land
// under /root/<base of DIR>.
func (w *reproWorld) receive(dir string) error {
	if filepath.Base(dir) != filepath.Base(ReproDir) {
		return fmt.Errorf("scp of %s would not land in %s", dir, ReproDir)
	}
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		w.onPod[filepath.ToSlash(rel)] = string(data)
		return err
	})
}

// live is the simulated cloud's pods not deleted.
func (w *reproWorld) live() []runpodsim.PodInfo {
	var out []runpodsim.PodInfo
	for _, p := range w.cloud.RunPod.Pods() {
		if p.TerminatedAt.IsZero() {
			out = append(out, p)
		}
	}
	return out
}

func (w *reproWorld) url() string {
	return "https://github.com/" + cloud.Repository + "/actions/runs/" + strconv.FormatInt(w.runID, 10)
}

func TestReproStartsThePodOfTheRunWithItsArchive(t *testing.T) {
	w := newReproWorld(t, false)
	r := w.run("repro", w.url())
	assert.Equal(t, r.code, ExitOK, r.stderr)

	live := w.live()
	assert.Assert(t, is.Len(live, 1), "only the repro pod is live")
	pod := live[0]
	assert.Check(t, is.Equal(pod.Name, "repro-"+strconv.FormatInt(w.runID, 10)))
	assert.Check(t, is.Equal(pod.GPUTypeID, w.record.GPUType))
	assert.Check(t, is.Equal(pod.Image, w.record.Image))
	assert.Check(t, strings.Contains(pod.Image, "@sha256:"), "the image is pinned by digest: %s", pod.Image)
	assert.Check(t, pod.HostID != reproOldHost, "the CUDA floor kept the pod off the 12.6 host")
	assert.Assert(t, is.Len(w.creates, 1))
	assert.Check(t, is.Equal(w.creates[0].GPU.MinCudaVersion, "12.8"))
	assert.Check(t, is.Equal(w.creates[0].GPU.Count, w.record.GPUCount))
	// Developer ownership: the reaper's developer-pod rules apply.
	user, ok := ownership.Developer(pod.Env)
	assert.Check(t, ok && user == "alice", "developer tags: %v", pod.Env)
	assert.Check(t, is.Equal(pod.Env["PUBLIC_KEY"], userPubKey))

	// The archive is on the pod, and a shell opened in its folder.
	assert.Check(t, is.Equal(w.onPod["tests/gpu/test_kernels.py"], "def test_add(): assert 1 + 1 == 2\n"))
	assert.Check(t, is.Equal(w.onPod["pyproject.toml"], "[project]\nname = \"model\"\n"))
	assert.Assert(t, is.Len(w.ssh, 2))
	shell := w.ssh[1]
	assert.Check(t, is.Equal(shell[0], "ssh"))
	assert.Check(t, is.Contains(shell[len(shell)-1], "cd "+ReproDir+" && exec"))
	assert.Check(t, is.Contains(r.stderr, "tests: "+reproTests))

	r = w.run("down", pod.Name)
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Len(w.live(), 0), "down deleted the repro pod")
}

// outOfStock fills every machine of the given GPU types.
func (w *reproWorld) outOfStock(gpus ...string) {
	w.t.Helper()
	busy := map[string]int{}
	for _, h := range []struct{ id, gpu string }{{reproOldHost, reproGPU}, {reproNewHost, reproGPU}, {"h-cuda-12-8-b", reproGPU},
		{"h-a4000", reproSmaller}, {"h-3090", reproOldDriver}, {"h-a6000", reproNearest}, {"h-l40s", reproDearer}} {
		if slices.Contains(gpus, h.gpu) {
			busy[h.id] = 1
		}
	}
	assert.NilError(w.t, w.cloud.RunPod.SetBusy(busy))
}

// The run's GPU type out of stock: repro starts the nearest type in stock
// (the CUDA floor met, at least the run's memory, the least memory, then the
// cheapest), says so, and creates it with the recorded floor and image.
func TestReproStartsTheNearestTypeInStockAndSaysSo(t *testing.T) {
	w := newReproWorld(t, false)
	w.outOfStock(reproGPU)
	r := w.run("repro", w.url(), "--run")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stderr, "the run's "+reproGPU+" x1 is out of stock everywhere; starting the nearest in stock instead (CUDA >= 12.8 as recorded, at least its 24 GB"))
	assert.Check(t, is.Contains(r.stderr, reproNearest+" x1 secure with 48 GB"))
	live := w.live()
	assert.Assert(t, is.Len(live, 1))
	assert.Check(t, is.Equal(live[0].GPUTypeID, reproNearest))
	assert.Check(t, is.Equal(live[0].Image, w.record.Image))
	assert.Assert(t, is.Len(w.creates, 1))
	assert.Check(t, is.Equal(w.creates[0].GPU.MinCudaVersion, "12.8"))
	assert.Check(t, is.Contains(r.stdout, "1 passed"))
	// The worst case printed is the nearest type's.
	bound := live[0].HourlyPrice * (15*time.Minute + time.Duration(w.cfg.LifetimeSeconds)*time.Second).Hours()
	assert.Check(t, is.Contains(w.atCreate, fmt.Sprintf("worst case: $%.2f ", math.Round(bound*100)/100)))
}

// Nothing near in stock (only a smaller GPU, or one under the CUDA floor):
// repro creates nothing and says why, with the no-capacity exit code.
func TestReproStartsNothingWhenNoTypeNearIsInStock(t *testing.T) {
	w := newReproWorld(t, false)
	w.outOfStock(reproGPU, reproNearest, reproDearer)
	r := w.run("repro", w.url())
	assert.Check(t, is.Equal(r.code, ExitNoCapacity), r.stderr)
	assert.Check(t, is.Contains(r.stderr, "no GPU type with at least its 24 GB and CUDA >= 12.8 is in stock; nothing was created"))
	assert.Check(t, is.Len(w.creates, 0))
	assert.Check(t, is.Len(w.live(), 0))
}

func TestReproRunPrintsTheTestsOutput(t *testing.T) {
	w := newReproWorld(t, false)
	r := w.run("repro", strconv.FormatInt(w.runID, 10), "--repo", cloud.Repository, "--run", "--name", "again")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, "1 passed"))
	assert.Check(t, is.Equal(w.ssh[len(w.ssh)-1][len(w.ssh[len(w.ssh)-1])-1], "cd "+ReproDir+" && "+reproTests))
	assert.Check(t, is.Len(w.live(), 1))
}

// TestReproPrintsTheWorstCaseBeforeTheCreate: the printed bound is the
// pod's price for the boot budget plus the configuration's lifetime,
// computed here from the pod RunPod billed and the configuration.
func TestReproPrintsTheWorstCaseBeforeTheCreate(t *testing.T) {
	w := newReproWorld(t, false)
	r := w.run("repro", w.url())
	assert.Equal(t, r.code, ExitOK, r.stderr)
	live := w.live()
	assert.Assert(t, is.Len(live, 1))
	bound := live[0].HourlyPrice * (15*time.Minute + time.Duration(w.cfg.LifetimeSeconds)*time.Second).Hours()
	want := fmt.Sprintf("worst case: $%.2f ", math.Round(bound*100)/100)
	assert.Check(t, is.Contains(r.stdout, want))
	assert.Check(t, is.Contains(w.atCreate, want), "printed before the create")
	// The bound covers what the pod bills over that span.
	w.clock.Advance(15*time.Minute + time.Duration(w.cfg.LifetimeSeconds)*time.Second)
	bill, err := w.cloud.RunPod.Bill(live[0].ID)
	assert.NilError(t, err)
	assert.Check(t, bill.Dollars <= bound+0.005, "billed %.4f over the bound %.4f", bill.Dollars, bound)
}

func TestReproRefusesAForgedRecord(t *testing.T) {
	w := newReproWorld(t, true)
	r := w.run("repro", w.url())
	assert.Check(t, is.Equal(r.code, ExitRecordRefused))
	assert.Check(t, is.Contains(r.stderr, "refused as forged"))
	assert.Check(t, is.Len(w.live(), 0), "nothing was created")
	assert.Check(t, is.Len(w.ssh, 0))
}

func TestReproRefusesBadInput(t *testing.T) {
	w := newReproWorld(t, false)
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		code    int
	}{
		{name: "bare id without repo", args: []string{"repro", "7001"}, wantErr: `--repo "": want OWNER/NAME`, code: ExitUsage},
		{name: "not a run URL", args: []string{"repro", "https://github.com/org/repo/pull/3"}, wantErr: "want a run URL", code: ExitUsage},
		{name: "http URL", args: []string{"repro", "http://github.com/org/repo/actions/runs/3"}, wantErr: "want a run URL", code: ExitUsage},
		{name: "repo differs", args: []string{"repro", w.url(), "--repo", "x/y"}, wantErr: "differ", code: ExitUsage},
		{name: "bad name", args: []string{"repro", w.url(), "--name", "-x"}, wantErr: `--name "-x"`, code: ExitUsage},
		{name: "no token", args: []string{"repro", w.url()}, env: map[string]string{"GH_TOKEN": ""}, wantErr: "no GitHub token: set GH_TOKEN", code: ExitUsage},
		{name: "bad API URL", args: []string{"repro", w.url()}, env: map[string]string{"GITHUB_API_URL": "ftp://x"}, wantErr: "GITHUB_API_URL", code: ExitUsage},
		{name: "no record", args: []string{"repro", "https://github.com/" + cloud.Repository + "/actions/runs/" + strconv.FormatInt(w.runID, 10) + "/attempts/2"}, wantErr: "has no lane record", code: ExitNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := w.env
			w.env = map[string]string{}
			for k, v := range saved {
				w.env[k] = v
			}
			for k, v := range tc.env {
				w.env[k] = v
			}
			defer func() { w.env = saved }()
			r := w.run(tc.args...)
			assert.Check(t, is.Equal(r.code, tc.code), r.stderr)
			assert.Check(t, is.Contains(r.stderr, tc.wantErr))
			assert.Check(t, is.Len(w.live(), 0))
		})
	}
}

func TestParseRunRef(t *testing.T) {
	for _, tc := range []struct {
		arg, repo string
		want      runRef
		wantErr   bool
	}{
		{arg: "https://github.com/acme/model/actions/runs/7001", want: runRef{owner: "acme", repo: "model", runID: 7001}},
		{arg: "https://github.com/acme/model/actions/runs/7001/attempts/2", want: runRef{owner: "acme", repo: "model", runID: 7001, attempt: 2}},
		{arg: "https://github.com/acme/model/actions/runs/7001/job/99", want: runRef{owner: "acme", repo: "model", runID: 7001}},
		{arg: "7001", repo: "acme/model", want: runRef{owner: "acme", repo: "model", runID: 7001}},
		{arg: "0", repo: "acme/model", wantErr: true},
		{arg: "99999999999999999999", repo: "acme/model", wantErr: true},
		{arg: "https://github.com/acme/model/actions/runs/7001/attempts/0", wantErr: true},
		{arg: "https://user@github.com/acme/model/actions/runs/7001", wantErr: true},
		{arg: "https://github.com/acme/actions/runs/7001", wantErr: true},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			got, err := parseRunRef(tc.arg, tc.repo)
			if tc.wantErr {
				assert.Check(t, err != nil, "got %+v", got)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(got, tc.want))
		})
	}
}

func FuzzParseRunRef(f *testing.F) {
	f.Add("https://github.com/acme/model/actions/runs/7001/attempts/2", "")
	f.Add("7001", "acme/model")
	f.Fuzz(func(t *testing.T, arg, repo string) {
		r, err := parseRunRef(arg, repo)
		if err == nil && (r.runID <= 0 || r.attempt < 0 || r.owner == "" || r.repo == "") {
			t.Fatalf("accepted %q %q as %+v", arg, repo, r)
		}
	})
}
