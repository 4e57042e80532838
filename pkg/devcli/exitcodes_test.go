package devcli

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/serverless"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/spend"
)

// slsSetupArgs is a setup of attempt state on the shared ledger.
func (s *slsWorld) setupArgs(state string) []string {
	return []string{"serverless", "setup", "--state", s.path(state), "--ledger", s.path("budget.json"),
		"--worker-url", "https://example.com/serverless-worker", "--worker-sha256", testWorkerSHA}
}

// TestRefusedServerlessSetupStartsNothing: a setup refused because an
// earlier attempt is still open exits 7 (not 5, which says something may
// bill), creates nothing and starts no watchdog.
func TestRefusedServerlessSetupStartsNothing(t *testing.T) {
	s := newSlsWorld(t, runpodsim.ServerlessFaults{})
	s.setup(t)
	assert.Assert(t, is.Len(s.spawned, 1), "the first setup armed its watchdog")
	r := s.run(s.setupArgs("attempt-02.json")...)
	assert.Check(t, is.Equal(r.code, ExitAttemptOpen), r.stderr)
	assert.Check(t, is.Contains(r.stderr, "still has a template or endpoint"))
	assert.Check(t, is.Len(s.spawned, 1), "no watchdog for a refused setup")
	assert.Check(t, is.Len(s.live(), 2), "nothing more was created")
}

// TestServerlessSetupRefusesAnEditedLedger exits 9, nothing started.
func TestServerlessSetupRefusesAnEditedLedger(t *testing.T) {
	s := newSlsWorld(t, runpodsim.ServerlessFaults{})
	assert.NilError(t, os.WriteFile(s.path("budget.json"), []byte(`{"version":1,"entries":[]}`), 0o600))
	r := s.run(s.setupArgs("attempt-01.json")...)
	assert.Check(t, is.Equal(r.code, ExitLedgerRefused), r.stderr)
	assert.Check(t, is.Contains(r.stderr, "ledger refused as edited outside the lane"))
	assert.Check(t, is.Len(s.spawned, 0), "no watchdog for a refused setup")
	assert.Check(t, is.Len(s.live(), 0))
}

// TestExitCodesAreDocumented: every exit code the command line defines is in
// the package documentation and in cli.md, once, with what it means.
func TestExitCodesAreDocumented(t *testing.T) {
	codes := []int{ExitOK, ExitFailure, ExitUsage, ExitNoCapacity, ExitBootFailed, ExitUnconfirmed, ExitNotFound,
		ExitAttemptOpen, ExitBudgetRefused, ExitLedgerRefused, ExitRecordRefused, ExitInterrupted}
	seen := map[int]bool{}
	for _, c := range codes {
		assert.Check(t, !seen[c], "exit code %d is defined twice", c)
		seen[c] = true
	}
	doc, err := os.ReadFile("doc.go")
	assert.NilError(t, err)
	cli, err := os.ReadFile("../../.github/docs/cli.md")
	assert.NilError(t, err)
	_, exitLine, _ := strings.Cut(string(cli), "- **Exit codes:**")
	exitLine, _, _ = strings.Cut(exitLine, "\n- ")
	for _, c := range codes {
		code := strconv.Itoa(c)
		assert.Check(t, regexp.MustCompile(`(?m)^//\t`+code+`\s+\S`).Match(doc), "doc.go documents exit %d", c)
		assert.Check(t, regexp.MustCompile(`(^|· )`+code+` [a-z]`).MatchString(strings.Join(strings.Fields(exitLine), " ")), "cli.md's exit codes name %d", c)
	}
}

// TestServerlessSetupRefusedByTheBudgetExits8: earlier attempts reserved $9
// of the ledger's $10, so a setup's $1 and its job's $1 do not fit.
func TestServerlessSetupRefusedByTheBudgetExits8(t *testing.T) {
	s := newSlsWorld(t, runpodsim.ServerlessFaults{})
	f := serverless.LedgerFile{Path: s.path("budget.json"), Caps: spend.DefaultLedgerCaps}
	now := s.clock.Now().Add(-24 * time.Hour)
	for i, cents := range [][2]money.WholeCents{{300, 300}, {300, 0}} {
		name := fmt.Sprintf("rpg-sls-old-%d", i)
		start := serverless.AttemptStart{Entry: serverless.AttemptEntry{Name: name, Receipt: s.path(name + ".json"), OpenedAt: now, Deadline: now.Add(time.Hour)},
			Setup: serverless.Reservation{Stage: serverless.StageSetup, Attempt: name, Cents: cents[0], At: now}, Now: now}
		_, err := f.Begin(start)
		assert.NilError(t, err)
		if cents[1] > 0 {
			_, err = f.Reserve(serverless.Reservation{Stage: serverless.StageJob, Attempt: name, Cents: cents[1], At: now})
			assert.NilError(t, err)
		}
		assert.NilError(t, f.Close(name, now.Add(time.Minute), "cleaned up"))
	}
	r := s.run(s.setupArgs("attempt-01.json")...)
	assert.Check(t, is.Equal(r.code, ExitBudgetRefused), r.stderr)
	assert.Check(t, is.Contains(r.stderr, "budget refused"))
	assert.Check(t, is.Len(s.spawned, 0), "no watchdog for a refused setup")
	assert.Check(t, is.Len(s.live(), 0))
}
