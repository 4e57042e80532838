package cost

import (
	"encoding/json"
	"time"
)

// Outcome is how one provision attempt ended.
type Outcome string

// Attempt outcomes.
const (
	// OutcomeAccepted: the pod proved CUDA and its runner came online.
	OutcomeAccepted Outcome = "accepted"
	// OutcomeRejected: a pod was created and paid for, then rejected (deleted or retained).
	OutcomeRejected Outcome = "rejected"
	// OutcomeNoCapacity: the create found no capacity; nothing was created or paid.
	OutcomeNoCapacity Outcome = "no-capacity"
	// OutcomeFailed: the attempt ended before a pod decision (create error,
	// obsolete PR, cancellation); any pod it created is in PodID.
	OutcomeFailed Outcome = "failed"
)

// Valid reports whether o is one of the defined outcomes.
func (o Outcome) Valid() bool {
	switch o {
	case OutcomeAccepted, OutcomeRejected, OutcomeNoCapacity, OutcomeFailed:
		return true
	}
	return false
}

// Attempt is one provision attempt: what was tried, how it ended and what its
// pod's paid seconds cost. Report.Rejected lists the rejected ones.
type Attempt struct {
	Number    int     // 1-based attempt number within the provision run
	Candidate string  // candidate/tier name from the plan
	GPU       string  // RunPod GPU type id
	PodID     string  // "" when no pod was created
	Price     Price   // hourly price captured while the pod ran
	Outcome   Outcome // how the attempt ended
	Reason    string  // why it was rejected or failed; "" when accepted
	Seconds   Seconds // paid seconds: startup seconds, or wasted seconds of a rejected pod
	// Where the pod ran, as its RunPod record showed it, for the lane's
	// reputation: "" when unknown (no pod, never read, or an older record).
	Cloud      string // SECURE or COMMUNITY
	DataCenter string // e.g. EU-RO-1
	Driver     string // the host's CUDA level (the record's cudaVersion)
	Machine    string // the machine as the pod reports it: its first GPU's UUID; "" when unknown
	// Host is what the attempt showed about the host; "" when nothing (see HostVerdict).
	Host HostVerdict
	At   time.Time // when the attempt ended; zero in older records
}

// HostVerdict is what one attempt showed about the host RunPod placed its pod
// on: the evidence the lane's reputation learns from. A rejection that is no
// fault of the host (the PR moved, a cancellation, the spend ceiling, a
// misplaced GPU type) gives no verdict, so it never blames a good data center.
type HostVerdict string

// Host verdicts.
const (
	// HostWorked: the pod proved CUDA and its runner came online.
	HostWorked HostVerdict = "worked"
	// HostFailed: the pod never delivered a runner: it ended or lost its
	// runtime while starting (the CUDA proof failed), or missed the startup timeout.
	HostFailed HostVerdict = "failed"
)

// Dollars estimates the attempt's cost; unknown when its seconds or price are.
func (a Attempt) Dollars() Money { return a.Seconds.At(a.Price) }

type attemptJSON struct {
	Number    int     `json:"attempt"`
	Candidate string  `json:"candidate"`
	GPU       string  `json:"gpu"`
	PodID     string  `json:"podId,omitempty"`
	Price     Price   `json:"price"`
	Outcome   Outcome `json:"outcome"`
	Reason    string  `json:"reason,omitempty"`
	Seconds   Seconds `json:"seconds"`
	Dollars   Money   `json:"dollars"` // derived; written for readers, recomputed on read
	// Absent from records written before attempts carried where their pod ran.
	Cloud      string      `json:"cloud,omitempty"`
	DataCenter string      `json:"dataCenter,omitempty"`
	Driver     string      `json:"driver,omitempty"`
	Machine    string      `json:"machine,omitempty"`
	Host       HostVerdict `json:"host,omitempty"`
	At         time.Time   `json:"at,omitzero"`
}

// MarshalJSON writes the attempt with its derived dollars.
func (a Attempt) MarshalJSON() ([]byte, error) {
	return json.Marshal(attemptJSON{
		Number: a.Number, Candidate: a.Candidate, GPU: a.GPU, PodID: a.PodID, Price: a.Price,
		Outcome: a.Outcome, Reason: a.Reason, Seconds: a.Seconds, Dollars: a.Dollars(),
		Cloud: a.Cloud, DataCenter: a.DataCenter, Driver: a.Driver, Machine: a.Machine, Host: a.Host, At: a.At,
	})
}

// UnmarshalJSON reads what MarshalJSON writes and validates it; the stored
// dollars are ignored because they are derived from seconds and price.
func (a *Attempt) UnmarshalJSON(b []byte) error {
	var in attemptJSON
	if err := decodeFields(b, &in); err != nil {
		return err
	}
	out := Attempt{
		Number: in.Number, Candidate: in.Candidate, GPU: in.GPU, PodID: in.PodID, Price: in.Price,
		Outcome: in.Outcome, Reason: in.Reason, Seconds: in.Seconds,
		Cloud: in.Cloud, DataCenter: in.DataCenter, Driver: in.Driver, Machine: in.Machine, Host: in.Host, At: in.At,
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*a = out
	return nil
}

// Validate checks the attempt number and outcome.
func (a Attempt) Validate() error {
	if a.Number < 1 {
		return fieldErr("attempt", invalid("%d: want an attempt number of 1 or more", a.Number))
	}
	if !a.Outcome.Valid() {
		return fieldErr("outcome", invalid("%q: want %s, %s, %s or %s", a.Outcome,
			OutcomeAccepted, OutcomeRejected, OutcomeNoCapacity, OutcomeFailed))
	}
	if a.Host != "" && a.Host != HostWorked && a.Host != HostFailed {
		return fieldErr("host", invalid("%q: want %s, %s or no value", a.Host, HostWorked, HostFailed))
	}
	return nil
}
