// Package reputation learns which (GPU type, data center) pairs and which
// machines deliver working runners from the evidence the lane already keeps
// — each attempt's GPU, data center, machine, driver, proof outcome and paid
// seconds — and ranks plan candidates by expected cost to a working runner,
// pinning creates to good data centers, quarantining pairs that failed
// repeatedly for a window, and holding bad machines: no create can exclude a
// machine, so provision deletes a pod placed on one before its proof.
//
// With no evidence yet (a new lane) it orders as the seed's policy: secure
// offers first, community offers after (ColdRank). It never adds
// a GPU type or widens a placement: the reviewed allowlist and the
// configured zones stay the boundary.
package reputation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
)

// RecordVersion is the record format this package writes and reads.
const RecordVersion = 1

// MaxObservations bounds a record: older evidence is dropped first (it
// weighs little by then anyway), so the artifact stays small. Parse refuses
// a record holding more: no writer of this format made it.
const MaxObservations = 2000

// MaxRecordBytes bounds a record's file: MaxObservations observations take
// well under a megabyte, so anything larger is not a record (the lane's
// reputation fetch refuses a larger file too).
const MaxRecordBytes = 2 << 20

// Observation is one created pod's evidence.
type Observation struct {
	At         time.Time `json:"at"`         // when the attempt ended
	GPU        string    `json:"gpu"`        // RunPod GPU type id
	DataCenter string    `json:"dataCenter"` // where RunPod placed the pod
	// Machine is RunPod's id of the machine the pod ran on (its machineId);
	// "" in records written before attempts carried it, or when unknown.
	Machine      string     `json:"machine,omitempty"`
	Cloud        string     `json:"cloud,omitempty"`  // SECURE or COMMUNITY
	Driver       string     `json:"driver,omitempty"` // the host's CUDA level, when known
	OK           bool       `json:"ok"`               // the proof passed and the runner came online
	Seconds      int64      `json:"seconds"`          // paid seconds of the attempt
	PricePerHour money.Rate `json:"pricePerHour,omitempty"`
}

// Record is the evidence a lane keeps between runs, oldest first.
type Record struct {
	Version      int           `json:"version"`
	Observations []Observation `json:"observations"`
}

// Add appends observations, keeps the record in time order and drops the
// oldest beyond MaxObservations.
func (r *Record) Add(obs ...Observation) {
	r.Version = RecordVersion
	r.Observations = append(r.Observations, obs...)
	slices.SortStableFunc(r.Observations, func(a, b Observation) int { return a.At.Compare(b.At) })
	if n := len(r.Observations) - MaxObservations; n > 0 {
		r.Observations = slices.Delete(r.Observations, 0, n)
	}
}

// maxMachineID bounds a machine id: RunPod's are a dozen characters.
const maxMachineID = 64

// ValidMachineID reports whether id looks like RunPod's machine id: 1 to 64
// letters, digits, '.', '_' or '-'. A machine id is printed in the lane's
// log and compared, never run: anything else (a newline, a workflow command)
// is not one.
func ValidMachineID(id string) bool {
	if id == "" || len(id) > maxMachineID {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Parse reads a record and checks every observation, naming the first bad
// one and what is expected of it.
func Parse(b []byte) (Record, error) {
	if len(b) > MaxRecordBytes {
		return Record{}, fmt.Errorf("reputation record: %d bytes; want at most %d (a record of %d observations)", len(b), MaxRecordBytes, MaxObservations)
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("reputation record: %v; want a JSON object {\"version\": %d, \"observations\": [...]}", err, RecordVersion)
	}
	if r.Version != RecordVersion {
		return Record{}, fmt.Errorf("reputation record: version %d; want %d", r.Version, RecordVersion)
	}
	if len(r.Observations) > MaxObservations {
		return Record{}, fmt.Errorf("reputation record: %d observations; want at most %d", len(r.Observations), MaxObservations)
	}
	for i, o := range r.Observations {
		switch {
		case o.At.IsZero():
			return Record{}, fmt.Errorf("reputation record: observation %d: \"at\" is missing; want an RFC 3339 time", i)
		case strings.TrimSpace(o.GPU) == "":
			return Record{}, fmt.Errorf("reputation record: observation %d: \"gpu\" is empty; want a RunPod GPU type id", i)
		case strings.TrimSpace(o.DataCenter) == "":
			return Record{}, fmt.Errorf("reputation record: observation %d (%s): \"dataCenter\" is empty; want a data-center id such as EU-RO-1", i, o.GPU)
		case o.Seconds < 0:
			return Record{}, fmt.Errorf("reputation record: observation %d (%s in %s): seconds %d; want 0 or more", i, o.GPU, o.DataCenter, o.Seconds)
		case o.PricePerHour < 0:
			return Record{}, fmt.Errorf("reputation record: observation %d (%s in %s): pricePerHour %v; want 0 or more", i, o.GPU, o.DataCenter, o.PricePerHour.Dollars())
		case o.Machine != "" && !ValidMachineID(o.Machine):
			return Record{}, fmt.Errorf("reputation record: observation %d (%s in %s): machine %q; want RunPod's machine id (letters, digits, '.', '_' or '-', at most %d)",
				i, o.GPU, o.DataCenter, o.Machine, maxMachineID)
		}
	}
	slices.SortStableFunc(r.Observations, func(a, b Observation) int { return a.At.Compare(b.At) })
	return r, nil
}

// Marshal writes the record as indented JSON.
func (r Record) Marshal() ([]byte, error) {
	r.Version = RecordVersion
	if r.Observations == nil {
		r.Observations = []Observation{}
	}
	return json.MarshalIndent(r, "", "  ")
}
