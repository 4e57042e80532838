package serverless

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestSetupReservationIsTheSeeds(t *testing.T) {
	s := DefaultSettings()
	assert.Check(t, is.Equal(Dollars(s.SetupReservationCents()), "$1.36"))
	assert.Check(t, is.Equal(Dollars(s.JobReservationCents()), "$1.25"))
	assert.Check(t, is.Equal(EstimateCents(30*time.Minute, 0.70), int64(36)), "below $0.36 with the allowance")
}

func TestLedgerReserve(t *testing.T) {
	type step struct {
		stage, attempt string
		cents          int64
		want           string // "" means accepted
	}
	cases := []struct {
		name  string
		caps  Caps
		steps []step
		total int64
	}{
		{"setup and job", DefaultCaps, []step{{"setup", "a1", 136, ""}, {"job", "a1", 125, ""}}, 261},
		{"raised to the minimum", DefaultCaps, []step{{"setup", "a1", 20, ""}}, 100},
		{"above the stage cap", DefaultCaps, []step{{"job", "a1", 301, "per-stage cap"}}, 0},
		{"same stage twice", DefaultCaps, []step{{"job", "a1", 125, ""}, {"job", "a1", 125, "already reserved"}}, 125},
		{"total cap across attempts", DefaultCaps, []step{
			{"setup", "a1", 300, ""}, {"job", "a1", 300, ""}, {"setup", "a2", 300, ""}, {"job", "a2", 136, "total cap"},
		}, 900},
		{"configured caps", Caps{MinStage: 50, MaxStage: 100, Total: 150}, []step{{"setup", "a", 60, ""}, {"job", "a", 100, "total cap"}}, 60},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lf := LedgerFile{Path: filepath.Join(t.TempDir(), "budget.json"), Caps: tc.caps}
			for _, st := range tc.steps {
				_, err := lf.Reserve(Reservation{Stage: st.stage, Attempt: st.attempt, Cents: st.cents})
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

func TestLedgerLockIsExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "budget.json")
	unlock, err := lockFile(path, 0, nil)
	assert.NilError(t, err)
	var slept time.Duration
	lf := LedgerFile{Path: path, Caps: DefaultCaps, LockWait: 200 * time.Millisecond, Sleep: func(d time.Duration) { slept += d }}
	_, err = lf.Reserve(Reservation{Stage: "setup", Attempt: "a"})
	assert.Check(t, errors.Is(err, ErrLocked), "%v", err)
	assert.Check(t, slept >= 200*time.Millisecond, "it waited its bound, on the injected sleep")
	unlock()
	_, err = lf.Reserve(Reservation{Stage: "setup", Attempt: "a"})
	assert.NilError(t, err)
}

func TestCapsValidate(t *testing.T) {
	assert.ErrorContains(t, Caps{}.Validate(), "min stage 0")
	assert.ErrorContains(t, Caps{MinStage: 100, MaxStage: 50, Total: 1000}.Validate(), "below the min stage")
	assert.ErrorContains(t, Caps{MinStage: 100, MaxStage: 300, Total: 200}.Validate(), "total 200")
}

func TestLedgerRefusesACorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "budget.json")
	assert.NilError(t, writeAtomic(path, []byte("{not json"), false))
	_, err := LedgerFile{Path: path, Caps: DefaultCaps}.Reserve(Reservation{Stage: "setup", Attempt: "a"})
	assert.ErrorContains(t, err, "never reset it silently")
}
