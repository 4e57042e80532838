package runpodsim

import (
	"fmt"
	"maps"
	"time"
)

// Market churn: what other customers do to the supply during a day. A market
// simulation calls these from its own clock timers to move stock and prices
// the way a live market does, so a plan read from the catalog ages.

// SetBusy makes other customers hold busy[hostID] GPUs of each host it
// names: a host's free GPUs become its GPU count less those less what this
// server's pods hold (never below 0, so others never take a GPU a pod
// holds). GPUs the pods release later are free again. Hosts it does not
// name keep their stock. One call takes a whole market's load at once.
func (s *Server) SetBusy(busy map[string]int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(s.cfg.clock.Now())
	byID := map[string]*host{}
	for _, h := range s.market.hosts {
		byID[h.profile.ID] = h
	}
	for id, n := range busy {
		switch {
		case byID[id] == nil:
			return fmt.Errorf("runpodsim: SetBusy: host %q is not in the market", id)
		case n < 0:
			return fmt.Errorf("runpodsim: SetBusy: host %q: busy GPUs %d must not be negative", id, n)
		}
	}
	held := map[*host]int{}
	for _, p := range s.pods {
		if p.holdsGPUs {
			held[p.host] += p.gpuCount
		}
	}
	for id, n := range busy {
		h := byID[id]
		h.free = max(h.profile.GPUCount-n-held[h], 0)
	}
	return nil
}

// SetPrice changes a GPU type's list prices per GPU-hour, as RunPod's live
// prices move; pods already created keep the price captured at their create.
func (s *Server) SetPrice(gpuID string, secure, community float64) error {
	if secure < 0 || community < 0 {
		return fmt.Errorf("runpodsim: SetPrice(%q): prices must not be negative, got %v and %v", gpuID, secure, community)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.market.gpuByID[gpuID]
	if g == nil {
		return fmt.Errorf("runpodsim: SetPrice: GPU type %q is not in the market", gpuID)
	}
	g.SecurePrice, g.CommunityPrice = secure, community
	return nil
}

// BilledFromCreation is what a pod costs when billing runs from its creation
// to its confirmed deletion (now for a pod not deleted yet), per started
// second, at the price captured at create. Bill counts container time only;
// this is the conservative view a lane must budget for, since a rejected pod
// also pays its boot and image pull.
func (p PodInfo) BilledFromCreation(now time.Time) (seconds int64, dollars float64) {
	end := p.TerminatedAt
	if end.IsZero() {
		end = now
	}
	seconds = int64((end.Sub(p.CreatedAt) + time.Second - 1) / time.Second)
	seconds = max(seconds, 0)
	return seconds, float64(seconds) * p.HourlyPrice / 3600
}

// Pod returns one pod's inspection view (deleted pods included), as of the
// clock's now; ErrUnknownPod for an id no create returned. It costs one
// lookup, where Pods copies every pod.
func (s *Server) Pod(id string) (PodInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(s.cfg.clock.Now())
	p := s.podByID[id]
	if p == nil {
		return PodInfo{}, fmt.Errorf("%w %q", ErrUnknownPod, id)
	}
	info := PodInfo{
		ID: p.id, Name: p.name, Status: p.status, Image: p.image,
		GPUTypeID: p.gpuID, GPUCount: p.gpuCount, Cloud: p.cloud,
		DataCenterID: p.host.profile.DataCenterID, HostID: p.host.profile.ID,
		HourlyPrice: p.price, CreatedAt: p.createdAt, StartedAt: p.startedAt, TerminatedAt: p.endedAt,
		Env: maps.Clone(p.env),
	}
	if p.exitCode != nil {
		code := *p.exitCode
		info.ExitCode = &code
	}
	return info, nil
}
