package cloud_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/poll"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
	"github.com/org/runpod-gpu/pkg/startup"
)

const (
	a4000 = "NVIDIA RTX A4000"
	a5000 = "NVIDIA RTX A5000"
)

// host is a healthy CUDA 12.8 machine unless changed.
func host(id, gpu string, mut ...func(*runpodsim.HostProfile)) runpodsim.HostProfile {
	h := runpodsim.HostProfile{ID: id, DataCenterID: "US-TX-3", GPUTypeID: gpu, DriverCUDA: "12.8", MaxPTXISA: "8.7", Healthy: true}
	for _, m := range mut {
		m(&h)
	}
	return h
}

func market(hosts ...runpodsim.HostProfile) *runpodsim.Market {
	return &runpodsim.Market{
		GPUTypes: []runpodsim.GPUType{
			{ID: a4000, Name: "RTX A4000", MemoryGB: 16, SecurePrice: 0.25, CommunityPrice: 0.17},
			{ID: a5000, Name: "RTX A5000", MemoryGB: 24, SecurePrice: 0.27, CommunityPrice: 0.16},
		},
		DataCenters: []runpodsim.DataCenter{{ID: "US-TX-3", Name: "US Texas 3", Region: "NORTH_AMERICA", CountryCode: "US",
			NetworkVolumeTypes: []string{"STANDARD"}, Compliance: []string{}}},
		Hosts: hosts,
	}
}

// processCloud is a process-mode cloud and the API clients a test uses on it.
type processCloud struct {
	*cloud.Cloud
	rp *runpod.Client
	gh *ghapi.Client
}

// startProcessCloud starts a process-mode cloud, skipping the test without gcc.
func startProcessCloud(t *testing.T, o cloud.Options) *processCloud {
	t.Helper()
	o.Mode = cloud.ModeProcess
	o.RunPodOptions = append(o.RunPodOptions, runpodsim.WithProvisioningDelay(50*time.Millisecond))
	c, err := cloud.Start(o)
	if errors.Is(err, smoketest.ErrNoCompiler) {
		t.Skipf("skipping: process mode needs the CUDA driver stand-in: %v", err)
	}
	assert.NilError(t, err)
	t.Cleanup(c.Close)
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName})
	assert.NilError(t, err)
	pc := &processCloud{Cloud: c, rp: runpod.New(c.RunPodURL, cloud.RunPodKey), gh: gh}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range c.RunPod.Pods() {
				t.Logf("pod %s log:\n%s", p.ID, c.Processes.Log(p.ID))
			}
		}
	})
	return pc
}

// scriptParams are a startup script's parameters for this cloud.
func (c *processCloud) scriptParams() startup.Params {
	return startup.Params{
		ProofURL: c.ProofURL, ProofSHA256: c.ProofSHA256, MinCUDA: "12.6", FullTier: "12.8", BaselineTier: "12.6",
		MinVRAMGB: 8, RunnerDir: c.Processes.RunnerDir(), WorkDir: c.Processes.WorkDir(),
	}
}

// launched is a pod created by a test with its own runner.
type launched struct {
	podID, runner, jitConfig string
}

// createPod mints a JIT runner named name and creates a pod on gpu running
// the startup script rendered from params, as the provision action would.
func (c *processCloud) createPod(t *testing.T, name, gpu string, params startup.Params) launched {
	t.Helper()
	return c.createPodFrom(t, name, gpu, cloud.RunnerImage, params)
}

// createPodFrom is createPod with the pod's image.
func (c *processCloud) createPodFrom(t *testing.T, name, gpu, image string, params startup.Params) launched {
	t.Helper()
	ctx := context.Background()
	jit, err := c.gh.GenerateJITConfig(ctx, ghapi.JITRequest{Name: name, Labels: []string{name}, RunnerGroupID: 1})
	assert.NilError(t, err)
	script, err := startup.Render(params)
	assert.NilError(t, err)
	env := startup.PodEnv(params)
	env[startup.JITConfigEnv] = jit.EncodedConfig
	pod, err := c.rp.CreatePod(ctx, runpod.CreatePodRequest{
		Name: name, Image: image, GPU: &runpod.CreateGPU{ID: gpu, Count: 1},
		Env: env, Entrypoint: startup.Entrypoint(), Cmd: startup.Cmd(script),
	})
	assert.NilError(t, err)
	return launched{podID: pod.ID, runner: name, jitConfig: jit.EncodedConfig}
}

// outcome is how a pod ended up, as the APIs show it.
type outcome struct {
	Status runpod.PodStatus
	Runner string // the runner's status in GitHub's registry
}

// observe reads the pod and its runner through the HTTP APIs.
func (c *processCloud) observe(t *testing.T, l launched) outcome {
	t.Helper()
	ctx := context.Background()
	pod, err := c.rp.GetPod(ctx, l.podID)
	assert.NilError(t, err)
	r, found, err := c.gh.RunnerByName(ctx, l.runner, ghapi.ScopeRepo)
	assert.NilError(t, err)
	o := outcome{Status: pod.Status, Runner: "absent"}
	if found {
		o.Runner = r.GetStatus()
	}
	return o
}

// settle waits until the pod's container exited or its runner is online.
func (c *processCloud) settle(t *testing.T, l launched) outcome {
	t.Helper()
	var last outcome
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		last = c.observe(t, l)
		if last.Status == runpod.PodExited || last.Status == runpod.PodError || last.Runner == "online" {
			return poll.Success()
		}
		return poll.Continue("pod %s is %s, runner %s", l.podID, last.Status, last.Runner)
	}, poll.WithTimeout(20*time.Second), poll.WithDelay(20*time.Millisecond))
	return last
}

func TestProcessProofFailureKeepsTheRunnerOffline(t *testing.T) {
	tests := []struct {
		name       string
		host       func(*runpodsim.HostProfile)
		wantReason string
	}{
		{
			name:       "driver below the floor",
			host:       func(h *runpodsim.HostProfile) { h.DriverCUDA, h.MaxPTXISA = "12.4", "8.4" },
			wantReason: "SMOKE FAIL: driver-version: driver CUDA version below the floor",
		},
		{
			name:       "driver refuses the tier's PTX",
			host:       func(h *runpodsim.HostProfile) { h.MaxPTXISA = "8.5" },
			wantReason: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
		},
		{
			name:       "GPU reads back the wrong value",
			host:       func(h *runpodsim.HostProfile) { h.Healthy = false },
			wantReason: "SMOKE FAIL: ptx-kernel",
		},
		{
			name:       "VRAM below the minimum",
			host:       func(h *runpodsim.HostProfile) { h.VRAMGB = 4 },
			wantReason: "SMOKE FAIL: vram",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startProcessCloud(t, cloud.Options{Market: market(host("h1", a4000, tt.host))})
			// No minCudaVersion: placement would keep the pod off an old driver,
			// and the point is what the proof does on one.
			pod := c.createPod(t, "runner-fail", a4000, c.scriptParams())

			got := c.settle(t, pod)

			assert.DeepEqual(t, got, outcome{Status: runpod.PodExited, Runner: "offline"})
			log := c.Processes.Log(pod.podID)
			assert.Check(t, is.Contains(log, tt.wantReason))
			assert.Check(t, is.Contains(log, "CUDA smoke proof failed: not registering the runner"))
			assert.Check(t, !strings.Contains(log, "Connected to GitHub"), "the runner never started")
			assert.Check(t, !strings.Contains(log, pod.jitConfig), "the pod log leaks the JIT config")
		})
	}
}

func TestProcessHealthyHostRunnerComesOnline(t *testing.T) {
	t.Parallel()
	c := startProcessCloud(t, cloud.Options{Market: market(host("h1", a5000))})
	pod := c.createPod(t, "runner-ok", a5000, c.scriptParams())

	got := c.settle(t, pod)

	assert.DeepEqual(t, got, outcome{Status: runpod.PodRunning, Runner: "online"})
	log := c.Processes.Log(pod.podID)
	for _, want := range []string{
		"runpod-gpu: gpu: " + host("h1", a5000).GPUUUID(0) + ", NVIDIA RTX A5000, 570.124.06, 24576 MiB", // the nvidia-smi stand-in, with the machine's GPU
		"[ok] tier: full (CUDA 12.8, PTX ISA 8.7)",
		"SMOKE PASS",
		"runpod-gpu: proof passed: starting the runner as user runner",
		"runner user: runner",  // the runner stand-in, and so the job, is not root
		"runner sudo: refused", // and cannot become root again
	} {
		assert.Check(t, is.Contains(log, want))
	}
	assert.Check(t, !strings.Contains(log, pod.jitConfig), "the pod log leaks the JIT config")

	// Deleting the pod stops its container; the runner goes with it.
	assert.NilError(t, c.rp.DeletePod(context.Background(), pod.podID))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		r, _, err := c.gh.RunnerByName(context.Background(), pod.runner, ghapi.ScopeRepo)
		if err != nil {
			return poll.Error(err)
		}
		if r.GetStatus() == "offline" {
			return poll.Success()
		}
		return poll.Continue("runner is %s", r.GetStatus())
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(20*time.Millisecond))
}

func TestProcessChecksumMismatchStopsBeforeTheProof(t *testing.T) {
	t.Parallel()
	c := startProcessCloud(t, cloud.Options{Market: market(host("h1", a5000))})
	params := c.scriptParams()
	other := sha256.Sum256([]byte("a different proof binary"))
	params.ProofSHA256 = hex.EncodeToString(other[:])
	pod := c.createPod(t, "runner-sum", a5000, params)

	got := c.settle(t, pod)

	assert.DeepEqual(t, got, outcome{Status: runpod.PodExited, Runner: "offline"})
	log := c.Processes.Log(pod.podID)
	assert.Check(t, is.Contains(log, "runpod-gpu: proof checksum mismatch: not registering the runner"))
	assert.Check(t, !strings.Contains(log, "SMOKE"), "the proof must not run:\n%s", log)
}

// envRecordingProof stands in for the proof: it lists the names in its
// environment, then passes.
const envRecordingProof = `#!/bin/bash
env -0 | while IFS= read -r -d '' kv; do printf 'proof-env: %s\n' "${kv%%=*}"; done
echo "SMOKE PASS"
`

func TestProcessProofRunsWithoutTheJITConfig(t *testing.T) {
	t.Parallel()
	c := startProcessCloud(t, cloud.Options{Market: market(host("h1", a5000)), ProofBinary: []byte(envRecordingProof)})
	pod := c.createPod(t, "runner-env", a5000, c.scriptParams())

	got := c.settle(t, pod)

	// The script stripped the config for the proof only: the runner still got it.
	assert.DeepEqual(t, got, outcome{Status: runpod.PodRunning, Runner: "online"})
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^proof-env: (.*)$`).FindAllStringSubmatch(c.Processes.Log(pod.podID), -1) {
		names = append(names, m[1])
	}
	assert.Assert(t, len(names) > 0, "the recording proof ran")
	assert.Check(t, !slices.Contains(names, startup.JITConfigEnv), "the proof saw %s", startup.JITConfigEnv)
	for _, want := range []string{"LD_LIBRARY_PATH", "SIM_CUDA_DRIVER_VERSION", "RUNPOD_GPU_SMOKE_SHA256"} {
		assert.Check(t, slices.Contains(names, want), "the proof's environment lacks %s: %v", want, names)
	}
}

func TestProcessSameSeedSameOutcomes(t *testing.T) {
	t.Parallel()
	// Two machines of one GPU type: the seed decides which pod lands where.
	m := market(host("good", a4000, func(h *runpodsim.HostProfile) { h.GPUCount = 2 }),
		host("bad", a4000, func(h *runpodsim.HostProfile) { h.GPUCount, h.MaxPTXISA = 2, "8.5" }))
	run := func() map[string]string {
		c := startProcessCloud(t, cloud.Options{Seed: 7, Market: m})
		var pods []launched
		for i := range 3 {
			pods = append(pods, c.createPod(t, fmt.Sprintf("runner-%d", i), a4000, c.scriptParams()))
		}
		got := map[string]string{}
		for _, pod := range pods {
			o := c.settle(t, pod)
			got[pod.runner] = fmt.Sprintf("pod %s %s, runner %s", pod.podID, o.Status, o.Runner)
		}
		c.Close()
		return got
	}

	first, second := run(), run()

	assert.DeepEqual(t, first, second)
}

func TestProcessModeRefusesAVirtualClock(t *testing.T) {
	_, err := cloud.Start(cloud.Options{Mode: cloud.ModeProcess, Clock: simclock.NewVirtual(time.Now())})
	assert.Check(t, errors.Is(err, cloud.ErrProcessClock), "got %v", err)
}

func TestProcessPodWithoutCommandErrors(t *testing.T) {
	t.Parallel()
	c := startProcessCloud(t, cloud.Options{Market: market(host("h1", a5000)), ProofBinary: []byte("never fetched")})
	// With no image to supply a default command, there is nothing to run.
	pod, err := c.rp.CreatePod(context.Background(), runpod.CreatePodRequest{
		Name: "no-command", Image: cloud.RunnerImage, GPU: &runpod.CreateGPU{ID: a5000, Count: 1},
	})
	assert.NilError(t, err)

	poll.WaitOn(t, func(poll.LogT) poll.Result {
		got, err := c.rp.GetPod(context.Background(), pod.ID)
		if err != nil {
			return poll.Error(err)
		}
		if got.Status == runpod.PodError {
			return poll.Success()
		}
		return poll.Continue("pod is %s", got.Status)
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(20*time.Millisecond))
	assert.Check(t, is.Equal(c.Processes.Log(pod.ID), ""))
}

func TestStandInsPassShellcheck(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("skipping: shellcheck not found on PATH")
	}
	scripts, err := filepath.Glob("standins/*")
	assert.NilError(t, err)
	assert.Assert(t, is.Len(scripts, 7))
	out, err := exec.Command(shellcheck, append([]string{"--shell=bash"}, scripts...)...).CombinedOutput()
	assert.NilError(t, err, string(out))
}
