package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// BillingFile is where a collection keeps what RunPod billed for its range,
// so that an offline regeneration reconciles the same figures.
const BillingFile = "billing.json"

// BillingSchema names the shape of BillingFile.
const BillingSchema = "runpod-gpu-billing/v1"

// billingSpill is how far past the range's last day billing is read: a run
// created on the last day may bill after midnight, and its pods are the
// run's, whichever day they billed.
const billingSpill = 24 * time.Hour

// BillingSource reads RunPod's billing (the runpod client does, through the
// shared request policy).
type BillingSource interface {
	PodBilling(ctx context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error)
	ServerlessBilling(ctx context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error)
}

// Resource kinds a bill names.
const (
	KindPod      = "pod"
	KindEndpoint = "endpoint" // a Serverless endpoint
	// KindNetworkVolume is a network volume's storage (volume.go): billed
	// by the hour whether or not a pod mounts it.
	KindNetworkVolume = "network-volume"
)

// BilledCharge is what RunPod billed one pod or Serverless endpoint in one
// bucket.
type BilledCharge struct {
	Kind  string       `json:"kind"`
	ID    string       `json:"id"`
	Start time.Time    `json:"start"`
	End   time.Time    `json:"end"`
	USD   money.Amount `json:"usd"`
}

// day is the UTC date the charge's bucket starts on.
func (c BilledCharge) day() string { return c.Start.UTC().Format(time.DateOnly) }

// SavedBilling is BillingFile: RunPod's billing for [Start, End), as read at
// ReadAt. Error says why it could not be read; the charges are then empty.
type SavedBilling struct {
	Schema  string         `json:"schema"`
	Start   time.Time      `json:"start"`
	End     time.Time      `json:"end"`
	ReadAt  time.Time      `json:"readAt"`
	Error   string         `json:"error,omitempty"`
	Charges []BilledCharge `json:"charges"`
}

// billingWindow is the window read for a range: its days and one more.
func billingWindow(rng Range) (start, end time.Time) {
	return rng.Since.UTC(), rng.end().Add(billingSpill).UTC()
}

// FetchBilling reads pod, Serverless and network-volume billing for rng (and the day after
// it) in day buckets. A failure is kept in the result, not returned: the
// report then says why it is not reconciled.
func FetchBilling(ctx context.Context, src BillingSource, rng Range, now time.Time) SavedBilling {
	start, end := billingWindow(rng)
	b := SavedBilling{Schema: BillingSchema, Start: start, End: end, ReadAt: now.UTC(), Charges: []BilledCharge{}}
	q := runpod.BillingQuery{Start: start, End: end, Bucket: runpod.BucketDay}
	for _, route := range []struct {
		kind string
		read func(context.Context, runpod.BillingQuery) ([]runpod.BillingRecord, error)
	}{{KindPod, src.PodBilling}, {KindEndpoint, src.ServerlessBilling}} {
		records, err := route.read(ctx, q)
		if err != nil {
			b.Error, b.Charges = err.Error(), []BilledCharge{}
			return b
		}
		for _, r := range records {
			b.Charges = append(b.Charges, BilledCharge{Kind: route.kind, ID: r.ID, Start: r.Start, End: r.End, USD: money.FromDollars(r.Total)})
		}
	}
	if err := fetchVolumeBilling(ctx, src, q, &b); err != nil { // volume.go
		b.Error, b.Charges = err.Error(), []BilledCharge{}
	}
	return b
}

// writeBilling saves b into dir as BillingFile.
func writeBilling(dir string, b SavedBilling) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, BillingFile), append(data, '\n'))
}

// readBilling reads dir's BillingFile; ok is false when there is none.
func readBilling(dir string) (b SavedBilling, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, BillingFile))
	if errors.Is(err, fs.ErrNotExist) {
		return SavedBilling{}, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &b)
	}
	switch {
	case err != nil:
		return SavedBilling{}, false, fmt.Errorf("%s: %w", BillingFile, err)
	case b.Schema != BillingSchema:
		return SavedBilling{}, false, fmt.Errorf("%s: schema %q; want %q", BillingFile, b.Schema, BillingSchema)
	}
	slices.SortFunc(b.Charges, func(x, y BilledCharge) int { return x.Start.Compare(y.Start) })
	return b, true, nil
}

// covers reports whether the saved billing was read for rng's window.
func (b SavedBilling) covers(rng *Range) bool {
	if rng == nil {
		return true
	}
	start, end := billingWindow(*rng)
	return !b.Start.After(start) && !b.End.Before(end)
}

// saveBilling reads the billing of o.Range and saves it into dir.
func saveBilling(ctx context.Context, o Options, dir string, logf func(string, ...any)) error {
	now := clock.Clock(clock.Wall{})
	if o.Clock != nil {
		now = o.Clock
	}
	b := FetchBilling(ctx, o.Billing, *o.Range, now.Now())
	if b.Error != "" {
		logf("billing %s: unreadable (%s): the report is not reconciled", o.Range, b.Error)
	} else {
		logf("billing %s: %d charge(s) read", o.Range, len(b.Charges))
	}
	return writeBilling(dir, b)
}

// reconcileSaved reconciles report with the billing saved in dir when it
// covers o.Range, and returns the warnings to print.
func reconcileSaved(report *Report, dir string, o Options) ([]string, error) {
	b, ok, err := readBilling(dir)
	switch {
	case err != nil:
		report.Warnings = append(report.Warnings, fmt.Sprintf("billing not reconciled: %v", err))
		return nil, nil
	case !ok || !b.covers(o.Range):
		return nil, nil // no key given: the report says nothing of billing
	}
	var others []Attempt
	if len(b.Charges) > 0 {
		all, err := Summarize(dir, nil)
		if err != nil {
			return nil, err
		}
		others = all.Attempts
	}
	report.Billing = Reconcile(report, b, others, o.DriftThreshold)
	if u := report.Billing.Unreadable; u != "" {
		return []string{"RunPod's billing could not be read, so the estimates are not reconciled: " + u}, nil
	}
	return report.Billing.Warnings, nil
}
