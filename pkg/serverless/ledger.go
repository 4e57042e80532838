package serverless

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
)

// MaxCents bounds any one amount the ledger holds or is asked for, in the
// cents it stores (spend.LedgerMax): with at most MaxReservations of them no
// sum can overflow.
const (
	MaxCents        = money.WholeCents(spend.LedgerMax / money.Cent)
	MaxReservations = 100_000
)

// Stages a reservation can be for.
const (
	StageSetup = "setup"
	StageJob   = "job"
)

// Reservation is one stage's budget, kept forever: reservations are never refunded.
type Reservation struct {
	Stage   string           `json:"stage"` // setup or job
	Attempt string           `json:"attempt"`
	Cents   money.WholeCents `json:"cents"`
	At      time.Time        `json:"at"`
	Basis   string           `json:"basis,omitempty"` // how the amount was computed
}

// AttemptEntry is one attempt the ledger paid for. An attempt is open from
// setup until its cleanup is confirmed; while one is open, no other attempt
// of the ledger may begin (one attempt at a time).
type AttemptEntry struct {
	Name     string    `json:"name"`
	Receipt  string    `json:"receipt,omitempty"` // where its receipt was, for the message that names it
	OpenedAt time.Time `json:"opened_at"`
	Deadline time.Time `json:"deadline"` // the attempt's absolute cleanup deadline
	ClosedAt time.Time `json:"closed_at,omitzero"`
	Note     string    `json:"note,omitempty"` // how it was closed
}

// Open reports whether the attempt's cleanup is not confirmed yet.
func (a AttemptEntry) Open() bool { return a.ClosedAt.IsZero() }

// LedgerVersion is the ledger file's format: version 2 carries a checksum.
const LedgerVersion = 2

// Ledger is the budget file shared by every attempt of a repository (CI) or
// of a developer (the CLI).
type Ledger struct {
	Version      int            `json:"version"`
	Reservations []Reservation  `json:"reservations"`
	Attempts     []AttemptEntry `json:"attempts"`
	// Checksum is the SHA-256 of the ledger's content as the lane last
	// wrote it: a file edited by anything else is refused (ErrTampered).
	Checksum string `json:"checksum"`
}

// TotalCents is what all reservations add up to. A ledger read through
// ReadLedger has been checked to sum without overflow.
func (l *Ledger) TotalCents() money.WholeCents {
	t, _ := l.total()
	return t
}

// total adds the reservations, refusing a sum that would overflow.
func (l *Ledger) total() (money.WholeCents, error) {
	var t money.WholeCents
	for _, r := range l.Reservations {
		next, err := addCents(t, r.Cents)
		if err != nil {
			return 0, err
		}
		t = next
	}
	return t, nil
}

// addCents adds two amounts within MaxCents·MaxReservations, never wrapping.
func addCents(a, b money.WholeCents) (money.WholeCents, error) {
	if a < 0 || b < 0 || b > math.MaxInt64-a {
		return 0, fmt.Errorf("ledger sum %d + %d cents overflows", a, b)
	}
	return a + b, nil
}

// OpenAttempts are the attempts whose cleanup is not confirmed.
func (l *Ledger) OpenAttempts() []AttemptEntry {
	var out []AttemptEntry
	for _, a := range l.Attempts {
		if a.Open() {
			out = append(out, a)
		}
	}
	return out
}

// content is what the checksum covers: everything but the checksum.
func (l *Ledger) content() []byte {
	data, _ := json.Marshal(struct {
		Version      int            `json:"version"`
		Reservations []Reservation  `json:"reservations"`
		Attempts     []AttemptEntry `json:"attempts"`
	}{l.Version, l.Reservations, l.Attempts})
	sum := sha256.Sum256(data)
	return []byte(hex.EncodeToString(sum[:]))
}

// seal sets the checksum over the current content.
func (l *Ledger) seal() { l.Version, l.Checksum = LedgerVersion, string(l.content()) }

// ErrBudget is matched by every refusal of a reservation.
var ErrBudget = spend.ErrLedgerBudget

// ErrTampered is matched when a ledger's checksum or structure says it was
// edited outside the lane; the lane never resets or repairs it by itself.
var ErrTampered = errors.New("ledger refused as edited outside the lane")

// ErrAttemptOpen is matched when an earlier attempt of the ledger is still
// open: a new budgeted attempt waits until its cleanup is confirmed.
var ErrAttemptOpen = errors.New("an earlier attempt is still open")

// LedgerFile is a ledger on disk with its lock settings.
type LedgerFile struct {
	Path     string
	Caps     spend.LedgerCaps
	LockWait time.Duration       // how long to wait for another process's lock
	Sleep    func(time.Duration) // nil means time.Sleep
}

// update reads the ledger under the file lock, lets change edit it, and
// writes it back atomically, sealed, when change succeeds.
func (f LedgerFile) update(change func(*Ledger) error) (*Ledger, error) {
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
	if err := change(l); err != nil {
		return nil, err
	}
	l.seal()
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(f.Path, append(data, '\n'), false); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return l, nil
}

// Reserve adds r, for an attempt Begin opened in this ledger, under the file
// lock and writes the ledger atomically. It raises r to the minimum stage
// amount, and refuses (ErrBudget) an amount above the stage cap, a total
// above the ledger cap, or a second reservation of the same stage for the
// same attempt.
func (f LedgerFile) Reserve(r Reservation) (*Ledger, error) {
	return f.update(func(l *Ledger) error {
		if !slices.ContainsFunc(l.Attempts, func(a AttemptEntry) bool { return a.Name == r.Attempt && a.Open() }) {
			return fmt.Errorf("%w: attempt %s is not open in the ledger %s: use the ledger its setup used", ErrBudget, r.Attempt, f.Path)
		}
		return f.reserve(l, r)
	})
}

func (f LedgerFile) reserve(l *Ledger, r Reservation) error {
	if err := f.check(l, r); err != nil {
		return err
	}
	r.Cents = f.Caps.Stage(r.Cents.Amount()).CentsUp()
	l.Reservations = append(l.Reservations, r)
	return nil
}

// check says whether l can take rs as it stands: the checks of Reserve,
// without writing. The caps are the spend room's (spend.LedgerCaps.Admit);
// a stage reserved twice is the ledger's own refusal.
func (f LedgerFile) check(l *Ledger, rs ...Reservation) error {
	held := l.TotalCents().Amount()
	var pending money.Amount
	for _, r := range rs {
		for _, prev := range l.Reservations {
			if prev.Stage == r.Stage && prev.Attempt == r.Attempt {
				return fmt.Errorf("%w: stage %s of attempt %s already reserved %s; a stage never runs twice", ErrBudget, r.Stage, r.Attempt, prev.Cents.Amount())
			}
		}
		asked := min(max(r.Cents, 0), MaxCents+1).Amount()
		if err := f.Caps.Admit(r.Stage, asked, held, pending, f.Path); err != nil {
			return err
		}
		pending += f.Caps.Stage(asked)
	}
	return nil
}

// Covers says whether the ledger could take every one of rs now, without
// reserving anything: before setup spends, the lane asks it for both stages
// of the attempt, so that a job stage the ledger cannot cover creates nothing.
func (f LedgerFile) Covers(rs ...Reservation) error {
	if err := f.Caps.Validate(); err != nil {
		return err
	}
	l, err := readLedger(f.Path)
	if err != nil {
		return err
	}
	return f.check(l, rs...)
}

// AttemptStart is a new attempt's entry and its first reservation.
type AttemptStart struct {
	Entry AttemptEntry
	Setup Reservation   // reserved now
	Later []Reservation // reserved later (the job): they must fit too, or nothing is reserved
	// Listed reports whether an attempt still has a template or endpoint in a
	// fresh listing; nil means the listing is unknown.
	Listed func(attempt string) bool
	Now    time.Time
}

// Begin opens a new attempt under the file lock: it refuses (ErrAttemptOpen,
// naming it) while an earlier attempt is open — unless that attempt is past
// its cleanup deadline and a fresh listing shows nothing of it, which closes
// it — and refuses (ErrBudget) when the setup reservation and the later ones
// would not all fit. Only then does it reserve the setup stage.
func (f LedgerFile) Begin(s AttemptStart) (*Ledger, error) {
	return f.update(func(l *Ledger) error {
		for i := range l.Attempts {
			a := &l.Attempts[i]
			switch {
			case !a.Open():
				continue
			case a.Name == s.Entry.Name:
				return fmt.Errorf("%w: attempt %s already began in this ledger", ErrAttemptOpen, a.Name)
			case s.Listed != nil && !s.Listed(a.Name) && s.Now.After(a.Deadline):
				a.ClosedAt, a.Note = s.Now, "nothing of it listed after its cleanup deadline (closed by "+s.Entry.Name+")"
				continue
			}
			where := ""
			if a.Receipt != "" {
				where = fmt.Sprintf(" (receipt %s)", a.Receipt)
			}
			return fmt.Errorf("%w: attempt %s%s has no confirmed cleanup: run cleanup with its receipt, or wait past its deadline %s for the reaper; one attempt at a time",
				ErrAttemptOpen, a.Name, where, a.Deadline.UTC().Format(time.RFC3339))
		}
		if err := f.check(l, append([]Reservation{s.Setup}, s.Later...)...); err != nil {
			return err
		}
		l.Attempts = append(l.Attempts, s.Entry)
		return f.reserve(l, s.Setup)
	})
}

// Close records that the attempt's cleanup was confirmed. An attempt the
// ledger does not hold is not an error (a ledger that never saw it, such as
// one of an earlier CI run): there is nothing to close.
func (f LedgerFile) Close(attempt string, at time.Time, note string) error {
	_, err := f.update(func(l *Ledger) error {
		for i := range l.Attempts {
			if a := &l.Attempts[i]; a.Name == attempt && a.Open() {
				a.ClosedAt, a.Note = at, note
			}
		}
		return nil
	})
	return err
}

// ReadLedger reads the ledger at path; a missing file is an empty ledger. A
// ledger whose checksum or structure is wrong is refused (ErrTampered).
func ReadLedger(path string) (*Ledger, error) { return readLedger(path) }

// Reseal accepts a ledger edited on purpose (an invoice reconciliation, say):
// it checks its structure, then writes its checksum. It returns the ledger as
// it now stands.
func (f LedgerFile) Reseal() (*Ledger, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	l, err := decodeLedger(f.Path, data)
	if err != nil {
		return nil, err
	}
	if err := l.validate(f.Path); err != nil {
		return nil, err
	}
	l.seal()
	out, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	return l, writeAtomic(f.Path, append(out, '\n'), false)
}

func readLedger(path string) (*Ledger, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Ledger{Version: LedgerVersion, Reservations: []Reservation{}, Attempts: []AttemptEntry{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	l, err := decodeLedger(path, data)
	if err != nil {
		return nil, err
	}
	if l.Version != LedgerVersion {
		return nil, fmt.Errorf("%w: ledger %s is version %d, want %d (with a checksum); fix or move it by hand, never reset it silently", ErrTampered, path, l.Version, LedgerVersion)
	}
	if l.Checksum != string(l.content()) {
		return nil, fmt.Errorf("%w: ledger %s does not match its checksum: it was edited after the lane wrote it; if you edited it on purpose, accept it with `runpod-gpu serverless ledger --reseal`", ErrTampered, path)
	}
	if err := l.validate(path); err != nil {
		return nil, err
	}
	return l, nil
}

// decodeLedger parses a ledger file strictly: unknown fields are refused.
func decodeLedger(path string, data []byte) (*Ledger, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var l Ledger
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: ledger %s: not a ledger (%v); fix or move it by hand, never reset it silently", ErrTampered, path, err)
	}
	return &l, nil
}

// validate refuses a ledger that no sequence of the lane's writes could
// have produced: amounts out of bounds or summing past the bound, unknown
// stages, a stage reserved twice, a reservation for an attempt never begun.
func (l *Ledger) validate(path string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: ledger %s: %s", ErrTampered, path, fmt.Sprintf(format, args...))
	}
	if len(l.Reservations) > MaxReservations || len(l.Attempts) > MaxReservations {
		return bad("%d reservations and %d attempts: more than the bound of %d", len(l.Reservations), len(l.Attempts), MaxReservations)
	}
	seen := map[[2]string]bool{}
	for i, r := range l.Reservations {
		switch {
		case r.Cents < 0 || r.Cents > MaxCents:
			return bad("reservation %d has %d cents, want 0 to %d", i, r.Cents, int64(MaxCents))
		case r.Stage != StageSetup && r.Stage != StageJob:
			return bad("reservation %d has stage %q, want setup or job", i, r.Stage)
		case seen[[2]string{r.Stage, r.Attempt}]:
			return bad("stage %s of attempt %s is reserved twice", r.Stage, r.Attempt)
		}
		seen[[2]string{r.Stage, r.Attempt}] = true
	}
	if _, err := l.total(); err != nil {
		return bad("%v", err)
	}
	names := map[string]bool{}
	for i, a := range l.Attempts {
		if a.Name == "" || names[a.Name] {
			return bad("attempt %d is unnamed or listed twice (%q)", i, a.Name)
		}
		names[a.Name] = true
	}
	for i, r := range l.Reservations {
		if !names[r.Attempt] {
			return bad("reservation %d is for attempt %q, which the ledger never began", i, r.Attempt)
		}
	}
	return nil
}
