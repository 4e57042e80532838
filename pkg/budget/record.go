package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"time"
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
	Version   int        `json:"version"`
	WrittenAt time.Time  `json:"writtenAt"`
	Days      []DaySpend `json:"days"`
}

// DaySpend is one day's spend.
type DaySpend struct {
	Day string  `json:"day"` // YYYY-MM-DD, UTC
	USD float64 `json:"usd"`
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
	for i, d := range r.Days {
		if _, err := time.Parse(time.DateOnly, d.Day); err != nil {
			return nil, fmt.Errorf("spend record: day %d: %q; want YYYY-MM-DD", i, d.Day)
		}
		if math.IsNaN(d.USD) || math.IsInf(d.USD, 0) || d.USD < 0 || d.Unknown < 0 {
			return nil, fmt.Errorf("spend record: day %s: usd %v, unknown %d; want amounts of 0 or more", d.Day, d.USD, d.Unknown)
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

// Spent is the record's spend on now's UTC day and month, and its age. A day
// with unknown amounts is refused: the budget never counts unknown as zero.
func (r *Record) Spent(now time.Time) (today, month float64, age time.Duration, err error) {
	day := now.UTC().Format(time.DateOnly)
	monthPrefix := day[:len("2006-01-")]
	for _, d := range r.Days {
		if len(d.Day) < len(monthPrefix) || d.Day[:len(monthPrefix)] != monthPrefix {
			continue
		}
		if d.Unknown > 0 {
			return 0, 0, 0, fmt.Errorf("%s holds %d pod(s) or job(s) of unknown cost", d.Day, d.Unknown)
		}
		month += d.USD
		if d.Day == day {
			today += d.USD
		}
	}
	return today, month, now.Sub(r.WrittenAt), nil
}
