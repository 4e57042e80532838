package runpodsim_test

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// recordingRunner is a HostRunner that only remembers what it was asked to do;
// tests play the container by calling the recorded exit functions.
type recordingRunner struct {
	launches []runpodsim.Launch
	exits    []runpodsim.ExitFunc
	stopped  []string
	fail     error
}

func (r *recordingRunner) Start(l runpodsim.Launch, exited runpodsim.ExitFunc) error {
	if r.fail != nil {
		return r.fail
	}
	r.launches = append(r.launches, l)
	r.exits = append(r.exits, exited)
	return nil
}

func (r *recordingRunner) Stop(podID string) { r.stopped = append(r.stopped, podID) }

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	return body
}

func TestHostRunnerGetsTheLaunchAndReportsExits(t *testing.T) {
	runner := &recordingRunner{}
	host := healthyHost("h1")
	host.MaxPTXISA = "8.5"
	s := newSim(t, runpodsim.WithMarket(smallMarket(host)), runpodsim.WithHostRunner(runner))
	req := podRequest("rg-7-1-c1", a40)
	req["entrypoint"] = []string{"/bin/bash", "-c"}
	req["cmd"] = []string{"exec /startup.sh"}
	req["env"] = map[string]string{"RUNNER_JIT_CONFIG": "jit-secret", "SMOKE_FLOOR": "12.6"}
	p := s.mustCreate(req)

	s.advance(bootTime - time.Second)
	assert.Equal(t, len(runner.launches), 0, "the container starts when the pod turns RUNNING")
	s.advance(time.Second) // no request in between: the clock's timer starts it
	assert.Equal(t, len(runner.launches), 1)
	l := runner.launches[0]
	assert.Equal(t, l.PodID, p.ID)
	assert.Equal(t, l.PodName, "rg-7-1-c1")
	assert.DeepEqual(t, l.Entrypoint, []string{"/bin/bash", "-c"})
	assert.DeepEqual(t, l.Cmd, []string{"exec /startup.sh"})
	assert.DeepEqual(t, l.Env, map[string]string{"RUNNER_JIT_CONFIG": "jit-secret", "SMOKE_FLOOR": "12.6"})
	assert.Equal(t, l.MinCudaVersion, "12.6")
	assert.Equal(t, l.StartedAt, runpodsim.Epoch.Add(bootTime))
	assert.DeepEqual(t, l.Host, runpodsim.HostProfile{
		ID: "h1", DataCenterID: "US-KS-2", GPUTypeID: a40, Cloud: runpodsim.Secure, GPUCount: 1,
		DriverCUDA: "12.8", MaxPTXISA: "8.5", VRAMGB: 48, BootSeconds: 30, Healthy: true,
	})

	s.advance(45 * time.Second)
	runner.exits[0](3) // the smoke proof failed
	s.advance(time.Hour)
	got := s.get(p.ID)
	assert.Equal(t, got.Status, runpodsim.StatusExited, "any exit code leaves the pod EXITED")
	assert.Equal(t, got.Cost, 0.0)
	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, bill.Seconds, int64(45), "billing stops when the container exits, not when someone looks")
	assert.Equal(t, *s.server.Pods()[0].ExitCode, 3)
}

func TestHostRunnerStartFailureIsError(t *testing.T) {
	runner := &recordingRunner{fail: errors.New("image not found")}
	s := newSim(t, runpodsim.WithMarket(smallMarket(healthyHost("h1"))), runpodsim.WithHostRunner(runner))
	p := s.mustCreate(podRequest("bad-image", a40))
	s.advance(bootTime)

	got := s.get(p.ID)
	assert.Equal(t, got.Status, runpodsim.StatusError)
	assert.DeepEqual(t, got.Actions, []string{"start", "terminate"})
	assert.Assert(t, got.StartedAt == nil)
	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, bill.Seconds, int64(0))
}

func TestModelRunnerOutcomesFollowTheHostProfile(t *testing.T) {
	const proofTime = 20 * time.Second
	tests := []struct {
		name        string
		host        func(h *runpodsim.HostProfile)
		env         map[string]string
		wantStatus  string // at the end
		wantRuntime bool
		wantReady   bool
	}{
		{name: "healthy host keeps running", wantStatus: runpodsim.StatusRunning, wantRuntime: true, wantReady: true},
		{name: "broken GPU exits", host: func(h *runpodsim.HostProfile) { h.Healthy = false }, wantStatus: runpodsim.StatusExited},
		{
			name: "driver cannot load the kernel's PTX", host: func(h *runpodsim.HostProfile) { h.DriverCUDA = "12.6" },
			env: map[string]string{"PROOF_PTX": "8.7"}, wantStatus: runpodsim.StatusExited,
		},
		{
			name: "driver below the proof's floor", host: func(h *runpodsim.HostProfile) { h.DriverCUDA = "12.6" },
			env: map[string]string{"PROOF_FLOOR": "12.8"}, wantStatus: runpodsim.StatusExited,
		},
		{
			name: "new enough driver passes", host: func(h *runpodsim.HostProfile) { h.DriverCUDA = "13.0" },
			env:        map[string]string{"PROOF_FLOOR": "12.8", "PROOF_PTX": "8.7"},
			wantStatus: runpodsim.StatusRunning, wantRuntime: true, wantReady: true,
		},
		{name: "host dies during boot", host: func(h *runpodsim.HostProfile) { h.DiesDuringBoot = true }, wantStatus: runpodsim.StatusError},
		{
			name: "runtime lost after boot", host: func(h *runpodsim.HostProfile) { h.LosesRuntimeAfter = 30 * time.Second },
			wantStatus: runpodsim.StatusRunning, wantReady: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			host := healthyHost("h1")
			host.DriverCUDA = "12.8"
			if tc.host != nil {
				tc.host(&host)
			}
			var ready []string
			var failures []string
			clock := simclock.NewVirtual(runpodsim.Epoch)
			s := newSimOn(t, clock, runpodsim.WithMarket(smallMarket(host)),
				runpodsim.WithHostRunner(runpodsim.NewModelRunner(clock, runpodsim.ModelConfig{
					ProofTime: proofTime, MinCUDAEnv: "PROOF_FLOOR", PTXISAEnv: "PROOF_PTX",
					OnReady: func(l runpodsim.Launch) { ready = append(ready, l.PodID) },
					OnFail:  func(l runpodsim.Launch, reason string) { failures = append(failures, reason) },
				})))
			req := podRequest("model", a40)
			req["gpu"] = map[string]any{"id": a40}
			if tc.env != nil {
				req["env"] = tc.env
			}
			p := s.mustCreate(req)

			s.advance(bootTime + proofTime + time.Minute)
			got := s.get(p.ID)
			assert.Equal(t, got.Status, tc.wantStatus, "failures: %v", failures)
			assert.Equal(t, got.Runtime != nil, tc.wantRuntime)
			if tc.wantReady {
				assert.DeepEqual(t, ready, []string{p.ID})
			} else {
				assert.Equal(t, len(ready), 0)
			}
		})
	}
}

func TestModelRunnerRunForEndsTheJob(t *testing.T) {
	clock := simclock.NewVirtual(runpodsim.Epoch)
	s := newSimOn(t, clock, runpodsim.WithMarket(smallMarket(healthyHost("h1"))),
		runpodsim.WithHostRunner(runpodsim.NewModelRunner(clock, runpodsim.ModelConfig{RunFor: 5 * time.Minute})))
	p := s.mustCreate(podRequest("job", a40))

	s.advance(bootTime + 20*time.Second + 5*time.Minute)
	assert.Equal(t, s.get(p.ID).Status, runpodsim.StatusExited)
	assert.Equal(t, *s.server.Pods()[0].ExitCode, 0)
	bill, err := s.server.Bill(p.ID)
	assert.NilError(t, err)
	assert.Equal(t, bill.Seconds, int64(20+300))
}

func TestMarketValidation(t *testing.T) {
	tests := []struct {
		name    string
		market  func(m *runpodsim.Market)
		wantErr string
	}{
		{name: "host in unknown data center", market: func(m *runpodsim.Market) { m.Hosts[0].DataCenterID = "MARS-1" },
			wantErr: `host "h1": data center "MARS-1" is not in the market`},
		{name: "host with unknown GPU", market: func(m *runpodsim.Market) { m.Hosts[0].GPUTypeID = "NVIDIA Nope" },
			wantErr: `host "h1": GPU type "NVIDIA Nope" is not in the market`},
		{name: "bad driver version", market: func(m *runpodsim.Market) { m.Hosts[0].DriverCUDA = "12" },
			wantErr: `host "h1": driverCUDA: "12" is not a major.minor version`},
		{name: "bad cloud", market: func(m *runpodsim.Market) { m.Hosts[0].Cloud = "PRIVATE" },
			wantErr: `host "h1": cloud "PRIVATE" is not SECURE or COMMUNITY`},
		{name: "duplicate host", market: func(m *runpodsim.Market) { m.Hosts = append(m.Hosts, m.Hosts[0]) },
			wantErr: `host "h1" is listed twice`},
		{name: "bad region", market: func(m *runpodsim.Market) { m.DataCenters[0].Region = "MOON" },
			wantErr: `data center "US-KS-2": region "MOON" is not a DataCenterRegion`},
		{name: "negative price", market: func(m *runpodsim.Market) { m.GPUTypes[0].SecurePrice = -1 },
			wantErr: `GPU type "NVIDIA A40": prices must not be negative`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := smallMarket(healthyHost("h1"))
			tc.market(&m)
			_, err := runpodsim.New(runpodsim.WithMarket(m))
			assert.ErrorIs(t, err, runpodsim.ErrInvalidMarket)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
	_, err := runpodsim.New(runpodsim.WithMarket(runpodsim.DefaultMarket()))
	assert.NilError(t, err, "the default market is valid")
}
