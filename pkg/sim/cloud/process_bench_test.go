package cloud_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
	"github.com/org/runpod-gpu/pkg/startup"
)

// BenchmarkProcessStartToOnline starts one pod per iteration in process mode
// — the rendered startup script, the real proof binary downloaded from the
// simulated release and run against the CUDA driver stand-in, then the
// stand-in runner — and reports container start → runner online (the paid
// time before a runner can take the job, which the proof's download sits in)
// and the proof's size. Host boot is instant here: only the container's own
// work is measured.
func BenchmarkProcessStartToOnline(b *testing.B) {
	c, err := cloud.Start(cloud.Options{Mode: cloud.ModeProcess, Market: market(host("h1", a4000)),
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(time.Millisecond)}})
	if errors.Is(err, smoketest.ErrNoCompiler) {
		b.Skipf("skipping: process mode needs the CUDA driver stand-in: %v", err)
	}
	assert.NilError(b, err)
	b.Cleanup(c.Close)
	ctx := context.Background()
	gh, err := ghapi.New(ctx, ghapi.Options{BaseURL: c.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName})
	assert.NilError(b, err)
	rp := runpod.New(c.RunPodURL, cloud.RunPodKey)
	params := startup.Params{ProofURL: c.ProofURL, ProofSHA256: c.ProofSHA256, MinCUDA: "12.6", FullTier: "12.8", BaselineTier: "12.6",
		MinVRAMGB: 8, RunnerDir: c.Processes.RunnerDir(), WorkDir: c.Processes.WorkDir()}
	script, err := startup.Render(params)
	assert.NilError(b, err)
	proof, err := cloud.ProofBinary()
	assert.NilError(b, err)

	var total time.Duration
	n := 0
	for b.Loop() {
		name := fmt.Sprintf("bench-%d", n)
		jit, err := gh.GenerateJITConfig(ctx, ghapi.JITRequest{Name: name, Labels: []string{name}, RunnerGroupID: 1})
		assert.NilError(b, err)
		env := startup.PodEnv(params)
		env[startup.JITConfigEnv] = jit.EncodedConfig
		pod, err := rp.CreatePod(ctx, runpod.CreatePodRequest{Name: name, Image: cloud.RunnerImage, GPU: &runpod.CreateGPU{ID: a4000, Count: 1},
			Env: env, Entrypoint: startup.Entrypoint(), Cmd: startup.Cmd(script)})
		assert.NilError(b, err)
		online := waitOnline(b, c, gh, pod.ID, name)
		var started time.Time
		for _, p := range c.RunPod.Pods() {
			if p.ID == pod.ID {
				started = p.StartedAt
			}
		}
		assert.Assert(b, !started.IsZero() && !online.Before(started), "pod %s started %v, runner online %v", pod.ID, started, online)
		total += online.Sub(started)
		n++
		assert.NilError(b, rp.DeletePod(ctx, pod.ID))
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "start-to-online-ms")
	b.ReportMetric(float64(len(proof))/1e6, "proof-MB")
}

// waitOnline returns when the runner of pod connected (the simulated
// GitHub's log of the connect), failing if the pod's container exits first.
func waitOnline(b *testing.B, c *cloud.Cloud, gh *ghapi.Client, podID, name string) time.Time {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r, found, err := gh.RunnerByName(context.Background(), name, ghapi.ScopeRepo)
		assert.NilError(b, err)
		if found && r.GetStatus() == "online" {
			var at time.Time
			for _, req := range c.GitHub.Requests() {
				if req.Path == "/_sim/runners/connect" && req.Status == 200 {
					at = req.At // the last connect: this pod's
				}
			}
			return at
		}
		for _, p := range c.RunPod.Pods() {
			if p.ID == podID && p.ExitCode != nil {
				b.Fatalf("pod %s exited %d before its runner came online:\n%s", podID, *p.ExitCode, c.Processes.Log(podID))
			}
		}
		time.Sleep(5 * time.Millisecond) // polling a real process's progress: only the wait's granularity
	}
	b.Fatalf("runner %s not online within 30 s:\n%s", name, c.Processes.Log(podID))
	return time.Time{}
}
