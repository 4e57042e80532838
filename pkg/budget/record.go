package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
)

// RecordFile is the spend record's file name, beside the cost history's reports.
const RecordFile = "spend.json"

// RecordVersion is the record format this package writes and reads.
const RecordVersion = 1

// maxRecordBytes bounds a record file: a year of days is a few kilobytes.
const maxRecordBytes = 1 << 20

// Record is the cost history's spend per UTC day, the budget's fallback when
// RunPod's billing cannot be read: the billed amount where the history
// reconciled the day with RunPod's billing, else its estimate.
type Record struct {
	Version   int       `json:"version"`
	WrittenAt time.Time `json:"writtenAt"`
	// Since and Until are the UTC days the history covered (YYYY-MM-DD,
	// inclusive): spend on any other day is not in the record.
	Since string     `json:"since"`
	Until string     `json:"until"`
	Days  []DaySpend `json:"days"`
}

// DaySpend is one day's spend.
type DaySpend struct {
	Day string       `json:"day"` // YYYY-MM-DD, UTC
	USD money.Amount `json:"usd"`
	// Billed is true when USD is RunPod's bill, false for the history's estimate.
	Billed bool `json:"billed"`
	// Unknown counts pods and jobs of the day whose cost the evidence does
	// not show: USD is then at least what was spent.
	Unknown int `json:"unknown,omitempty"`
}

// Marshal writes the record as indented JSON.
func (r Record) Marshal() ([]byte, error) {
	r.Version = RecordVersion
	if r.Days == nil {
		r.Days = []DaySpend{}
	}
	return json.MarshalIndent(r, "", "  ")
}

// ParseRecord reads a record and checks every day, naming the first bad one.
func ParseRecord(b []byte) (*Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("spend record: %v; want {\"version\": %d, \"writtenAt\": ..., \"days\": [...]}", err, RecordVersion)
	}
	if r.Version != RecordVersion {
		return nil, fmt.Errorf("spend record: version %d; want %d", r.Version, RecordVersion)
	}
	if r.WrittenAt.IsZero() {
		return nil, fmt.Errorf("spend record: \"writtenAt\" is missing; want an RFC 3339 time")
	}
	since, err1 := time.Parse(time.DateOnly, r.Since)
	until, err2 := time.Parse(time.DateOnly, r.Until)
	if err1 != nil || err2 != nil || until.Before(since) {
		return nil, fmt.Errorf("spend record: since %q, until %q; want the covered days as YYYY-MM-DD, since not after until", r.Since, r.Until)
	}
	for i, d := range r.Days {
		if _, err := time.Parse(time.DateOnly, d.Day); err != nil {
			return nil, fmt.Errorf("spend record: day %d: %q; want YYYY-MM-DD", i, d.Day)
		}
		if d.USD < 0 || d.Unknown < 0 {
			return nil, fmt.Errorf("spend record: day %s: usd %v, unknown %d; want amounts of 0 or more", d.Day, d.USD.Dollars(), d.Unknown)
		}
	}
	return &r, nil
}

// ReadRecord reads a record file.
func ReadRecord(path string) (*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spend record: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxRecordBytes+1)); err != nil {
		return nil, fmt.Errorf("spend record: %w", err)
	}
	if buf.Len() > maxRecordBytes {
		return nil, fmt.Errorf("spend record: more than %d bytes", maxRecordBytes)
	}
	return ParseRecord(buf.Bytes())
}

// Spent is the record's spend on now's UTC day and month, a lower bound:
// note says what it leaves out (days it does not cover, costs its evidence
// does not show) and how old it is.
func (r *Record) Spent(now time.Time) (today, month money.Amount, note string) {
	day := now.UTC().Format(time.DateOnly)
	monthStart := day[:len("2006-01-")] + "01"
	unknown := 0
	for _, d := range r.Days {
		if d.Day < monthStart || d.Day > day {
			continue
		}
		month += d.USD
		unknown += d.Unknown
		if d.Day == day {
			today += d.USD
		}
	}
	note = fmt.Sprintf("%s through %s, %s old", r.Since, r.Until, now.Sub(r.WrittenAt).Round(time.Minute))
	var left []string
	if r.Until < day {
		left = append(left, "spend after "+r.Until)
	}
	if r.Since > monthStart {
		left = append(left, "spend of the month before "+r.Since)
	}
	if unknown > 0 {
		left = append(left, fmt.Sprintf("%d cost(s) its evidence does not show", unknown))
	}
	if len(left) > 0 {
		note += "; not in it: " + strings.Join(left, ", ")
	}
	return today, month, note
}
