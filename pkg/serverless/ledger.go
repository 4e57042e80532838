package serverless

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"
)

// Caps bound the ledger's reservations, in US cents.
type Caps struct {
	MinStage int64 `json:"min_stage_cents"` // every reservation is at least this
	MaxStage int64 `json:"max_stage_cents"` // no stage may reserve more
	Total    int64 `json:"total_cents"`     // all reservations of the ledger together
}

// DefaultCaps are the seed's: at least $1 and at most $3 a stage, $10 in all.
var DefaultCaps = Caps{MinStage: 100, MaxStage: 300, Total: 1000}

// Validate refuses caps that cannot hold together.
func (c Caps) Validate() error {
	switch {
	case c.MinStage <= 0:
		return fmt.Errorf("ledger caps: min stage %d cents: want > 0", c.MinStage)
	case c.MaxStage < c.MinStage:
		return fmt.Errorf("ledger caps: max stage %d cents is below the min stage %d cents", c.MaxStage, c.MinStage)
	case c.Total < c.MaxStage:
		return fmt.Errorf("ledger caps: total %d cents is below the max stage %d cents", c.Total, c.MaxStage)
	}
	return nil
}

// Reservation is one stage's budget, kept forever: reservations are never refunded.
type Reservation struct {
	Stage   string    `json:"stage"` // setup or job
	Attempt string    `json:"attempt"`
	Cents   int64     `json:"cents"`
	At      time.Time `json:"at"`
	Basis   string    `json:"basis,omitempty"` // how the amount was computed
}

// Ledger is the budget file shared by every attempt.
type Ledger struct {
	Version      int           `json:"version"`
	Reservations []Reservation `json:"reservations"`
}

// TotalCents is what all reservations add up to.
func (l *Ledger) TotalCents() int64 {
	var t int64
	for _, r := range l.Reservations {
		t += r.Cents
	}
	return t
}

// ErrBudget is matched by every refusal of a reservation.
var ErrBudget = errors.New("budget refused")

// LedgerFile is a ledger on disk with its lock settings.
type LedgerFile struct {
	Path     string
	Caps     Caps
	LockWait time.Duration       // how long to wait for another process's lock
	Sleep    func(time.Duration) // nil means time.Sleep
}

// Reserve adds r under the file lock and writes the ledger atomically. It
// raises r to the minimum stage amount, and refuses (ErrBudget) an amount
// above the stage cap, a total above the ledger cap, or a second reservation
// of the same stage for the same attempt.
func (f LedgerFile) Reserve(r Reservation) (*Ledger, error) {
	if err := f.Caps.Validate(); err != nil {
		return nil, err
	}
	sleep := f.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	unlock, err := lockFile(f.Path, f.LockWait, sleep)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer unlock()
	l, err := readLedger(f.Path)
	if err != nil {
		return nil, err
	}
	r.Cents = max(r.Cents, f.Caps.MinStage)
	for _, prev := range l.Reservations {
		if prev.Stage == r.Stage && prev.Attempt == r.Attempt {
			return nil, fmt.Errorf("%w: stage %s of attempt %s already reserved %s; a stage never runs twice", ErrBudget, r.Stage, r.Attempt, Dollars(prev.Cents))
		}
	}
	if r.Cents > f.Caps.MaxStage {
		return nil, fmt.Errorf("%w: stage %s needs %s, above the per-stage cap of %s", ErrBudget, r.Stage, Dollars(r.Cents), Dollars(f.Caps.MaxStage))
	}
	if total := l.TotalCents() + r.Cents; total > f.Caps.Total {
		return nil, fmt.Errorf("%w: stage %s needs %s; the ledger %s already holds %s of the %s total cap", ErrBudget, r.Stage, Dollars(r.Cents), f.Path, Dollars(l.TotalCents()), Dollars(f.Caps.Total))
	}
	l.Reservations = append(l.Reservations, r)
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(f.Path, append(data, '\n'), false); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return l, nil
}

// ReadLedger reads the ledger at path; a missing file is an empty ledger.
func ReadLedger(path string) (*Ledger, error) { return readLedger(path) }

func readLedger(path string) (*Ledger, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Ledger{Version: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	var l Ledger
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("ledger %s: not a ledger (%v); fix or move it by hand, never reset it silently", path, err)
	}
	for i, r := range l.Reservations {
		if r.Cents < 0 {
			return nil, fmt.Errorf("ledger %s: reservation %d has negative cents %d", path, i, r.Cents)
		}
	}
	return &l, nil
}

// EstimateCents is the cost of d at ceilingPerHour dollars an hour, plus a
// one-cent allowance (ephemeral disk and rounding), rounded up to a cent.
func EstimateCents(d time.Duration, ceilingPerHour float64) int64 {
	cents := ceilingPerHour * 100 * d.Seconds() / 3600
	return int64(math.Ceil(cents-1e-9)) + 1
}

// ReservationCents is a stage's reservation: the estimate plus $1, because
// worker initialisation can bill before (or without) any job.
func ReservationCents(d time.Duration, ceilingPerHour float64) int64 {
	return EstimateCents(d, ceilingPerHour) + 100
}

// Dollars formats cents as "$1.36".
func Dollars(cents int64) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }
