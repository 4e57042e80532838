package runpodsim

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// ErrUnknownPod is returned by inspection methods for an id no create returned.
var ErrUnknownPod = errors.New("runpodsim: unknown pod")

// PodInfo is a test's view of one pod, deleted ones included.
type PodInfo struct {
	ID           string
	Name         string
	Status       string
	Image        string
	GPUTypeID    string
	GPUCount     int
	Cloud        string
	DataCenterID string
	HostID       string
	HourlyPrice  float64 // the pod's price (GPU price × count) captured at create
	CreatedAt    time.Time
	StartedAt    time.Time // latest container start; zero if it never ran
	TerminatedAt time.Time // zero unless deleted
	ExitCode     *int      // set when the container exited on its own
	// Env is the pod's environment as created; tests scan it for leaked secrets.
	Env map[string]string
	// Cmd is the container command as created (a startup script).
	Cmd []string
}

// Bill is what one pod has cost so far: per-second billing of every stretch
// from a container start (RUNNING) to the stop, exit, error or deletion that
// ended it, each stretch rounded up to the second, at the price captured at create.
type Bill struct {
	PodID       string
	HourlyPrice float64
	Seconds     int64
	Dollars     float64
	Accruing    bool // the pod is still billing
}

// Pods returns every pod ever created, in creation order, as of the clock's now.
func (s *Server) Pods() []PodInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(s.cfg.clock.Now())
	out := make([]PodInfo, 0, len(s.pods))
	for _, p := range s.pods {
		info := PodInfo{
			ID: p.id, Name: p.name, Status: p.status, Image: p.image,
			GPUTypeID: p.gpuID, GPUCount: p.gpuCount, Cloud: p.cloud,
			DataCenterID: p.host.profile.DataCenterID, HostID: p.host.profile.ID,
			HourlyPrice: p.price, CreatedAt: p.createdAt, StartedAt: p.startedAt, TerminatedAt: p.endedAt,
			Env: maps.Clone(p.env), Cmd: slices.Clone(p.cmd),
		}
		if p.exitCode != nil {
			code := *p.exitCode
			info.ExitCode = &code
		}
		out = append(out, info)
	}
	return out
}

// Bill returns the bill of podID as of the clock's now.
func (s *Server) Bill(podID string) (Bill, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.clock.Now()
	s.settle(now)
	p := s.podByID[podID]
	if p == nil {
		return Bill{}, fmt.Errorf("%w %q", ErrUnknownPod, podID)
	}
	return p.bill(now), nil
}

// Spent returns what all pods have cost so far, in USD.
func (s *Server) Spent() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.clock.Now()
	s.settle(now)
	return s.spent(now)
}

func (s *Server) spent(now time.Time) float64 {
	total := 0.0
	for _, p := range s.pods {
		total += p.bill(now).Dollars
	}
	return total
}

func (p *pod) bill(now time.Time) Bill {
	b := Bill{PodID: p.id, HourlyPrice: p.price, Accruing: p.billing}
	stretches := p.billed
	if p.billing {
		stretches = append(stretches[:len(stretches):len(stretches)], interval{p.billedFrom, now})
	}
	for _, iv := range stretches {
		b.Seconds += int64((iv.to.Sub(iv.from) + time.Second - 1) / time.Second)
	}
	b.Dollars = float64(b.Seconds) * p.price / 3600
	return b
}
