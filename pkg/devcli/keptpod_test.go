package devcli

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
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

// keptPodWorld runs the CI lane's provision with keep-failed-pods on a
// simulated cloud whose first host fails the CUDA proof, with debugKey as
// debug-ssh-public-key, and returns the command line's world on that cloud
// and the kept pod's id.
func keptPodWorld(t *testing.T, debugKey string) (*world, string) {
	t.Helper()
	const a4000, a5000 = "NVIDIA RTX A4000", "NVIDIA RTX A5000"
	host := func(id, gpu, ptx string) runpodsim.HostProfile {
		return runpodsim.HostProfile{ID: id, DataCenterID: "US-TX-3", GPUTypeID: gpu, DriverCUDA: "12.8", MaxPTXISA: ptx, BootSeconds: 30, Healthy: true}
	}
	c, err := cloud.Start(cloud.Options{Market: &runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{
			{ID: a4000, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17},
			{ID: a5000, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16},
		},
		DataCenters: []runpodsim.DataCenter{{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US", NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}},
		Hosts:       []runpodsim.HostProfile{host("h1", a4000, "8.5"), host("h2", a5000, "8.7")},
	}})
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	clock := c.Clock.(*simclock.Virtual)
	rpPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0.5 }))
	ghPolicy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(clock)))
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName, Policy: ghPolicy})
	assert.NilError(t, err)
	sha := strings.Repeat("a", 40)
	pr, err := c.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "mallory", HeadSHA: sha, HeadRef: "feature", MergeCommitSHA: strings.Repeat("b", 40)})
	assert.NilError(t, err)
	cfg := config.Default()
	cfg.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
	assert.NilError(t, cfg.Validate())
	res, err := provision.Run(context.Background(), provision.Deps{
		RunPod: runpod.New(c.RunPodURL, cloud.RunPodKey, runpod.WithPolicy(rpPolicy)), GitHub: gh, Images: &registry.Resolver{APIURL: c.RegistryURL},
		Policy: rpPolicy, Observer: quietObserver{},
	}, provision.Request{
		Config: cfg, Owner: ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: 7001, Attempt: 1},
		LabelPrefix: "runpod-gpu", RunnerGroupID: 1, Scope: ghapi.ScopeRepo, PRNumber: pr, ExpectedHeadSHA: sha, TestedRef: strings.Repeat("b", 40),
		ProofURL: c.ProofURL, ProofSHA256: c.ProofSHA256, KeepFailedPods: true, DebugSSHKey: debugKey,
	})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.RetainedPodIDs, 1))
	clock.Advance(time.Minute)
	w := &world{t: t, clock: clock, url: c.RunPodURL, home: t.TempDir(),
		env: map[string]string{"RUNPOD_API_KEY": cloud.RunPodKey, "RUNPOD_API_URL": c.RunPodURL}}
	return w, res.RetainedPodIDs[0]
}

// sshKeyLine is an OpenSSH ed25519 public key line over 32 bytes from seed.
func sshKeyLine(seed byte) string {
	blob := binary.BigEndian.AppendUint32(nil, 11)
	blob = append(blob, "ssh-ed25519"...)
	blob = binary.BigEndian.AppendUint32(blob, 32)
	for i := range 32 {
		blob = append(blob, seed+byte(i))
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob)
}

func TestKeptPodIsReachableByRunpodGPUSSH(t *testing.T) {
	w, pod := keptPodWorld(t, sshKeyLine(1))
	r := w.run("ls", "--json")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, `"owner": "ci:`+cloud.Repository+` run 7001 (keep-failed)"`))

	r = w.run("ssh", pod, "--", "nvidia-smi")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Assert(t, is.Len(w.ssh, 1))
	argv := w.ssh[0]
	// ssh goes to the public mapping RunPod gave the kept pod's 22/tcp.
	assert.Check(t, is.Equal(argv[0], "ssh"))
	port, err := strconv.Atoi(argv[2])
	assert.NilError(t, err)
	assert.Check(t, port >= 10000, "a mapped public port, got %d", port)
	assert.Check(t, strings.HasPrefix(argv[len(argv)-2], "root@"))
	assert.Check(t, is.Equal(argv[len(argv)-1], "nvidia-smi"))
}

func TestKeptPodIsReachableOnlyWithTheMaintainerKey(t *testing.T) {
	w, pod := keptPodWorld(t, "")
	r := w.run("ssh", pod, "--print")
	assert.Equal(t, r.code, ExitFailure)
	assert.Check(t, is.Contains(r.stderr, "has no direct SSH endpoint"))
	assert.Check(t, is.Len(w.ssh, 0))
}

// quietObserver is a provision.Observer that keeps nothing.
type quietObserver struct{}

func (quietObserver) Logf(string, ...any)      {}
func (quietObserver) PodCreated(string)        {}
func (quietObserver) AttemptDone(cost.Attempt) {}
