package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// MachineReader reads the machine RunPod placed a pod on (runpod.Client's
// PodMachine: one GraphQL read). A RunPod client without it records no
// machine and screens none.
type MachineReader interface {
	PodMachine(ctx context.Context, podID string) (string, error)
}

// MachineReadBudget bounds the one read of a new pod's machine; on any
// failure the machine is unknown: recorded as such, and never screened. The
// read is sent once and its answer never moves the shared cooldown
// (reqpolicy.Optional).
const MachineReadBudget = 10 * time.Second

// ranker builds the plan's ranker from the request's reputation record as
// of now; nil (the seed's plan) without a record or without evidence in it.
func (r *run) ranker() plan.Ranker {
	if r.req.Reputation == nil {
		return nil
	}
	e := r.estimate()
	if e == nil {
		r.logf("reputation: no evidence yet: candidates in the seed's order")
		return nil
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

// readMachine reads the machine of a new pod, for its attempt's evidence,
// when the lane keeps a reputation (a record was given, even an empty one):
// one read, bounded by MachineReadBudget. "" when unknown.
func (r *run) readMachine(ctx context.Context, podID string) string {
	reader, ok := r.deps.RunPod.(MachineReader)
	if r.req.Reputation == nil || !ok {
		return ""
	}
	mctx, cancel := r.bound(ctx, MachineReadBudget)
	defer cancel()
	// Optional: evidence only; its 429 (GraphQL's own limit) must not pause the watch.
	machine, err := reader.PodMachine(reqpolicy.Optional(mctx), podID)
	switch {
	case err != nil:
		r.logf("pod %s: its machine could not be read (%v): recorded as unknown", podID, err)
		return ""
	case machine != "" && !reputation.ValidMachineID(machine):
		r.logf("pod %s: RunPod named its machine %.80q, which is no machine id: recorded as unknown", podID, machine)
		return ""
	}
	return machine
}

// screen records the machine of a new pod and says why it is to be deleted
// before its proof ("" to watch it): placed on a machine the reputation holds
// bad. A create answer may name another pod's id (unlessForeign): a pod is
// deleted for its placement only once its record, read by that id, names it
// this run's pod; a record that cannot be read leaves it to the watch.
func (r *run) screen(ctx context.Context, pod *runpod.Pod, rec *cost.Attempt) string {
	rec.Machine = r.readMachine(ctx, pod.ID)
	why := r.heldMachine(rec.Machine)
	if why == "" {
		return ""
	}
	switch name, err := r.recordName(ctx, pod); {
	case err != nil:
		r.logf("pod %s is on a held machine, but its record could not be read to confirm it is this run's (%v): watched, not deleted for its placement", pod.ID, err)
		return ""
	case name != pod.Name:
		return "" // another pod's id: the watch finds this candidate's pod by name
	}
	rec.PodID = pod.ID
	r.dropLateDuplicates(ctx, pod)
	return why
}

// heldMachine says why the machine a pod landed on is held bad by the
// reputation ("" when it is not, or unknown). No create parameter pins or
// excludes a machine, so a pod RunPod places on a held machine is deleted
// before its proof: seconds of billing instead of a boot, an image pull
// and a failed proof.
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
func (r *run) screenOut(ctx context.Context, pod *runpod.Pod, jit *ghapi.JITConfig, rec *cost.Attempt, listPrice cost.Price,
	createdAt time.Time, done func(cost.Outcome, string), why string) (outcome, error) {
	rec.Cloud, rec.DataCenter, rec.Driver = pod.Cloud, pod.DataCenterID, pod.CudaVersion
	r.logf("pod %s landed on a machine the reputation holds bad: %s; deleting it before its proof", pod.ID, why)
	w := watchResult{screened: true, start: createdAt, reason: "placed on a machine held bad (" + why + "): deleted before its proof"}
	out, err := r.reject(ctx, pod, jit, w, rec, listPrice, createdAt, done)
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
