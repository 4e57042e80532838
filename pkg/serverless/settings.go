package serverless

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
)

// DefaultImage is the seed's worker image, pinned by its Docker Hub digest.
const DefaultImage = "runpod/pytorch:2.8.0-py3.11-cuda12.8.1-cudnn-devel-ubuntu22.04@sha256:cb154fcca15d1d6ce858cfa672b76505e30861ef981d28ec94bd44168767d853"

// Fixed endpoint settings: scale to zero, never more than one worker, queue
// routing scaled on a 4 s queue delay, no flashboot.
const (
	WorkersMin        = 0
	WorkersMax        = 1
	EndpointType      = "QUEUE"
	ScalingType       = "QUEUE_DELAY"
	QueueDelaySeconds = 4.0
	Flashboot         = "OFF"
)

// DefaultGPUType is the seed's one card: an RTX A4000 of the AMPERE_16 pool.
const DefaultGPUType = "NVIDIA RTX A4000"

// Settings are what setup asks RunPod for and verifies in every answer, plus
// the lane's time and price bounds.
type Settings struct {
	Image            string        // digest-pinned image of the template
	GPUPool          string        // Serverless GPU pool, e.g. AMPERE_16 (A4000)
	GPUType          string        // the one card of the pool the worker may run on, e.g. NVIDIA RTX A4000
	DataCenters      []string      // data-center pin of the workers; empty lets the scheduler choose
	ContainerDiskGB  int           // ephemeral container disk; no volume
	IdleTimeout      time.Duration // worker idle timeout (whole seconds)
	ExecutionTimeout time.Duration // provider execution timeout per job
	JobTTL           time.Duration // absolute job lifetime, queueing included
	WorkerDeadline   time.Duration // the Go worker's own deadline, before the provider's
	Lifetime         time.Duration // expected resource lifetime
	Reserve          time.Duration // margin on top of Lifetime in the setup reservation
	CleanupDeadline  time.Duration // absolute deadline from setup; a job never extends it
	CleanupMargin    time.Duration // time kept for cleanup after the job TTL
	// PriceCeiling is the USD per hour a worker is assumed to cost: in the
	// ledger's reservations, the budget's worst case and the cost estimate.
	// Setup raises it to the catalog's Serverless price of the pool's
	// dearest card (PoolPrice), so a pricier pool is never reserved at the
	// A4000's rate; the default stays the floor.
	PriceCeiling money.Rate
}

// PoolPrice is the most a worker of pool can cost per hour: the catalog's
// Serverless price (price.serverless) of the pool's dearest card, never
// below floor. It refuses a pool whose card want has no Serverless price in
// the catalog: what its worker bills could not be bounded.
func PoolPrice(types []runpod.GPUType, pool, want string, floor money.Rate) (money.Rate, error) {
	mine := slices.IndexFunc(types, func(t runpod.GPUType) bool { return t.ID == want && t.Pool == pool })
	if mine < 0 || !(float64(types[mine].Price.Serverless) > 0) {
		return 0, fmt.Errorf("the GPU catalog shows no Serverless price for %s in pool %s: its worker's cost could not be bounded, so nothing is created", want, pool)
	}
	price, _ := runpod.ServerlessPrice(types, pool)
	return max(price, floor), nil
}

// DefaultSettings are the seed's values.
func DefaultSettings() Settings {
	return Settings{
		Image: DefaultImage, GPUPool: "AMPERE_16", GPUType: DefaultGPUType, ContainerDiskGB: 20,
		IdleTimeout: 5 * time.Second, ExecutionTimeout: 900 * time.Second, JobTTL: 1200 * time.Second,
		WorkerDeadline: 840 * time.Second, Lifetime: 20 * time.Minute, Reserve: 10 * time.Minute,
		CleanupDeadline: ownership.ServerlessCleanupDeadline, CleanupMargin: 2 * time.Minute, PriceCeiling: money.Rate(70 * money.Cent),
	}
}

var (
	digestImageRE = lazyre.Regexp{Pattern: `^[a-z0-9][a-z0-9._/:-]*@sha256:[0-9a-f]{64}$`}
	poolRE        = lazyre.Regexp{Pattern: `^[A-Z][A-Z0-9_]{1,40}$`}
	gpuTypeRE     = lazyre.Regexp{Pattern: `^[A-Za-z0-9][A-Za-z0-9 ._()-]{1,79}$`}
	dataCenterRE  = lazyre.Regexp{Pattern: `^[A-Z0-9]{1,8}(-[A-Z0-9]{1,8}){1,3}$`}
)

// Validate names the first setting that is out of range and what is expected.
func (s Settings) Validate() error {
	bad := func(key string, value any, want string) error {
		return fmt.Errorf("serverless setting %s = %v: want %s", key, value, want)
	}
	whole := func(d time.Duration) bool { return d%time.Second == 0 }
	switch {
	case !digestImageRE.MatchString(s.Image):
		return bad("image", fmt.Sprintf("%q", s.Image), "an image pinned by digest (name@sha256:<64 hex>)")
	case !poolRE.MatchString(s.GPUPool):
		return bad("gpu-pool", fmt.Sprintf("%q", s.GPUPool), "a Serverless pool id such as AMPERE_16")
	case !gpuTypeRE.MatchString(s.GPUType):
		return bad("gpu-type", fmt.Sprintf("%q", s.GPUType), "a RunPod GPU type id such as "+DefaultGPUType)
	case slices.ContainsFunc(s.DataCenters, func(dc string) bool { return !dataCenterRE.MatchString(dc) }):
		return bad("data-centers", fmt.Sprintf("%q", s.DataCenters), "RunPod data-center ids such as EU-RO-1")
	case s.ContainerDiskGB < 5 || s.ContainerDiskGB > 100:
		return bad("container-disk-gb", s.ContainerDiskGB, "5 to 100")
	case !whole(s.IdleTimeout) || s.IdleTimeout < time.Second || s.IdleTimeout > time.Hour:
		return bad("idle-timeout", s.IdleTimeout, "whole seconds from 1 s to 1 h")
	case !whole(s.ExecutionTimeout) || s.ExecutionTimeout < time.Minute || s.ExecutionTimeout > 15*time.Minute:
		return bad("execution-timeout", s.ExecutionTimeout, "whole seconds from 1 to 15 minutes (one job of ≤ 15 minutes)")
	case s.JobTTL < s.ExecutionTimeout || s.JobTTL > 2*s.ExecutionTimeout:
		return bad("job-ttl", s.JobTTL, fmt.Sprintf("at least the execution timeout (%s) and at most twice it", s.ExecutionTimeout))
	case s.WorkerDeadline <= 0 || s.WorkerDeadline >= s.ExecutionTimeout:
		return bad("worker-deadline", s.WorkerDeadline, fmt.Sprintf("positive and below the execution timeout (%s) so the worker can pack results", s.ExecutionTimeout))
	case s.CleanupDeadline < s.JobTTL+s.CleanupMargin || s.CleanupDeadline > time.Hour:
		return bad("cleanup-deadline", s.CleanupDeadline, fmt.Sprintf("at least job TTL + cleanup margin (%s) and at most 1 h", s.JobTTL+s.CleanupMargin))
	case s.PriceCeiling <= 0 || s.PriceCeiling >= money.Rate(50*money.Dollar):
		return bad("price-ceiling", s.PriceCeiling.Dollars(), "a positive USD per hour below 50")
	}
	return nil
}

// SetupReservation is setup's reservation: lifetime plus reserve at the
// ceiling price, plus $1 (normally $1.36), as the spend room reckons a stage.
func (s Settings) SetupReservation() money.Amount {
	return spend.StageReservation(s.Lifetime+s.Reserve, s.PriceCeiling)
}

// JobReservation is the job's reservation: its whole TTL at the ceiling, plus $1.
func (s Settings) JobReservation() money.Amount {
	return spend.StageReservation(s.JobTTL, s.PriceCeiling)
}

// TemplateRequest is the private template of an attempt. env carries only
// public values (the worker's URL and checksum, ownership markers).
func (s Settings) TemplateRequest(name, args string, env map[string]string) runpod.CreateTemplateRequest {
	return runpod.CreateTemplateRequest{
		Name: name, Image: s.Image, Args: args, Disk: s.ContainerDiskGB, Env: env, Ports: []string{},
		Serverless: true, Public: false, StartSSH: false, StartJupyter: false, Category: "NVIDIA",
	}
}

// EndpointRequest is the endpoint of an attempt: 0–1 workers of one GPU of
// the pool, every other card of the pool excluded (see GPUExclusions).
func (s Settings) EndpointRequest(name, templateID string, excluded []string) runpod.CreateEndpointRequest {
	idle := int(s.IdleTimeout / time.Second)
	delay := QueueDelaySeconds
	return runpod.CreateEndpointRequest{
		Name: name, Type: EndpointType, TemplateID: templateID,
		GPU:     &runpod.EndpointGPU{Pools: []string{s.GPUPool}, ExcludedTypes: slices.Clone(excluded), Count: 1},
		Workers: runpod.EndpointWorkers{Min: WorkersMin, Max: WorkersMax, IdleTimeout: &idle},
		Scaling: runpod.EndpointScaling{Type: ScalingType, QueueDelay: &delay},
		Timeout: s.ExecutionTimeout.Milliseconds(), Flashboot: Flashboot, DataCenterIDs: slices.Clone(s.DataCenters),
	}
}

// Asked is what setup asked RunPod for. The receipt keeps it, so every later
// read of the template and the endpoint — by another process too, such as the
// CLI's health — is compared with the request itself, not with flags given later.
type Asked struct {
	Template runpod.CreateTemplateRequest `json:"template"`
	Endpoint runpod.CreateEndpointRequest `json:"endpoint"`
	GPUType  string                       `json:"gpu_type"` // the one card the endpoint may run on
	// PricePerHour is the price setup reserved at (PoolPrice): a later run
	// of the attempt reserves its job at it too.
	PricePerHour money.Rate `json:"price_per_hour,omitempty"`
}

// mismatches collects "<setting> <got>, want <want>" lines: each names the
// setting that differs, as RunPod's answer spells it.
type mismatches []string

func (m *mismatches) check(ok bool, format string, args ...any) {
	if !ok {
		*m = append(*m, fmt.Sprintf(format, args...))
	}
}

// VerifyTemplate lists every way t differs from the template asked for.
func VerifyTemplate(t *runpod.Template, asked runpod.CreateTemplateRequest) []string {
	var m mismatches
	m.check(t.Name == asked.Name, "template name %q, want %q", t.Name, asked.Name)
	m.check(t.Image == asked.Image, "template image %q, want %q", t.Image, asked.Image)
	m.check(t.Disk == asked.Disk, "template disk %d GB, want %d GB", t.Disk, asked.Disk)
	m.check(t.Args == asked.Args, "template args %q, want the lane's bootstrap command", t.Args)
	m.check(t.Serverless, "template serverless false, want true")
	m.check(!t.Public, "template public true, want a private template")
	m.check(t.Mounts == nil || (t.Mounts.Persistent == nil && len(t.Mounts.Network) == 0), "template mounts a volume, want none")
	m.check(!t.StartSSH && !t.StartJupyter, "template startSsh %t / startJupyter %t, want neither", t.StartSSH, t.StartJupyter)
	m.env("template", t.Env, asked.Env)
	return m
}

// env checks that an answer's environment, when it shows one, holds every
// value asked for unchanged (the worker's URL and checksum among them).
func (m *mismatches) env(what string, got, asked map[string]string) {
	if got == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(asked)) {
		v, ok := got[k]
		m.check(ok && v == asked[k], "%s env %s changed, want the value setup sent", what, k)
	}
}

// VerifyEndpoint lists every way e differs from the endpoint asked for (and
// the template it runs): type, worker bounds, idle and execution timeouts,
// scaling type and value, flashboot, the GPU selection (pool, exclusions,
// count), the data-center pin, disk and image, volumes and environment.
func VerifyEndpoint(e *runpod.Endpoint, asked runpod.CreateEndpointRequest, tpl runpod.CreateTemplateRequest) []string {
	var m mismatches
	m.check(e.Name == asked.Name, "endpoint name %q, want %q", e.Name, asked.Name)
	m.check(e.Type == "" || e.Type == asked.Type, "type %q, want %q", e.Type, asked.Type)
	m.check(e.Workers.Min == asked.Workers.Min, "workers.min %d, want %d", e.Workers.Min, asked.Workers.Min)
	m.check(e.Workers.Max == asked.Workers.Max, "workers.max %d, want %d", e.Workers.Max, asked.Workers.Max)
	m.check(equalIntPtr(e.Workers.IdleTimeout, asked.Workers.IdleTimeout), "workers.idleTimeout %s, want %s", intOrUnset(e.Workers.IdleTimeout), intOrUnset(asked.Workers.IdleTimeout))
	m.check(e.Timeout == asked.Timeout, "timeout %d ms, want %d ms", e.Timeout, asked.Timeout)
	m.check(e.Scaling.Type == asked.Scaling.Type, "scaling.type %q, want %q", e.Scaling.Type, asked.Scaling.Type)
	m.check(equalFloatPtr(e.Scaling.QueueDelay, asked.Scaling.QueueDelay), "scaling.queueDelay %s, want %s", floatOrUnset(e.Scaling.QueueDelay), floatOrUnset(asked.Scaling.QueueDelay))
	m.check(e.Scaling.RequestCount == nil, "scaling.requestCount %s, want unset", intOrUnset(e.Scaling.RequestCount))
	m.check(e.Flashboot == asked.Flashboot, "flashboot %q, want %q", e.Flashboot, asked.Flashboot)
	m.check(sameSet(e.DataCenterIDs, asked.DataCenterIDs), "dataCenterIds %s, want %s", listOrNone(e.DataCenterIDs), pinOrAny(asked.DataCenterIDs))
	m.check(len(e.NetworkVolumes) == 0, "networkVolumes %v, want none", e.NetworkVolumes)
	m.check(e.Disk == 0 || e.Disk == tpl.Disk, "disk %d GB, want %d GB", e.Disk, tpl.Disk)
	m.check(e.Image == "" || e.Image == tpl.Image, "image %q, want %q", e.Image, tpl.Image)
	if e.GPU == nil || asked.GPU == nil {
		m.check(false, "gpu missing, want pool %s × 1", strings.Join(poolsOf(asked.GPU), ","))
	} else {
		m.check(slices.Equal(e.GPU.Pools, asked.GPU.Pools), "gpu.pools %v, want %v", e.GPU.Pools, asked.GPU.Pools)
		m.check(sameSet(e.GPU.ExcludedTypes, asked.GPU.ExcludedTypes), "gpu.excludedTypes %s, want %s", listOrNone(e.GPU.ExcludedTypes), listOrNone(asked.GPU.ExcludedTypes))
		m.check(e.GPU.Count == asked.GPU.Count, "gpu.count %d, want %d", e.GPU.Count, asked.GPU.Count)
	}
	m.env("endpoint", e.Env, tpl.Env)
	return m
}

func poolsOf(g *runpod.EndpointGPU) []string {
	if g == nil {
		return nil
	}
	return g.Pools
}

// sameSet reports whether a and b hold the same strings (order and
// duplicates aside); nil and empty are the same.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

func equalIntPtr(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func equalFloatPtr(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func intOrUnset(p *int) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(*p)
}

func floatOrUnset(p *float64) string {
	if p == nil {
		return "unset"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return "[" + strings.Join(l, ", ") + "]"
}

func pinOrAny(l []string) string {
	if len(l) == 0 {
		return "none (the scheduler's choice)"
	}
	return listOrNone(l)
}
