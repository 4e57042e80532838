package serverless

import (
	"fmt"
	"slices"
	"time"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// DefaultImage is the seed's worker image, pinned by its Docker Hub digest.
const DefaultImage = "runpod/pytorch:2.8.0-py3.11-cuda12.8.1-cudnn-devel-ubuntu22.04@sha256:cb154fcca15d1d6ce858cfa672b76505e30861ef981d28ec94bd44168767d853"

// Fixed worker bounds: scale to zero, never more than one worker.
const (
	WorkersMin = 0
	WorkersMax = 1
)

// Settings are what setup asks RunPod for and verifies in every answer, plus
// the lane's time and price bounds.
type Settings struct {
	Image            string        // digest-pinned image of the template
	GPUPool          string        // Serverless GPU pool, e.g. AMPERE_16 (A4000)
	ContainerDiskGB  int           // ephemeral container disk; no volume
	IdleTimeout      time.Duration // worker idle timeout (whole seconds)
	ExecutionTimeout time.Duration // provider execution timeout per job
	JobTTL           time.Duration // absolute job lifetime, queueing included
	WorkerDeadline   time.Duration // the Go worker's own deadline, before the provider's
	Lifetime         time.Duration // expected resource lifetime
	Reserve          time.Duration // margin on top of Lifetime in the setup reservation
	CleanupDeadline  time.Duration // absolute deadline from setup; a job never extends it
	CleanupMargin    time.Duration // time kept for cleanup after the job TTL
	PriceCeiling     float64       // USD per hour assumed for estimates
}

// DefaultSettings are the seed's values.
func DefaultSettings() Settings {
	return Settings{
		Image: DefaultImage, GPUPool: "AMPERE_16", ContainerDiskGB: 20,
		IdleTimeout: 5 * time.Second, ExecutionTimeout: 900 * time.Second, JobTTL: 1200 * time.Second,
		WorkerDeadline: 840 * time.Second, Lifetime: 20 * time.Minute, Reserve: 10 * time.Minute,
		CleanupDeadline: ownership.ServerlessCleanupDeadline, CleanupMargin: 2 * time.Minute, PriceCeiling: 0.70,
	}
}

var (
	digestImageRE = lazyre.Regexp{Pattern: `^[a-z0-9][a-z0-9._/:-]*@sha256:[0-9a-f]{64}$`}
	poolRE        = lazyre.Regexp{Pattern: `^[A-Z][A-Z0-9_]{1,40}$`}
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
	case !(s.PriceCeiling > 0 && s.PriceCeiling < 50):
		return bad("price-ceiling", s.PriceCeiling, "a positive USD per hour below 50")
	}
	return nil
}

// SetupReservationCents is setup's reservation: lifetime plus reserve at the
// ceiling price, plus $1 (normally $1.36).
func (s Settings) SetupReservationCents() int64 {
	return ReservationCents(s.Lifetime+s.Reserve, s.PriceCeiling)
}

// JobReservationCents is the job's reservation: its whole TTL at the ceiling, plus $1.
func (s Settings) JobReservationCents() int64 { return ReservationCents(s.JobTTL, s.PriceCeiling) }

// TemplateRequest is the private template of an attempt. env carries only
// public values (the worker's URL and checksum, ownership markers).
func (s Settings) TemplateRequest(name, args string, env map[string]string) runpod.CreateTemplateRequest {
	return runpod.CreateTemplateRequest{
		Name: name, Image: s.Image, Args: args, Disk: s.ContainerDiskGB, Env: env, Ports: []string{},
		Serverless: true, Public: false, StartSSH: false, StartJupyter: false, Category: "NVIDIA",
	}
}

// EndpointRequest is the endpoint of an attempt: 0–1 workers of one GPU.
func (s Settings) EndpointRequest(name, templateID string) runpod.CreateEndpointRequest {
	idle := int(s.IdleTimeout / time.Second)
	delay := 4.0
	return runpod.CreateEndpointRequest{
		Name: name, Type: "QUEUE", TemplateID: templateID,
		GPU:     &runpod.EndpointGPU{Pools: []string{s.GPUPool}, Count: 1},
		Workers: runpod.EndpointWorkers{Min: WorkersMin, Max: WorkersMax, IdleTimeout: &idle},
		Scaling: runpod.EndpointScaling{Type: "QUEUE_DELAY", QueueDelay: &delay},
		Timeout: s.ExecutionTimeout.Milliseconds(), Flashboot: "OFF",
	}
}

// VerifyTemplate lists every way t differs from what was asked for.
func (s Settings) VerifyTemplate(t *runpod.Template, name string) []string {
	var out []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	check(t.Name == name, "template name %q, want %q", t.Name, name)
	check(t.Image == s.Image, "template image %q, want %q", t.Image, s.Image)
	check(t.Disk == s.ContainerDiskGB, "template disk %d GB, want %d GB", t.Disk, s.ContainerDiskGB)
	check(t.Serverless, "template serverless false, want true")
	check(!t.Public, "template public true, want a private template")
	check(t.Mounts == nil || (t.Mounts.Persistent == nil && len(t.Mounts.Network) == 0), "template has a volume mount, want none")
	check(!t.StartSSH && !t.StartJupyter, "template starts SSH (%t) or Jupyter (%t), want neither", t.StartSSH, t.StartJupyter)
	return out
}

// VerifyEndpoint lists every way e differs from what was asked for: worker
// bounds, idle and execution timeouts, the GPU selection, no volumes.
func (s Settings) VerifyEndpoint(e *runpod.Endpoint, name string) []string {
	var out []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	idle := int(s.IdleTimeout / time.Second)
	check(e.Name == name, "endpoint name %q, want %q", e.Name, name)
	check(e.Workers.Min == WorkersMin, "workers.min %d, want %d", e.Workers.Min, WorkersMin)
	check(e.Workers.Max == WorkersMax, "workers.max %d, want %d", e.Workers.Max, WorkersMax)
	check(e.Workers.IdleTimeout != nil && *e.Workers.IdleTimeout == idle, "workers.idleTimeout %s, want %d s", intOrUnset(e.Workers.IdleTimeout), idle)
	check(e.Timeout == s.ExecutionTimeout.Milliseconds(), "timeout %d ms, want %d ms", e.Timeout, s.ExecutionTimeout.Milliseconds())
	check(len(e.NetworkVolumes) == 0, "networkVolumes %v, want none", e.NetworkVolumes)
	if e.GPU == nil {
		out = append(out, fmt.Sprintf("gpu missing, want pool %s × 1", s.GPUPool))
	} else {
		check(slices.Equal(e.GPU.Pools, []string{s.GPUPool}), "gpu.pools %v, want [%s]", e.GPU.Pools, s.GPUPool)
		check(e.GPU.Count == 1, "gpu.count %d, want 1", e.GPU.Count)
	}
	check(e.Image == "" || e.Image == s.Image, "image %q, want %q", e.Image, s.Image)
	return out
}

func intOrUnset(p *int) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprintf("%d s", *p)
}
