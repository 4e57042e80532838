package history

import (
	"context"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

func TestParseGPUUsageReadsNvidiaSmiSamples(t *testing.T) {
	samples := strings.Join([]string{
		"2026/10/06 09:00:01.101, 0, NVIDIA GeForce RTX 4090, 812, 24564, 0",
		"2026/10/06 09:00:02.101, 0, NVIDIA GeForce RTX 4090, 9216, 24564, 87",
		"2026/10/06 09:00:03.101, 0, NVIDIA GeForce RTX 4090, 7100, 24564, [N/A]", // utilisation unreadable: memory still counts
		"",
		"Failed to initialize NVML: Driver/library version mismatch",            // not a sample
		"2026/10/06 09:00:04.101, 0, NVIDIA GeForce RTX 4090, 99999, 24564, 50", // more used than the card has
		"2026/10/06 09:00:05.101, 0, NVIDIA GeForce RTX 4090, 4000, 24564, 40",
	}, "\n")
	u, err := ParseGPUUsage(strings.NewReader(samples))
	assert.NilError(t, err)
	assert.DeepEqual(t, u, GPUUsage{GPU: "NVIDIA GeForce RTX 4090", Samples: 4, PeakMemoryMiB: 9216, TotalMemoryMiB: 24564,
		PeakUtilPct: 87, MeanUtilPct: 42.3, Skipped: 2})

	_, err = ParseGPUUsage(strings.NewReader("nvidia-smi: command not found\n"))
	assert.Check(t, is.ErrorContains(err, "gpu-usage.csv: no sample of timestamp,index,name,memory.used,memory.total,utilization.gpu (1 lines skipped)"))
}

// Two GPUs: the busier one's peak counts (memory is per GPU).
func TestParseGPUUsageTakesTheBusiestGPU(t *testing.T) {
	u, err := ParseGPUUsage(strings.NewReader("t, 0, NVIDIA A40, 30000, 46068, 90\nt, 1, NVIDIA A40, 41000, 46068, 95\n"))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(u.PeakMemoryMiB, 41000))
	assert.Check(t, is.Equal(u.PeakUtilPct, 95))
}

// FuzzParseGPUUsage: any bytes either fail or give a usage whose peak lies
// within its card and whose utilisation is a percentage.
func FuzzParseGPUUsage(f *testing.F) {
	f.Add("2026/10/06 09:00:02.101, 0, NVIDIA GeForce RTX 4090, 9216, 24564, 87\n")
	f.Add("t, 0, A, B, 1, 2, 3, 4\n,,,,,\n")
	f.Add("t, 1, NVIDIA A40, -5, 46068, 101\nt, 1, x, 0, 0, 0\n")
	f.Fuzz(func(t *testing.T, in string) {
		u, err := ParseGPUUsage(strings.NewReader(in))
		if err != nil {
			return
		}
		switch {
		case u.Samples <= 0:
			t.Fatalf("a usage without samples: %+v", u)
		case u.PeakMemoryMiB < 0 || u.PeakMemoryMiB > u.TotalMemoryMiB || u.TotalMemoryMiB <= 0:
			t.Fatalf("peak %d MiB outside its card's %d MiB", u.PeakMemoryMiB, u.TotalMemoryMiB)
		case u.PeakUtilPct < 0 || u.PeakUtilPct > 100 || u.MeanUtilPct < 0 || u.MeanUtilPct > 100:
			t.Fatalf("utilisation %d / %v is not a percentage", u.PeakUtilPct, u.MeanUtilPct)
		}
	})
}

// A collection downloads the GPU job's usage artifact beside the cost
// artifact; the attempt reads it, and it is never taken for a cost artifact.
func TestCollectDownloadsTheGPUUsage(t *testing.T) {
	g := newSimGitHub(t)
	run := g.addRun(t, date(2026, 10, 6).Add(10*time.Hour), "pull_request", "")
	g.setLogs(t, run, 1, "nothing")
	r := acceptedReport("podA", "NVIDIA GeForce RTX 4090", 0.69, t0, 600)
	g.addCostArtifact(t, run, 1, r, time.Time{})
	_, err := g.srv.AddArtifact(simRepo, run, githubsim.ArtifactSpec{Name: UsageArtifactName(run, 1),
		Files: map[string]string{UsageFileName: "t, 0, NVIDIA GeForce RTX 4090, 9216, 24564, 87\n"}})
	assert.NilError(t, err)
	// Another attempt's usage is not this attempt's.
	_, err = g.srv.AddArtifact(simRepo, run, githubsim.ArtifactSpec{Name: UsageArtifactName(run, 2),
		Files: map[string]string{UsageFileName: "t, 0, NVIDIA GeForce RTX 4090, 20000, 24564, 87\n"}})
	assert.NilError(t, err)

	rng, err := ParseRange("2026-10-06", "2026-10-06")
	assert.NilError(t, err)
	res, err := Run(context.Background(), Options{Dir: t.TempDir(), Range: &rng, GitHub: g.client})
	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.Report.Attempts, 1))
	a := res.Report.Attempts[0]
	assert.Assert(t, a.GPUUsage != nil)
	assert.Check(t, is.Equal(a.GPUUsage.PeakMemoryMiB, 9216))
	assert.Check(t, is.Len(a.Warnings, 0), "the usage is not read as a cost artifact: %v", a.Warnings)
	assert.Check(t, is.Equal(res.Report.Totals.Pods, 1))
}

// The GPU job logs its samples (it uploads nothing after the pull request's
// code ran): each pod's GPU job's lines are that pod's usage, and a usage
// line in a lane job's log, or a malformed one, counts for nothing.
func TestUsageReadFromTheGPUJobsLog(t *testing.T) {
	dir := t.TempDir()
	logs := map[string]string{
		provisionLog: logText(t0, UsageLinePrefix+"podA t, 0, NVIDIA L4, 23000, 23034, 100"),
		gpuLog: logText(t0, "make test-gpu",
			UsageLinePrefix+"podA t, 0, NVIDIA L4, 4096, 23034, 50",
			UsageLinePrefix+"podA t, 0, NVIDIA L4, 6144, 23034, 70",
			UsageLinePrefix+"podA not a sample",
			UsageLinePrefix+"- t, 0, NVIDIA L4, 1024, 23034, 10"),
	}
	writeSaved(t, dir, savedAttempt{rec: completedAttempt(7, 1, "pull_request", t0), logs: logs,
		artifacts: []cost.Artifact{artifactOf(7, 1, cost.TriggerAutomatic, refA, acceptedReport("podA", "NVIDIA L4", 0.36, t0, 600))}})
	a := readSaved(t, dir, AttemptKey{RunID: 7, Attempt: 1})
	u, ok := a.PodGPUUsage["podA"]
	assert.Assert(t, ok, "%+v", a)
	assert.Check(t, is.Equal(u.PeakMemoryMiB, 6144), "the provision job's line is not the GPU job's")
	assert.Check(t, is.Equal(u.Samples, 2))
	assert.Check(t, is.Equal(u.Skipped, 1))
	assert.Assert(t, a.GPUUsage != nil)
	assert.Check(t, is.Equal(a.GPUUsage.PeakMemoryMiB, 1024))
}
