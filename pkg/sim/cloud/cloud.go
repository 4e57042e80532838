// Package cloud assembles the simulated cloud a scenario runs on: the
// simulated RunPod and GitHub, a container registry and the proof download
// server, each on its own loopback port, sharing one clock. Tests, the
// end-to-end tests (action-tests/lanes and action-tests/chaos), the demo and
// the benchmarks all start it the same way.
//
// Pods run in one of two modes. In model mode (the default) ProofModel decides
// each pod from its host profile, with no processes, on any clock. In process
// mode ProcessHosts runs each pod's real startup script as a child process
// against stand-ins for nvidia-smi, the CUDA driver and the runner, with the
// real CUDA smoke proof downloaded from the proof server; it runs on the real clock.
package cloud

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/registrysim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/startup"
)

// Fixed identities of a simulated scenario. They look like real credentials so
// secret scans in tests find them if they ever leak.
const (
	RunPodKey     = "rpa_SIMULATEDKEY0123456789abcdef"
	GitHubToken   = "ghs_SimulatedAppToken0123456789abcdef"
	AppID         = int64(4242)
	AppSlug       = "runpod-gpu-ci"
	Owner         = "org"
	RepoName      = "gpu-project"
	Repository    = Owner + "/" + RepoName
	Workflow      = ".github/workflows/runpod-gpu.yml"
	RunnerImage   = "ghcr.io/actions/actions-runner:latest"
	ImageRepoTag  = "actions/actions-runner:latest"
	MaintainerBob = "bob"
)

// RunnerImageDigest is what the simulated registry answers for RunnerImage.
var RunnerImageDigest = "sha256:" + strings.Repeat("5e", 32)

// Mode says how a simulated cloud runs pod containers.
type Mode int

const (
	// ModeModel decides each pod from its host profile (ProofModel): no
	// processes, any clock, fast enough for large benchmarks.
	ModeModel Mode = iota
	// ModeProcess runs each pod's real startup script as a child process
	// (ProcessHosts) against stand-ins, with the real CUDA smoke proof served
	// from ProofURL. It runs on the real clock: real processes cannot follow
	// virtual time, so give it fast host timings (BootSeconds, provisioning delay).
	ModeProcess
)

// ErrProcessClock is returned by Start for ModeProcess with a clock other than simclock.Real.
var ErrProcessClock = errors.New("cloud: process mode runs on the real clock (simclock.Real): real processes cannot follow virtual time")

// Options configure a simulated cloud. The zero value is a virtual-clock,
// model-mode cloud on the default market.
type Options struct {
	Seed uint64
	// Mode picks model (default) or process containers; Hosts, when set, overrides both.
	Mode Mode
	// ProcessDir is the parent of process mode's temporary directory; "" means the system's.
	ProcessDir string
	// Clock drives every simulator; nil means a Virtual clock at Start.
	Clock simclock.Clock
	// Start is the virtual clock's start; zero means time.Now().
	Start  time.Time
	Market *runpodsim.Market
	Faults runpodsim.Faults
	// Hosts runs pod containers; nil means the model-mode ProofModel.
	Hosts runpodsim.HostRunner
	// ProofBinary is served at ProofURL; nil serves a placeholder in model mode
	// (which never runs it) and the real proof, built by ProofBinary(), in process mode.
	ProofBinary []byte
	// PageSize makes the simulated RunPod paginate pod lists.
	PageSize int
	// Balance is the RunPod account balance in USD; 0 means plenty.
	Balance float64
	// RunPodOptions and GitHubOptions are passed through last.
	RunPodOptions []runpodsim.Option
	GitHubOptions []githubsim.Option
}

// Cloud is a running simulated cloud.
type Cloud struct {
	Clock  simclock.Clock
	RunPod *runpodsim.Server
	GitHub *githubsim.Server
	Model  *ProofModel // set in model mode
	// Processes runs the pods in process mode: its RunnerDir and WorkDir are
	// what startup scripts rendered for this cloud must use, its Log a pod's output.
	Processes *ProcessHosts

	RunPodURL, GitHubURL, RegistryURL, ProofURL string
	ProofSHA256                                 string
	// JobURL is the Serverless job host (run, status, cancel, health), which
	// RunPod serves apart from the management API.
	JobURL string

	servers []*loopbackServer
}

// Start builds and serves a simulated cloud on loopback.
func Start(o Options) (*Cloud, error) {
	c := &Cloud{Clock: o.Clock}
	if o.Mode == ModeProcess && o.Hosts == nil {
		return startProcessMode(o)
	}
	if c.Clock == nil {
		start := o.Start
		if start.IsZero() {
			// Virtual time starts at the real now so context deadlines derived
			// from it stay meaningful.
			start = time.Now().UTC().Truncate(time.Second)
		}
		c.Clock = simclock.NewVirtual(start)
	}
	c.GitHub = githubsim.New(append([]githubsim.Option{
		githubsim.WithClock(c.Clock), githubsim.WithSeed(o.Seed),
		githubsim.WithToken(GitHubToken, githubsim.Identity{AppID: AppID, AppSlug: AppSlug}),
	}, o.GitHubOptions...)...)
	gh := c.serve(c.GitHub)
	c.GitHubURL = gh.URL
	if err := c.seedGitHub(); err != nil {
		c.Close()
		return nil, err
	}

	hosts := o.Hosts
	if hosts == nil {
		c.Model = NewProofModel(c.Clock, c.GitHub)
		hosts = c.Model
	}
	market := runpodsim.DefaultMarket()
	if o.Market != nil {
		market = *o.Market
	}
	rpOpts := []runpodsim.Option{
		runpodsim.WithSeed(o.Seed), runpodsim.WithClock(c.Clock), runpodsim.WithMarket(market),
		runpodsim.WithAPIKey(RunPodKey), runpodsim.WithFaults(o.Faults), runpodsim.WithHostRunner(hosts),
		// Serverless jobs run as the lane's worker runs them (RunPodOptions may replace it).
		runpodsim.WithServerless(runpodsim.ServerlessConfig{Worker: ServerlessWorker{Dir: o.ProcessDir}}),
	}
	if o.PageSize > 0 {
		rpOpts = append(rpOpts, runpodsim.WithPageSize(o.PageSize))
	}
	if o.Balance > 0 {
		rpOpts = append(rpOpts, runpodsim.WithBalance(o.Balance))
	}
	rp, err := runpodsim.New(append(rpOpts, o.RunPodOptions...)...)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("simulated RunPod: %w", err)
	}
	c.RunPod = rp
	c.RunPodURL = c.serve(rp).URL
	c.JobURL = c.serve(rp.JobHost()).URL
	c.RegistryURL = c.serve(registrysim.Handler(map[string]string{ImageRepoTag: RunnerImageDigest, SuiteImageRepoTag: SuiteImageDigest, PodImageRepoTag: PodImageDigest})).URL

	proof := o.ProofBinary
	if proof == nil {
		proof = []byte("#!/bin/sh\n# model mode: the proof is decided by the host profile\nexit 0\n")
	}
	sum := sha256.Sum256(proof)
	c.ProofSHA256 = hex.EncodeToString(sum[:])
	mux := http.NewServeMux()
	mux.HandleFunc("GET /releases/cuda-smoke", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "the proof is public: no credentials", http.StatusBadRequest)
			return
		}
		_, _ = w.Write(proof)
	})
	c.ProofURL = c.serve(mux).URL + "/releases/cuda-smoke"
	return c, nil
}

// loopbackServer is one simulator's HTTP server on a loopback port. It is
// not httptest's, so that a shipped program (runpod-gpu rehearse) can start
// the cloud without linking the testing package.
type loopbackServer struct {
	URL string
	srv *http.Server
}

func (c *Cloud) serve(h http.Handler) *loopbackServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		// As httptest.NewServer does: a host without a loopback port cannot run the simulation at all.
		panic(fmt.Sprintf("cloud: listen on a loopback port: %v", err))
	}
	s := &loopbackServer{URL: "http://" + l.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(l) }()
	c.servers = append(c.servers, s)
	return s
}

// close waits (boundedly) for the requests in flight, then drops every connection.
func (s *loopbackServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.srv.Close()
}

// seedGitHub creates the repository, its maintainers and the GPU workflow.
func (c *Cloud) seedGitHub() error {
	if err := c.GitHub.AddRepo(githubsim.Repo{Owner: Owner, Name: RepoName}); err != nil {
		return err
	}
	roles := map[string]string{"alice": "maintain", MaintainerBob: "admin", "carol": "write", "dave": "triage", "erin": "read"}
	for login, role := range roles {
		if err := c.GitHub.SetRole(Repository, login, role); err != nil {
			return err
		}
	}
	_, err := c.GitHub.AddWorkflow(Repository, Workflow, "RunPod GPU")
	return err
}

// startProcessMode starts a ModeProcess cloud: real clock, ProcessHosts, the real proof.
func startProcessMode(o Options) (*Cloud, error) {
	if o.Clock == nil {
		o.Clock = simclock.Real{}
	}
	if _, ok := o.Clock.(simclock.Real); !ok {
		return nil, ErrProcessClock
	}
	if o.ProofBinary == nil {
		proof, err := ProofBinary()
		if err != nil {
			return nil, err
		}
		o.ProofBinary = proof
	}
	hosts, err := NewProcessHosts(o.ProcessDir)
	if err != nil {
		return nil, err
	}
	o.Hosts = hosts
	c, err := Start(o)
	if err != nil {
		_ = hosts.Close()
		return nil, err
	}
	c.Processes = hosts
	// The default pod image carries the proof, and its checksum, where the startup script looks.
	sum := sha256.Sum256(o.ProofBinary)
	hosts.AddImage(PodImage, map[string][]byte{
		startup.DefaultImageProof:             o.ProofBinary,
		startup.DefaultImageProof + ".sha256": []byte(hex.EncodeToString(sum[:]) + "  cuda-smoke\n"),
	})
	return c, nil
}

// Close stops every container, then every server.
func (c *Cloud) Close() {
	if c.Processes != nil {
		// Containers first: a stopped runner tells the simulated GitHub it left.
		_ = c.Processes.Close()
	}
	if c.RunPod != nil {
		c.RunPod.Close() // open pod log streams end, so the servers can shut down
	}
	for _, s := range c.servers {
		s.close()
	}
}
