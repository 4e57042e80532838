package serverless

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/spend"
)

func TestSetupReservationIsTheSeeds(t *testing.T) {
	s := DefaultSettings()
	assert.Check(t, is.Equal(s.SetupReservation().String(), "$1.36"))
	assert.Check(t, is.Equal(s.JobReservation().String(), "$1.25"))
	assert.Check(t, is.Equal(spend.StageEstimate(30*time.Minute, money.PerHour(0.70)), 36*money.Cent), "below $0.36 with the allowance")
}

// begin opens attempt in lf with its setup reservation, as Setup does.
func begin(lf LedgerFile, attempt string, cents money.WholeCents, at time.Time) error {
	_, err := lf.Begin(AttemptStart{Entry: AttemptEntry{Name: attempt, OpenedAt: at, Deadline: at.Add(30 * time.Minute)},
		Setup: Reservation{Stage: StageSetup, Attempt: attempt, Cents: cents, At: at}, Now: at})
	return err
}

func TestLedgerReserve(t *testing.T) {
	type step struct {
		stage, attempt string
		cents          money.WholeCents
		want           string // "" means accepted
	}
	cases := []struct {
		name  string
		caps  spend.LedgerCaps
		steps []step
		total money.WholeCents
	}{
		{"setup and job", spend.DefaultLedgerCaps, []step{{"setup", "a1", 136, ""}, {"job", "a1", 125, ""}}, 261},
		{"raised to the minimum", spend.DefaultLedgerCaps, []step{{"setup", "a1", 20, ""}}, 100},
		{"above the stage cap", spend.DefaultLedgerCaps, []step{{"setup", "a1", 100, ""}, {"job", "a1", 301, "per-stage cap"}}, 100},
		{"same stage twice", spend.DefaultLedgerCaps, []step{{"setup", "a1", 100, ""}, {"job", "a1", 125, ""}, {"job", "a1", 125, "already reserved"}}, 225},
		{"total cap across attempts", spend.DefaultLedgerCaps, []step{
			{"setup", "a1", 300, ""}, {"job", "a1", 300, ""}, {"close", "a1", 0, ""}, {"setup", "a2", 300, ""}, {"job", "a2", 136, "total cap"},
		}, 900},
		{"configured caps", capsInCents(50, 100, 150), []step{{"setup", "a", 60, ""}, {"job", "a", 100, "total cap"}}, 60},
		{"a job needs its attempt begun", spend.DefaultLedgerCaps, []step{{"job", "a9", 125, "not open in the ledger"}}, 0},
		{"an amount that would overflow", capsInCents(1, MaxCents, MaxCents), []step{{"setup", "a", 1, ""}, {"job", "a", math.MaxInt64, "per-stage cap"}}, 1},
	}
	at := p2time()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lf := LedgerFile{Path: filepath.Join(t.TempDir(), "budget.json"), Caps: tc.caps}
			for _, st := range tc.steps {
				var err error
				switch st.stage {
				case "setup":
					err = begin(lf, st.attempt, st.cents, at)
				case "close":
					err = lf.Close(st.attempt, at, "test")
				default:
					_, err = lf.Reserve(Reservation{Stage: st.stage, Attempt: st.attempt, Cents: st.cents, At: at})
				}
				if st.want == "" {
					assert.NilError(t, err)
					continue
				}
				assert.ErrorContains(t, err, st.want)
				assert.Check(t, errors.Is(err, ErrBudget))
			}
			l, err := ReadLedger(lf.Path)
			assert.NilError(t, err)
			assert.Check(t, is.Equal(l.TotalCents(), tc.total))
		})
	}
}

// TestLedgerOneAttemptAtATime: an open attempt blocks the next one, named
// with its receipt, until its cleanup is confirmed — or, past its deadline,
// until a fresh listing shows nothing of it.
func TestLedgerOneAttemptAtATime(t *testing.T) {
	at := p2time()
	open := func(t *testing.T) LedgerFile {
		lf := LedgerFile{Path: filepath.Join(t.TempDir(), "budget.json"), Caps: spend.DefaultLedgerCaps}
		_, err := lf.Begin(AttemptStart{Entry: AttemptEntry{Name: "rpg-sls-a1", Receipt: "/home/dev/rpg/attempt-01.json", OpenedAt: at, Deadline: at.Add(30 * time.Minute)},
			Setup: Reservation{Stage: StageSetup, Attempt: "rpg-sls-a1", Cents: 136, At: at}, Now: at})
		assert.NilError(t, err)
		return lf
	}
	next := func(lf LedgerFile, now time.Time, listed bool) error {
		_, err := lf.Begin(AttemptStart{Entry: AttemptEntry{Name: "rpg-sls-a2", OpenedAt: now, Deadline: now.Add(30 * time.Minute)},
			Setup: Reservation{Stage: StageSetup, Attempt: "rpg-sls-a2", Cents: 136, At: now}, Now: now,
			Listed: func(string) bool { return listed }})
		return err
	}
	cases := []struct {
		name   string
		now    time.Time
		listed bool
		close  bool
		want   string
	}{
		{name: "open and live", now: at.Add(5 * time.Minute), listed: true, want: "attempt rpg-sls-a1 (receipt /home/dev/rpg/attempt-01.json) has no confirmed cleanup"},
		{name: "open, not listed, before its deadline", now: at.Add(5 * time.Minute), want: "has no confirmed cleanup"},
		{name: "open and still listed after its deadline", now: at.Add(2 * time.Hour), listed: true, want: "has no confirmed cleanup"},
		{name: "nothing of it listed after its deadline", now: at.Add(2 * time.Hour)},
		{name: "its cleanup was confirmed", now: at.Add(5 * time.Minute), listed: true, close: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lf := open(t)
			if tc.close {
				assert.NilError(t, lf.Close("rpg-sls-a1", at.Add(time.Minute), "cleanup confirmed"))
			}
			err := next(lf, tc.now, tc.listed)
			l, rerr := ReadLedger(lf.Path)
			assert.NilError(t, rerr)
			if tc.want != "" {
				assert.Check(t, errors.Is(err, ErrAttemptOpen), "%v", err)
				assert.Check(t, is.ErrorContains(err, tc.want))
				assert.Check(t, is.Equal(l.TotalCents(), money.WholeCents(136)), "nothing reserved for the refused attempt")
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Len(l.OpenAttempts(), 1))
			assert.Check(t, is.Equal(l.OpenAttempts()[0].Name, "rpg-sls-a2"))
		})
	}
}

// TestLedgerBeginRefusesAJobItCannotCover: the job stage is checked with the
// setup stage, before setup reserves (or creates) anything.
func TestLedgerBeginRefusesAJobItCannotCover(t *testing.T) {
	lf := LedgerFile{Path: filepath.Join(t.TempDir(), "budget.json"), Caps: capsInCents(100, 200, 250)}
	at := p2time()
	_, err := lf.Begin(AttemptStart{Entry: AttemptEntry{Name: "rpg-sls-a", OpenedAt: at, Deadline: at.Add(30 * time.Minute)},
		Setup: Reservation{Stage: StageSetup, Attempt: "rpg-sls-a", Cents: 136}, Later: []Reservation{{Stage: StageJob, Attempt: "rpg-sls-a", Cents: 125}}, Now: at})
	assert.Check(t, errors.Is(err, ErrBudget), "%v", err)
	assert.Check(t, is.ErrorContains(err, "stage job needs $1.25"))
	_, statErr := os.Stat(lf.Path)
	assert.Check(t, os.IsNotExist(statErr), "a refused attempt writes no ledger")
	assert.Check(t, lf.Covers(Reservation{Stage: StageSetup, Attempt: "rpg-sls-a", Cents: 136}))
}

// TestLedgerRefusesATamperedFile: a ledger edited outside the lane (its
// checksum), or one no sequence of the lane's writes could produce, is
// refused and never reset; --reseal accepts a well-formed edit on purpose.
func TestLedgerRefusesATamperedFile(t *testing.T) {
	at := p2time()
	sealed := func(edit func(*Ledger)) []byte {
		l := &Ledger{Version: LedgerVersion, Attempts: []AttemptEntry{{Name: "a", OpenedAt: at}}, Reservations: []Reservation{{Stage: StageSetup, Attempt: "a", Cents: 136, At: at}}}
		edit(l)
		l.seal()
		data, _ := json.Marshal(l)
		return data
	}
	valid := sealed(func(*Ledger) {})
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"a lower total by hand", []byte(strings.Replace(string(valid), `"cents":136`, `"cents":1`, 1)), "does not match its checksum"},
		{"a reservation removed by hand", []byte(strings.Replace(string(valid), `{"stage":"setup","attempt":"a","cents":136,"at":"2031-01-02T03:04:05Z"}`, ``, 1)), "does not match its checksum"},
		{"the checksum dropped", []byte(strings.Replace(string(valid), `"version":2`, `"version":1`, 1)), "version 1"},
		{"an unknown field", []byte(strings.Replace(string(valid), `{"version"`, `{"refunds":[1],"version"`, 1)), "unknown field"},
		{"negative cents", sealed(func(l *Ledger) { l.Reservations[0].Cents = -500 }), "has -500 cents"},
		{"sums past int64", sealed(func(l *Ledger) {
			l.Reservations = []Reservation{{Stage: StageSetup, Attempt: "a", Cents: math.MaxInt64}, {Stage: StageJob, Attempt: "a", Cents: math.MaxInt64}}
		}), "want 0 to 10000000"},
		{"a stage twice", sealed(func(l *Ledger) { l.Reservations = append(l.Reservations, l.Reservations[0]) }), "reserved twice"},
		{"an unknown stage", sealed(func(l *Ledger) { l.Reservations[0].Stage = "refund" }), `stage "refund"`},
		{"an attempt never begun", sealed(func(l *Ledger) { l.Attempts = nil }), "never began"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "budget.json")
			assert.NilError(t, os.WriteFile(path, tc.data, 0o600))
			_, err := ReadLedger(path)
			assert.Check(t, errors.Is(err, ErrTampered), "%v", err)
			assert.Check(t, is.ErrorContains(err, tc.want))
			_, err = LedgerFile{Path: path, Caps: spend.DefaultLedgerCaps}.Reserve(Reservation{Stage: StageJob, Attempt: "a", Cents: 125})
			assert.Check(t, errors.Is(err, ErrTampered), "a reservation on it is refused too: %v", err)
			after, _ := os.ReadFile(path)
			assert.Check(t, is.Equal(string(after), string(tc.data)), "the ledger is never rewritten")
		})
	}

	path := filepath.Join(t.TempDir(), "budget.json")
	assert.NilError(t, os.WriteFile(path, []byte(strings.Replace(string(valid), `"cents":136`, `"cents":150`, 1)), 0o600))
	l, err := LedgerFile{Path: path, Caps: spend.DefaultLedgerCaps}.Reseal()
	assert.NilError(t, err)
	assert.Check(t, is.Equal(l.TotalCents(), money.WholeCents(150)))
	_, err = ReadLedger(path)
	assert.NilError(t, err, "a resealed ledger reads")
}

func TestLedgerLockIsExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "budget.json")
	unlock, err := lockFile(path, 0, nil)
	assert.NilError(t, err)
	var slept time.Duration
	lf := LedgerFile{Path: path, Caps: spend.DefaultLedgerCaps, LockWait: 200 * time.Millisecond, Sleep: func(d time.Duration) { slept += d }}
	err = begin(lf, "a", 100, p2time())
	assert.Check(t, errors.Is(err, ErrLocked), "%v", err)
	assert.Check(t, slept >= 200*time.Millisecond, "it waited its bound, on the injected sleep")
	unlock()
	assert.NilError(t, begin(lf, "a", 100, p2time()))
}

func TestCapsValidate(t *testing.T) {
	assert.ErrorContains(t, spend.LedgerCaps{}.Validate(), "min stage 0")
	assert.ErrorContains(t, capsInCents(100, 50, 1000).Validate(), "below the min stage")
	assert.ErrorContains(t, capsInCents(100, 300, 200).Validate(), "total 200")
}

func TestLedgerRefusesACorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "budget.json")
	assert.NilError(t, writeAtomic(path, []byte("{not json"), false))
	err := begin(LedgerFile{Path: path, Caps: spend.DefaultLedgerCaps}, "a", 100, p2time())
	assert.ErrorContains(t, err, "never reset it silently")
}

// FuzzReadLedger: a ledger comes from a file or another run's artifact. Any
// bytes are either refused or read as a ledger whose sum is within bounds
// and that survives a write and a read again.
func FuzzReadLedger(f *testing.F) {
	at := p2time()
	l := &Ledger{Version: LedgerVersion, Attempts: []AttemptEntry{{Name: "a", OpenedAt: at}}, Reservations: []Reservation{{Stage: StageSetup, Attempt: "a", Cents: 136, At: at}}}
	l.seal()
	valid, _ := json.Marshal(l)
	f.Add(valid)
	f.Add([]byte(`{"version":2,"reservations":[],"attempts":[],"checksum":""}`))
	f.Add([]byte(`{"version":1,"reservations":[{"stage":"setup","attempt":"a","cents":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "budget.json")
		assert.NilError(t, os.WriteFile(path, data, 0o600))
		got, err := ReadLedger(path)
		if err != nil {
			return
		}
		total := got.TotalCents()
		assert.Check(t, total >= 0 && total <= MaxCents*MaxReservations, "total %d", total)
		for _, r := range got.Reservations {
			assert.Check(t, r.Cents >= 0 && r.Cents <= MaxCents)
		}
		_, err = LedgerFile{Path: path, Caps: spend.DefaultLedgerCaps}.Reseal()
		assert.NilError(t, err)
		_, err = ReadLedger(path)
		assert.NilError(t, err, "a ledger read once reads again after a write")
	})
}

// capsInCents are ledger caps given in cents, the action's inputs' unit.
func capsInCents(minStage, maxStage, total money.WholeCents) spend.LedgerCaps {
	return spend.LedgerCaps{MinStage: minStage.Amount(), MaxStage: maxStage.Amount(), Total: total.Amount()}
}
