package lanetiers

import (
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/money"
)

// Outcomes of a row of the gate.
const (
	OutcomePassed    = "passed"     // the pod's GPU job succeeded
	OutcomeFailed    = "failed"     // the pod's GPU job failed: the tests (or its set-up) failed
	OutcomeCancelled = "cancelled"  // the pod's GPU job was cancelled
	OutcomeSkipped   = "skipped"    // the pod's GPU job never ran
	OutcomeUnknown   = "unknown"    // the pod's GPU job could not be read
	OutcomeHostFault = "host-fault" // the pod was lost to its host while its GPU job ran
	OutcomeReused    = "reused"     // no pod: the tier passed earlier for the tested tree
	OutcomeNoPod     = "no-pod"     // provisioning handed no pod over
)

// Result is one row of the gate: a pod of a tier with what its GPU job did
// and what it cost, or a tier that had no pod. A tier whose pod was lost to
// its host has that pod's row and then its re-run's.
type Result struct {
	Tier    string `json:"tier"`
	Outcome string `json:"outcome"`
	// Reason says why, in words: the host fault, the job's conclusion, why no pod.
	Reason         string        `json:"reason,omitempty"`
	PodID          string        `json:"pod-id,omitempty"`
	GPUType        string        `json:"gpu-type,omitempty"`
	DataCenter     string        `json:"data-center,omitempty"`
	PricePerHour   *money.Rate   `json:"price-per-hour,omitempty"`
	PaidSeconds    *int64        `json:"paid-seconds,omitempty"`
	Dollars        *money.Amount `json:"dollars,omitempty"`
	Rerun          bool          `json:"rerun,omitempty"`
	ReusedCheckURL string        `json:"reused-check-url,omitempty"`
}

// Outcomes lists every row outcome.
var Outcomes = []string{OutcomePassed, OutcomeFailed, OutcomeCancelled, OutcomeSkipped, OutcomeUnknown, OutcomeHostFault, OutcomeReused, OutcomeNoPod}

// ParseResults reads cleanup's tier-results output; "" is none.
func ParseResults(value string) ([]Result, error) {
	rows, err := parseList[Result](value, "cleanup's tier-results output (a JSON array of rows)")
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		known := false
		for _, o := range Outcomes {
			known = known || r.Outcome == o
		}
		if !known {
			return nil, fmt.Errorf("[%d].outcome %q: want one of %s", i, r.Outcome, strings.Join(Outcomes, ", "))
		}
	}
	return rows, nil
}

// Final is each tier's last row, in the order tiers first appear: what the
// tier finally came to (a re-run's row after its lost pod's).
func Final(rows []Result) []Result {
	var order []string
	last := map[string]Result{}
	for _, r := range rows {
		if _, seen := last[r.Tier]; !seen {
			order = append(order, r.Tier)
		}
		last[r.Tier] = r
	}
	out := make([]Result, 0, len(order))
	for _, t := range order {
		out = append(out, last[t])
	}
	return out
}

// Passed reports whether the row's tier passed: its tests passed on a pod,
// or passed earlier for the tested tree.
func (r Result) Passed() bool { return r.Outcome == OutcomePassed || r.Outcome == OutcomeReused }

// Label names the row's tier for people: the tier, or "the GPU" in a lane of one pod.
func (r Result) Label() string {
	if r.Tier == "" {
		return "the GPU"
	}
	return "tier " + r.Tier
}
