package provision

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/startup"
)

// ranker builds the plan's ranker from the request's reputation record as
// of now; nil (the plan's own order) without a record, and the cold start's
// order (reputation.ColdRank: the seed's, over the seed's plan, planConfig)
// while the record holds no evidence yet.
func (r *run) ranker() plan.Ranker {
	if r.req.Reputation == nil {
		return nil
	}
	e := r.estimate()
	if e == nil {
		r.logf("reputation: no evidence yet: the seed's plan (the secure cloud, one candidate per GPU type where the configuration allows it), in the seed's order")
		return reputation.ColdRank
	}
	q := e.Quarantined()
	held := "none"
	if len(q) > 0 {
		held = strings.Join(q, "; ")
	}
	r.logf("reputation: %d observation(s); candidates ranked by expected cost to a working runner, pinned to good data centers; quarantined: %s; %d machine(s) held bad",
		len(r.req.Reputation.Observations), held, e.HeldMachines())
	return e.Rank
}

// planConfig is the configuration the plan is built from: with a record that
// holds no evidence yet (a new lane), the seed's plan where the configuration
// allows the secure cloud — the secure cloud alone, one candidate per GPU
// type with RunPod placing it — since nothing yet tells one data center or
// community host from another, and a plan per data center cut to
// max_price_candidates before any ranking would drop the seed's other types.
func (r *run) planConfig() *config.Config {
	if r.req.Reputation == nil || r.estimate() != nil || len(r.cfg.Clouds) < 2 || !slices.Contains(r.cfg.Clouds, config.CloudSecure) {
		return r.cfg
	}
	cold := *r.cfg
	cold.Clouds = []config.Cloud{config.CloudSecure}
	return &cold
}

// estimate keeps the request's record as of now for screening placements
// (r.reputation) and returns it; nil without a record or evidence in it. A
// run given its plan (a lane's tier) screens by it too.
func (r *run) estimate() *reputation.Estimator {
	if r.req.Reputation == nil {
		return nil
	}
	if e := reputation.New(*r.req.Reputation, r.now(), reputation.DefaultParams); !e.Empty() {
		r.reputation = e
	}
	return r.reputation
}

// The machine a pod landed on is what the pod itself reports: REST v2's pod
// record names none, so the startup script's machine report prints each GPU's
// UUID and driver (startup.LineGPU) before the proof runs, in the container
// log the watch already follows. The first GPU's UUID is the machine's key in
// the reputation: no extra call, and no GraphQL.

// sawGPU takes in the machine report's GPU line: the first one is the pod's
// machine (a GPU UUID: startup.ReadLogLine reads nothing else), kept when the
// lane keeps a reputation, as its attempt's evidence.
// It reports true when the watch ends: the machine is held bad and the pod's
// record, read once, names it this run's pod (screened: deleted before its
// proof), or names another pod (foreign: found by name instead). A record
// that cannot be read leaves the pod watched.
func (s *startupWatch) sawGPU(ctx context.Context, l startup.LogLine) bool {
	r := s.r
	if s.w.machine != "" || r.req.Reputation == nil {
		return false
	}
	s.w.machine = l.GPUUUID
	r.logf("pod %s: machine %s (driver %s), as the pod reports it", s.pod.ID, l.GPUUUID, l.Driver)
	why := r.heldMachine(l.GPUUUID)
	if why == "" {
		return false
	}
	switch name, err := r.recordName(ctx, s.pod); {
	case err != nil:
		r.logf("pod %s is on a held machine, but its record could not be read to confirm it is this run's (%v): watched, not deleted for its placement", s.pod.ID, err)
		return false
	case name != s.o.name:
		s.w.foreign, s.w.reason = true, fmt.Sprintf("the create answer named pod %s, whose record is named %q, not %s", s.pod.ID, name, s.o.name)
		return true
	}
	s.w.screened, s.w.screenedWhy, s.w.seen = true, why, true
	return true
}

// heldMachine says why the machine a pod landed on is held bad by the
// reputation ("" when it is not, or unknown). No create parameter pins or
// excludes a machine, so a pod RunPod places on a held machine is deleted
// as soon as it names its machine, before its proof: its boot is paid, a
// failed proof and the candidate's startup budget are not.
func (r *run) heldMachine(machine string) string {
	if r.reputation == nil || machine == "" {
		return ""
	}
	_, why := r.reputation.BadMachine(machine)
	return why
}

// screenOut deletes a pod placed on a held machine before its proof. Its
// attempt is rejected with no host verdict (it says nothing new about the
// machine), billed from its creation, and the run goes on to the next
// candidate without counting a startup failure.
func (r *run) screenOut(ctx context.Context, a *attemptState, pod *runpod.Pod, w watchResult) (outcome, error) {
	a.rec.PodID = pod.ID
	a.rec.Cloud, a.rec.DataCenter, a.rec.Driver = cmp.Or(w.cloud, pod.Cloud), cmp.Or(w.dataCenter, pod.DataCenterID), cmp.Or(w.driver, pod.CudaVersion)
	r.dropLateDuplicates(ctx, pod)
	r.logf("pod %s landed on a machine the reputation holds bad: %s; deleting it before its proof", pod.ID, w.screenedWhy)
	w.start, w.hostFailed = a.createdAt, false
	w.reason = "placed on a machine held bad (" + w.screenedWhy + "): deleted before its proof"
	out, err := r.reject(ctx, a, pod, w)
	if err != nil || out != outcomeStartupFailure {
		return out, err
	}
	return outcomeScreened, nil
}

// LoadReputation reads the reputation record at path, given through the
// action input named input. An empty path means no record: no reputation is
// kept. A missing file is a cold start (the first runs have no history yet),
// reported in the note, with an empty record. An unreadable or invalid record
// comes back as problem, naming the input and the path, with an empty
// record: the caller warns and plans in the seed's order. An empty record
// still has each pod's machine read for the evidence the next record holds.
// The record only orders candidates inside the reviewed allowlist, and it is
// downloaded from an artifact: a truncated download, a newer format or a
// planted file must not stop every lane (nor steer it).
func LoadReputation(input, path string) (rec *reputation.Record, note string, problem error) {
	if strings.TrimSpace(path) == "" {
		return nil, "", nil
	}
	b, err := readBounded(path, reputation.MaxRecordBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &reputation.Record{}, fmt.Sprintf("reputation: %s %q does not exist yet: candidates in the seed's order", input, path), nil
	case err != nil:
		return &reputation.Record{}, "", fmt.Errorf("input %s: %q: %w; want a readable reputation record (JSON) or an empty value", input, path, err)
	}
	r, err := reputation.Parse(b)
	if err != nil {
		return &reputation.Record{}, "", fmt.Errorf("input %s: %q: %w", input, path, err)
	}
	return &r, "", nil
}

// readBounded reads a regular file of at most limit bytes: a record is
// downloaded from an artifact, and a larger one (or a device that never
// ends) is not read into memory.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes, which no reputation record is", limit)
	}
	return b, nil
}
