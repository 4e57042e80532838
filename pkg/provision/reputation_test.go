package provision

import (
	"context"
	"encoding/json"
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
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
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

// gpuOf is the machine key a pod on simulated host id reports: its first
// GPU's UUID (the machine report's GPU line).
func gpuOf(id string) string { return runpodsim.HostProfile{ID: id}.GPUUUID(0) }

// held is a record in which machine "bad1" failed once among five machines
// of its pair (A4000 secure in US-TX-3) that worked: the pair stays good,
// the machine is held bad.
func held(at time.Time) *reputation.Record {
	rec := &reputation.Record{}
	holdBad(rec, at, a4000, "bad1")
	return rec
}

// holdBad adds to rec five machines of gpu's pair (secure in US-TX-3) that
// worked and machine bad, which failed: bad is held bad, the pair stays good.
func holdBad(rec *reputation.Record, at time.Time, gpu, bad string) {
	for i := range 5 {
		rec.Add(reputation.Observation{At: at.Add(-time.Duration(10-i) * time.Hour), GPU: gpu, DataCenter: "US-TX-3", Cloud: "SECURE",
			Machine: gpuOf(fmt.Sprintf("%s-other%d", bad, i)), OK: true, Seconds: 90, PricePerHour: money.PerHour(0.25)})
	}
	rec.Add(reputation.Observation{At: at.Add(-2 * time.Hour), GPU: gpu, DataCenter: "US-TX-3", Cloud: "SECURE",
		Machine: gpuOf(bad), OK: false, Seconds: 200, PricePerHour: money.PerHour(0.25)})
}

// A pod RunPod places on a machine the reputation holds bad is deleted
// before its proof (once its container reports its GPU: its boot is paid,
// its proof is not), says nothing about the host, and is no startup failure:
// the run goes on to the next candidate even with
// max_consecutive_startup_failures 1. Every pod's machine is in its attempt's
// evidence, from its own log: no GraphQL, no call of its own.
func TestHeldMachineIsDeletedBeforeItsProof(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("bad1", a4000, oldPTX), host("good1", a5000))}, func(c *config.Config) {
		c.MaxConsecutiveStartupFailures = 1
	})
	s.req.Reputation = held(s.clock.Now())
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	screened, accepted := res.Attempts[0], res.Attempts[1]
	assert.Check(t, is.Equal(screened.Machine, gpuOf("bad1")))
	assert.Check(t, is.Equal(screened.Host, cost.HostVerdict("")), "a screened pod says nothing new about its machine")
	assert.Check(t, is.Contains(screened.Reason, "machine "+gpuOf("bad1")+" (NVIDIA RTX A4000 secure in US-TX-3) failed 1 of its last 1 pods"))
	boot, proof := 30*time.Second, 25*time.Second // host's BootSeconds, the model's ProofTime
	assert.Check(t, screened.Seconds.Known && time.Duration(screened.Seconds.N)*time.Second < boot+proof,
		"billed from creation to deletion, before the proof's verdict: %s", screened.Seconds)
	assert.Check(t, !strings.Contains(s.obs.log(), "CUDA smoke proof failed"), "deleted before its proof failed")
	assert.Check(t, is.Equal(accepted.Machine, gpuOf("good1")))
	assert.Check(t, is.Equal(countRoute(s, "POST /graphql"), 0), "the machine comes from the pod's log")
	assert.Check(t, is.Contains(s.obs.log(), "1 machine(s) held bad"))
}

// Without a reputation record the lane records no machine; with an empty one
// (a cold start) each pod's machine is recorded for the next record. Neither
// sends a call for it.
func TestNoReputationRecordsNoMachine(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("good1", a4000))}, onlyA4000)
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Attempts[0].Machine, ""))

	s = newScenario(t, cloud.Options{Market: market(host("good1", a4000))}, onlyA4000)
	s.req.Reputation = &reputation.Record{} // a cold start: no evidence yet, machines recorded for the next record
	res, err = s.run(t)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(res.Attempts[0].Machine, gpuOf("good1")))
	assert.Check(t, is.Equal(countRoute(s, "POST /graphql"), 0))
}

// foreignAnswer makes the n-th create of s answer with the id *foreign names
// (another pod of the account) instead of its own pod's.
func foreignAnswer(t *testing.T, n int, foreign *string) runpodsim.Faults {
	return runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{
		Match: runpodsim.Match{Route: "POST /v2/pods"}, When: runpodsim.Trigger{Nth: []int{n}},
		Body: func(_ int, body []byte) []byte {
			var pod map[string]any
			assert.Check(t, json.Unmarshal(body, &pod))
			pod["id"] = *foreign
			out, err := json.Marshal(pod)
			assert.Check(t, err)
			return out
		},
	}}}
}

// notebook creates a pod of the account that is not the run's, on gpu.
func notebook(t *testing.T, s *scenario, gpu string) string {
	rp := runpod.New(s.cloud.RunPodURL, cloud.RunPodKey)
	nb, err := rp.CreatePod(context.Background(), runpod.CreatePodRequest{Name: "alice-notebook", Image: cloud.RunnerImage,
		GPU: &runpod.CreateGPU{ID: gpu, Count: 1}})
	assert.NilError(t, err)
	return nb.ID
}

// A create answer naming another pod's id is a lost answer; the
// candidate's real pod, found by name, is screened like any other: placed
// on a held machine it is deleted before its proof, and its attempt names
// its own machine, never the other pod's.
func TestPodFoundByNameAfterAForeignCreateAnswerIsScreened(t *testing.T) {
	var foreign string
	s := newScenario(t, cloud.Options{Market: market(host("nb", l4), host("bad1", a4000, oldPTX), host("good1", a5000)),
		Faults: foreignAnswer(t, 2, &foreign)}, func(c *config.Config) { c.MaxConsecutiveStartupFailures = 1 })
	foreign = notebook(t, s, l4) // the only L4 host: the candidates' hosts stay free
	s.req.Reputation = held(s.clock.Now())

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected", "live-2 RTX A5000 accepted"})
	screened := res.Attempts[0]
	assert.Check(t, is.Equal(screened.Machine, gpuOf("bad1")), "the attempt's own machine, not the other pod's")
	assert.Check(t, is.Contains(screened.Reason, "placed on a machine held bad (machine "+gpuOf("bad1")))
	assert.Check(t, screened.PodID != foreign)
	assert.Check(t, is.Equal(countRoute(s, "POST /graphql"), 0))
	var alive []string
	for _, p := range s.livePods(t) {
		alive = append(alive, p.Name)
	}
	assert.Check(t, is.DeepEqual(alive, []string{"alice-notebook", "rgpu-7001-1-c2"}), "the foreign pod is untouched")
	assert.Check(t, is.DeepEqual(s.obs.forgotten, []string{foreign}), "the other pod's id is no longer published as this run's")
}

// Screening deletes a pod only once its record, read by the id the create
// answered, names it this run's pod: when that one read fails, the id may
// be another pod's (on a held machine too), so nothing is deleted for its
// placement and the watch decides whose it is.
func TestScreeningNeverDeletesAPodWhoseRecordItCouldNotRead(t *testing.T) {
	var foreign string
	faults := foreignAnswer(t, 2, &foreign)
	faults.ServerErrors = []runpodsim.ServerErrorFault{{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{Nth: []int{1}}}}
	s := newScenario(t, cloud.Options{Market: market(host("nbad", l4), host("good0", a4000)), Faults: faults}, nil)
	foreign = notebook(t, s, l4) // on nbad, the only L4 host
	rec := held(s.clock.Now())
	holdBad(rec, s.clock.Now(), l4, "nbad")
	s.req.Reputation = rec

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	var alive []string
	for _, p := range s.livePods(t) {
		alive = append(alive, p.Name)
	}
	assert.Check(t, is.DeepEqual(alive, []string{"alice-notebook", "rgpu-7001-1-c1"}), "the foreign pod is untouched")
	assert.Check(t, is.Equal(countRoute(s, "DELETE /v2/pods/{id}"), 0))
	assert.Check(t, is.Contains(s.obs.log(), "could not be read to confirm it is this run's"))
}

// A lane with a reputation record that holds no evidence yet (a cold start)
// plans as the seed: the secure cloud alone, one live candidate per GPU type,
// though the community offers are cheaper (of which nothing is known yet), so
// the first create is the cheapest secure type's live offer. Without a record
// the plan's own order stands: cheapest first, community included. (A plan
// per data center over both clouds, cut to max_price_candidates, would hold
// no secure live offer here: its first create would be a static slot.)
func TestColdStartCreatesInTheSeedsOrder(t *testing.T) {
	community := func(h *runpodsim.HostProfile) { h.Cloud = runpodsim.Community }
	bothClouds := func(c *config.Config) {
		c.GPUTiers = []config.GPUTier{{Name: "ampere", GPUIDs: []string{a4000, a5000}}}
		c.MaxPriceCandidates, c.MaxProvisionAttempts = 2, 3
		c.Clouds = []config.Cloud{config.CloudSecure, config.CloudCommunity}
	}
	tests := []struct {
		name                 string
		record               *reputation.Record
		wantCloud, wantFirst string
	}{
		{name: "no record: the plan's order, community first", wantCloud: runpodsim.Community, wantFirst: "live-1"},
		{name: "a record without evidence: the seed's plan", record: &reputation.Record{}, wantCloud: runpodsim.Secure, wantFirst: "live-1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("secure1", a4000), host("secure2", a5000),
				host("community1", a4000, community), host("community2", a5000, community))}, bothClouds)
			s.req.Reputation = tc.record
			res, err := s.run(t)
			assert.NilError(t, err)
			assert.Assert(t, len(res.Attempts) > 0)
			first := res.Attempts[0]
			assert.Check(t, is.Equal(strings.ToUpper(first.Cloud), tc.wantCloud))
			assert.Check(t, is.Equal(first.Candidate, tc.wantFirst))
			if tc.record != nil {
				assert.Check(t, is.Equal(first.GPU, a4000), "the cheapest secure type")
			}
		})
	}
}
