package serverless

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// ReceiptVersion is the receipt file's format version.
const ReceiptVersion = 1

// ResourceState is how far the lane got with one resource.
type ResourceState string

// Resource states, in the order a resource goes through them.
const (
	// StateIntent is written before the create request is sent.
	StateIntent ResourceState = "intent"
	// StateCreated means the id is known (from the answer or reconciled by name).
	StateCreated ResourceState = "created"
	// StateUnresolved means the create's answer was lost and the name was not
	// found: the resource may still appear. It blocks new jobs until cleanup resolves it.
	StateUnresolved ResourceState = "unresolved"
	// StateDeleted means a fresh listing confirmed it gone.
	StateDeleted ResourceState = "deleted"
)

// Resource is one template or endpoint the lane owns.
type Resource struct {
	Name     string        `json:"name"`
	State    ResourceState `json:"state,omitempty"`
	ID       string        `json:"id,omitempty"`
	IntentAt time.Time     `json:"intent_at,omitzero"`
	Detail   string        `json:"detail,omitempty"`
}

// Pending reports whether the resource may exist and is not confirmed deleted.
func (r Resource) Pending() bool {
	return r.State == StateIntent || r.State == StateCreated || r.State == StateUnresolved
}

// JobRecord is the one job of an attempt.
type JobRecord struct {
	ID          string    `json:"id,omitempty"`
	SubmittedAt time.Time `json:"submitted_at,omitzero"`
	Status      string    `json:"status,omitempty"`
	// Intent is set before the submission; a lost /run answer leaves it set
	// without an id, and the attempt never submits again.
	Intent        bool   `json:"intent"`
	PayloadSHA256 string `json:"payload_sha256,omitempty"`
	// CancelledAt is when the lane cancelled the job (its one cancellation).
	CancelledAt time.Time `json:"cancelled_at,omitzero"`
}

// Receipt is the ownership record of one attempt: what it intended to create,
// what it created, and whether cleanup confirmed everything gone.
type Receipt struct {
	Version    int       `json:"version"`
	Attempt    string    `json:"attempt"` // the unique name prefix of its resources
	Repository string    `json:"repository,omitempty"`
	RunID      int64     `json:"run_id,omitempty"`
	RunAttempt int       `json:"run_attempt,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	// Deadline is the absolute cleanup deadline, fixed at setup; nothing extends it.
	Deadline time.Time `json:"deadline"`
	// Ledger is the budget ledger the attempt began in; cleanup closes the
	// attempt there once it confirms everything gone.
	Ledger string `json:"ledger,omitempty"`
	// Asked is what setup asked for; every later read is compared with it.
	Asked            *Asked     `json:"asked,omitempty"`
	Template         Resource   `json:"template"`
	Endpoint         Resource   `json:"endpoint"`
	Job              *JobRecord `json:"job,omitempty"`
	CleanupConfirmed bool       `json:"cleanup_confirmed"`
	Notes            []string   `json:"notes,omitempty"`
}

// Created reports whether any create of the attempt was sent: only then can
// it have cost anything.
func (r *Receipt) Created() bool {
	return r.Template.State != "" || r.Endpoint.State != "" || r.Template.ID != "" || r.Endpoint.ID != ""
}

// Unresolved reports whether a create may have happened without the lane
// knowing its id.
func (r *Receipt) Unresolved() bool {
	return r.Template.State == StateUnresolved || r.Endpoint.State == StateUnresolved ||
		(r.Template.State == StateIntent && r.Template.ID == "") || (r.Endpoint.State == StateIntent && r.Endpoint.ID == "")
}

// ErrReceiptExists is returned by CreateReceipt for a file that already exists.
var ErrReceiptExists = errors.New("receipt already exists")

// CreateReceipt writes a new receipt; an existing file is never overwritten
// (each attempt needs a new receipt file).
func CreateReceipt(file string, r *Receipt) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(file, append(data, '\n'), true); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%w: %s belongs to an earlier attempt; use a new receipt file (and run cleanup with the old one)", ErrReceiptExists, file)
		}
		return fmt.Errorf("receipt %s: %w", file, err)
	}
	return nil
}

// LoadReceipt reads a receipt.
func LoadReceipt(file string) (*Receipt, error) {
	r, err := readJSONFile[Receipt](file, "receipt", "a receipt")
	if err != nil {
		return nil, err
	}
	if r.Version != ReceiptVersion || r.Attempt == "" {
		return nil, fmt.Errorf("receipt %s: version %d attempt %q: want version %d and an attempt name", file, r.Version, r.Attempt, ReceiptVersion)
	}
	return r, nil
}

// readJSONFile reads file's JSON into a T; what names the file in errors
// ("receipt: …") and kind is what a file that does not decode is not.
func readJSONFile[T any](file, what, kind string) (*T, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s %s: not %s: %v", what, file, kind, err)
	}
	return &v, nil
}

// SaveReceipt atomically updates the receipt of the same attempt; a file that
// holds another attempt's receipt is left alone and reported.
func SaveReceipt(file string, r *Receipt) error {
	old, err := LoadReceipt(file)
	if err != nil {
		return err
	}
	if old.Attempt != r.Attempt {
		return fmt.Errorf("receipt %s holds attempt %q, not %q: it is never overwritten", file, old.Attempt, r.Attempt)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(file, append(data, '\n'), false)
}
