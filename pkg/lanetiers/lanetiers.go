// Package lanetiers is the record of a lane's pods as it travels between the
// lane's jobs in their outputs (JSON): each tested tier's paid path and the
// pod handed to its GPU job, the pods lost to host faults, and what the
// lane's pods can cost at most, so that a host-fault re-run stays inside
// max_run_spend_usd together with every pod before it.
//
// A lane of one pod (no matrix_tiers) has one tier, named "": whichever
// reviewed tier was cheapest. A matrix lane has one tier per name in
// matrix_tiers, each with its own pod, GPU job, reuse and gate row.
//
// Provision writes the Record (its tiers output) and the Pods it hands to
// GPU jobs (its pods output, the GPU jobs' matrix); the watchdog writes the
// HostFaults it saw (its host-faults output); a re-run's provision reads
// both and writes the Record on; cleanup reads the last Record and host
// faults and writes the Results the gate's rows are made of.
package lanetiers

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/inputform"
	"github.com/org/runpod-gpu/pkg/money"
)

// MaxValue bounds what Parse* read: a lane has a handful of tiers, so a
// longer value is not one of the lane's outputs.
const MaxValue = 256 << 10

// Pod is one pod handed to a GPU job: an element of the GPU jobs' matrix,
// with the keys of provision's plain outputs.
type Pod struct {
	// Tier is the tested tier ("" in a lane of one pod on any reviewed tier).
	Tier        string `json:"tier"`
	RunnerLabel string `json:"runner-label"`
	PodID       string `json:"pod-id"`
	GPUType     string `json:"gpu-type"`
	// GPUTier is the reviewed tier of the GPU (the tier itself in a matrix).
	GPUTier        string `json:"gpu-tier"`
	Cloud          string `json:"cloud,omitempty"`
	DataCenter     string `json:"data-center,omitempty"`
	PricePerHour   string `json:"price-per-hour"`
	StartedAt      string `json:"started-at"`
	StartupSeconds string `json:"startup-seconds"`
	// Rerun marks a pod of a host-fault re-run: it is not re-run again.
	Rerun bool `json:"rerun,omitempty"`
	// AcceptedAt is when provision accepted the pod and HandedOverAt when
	// it handed the lane's pods to their GPU jobs (RFC 3339, both on
	// provision's clock). In a matrix lane a tier's pod waits between the
	// two while the later tiers provision: no GPU job starts before the
	// provision job ends (HandOverWait).
	AcceptedAt   string `json:"accepted-at,omitempty"`
	HandedOverAt string `json:"handed-over-at,omitempty"`
}

// HandOverWait is how long the pod, accepted, waited for the lane's other
// tiers before its GPU job could start: 0 when either time is missing or
// unreadable. The watchdog adds it to the pod's setup budget (its lifetime
// still runs from the pod's provider start), so a matrix lane's first tier
// has as long from its hand-over to its tests as its last.
func (p Pod) HandOverWait() time.Duration {
	accepted, err1 := time.Parse(time.RFC3339, p.AcceptedAt)
	handed, err2 := time.Parse(time.RFC3339, p.HandedOverAt)
	if err1 != nil || err2 != nil || !handed.After(accepted) {
		return 0
	}
	return handed.Sub(accepted)
}

// JobName is the name GitHub lists the GPU job of the pod under when the
// job's name is base in a lane of one pod and "<base> (<tier>)" per tier of
// a matrix lane.
func (p Pod) JobName(base string) string { return JobName(base, p.Tier) }

// JobName is the GPU job's name for tier: base, or "<base> (<tier>)".
func JobName(base, tier string) string {
	if tier == "" {
		return base
	}
	return base + " (" + tier + ")"
}

// Host-fault kinds: how a pod was lost while its GPU job ran.
const (
	FaultVanished      = "vanished"       // the pod was deleted, not by the lane
	FaultExited        = "exited"         // its container stopped (EXITED or ERROR)
	FaultRuntimeLost   = "runtime-lost"   // RUNNING without a runtime: the host lost it
	FaultRunnerOffline = "runner-offline" // its runner went offline mid-job
)

// HostFault is a pod lost while its GPU job ran: the host's fault, not the
// tests'. A test failure is never one.
type HostFault struct {
	Tier       string `json:"tier"`
	PodID      string `json:"pod-id"`
	GPUType    string `json:"gpu-type"`
	Cloud      string `json:"cloud,omitempty"`
	DataCenter string `json:"data-center,omitempty"`
	Kind       string `json:"kind"`
	Detail     string `json:"detail"`
	// Rerun is set when the lost pod was itself a re-run's: no further re-run.
	Rerun bool `json:"rerun,omitempty"`
	// What cleanup prices and finds the lost pod's job by: its runner,
	// price and start as provision handed them over.
	RunnerLabel  string `json:"runner-label,omitempty"`
	PricePerHour string `json:"price-per-hour,omitempty"`
	StartedAt    string `json:"started-at,omitempty"`
}

// Lose is the fault with what the pod it names was handed over with.
func (f HostFault) Lose(p Pod) HostFault {
	f.RunnerLabel, f.PricePerHour, f.StartedAt = p.RunnerLabel, p.PricePerHour, p.StartedAt
	f.GPUType = cmp.Or(f.GPUType, p.GPUType)
	f.DataCenter = cmp.Or(f.DataCenter, p.DataCenter)
	f.Cloud = cmp.Or(f.Cloud, p.Cloud)
	f.Rerun = f.Rerun || p.Rerun
	return f
}

// Where says where the pod was lost: "<GPU> in <data center>".
func (f HostFault) Where() string { return Where(f.GPUType, f.DataCenter) }

// Where is "<GPU> in <data center>", or the GPU alone when the data center is unknown.
func Where(gpu, dataCenter string) string {
	if gpu == "" {
		gpu = "an unknown GPU"
	}
	if dataCenter == "" {
		return gpu + " (data center unknown)"
	}
	return gpu + " in " + dataCenter
}

// Tier is one tested tier's record.
type Tier struct {
	Name string `json:"tier"`
	// PaidPath is paid, reused or skipped (provision's paid-path); "" when
	// provisioning ended without one.
	PaidPath       string `json:"paid-path"`
	ReusedCheckURL string `json:"reused-check-url,omitempty"`
	// Error says why no pod was handed over; "" when one was (or it was reused).
	Error string `json:"error,omitempty"`
	// Pod is the pod of the tier's latest provisioning; nil when none was handed over.
	Pod *Pod `json:"pod,omitempty"`
	// Lost are the tier's pods lost to host faults, oldest first.
	Lost []HostFault `json:"lost,omitempty"`
	// Rejected are the tier's rejected candidates, for cleanup's run total.
	Rejected []cost.Attempt `json:"rejected,omitempty"`
	// Retained are rejected pods kept for inspection (keep-failed-pods).
	Retained []string `json:"retained,omitempty"`
}

// Reruns reports whether the tier's pod is a re-run already.
func (t Tier) Reruns() bool { return t.Pod != nil && t.Pod.Rerun }

// Record is provision's tiers output: every tested tier, and what the
// lane's pods can cost at most.
type Record struct {
	Tiers []Tier `json:"tiers"`
	// CommittedUSD bounds what every pod of the lane so far can cost: the
	// rejected pods' bound and each handed-over pod at its worst case.
	CommittedUSD money.Amount `json:"committed-usd"`
	// CommittedUnknown is set when a pod's price was unknown, so no bound holds.
	CommittedUnknown bool `json:"committed-unknown,omitempty"`
	// NextCandidate is the first candidate number a later provision of the
	// same run attempt may use: pod names and runner labels stay unique.
	NextCandidate int `json:"next-candidate"`
}

// Tier returns the tier named name.
func (r *Record) Tier(name string) (*Tier, bool) {
	for i := range r.Tiers {
		if r.Tiers[i].Name == name {
			return &r.Tiers[i], true
		}
	}
	return nil, false
}

// Matrix reports whether the record is a matrix lane's (named tiers).
func (r Record) Matrix() bool {
	for _, t := range r.Tiers {
		if t.Name != "" {
			return true
		}
	}
	return false
}

// PodIDs are every pod of the lane so far that CommittedUSD bounds: each
// tier's rejected pods, its pod and its lost pods (not the pods kept for
// inspection, which bill on outside the lane's bound).
func (r Record) PodIDs() []string {
	var ids []string
	for _, t := range r.Tiers {
		for _, a := range t.Rejected {
			if a.PodID != "" && !slices.Contains(t.Retained, a.PodID) {
				ids = append(ids, a.PodID)
			}
		}
		for _, f := range t.Lost {
			ids = append(ids, f.PodID)
		}
		if t.Pod != nil {
			ids = append(ids, t.Pod.PodID)
		}
	}
	return ids
}

// Pods are the pods handed to GPU jobs, in tier order.
func (r Record) Pods() []Pod {
	pods := []Pod{}
	for _, t := range r.Tiers {
		if t.Pod != nil {
			pods = append(pods, *t.Pod)
		}
	}
	return pods
}

// Format renders a value as one line of JSON (an action output).
func Format(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // the package's values always encode
		return ""
	}
	return string(b)
}

// ParseRecord reads provision's tiers output; "" is no record (nil, nil).
func ParseRecord(value string) (*Record, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var r Record
	if err := parse(value, &r, "provision's tiers output (a JSON object with tiers)"); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, t := range r.Tiers {
		if seen[t.Name] {
			return nil, fmt.Errorf("tiers[%d]: tier %q is listed twice", i, t.Name)
		}
		seen[t.Name] = true
		if t.Pod != nil && t.Pod.Tier != t.Name {
			return nil, fmt.Errorf("tiers[%d]: the pod names tier %q, not %q", i, t.Pod.Tier, t.Name)
		}
	}
	if r.CommittedUSD < 0 || r.NextCandidate < 0 {
		return nil, fmt.Errorf("committed-usd %v or next-candidate %d is negative", r.CommittedUSD, r.NextCandidate)
	}
	return &r, nil
}

// ParsePods reads provision's pods output; "" is none.
func ParsePods(value string) ([]Pod, error) {
	pods, err := parseList[Pod](value, "provision's pods output (a JSON array of pods)")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, p := range pods {
		switch {
		case p.PodID == "" || p.RunnerLabel == "":
			return nil, fmt.Errorf("[%d]: a pod needs its pod-id and runner-label", i)
		case seen[p.Tier]:
			return nil, fmt.Errorf("[%d]: tier %q has two pods", i, p.Tier)
		}
		if err := checkPodFields(p); err != nil {
			return nil, fmt.Errorf("[%d].%w", i, err)
		}
		seen[p.Tier] = true
	}
	return pods, nil
}

// checkPodFields holds a pod's display and lookup fields to the forms the
// watchdog's own inputs have (pkg/inputform): the same values reach the
// log and the cost report whichever way the watchdog is given them.
func checkPodFields(p Pod) error {
	for _, f := range []struct{ name, kind, value string }{
		{"pod-id", inputform.PodID, p.PodID}, {"runner-label", inputform.RunnerName, p.RunnerLabel},
		{"tier", inputform.Tier, p.Tier}, {"gpu-tier", inputform.Tier, p.GPUTier}, {"gpu-type", inputform.GPUType, p.GPUType},
		{"price-per-hour", inputform.Price, p.PricePerHour},
	} {
		if f.value == "" {
			continue
		}
		if err := inputform.Check(f.kind, f.value); err != nil {
			return fmt.Errorf("%s %w", f.name, err)
		}
	}
	return nil
}

// ParseHostFaults reads the watchdog's host-faults output; "" is none.
func ParseHostFaults(value string) ([]HostFault, error) {
	faults, err := parseList[HostFault](value, "the watchdog's host-faults output (a JSON array)")
	if err != nil {
		return nil, err
	}
	for i, f := range faults {
		switch f.Kind {
		case FaultVanished, FaultExited, FaultRuntimeLost, FaultRunnerOffline:
		default:
			return nil, fmt.Errorf("[%d].kind %q: want %s, %s, %s or %s", i, f.Kind, FaultVanished, FaultExited, FaultRuntimeLost, FaultRunnerOffline)
		}
		if f.PodID == "" {
			return nil, fmt.Errorf("[%d]: a host fault names its pod-id", i)
		}
	}
	return faults, nil
}

// parseList decodes an output holding a JSON array; a blank one is none.
func parseList[T any](value, want string) ([]T, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var items []T
	if err := parse(value, &items, want); err != nil {
		return nil, err
	}
	return items, nil
}

func parse(value string, v any, want string) error {
	if len(value) > MaxValue {
		return fmt.Errorf("%d bytes: want at most %d (%s)", len(value), MaxValue, want)
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: want %s", clip(value), want)
	}
	if dec.More() {
		return fmt.Errorf("%s: want one JSON value (%s)", clip(value), want)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return fmt.Sprintf("%q", s)
}
