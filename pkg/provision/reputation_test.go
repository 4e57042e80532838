package provision

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// TestLoadReputation: no path is no record; a missing file is a cold start
// said in the note; an unreadable or invalid record is a problem naming the
// input and the path (the action warns). Both give an empty record: the
// seed's plan, with machines still read for the next record.
func TestLoadReputation(t *testing.T) {
	dir := t.TempDir()
	valid := filepath.Join(dir, "rep.json")
	assert.NilError(t, os.WriteFile(valid, []byte(`{"version":1,"observations":[]}`), 0o600))
	invalid := filepath.Join(dir, "bad.json")
	assert.NilError(t, os.WriteFile(invalid, []byte(`{`), 0o600))
	missing := filepath.Join(dir, "none.json")

	rec, note, err := LoadReputation("reputation-file", "  ")
	assert.Check(t, rec == nil && note == "" && err == nil)

	rec, note, err = LoadReputation("reputation-file", missing)
	assert.Check(t, err == nil)
	assert.Check(t, rec != nil && len(rec.Observations) == 0, "an empty record: the lane keeps a reputation")
	assert.Check(t, is.Equal(note, `reputation: reputation-file "`+missing+`" does not exist yet: candidates in the seed's order`))

	_, _, err = LoadReputation("reputation-file", dir) // a directory cannot be read as a file
	assert.Check(t, is.ErrorContains(err, `input reputation-file: "`+dir+`": `))
	assert.Check(t, is.ErrorContains(err, "want a readable reputation record (JSON) or an empty value"))

	rec, _, err = LoadReputation("reputation-file", invalid)
	assert.Check(t, is.ErrorContains(err, `input reputation-file: "`+invalid+`": `))
	assert.Check(t, rec != nil && len(rec.Observations) == 0)

	want, perr := reputation.Parse([]byte(`{"version":1,"observations":[]}`))
	if perr != nil { // the record's format is reputation's: only compare when it accepts this one
		t.Skipf("reputation.Parse: %v", perr)
	}
	rec, note, err = LoadReputation("reputation-file", valid)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(note, ""))
	assert.Check(t, is.DeepEqual(*rec, want))
}

// The record comes from an artifact: a file larger than any record, or one
// with more observations than a record keeps, is refused (an empty record),
// before it is read whole.
func TestLoadReputationRefusesAnUnboundedRecord(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	assert.NilError(t, os.WriteFile(big, []byte(`{"version":1,"observations":[]}`+strings.Repeat(" ", reputation.MaxRecordBytes)), 0o600))
	rec, _, err := LoadReputation("reputation-file", big)
	assert.Check(t, rec != nil && len(rec.Observations) == 0, "a refused record plans as a cold start: %v", rec)
	assert.Check(t, is.ErrorContains(err, "larger than 2097152 bytes"))

	var b strings.Builder
	b.WriteString(`{"version":1,"observations":[`)
	for i := range reputation.MaxObservations + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"at":"2026-10-06T09:00:00Z","gpu":"NVIDIA L4","dataCenter":"EU-RO-1","ok":true,"seconds":1}`)
	}
	b.WriteString("]}")
	many := filepath.Join(dir, "many.json")
	assert.NilError(t, os.WriteFile(many, []byte(b.String()), 0o600))
	rec, _, err = LoadReputation("reputation-file", many)
	assert.Check(t, rec != nil && len(rec.Observations) == 0, "a refused record plans as a cold start: %v", rec)
	assert.Check(t, is.ErrorContains(err, "2001 observations; want at most 2000"))
}

// held is a record in which machine "bad1" failed once among five machines
// of its pair (A4000 secure in US-TX-3) that worked: the pair stays good,
// the machine is held bad.
func held(at time.Time) *reputation.Record {
	rec := &reputation.Record{}
	for i := range 5 {
		rec.Add(reputation.Observation{At: at.Add(-time.Duration(10-i) * time.Hour), GPU: a4000, DataCenter: "US-TX-3", Cloud: "SECURE",
			Machine: fmt.Sprintf("other%d", i), OK: true, Seconds: 90, PricePerHour: 0.25})
	}
	rec.Add(reputation.Observation{At: at.Add(-2 * time.Hour), GPU: a4000, DataCenter: "US-TX-3", Cloud: "SECURE",
		Machine: "bad1", OK: false, Seconds: 200, PricePerHour: 0.25})
	return rec
}

// A pod RunPod places on a machine the reputation holds bad is deleted
// before its proof (no boot, pull or proof paid), says nothing about the
// host, and is no startup failure: the run goes on to the next candidate
// even with max_consecutive_startup_failures 1. Every pod's machine is in
// its attempt's evidence: one GraphQL read per pod.
func TestHeldMachineIsDeletedBeforeItsProof(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("bad1", a4000, oldPTX), host("good1", a5000))}, func(c *config.Config) {
		c.MaxConsecutiveStartupFailures = 1
	})
	s.req.Reputation = held(s.clock.Now())
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	screened, accepted := res.Attempts[0], res.Attempts[1]
	assert.Check(t, is.Equal(screened.Machine, "bad1"))
	assert.Check(t, is.Equal(screened.Host, cost.HostVerdict("")), "a screened pod says nothing new about its machine")
	assert.Check(t, is.Contains(screened.Reason, "machine bad1 (NVIDIA RTX A4000 secure in US-TX-3) failed 1 of its last 1 pods"))
	assert.Check(t, screened.Seconds.Known && screened.Seconds.N < 30, "billed from creation to deletion: %s", screened.Seconds)
	assert.Check(t, is.Equal(accepted.Machine, "good1"))
	assert.Check(t, is.Equal(countRoute(s, "POST /graphql"), 2), "one machine read per pod")
	assert.Check(t, is.Contains(s.obs.log(), "1 machine(s) held bad"))
}

// Without a reputation record the lane reads no machine (no extra call).
func TestNoReputationReadsNoMachine(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("good1", a4000))}, onlyA4000)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Attempts[0].Machine, ""))
	assert.Check(t, is.Equal(countRoute(s, "POST /graphql"), 0))

	s = newScenario(t, cloud.Options{Market: market(host("good1", a4000))}, onlyA4000)
	s.req.Reputation = &reputation.Record{} // a cold start: no evidence yet, machines recorded for the next record
	res, err = s.run(t)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Attempts[0].Machine, "good1"))
}

// machineReader answers PodMachine with id or err; nothing else is called.
type machineReader struct {
	RunPod
	id  string
	err error
}

func (m machineReader) PodMachine(context.Context, string) (string, error) { return m.id, m.err }

// What RunPod names the machine is outside data printed in the log: only a
// machine id is kept, anything else (a newline, a workflow command) is an
// unknown machine, and a failed read is one too.
func TestReadMachineKeepsOnlyMachineIDs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reader machineReader
		want   string
		log    string
	}{
		{name: "a machine id", reader: machineReader{id: "m7xk2"}, want: "m7xk2"},
		{name: "not one", reader: machineReader{id: "m1\n::warning::x"}, log: `RunPod named its machine "m1\n::warning::x", which is no machine id`},
		{name: "a failed read", reader: machineReader{err: errors.New("boom")}, log: "its machine could not be read (boom): recorded as unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, obs := unitRun(t, nil)
			r.deps.RunPod = tc.reader
			r.req.Reputation = &reputation.Record{}
			assert.Check(t, is.Equal(r.readMachine(context.Background(), "pod1"), tc.want))
			assert.Check(t, is.Contains(obs.log(), tc.log))
			assert.Check(t, !strings.Contains(obs.log(), "\n::warning"), "no workflow command reaches the log")
		})
	}
}
