package serverless

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/runpod"
)

func TestSettingsValidate(t *testing.T) {
	assert.NilError(t, DefaultSettings().Validate())
	cases := []struct {
		name   string
		change func(*Settings)
		want   string
	}{
		{"tag only", func(s *Settings) { s.Image = "runpod/pytorch:latest" }, "image"},
		{"pool", func(s *Settings) { s.GPUPool = "a4000" }, "gpu-pool"},
		{"disk", func(s *Settings) { s.ContainerDiskGB = 0 }, "container-disk-gb"},
		{"idle fraction", func(s *Settings) { s.IdleTimeout = 1500 * time.Millisecond }, "idle-timeout"},
		{"execution too long", func(s *Settings) { s.ExecutionTimeout = 16 * time.Minute }, "execution-timeout"},
		{"ttl below execution", func(s *Settings) { s.JobTTL = 10 * time.Minute }, "job-ttl"},
		{"worker deadline", func(s *Settings) { s.WorkerDeadline = 900 * time.Second }, "worker-deadline"},
		{"cleanup deadline", func(s *Settings) { s.CleanupDeadline = 20 * time.Minute }, "cleanup-deadline"},
		{"price", func(s *Settings) { s.PriceCeiling = 0 }, "price-ceiling"},
	}
	for _, tc := range cases {
		s := DefaultSettings()
		tc.change(&s)
		assert.Check(t, is.ErrorContains(s.Validate(), tc.want), tc.name)
	}
}

func TestVerifyEndpoint(t *testing.T) {
	s := DefaultSettings()
	req := s.EndpointRequest("rpg-sls-x", "tpl")
	asked := runpod.Endpoint{Name: req.Name, GPU: req.GPU, Workers: req.Workers, Timeout: req.Timeout}
	assert.Check(t, is.Len(s.VerifyEndpoint(&asked, "rpg-sls-x"), 0))

	cases := []struct {
		name   string
		change func(*runpod.Endpoint)
		want   string
	}{
		{"workersMax surprise", func(e *runpod.Endpoint) { e.Workers.Max = 3 }, "workers.max 3, want 1"},
		{"min", func(e *runpod.Endpoint) { e.Workers.Min = 1 }, "workers.min 1"},
		{"idle unset", func(e *runpod.Endpoint) { e.Workers.IdleTimeout = nil }, "idleTimeout unset"},
		{"timeout", func(e *runpod.Endpoint) { e.Timeout = 300000 }, "timeout 300000 ms"},
		{"pool", func(e *runpod.Endpoint) { e.GPU = &runpod.EndpointGPU{Pools: []string{"ADA_24"}, Count: 1} }, "gpu.pools"},
		{"volume", func(e *runpod.Endpoint) { e.NetworkVolumes = []string{"v"} }, "networkVolumes"},
		{"name", func(e *runpod.Endpoint) { e.Name = "other" }, "endpoint name"},
	}
	for _, tc := range cases {
		e := asked
		w := *asked.Workers.IdleTimeout
		e.Workers.IdleTimeout = &w
		tc.change(&e)
		got := strings.Join(s.VerifyEndpoint(&e, "rpg-sls-x"), "; ")
		assert.Check(t, is.Contains(got, tc.want), tc.name)
	}
}

func TestVerifyTemplate(t *testing.T) {
	s := DefaultSettings()
	ok := runpod.Template{Name: "t", Image: s.Image, Disk: 20, Serverless: true}
	assert.Check(t, is.Len(s.VerifyTemplate(&ok, "t"), 0))
	bad := ok
	bad.Public, bad.Disk, bad.StartSSH = true, 50, true
	bad.Mounts = &runpod.Mounts{Persistent: &runpod.PersistentMount{Size: 20, Path: "/workspace"}}
	got := strings.Join(s.VerifyTemplate(&bad, "t"), "; ")
	for _, want := range []string{"private", "disk 50", "volume", "SSH"} {
		assert.Check(t, is.Contains(got, want))
	}
}
