package provision

// Table tests of provision's small decisions at their exact boundaries: the
// ceiling reached exactly, a label of exactly GitHub's limit, one unknown cost,
// a GPU count left to RunPod's default. Written against mutants that survived
// the scenario tests (.ci/mutation).

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// unitRun is a run with a default config, a virtual clock and a recording
// observer, for calling one method without a cloud.
func unitRun(t *testing.T, mutate func(*config.Config)) (*run, *recorder) {
	t.Helper()
	cfg := config.Default()
	if mutate != nil {
		mutate(cfg)
	}
	clock := simclock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	obs := &recorder{}
	return &run{cfg: cfg, live: map[string]bool{}, deps: Deps{Observer: obs,
		Policy: reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))}}, obs
}

func ceilingAt(usd float64) func(*config.Config) {
	return func(c *config.Config) { c.MaxRunSpendUSD = &usd }
}

// TestLabelPrefixAtGitHubsLimit: a label of exactly 64 characters is allowed;
// one more is refused, naming the length and the longest prefix that fits.
func TestLabelPrefixAtGitHubsLimit(t *testing.T) {
	// "-9100-1-c1-" and the 16-hex nonce are 27 characters: a 37-character prefix makes 64.
	assert.NilError(t, CheckLabelPrefix(strings.Repeat("p", 37), 9100, 1, 1))
	label, err := NewRunnerLabel(strings.Repeat("p", 37), 9100, 1, 1)
	assert.NilError(t, err)
	assert.Check(t, is.Len(label, MaxRunnerNameLen))

	err = CheckLabelPrefix(strings.Repeat("p", 38), 9100, 1, 1)
	assert.Check(t, is.Error(err, `runner-label-prefix: "`+strings.Repeat("p", 38)+
		`" makes a 65-character runner name for run 9100 attempt 1; GitHub allows 64: want a prefix of at most 37 characters`))
}

// TestCeilingBoundaries: max_run_spend_usd is a bound a run may reach but
// never pass — before a create (catalog price) and while a pod runs (the
// price RunPod bills) — counting what rejected pods already cost.
func TestCeilingBoundaries(t *testing.T) {
	const price = 0.5
	cfg := config.Default()
	one := CandidateWorstCase(price, cfg.StartupTimeout(), cfg.Lifetime())
	// The worst case of one pod: its whole startup budget plus its lifetime, at its price.
	assert.Check(t, is.Equal(one, price*(cfg.StartupTimeout()+cfg.Lifetime()).Hours()))
	assert.Check(t, is.Equal(CandidateWorstCase(2, 30*time.Minute, 90*time.Minute), 4.0))
	c := plan.Candidate{N: 1, Name: "live-1", GPUID: a4000, PriceKnown: true, PricePerHour: price}

	for _, tc := range []struct {
		name    string
		ceiling float64
		spent   float64
		wantErr string
	}{
		{name: "exactly at the ceiling", ceiling: one},
		{name: "rejected pods count toward it", ceiling: one + 0.25, spent: 0.25},
		{name: "a cent past it", ceiling: one - 0.01, wantErr: "creating candidate live-1 (NVIDIA RTX A4000 at $0.50/h) could bring the run to $"},
		{name: "past it only with what rejected pods cost", ceiling: one + 0.2, spent: 0.25,
			wantErr: "(rejected pods $0.2500 + startup_timeout_seconds 420 + lifetime_seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := unitRun(t, ceilingAt(tc.ceiling))
			r.spentBound = tc.spent
			err := r.checkCeiling(c)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, errors.Is(err, ErrStopped))
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
		})
	}

	t.Run("a billed price above the catalog's", func(t *testing.T) {
		billed := func(usd float64) cost.Price { return cost.KnownPrice(usd, "v2 cost while running") }
		atBilled := CandidateWorstCase(0.75, cfg.StartupTimeout(), cfg.Lifetime())
		for _, tc := range []struct {
			name    string
			ceiling float64
			spent   float64
			price   cost.Price
			want    string // "" : not over
		}{
			{name: "the catalog price, over the ceiling, was checked before the create", ceiling: one / 2, price: billed(price)},
			{name: "unknown billed price", ceiling: one / 2, price: cost.Price{}},
			{name: "billed higher, exactly at the ceiling", ceiling: atBilled, price: billed(0.75)},
			{name: "billed higher, rejected pods count", ceiling: atBilled + 0.1, spent: 0.2, price: billed(0.75),
				want: "RunPod bills this pod at $0.7500/h (catalog $0.50/h), which could bring the run to $"},
			{name: "billed higher, past the ceiling", ceiling: atBilled - 0.01, price: billed(0.75),
				want: "(rejected pods $0.0000 + startup_timeout_seconds 420 + lifetime_seconds"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r, _ := unitRun(t, ceilingAt(tc.ceiling))
				r.spentBound = tc.spent
				got := r.overCeiling(c, tc.price)
				if tc.want == "" {
					assert.Check(t, is.Equal(got, ""))
					return
				}
				assert.Check(t, is.Contains(got, tc.want))
			})
		}
	})
}

// TestPodPollsAndFloor: the pod is read every second poll only while the
// runner's start floor is a whole poll; a zero poll reads every time.
func TestPodPollsAndFloor(t *testing.T) {
	for _, tc := range []struct {
		poll      time.Duration
		wantPolls int
		wantFloor time.Duration
	}{
		{poll: 0, wantPolls: 1, wantFloor: 0},
		{poll: 5 * time.Second, wantPolls: 2, wantFloor: 5 * time.Second},
		{poll: RunnerStartFloor, wantPolls: 2, wantFloor: RunnerStartFloor},
		{poll: RunnerStartFloor + time.Second, wantPolls: 1, wantFloor: RunnerStartFloor},
	} {
		assert.Check(t, is.Equal(podPolls(tc.poll), tc.wantPolls), "poll %s", tc.poll)
		assert.Check(t, is.Equal(runnerFloor(tc.poll), tc.wantFloor), "poll %s", tc.poll)
	}
}

// TestWrongGPU: a pod is the reviewed GPU only with its id and its count; a
// count RunPod leaves out is its default of one; a GPU not reported yet is
// not judged.
func TestWrongGPU(t *testing.T) {
	c := plan.Candidate{GPUID: a4000}
	for _, tc := range []struct {
		name     string
		gpuCount int
		gpu      *runpod.PodGPU
		want     string
	}{
		{name: "not reported", gpuCount: 1},
		{name: "no id yet", gpuCount: 1, gpu: &runpod.PodGPU{Count: 1}},
		{name: "count left to the default of one", gpuCount: 1, gpu: &runpod.PodGPU{ID: a4000}},
		{name: "the requested GPU and count", gpuCount: 2, gpu: &runpod.PodGPU{ID: a4000, Count: 2}},
		{name: "default count for a request of two", gpuCount: 2, gpu: &runpod.PodGPU{ID: a4000},
			want: "RunPod gave NVIDIA RTX A4000 x1 for a request of NVIDIA RTX A4000 x2: not the reviewed GPU"},
		{name: "another GPU", gpuCount: 1, gpu: &runpod.PodGPU{ID: l4, Count: 1},
			want: "RunPod gave NVIDIA L4 x1 for a request of NVIDIA RTX A4000 x1: not the reviewed GPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := unitRun(t, func(cfg *config.Config) { cfg.GPUCount = tc.gpuCount })
			assert.Check(t, is.Equal(r.wrongGPU(&runpod.Pod{GPU: tc.gpu}, c), tc.want))
		})
	}
}

// TestValidateSHAs: only a PR run needs the head it authorized; every SHA
// given must be a full commit SHA.
func TestValidateSHAs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		req     Request
		wantErr string
	}{
		{name: "manual run without a head", req: Request{PRNumber: 0}},
		{name: "PR 1 without a head", req: Request{PRNumber: 1},
			wantErr: "expected head SHA: empty for PR #1; want authorize's pinned head-sha output"},
		{name: "PR with its head", req: Request{PRNumber: 1, ExpectedHeadSHA: headSHA}},
		{name: "short tested ref", req: Request{TestedRef: "abc123"}, wantErr: `tested ref: got "abc123"; want a full commit SHA`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.validateSHAs()
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
		})
	}
}

// TestRunErrorCountsOnlyRejectedPods: a failed run's error names what its
// rejected pods cost — their number, known seconds and dollars, and how many
// have an unknown cost — and nothing of failed or accepted attempts.
func TestRunErrorCountsOnlyRejectedPods(t *testing.T) {
	price := cost.KnownPrice(3.6, "catalog list price") // $0.001 a second
	res := Result{Attempts: []cost.Attempt{
		{Number: 1, Outcome: cost.OutcomeRejected, Price: price, Seconds: cost.KnownSeconds(100)},
		{Number: 2, Outcome: cost.OutcomeFailed, Price: price, Seconds: cost.KnownSeconds(1000)},
		{Number: 3, Outcome: cost.OutcomeRejected, Price: price, Seconds: cost.KnownSeconds(50)},
		{Number: 4, Outcome: cost.OutcomeNoCapacity},
		{Number: 5, Outcome: cost.OutcomeAccepted, Price: price, Seconds: cost.KnownSeconds(40)},
	}}
	r, _ := unitRun(t, nil)
	r.res = res

	err := r.fail(ErrExhausted, "all tried")

	var re *RunError
	assert.Assert(t, errors.As(err, &re))
	assert.Check(t, is.Equal(re.Rejected, 2))
	assert.Check(t, is.Equal(re.Seconds, int64(150)))
	assert.Check(t, is.Equal(re.Unknown, 0))
	assert.Check(t, is.Error(err, "provision attempts exhausted: all tried; 2 pod(s) rejected, 150 paid second(s), "+cost.KnownMoney(0.15).String()+" estimated"))

	// A rejected pod that never started has an unknown cost.
	r.res.Attempts = append(r.res.Attempts, cost.Attempt{Number: 6, Outcome: cost.OutcomeRejected, Price: price})
	err = r.fail(ErrExhausted, "all tried")
	assert.Check(t, is.ErrorContains(err, "3 pod(s) rejected, 150 paid second(s), "+cost.KnownMoney(0.15).String()+" estimated (+1 with unknown cost)"))
	known, unknown := r.res.RejectedCost()
	assert.Check(t, is.Equal(known.String(), "$0.1500"))
	assert.Check(t, is.Equal(unknown, 1))
}

// TestOutputs: the action outputs say exactly what was accepted and what
// rejected pods cost, and stay empty where nothing is known.
func TestOutputs(t *testing.T) {
	started := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("X", 3600))
	rejected := cost.Attempt{Number: 1, Candidate: "live-1", GPU: l4, PodID: "p1", Outcome: cost.OutcomeRejected,
		Price: cost.KnownPrice(3.6, "catalog list price"), Seconds: cost.KnownSeconds(10)}
	accepted := cost.Attempt{Number: 3, Candidate: "live-3", GPU: a4000, PodID: "p3", Outcome: cost.OutcomeAccepted,
		Price: cost.KnownPrice(0.25, "v2 cost while running"), Seconds: cost.KnownSeconds(33)}
	failed := cost.Attempt{Number: 2, Candidate: "live-2", GPU: a5000, Outcome: cost.OutcomeFailed}
	for _, tc := range []struct {
		name string
		res  Result
		want Outputs
	}{
		{
			name: "accepted after a rejection and a failure",
			res: Result{Decision: DecisionPaid, Image: "img@sha256:1", Attempts: []cost.Attempt{rejected, failed, accepted},
				Accepted: &Accepted{PodID: "p3", RunnerLabel: "lbl", GPU: a4000, Candidate: "live-3", Tier: "ampere",
					Price: cost.KnownPrice(0.25, "v2 cost while running"), StartupSeconds: 33, StartedAt: started}},
			want: Outputs{PaidPath: "paid", Image: "img@sha256:1", Attempts: "3", RejectedCostUSD: "0.0100",
				RejectedAttempts: cost.FormatAttempts([]cost.Attempt{rejected}), RunnerLabel: "lbl", GPUType: a4000,
				Candidate: "live-3", Tier: "ampere", PricePerHour: "0.25", StartupSeconds: "33", StartedAt: "2026-03-04T04:06:07Z", PodID: "p3"},
		},
		{
			name: "accepted at an unknown price, start unknown",
			res:  Result{Decision: DecisionPaid, Attempts: []cost.Attempt{accepted}, Accepted: &Accepted{PodID: "p3", StartupSeconds: 0}},
			want: Outputs{PaidPath: "paid", Attempts: "1", RejectedCostUSD: "0.0000", RejectedAttempts: cost.FormatAttempts(nil), StartupSeconds: "0", PodID: "p3"},
		},
		{
			name: "failed with a kept pod of unknown cost",
			res: Result{Decision: DecisionPaid, RetainedPodIDs: []string{"p1", "p2"}, RetentionArtifact: "keep-1",
				Attempts: []cost.Attempt{rejected, {Number: 2, PodID: "p2", Outcome: cost.OutcomeRejected}}},
			want: Outputs{PaidPath: "paid", Attempts: "2", RejectedCostUSD: "0.0100+unknown",
				RejectedAttempts: cost.FormatAttempts([]cost.Attempt{rejected, {Number: 2, PodID: "p2", Outcome: cost.OutcomeRejected}}),
				RetainedPodIDs:   "p1,p2", RetentionArtifactName: "keep-1"},
		},
		{
			name: "reused",
			res:  Result{Decision: DecisionReused, ReusedCheckURL: "https://example/check/1"},
			want: Outputs{PaidPath: "reused", ReusedCheckURL: "https://example/check/1", Attempts: "0", RejectedCostUSD: "0.0000",
				RejectedAttempts: cost.FormatAttempts(nil)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(tc.res.Outputs(), tc.want))
		})
	}
}

// TestSummaryShapes: the job summary shows each part only when there is
// something to show, and says how many rejected pods have an unknown cost.
func TestSummaryShapes(t *testing.T) {
	rejected := cost.Attempt{Number: 1, Candidate: "live-1", GPU: l4, PodID: "p1", Outcome: cost.OutcomeRejected,
		Price: cost.KnownPrice(3.6, "catalog list price"), Seconds: cost.KnownSeconds(10), Reason: "EXITED"}
	accepted := cost.Attempt{Number: 2, Candidate: "live-2", GPU: a4000, PodID: "p2", Outcome: cost.OutcomeAccepted,
		Price: cost.KnownPrice(0.25, "v2 cost while running"), Seconds: cost.KnownSeconds(33)}
	for _, tc := range []struct {
		name    string
		res     Result
		runErr  error
		want    []string
		notWant []string
	}{
		{
			name: "reused: the evidence only", res: Result{Decision: DecisionReused, ReusedCheckURL: "https://example/check/1", Image: "img"},
			want:    []string{"**Reused**: this tested ref already passed. No pod was created.\n\nEvidence: https://example/check/1\n"},
			notWant: []string{"Runner image", cost.Disclaimer},
		},
		{
			name: "nothing tried", res: Result{Decision: DecisionPaid}, runErr: errors.New("boom"),
			want:    []string{"**Failed**: boom\n\n", cost.Disclaimer},
			notWant: []string{"Runner image", "| #", "Rejected candidates cost", "Kept for inspection", "<details>", "[!WARNING]"},
		},
		{
			name: "skipped", res: Result{Decision: DecisionSkipped, Image: "img@sha256:1"},
			want: []string{"**Skipped**: the pull request carries `gpu-validated-locally`", "Runner image: `img@sha256:1`"},
		},
		{
			name: "accepted after a rejection",
			res: Result{Decision: DecisionPaid, Attempts: []cost.Attempt{rejected, accepted},
				Accepted: &Accepted{PodID: "p2", GPU: a4000, Candidate: "live-2", Tier: "ampere", Price: accepted.Price, RunnerLabel: "lbl", StartupSeconds: 33}},
			want: []string{"online 33 s after the pod started, after 2 attempt(s).", "| 33 to acceptance | $0.0023 to acceptance |",
				"Rejected candidates cost " + cost.KnownMoney(0.01).String() + ".\n", "| EXITED | 10 | $0.0100 |"},
			notWant: []string{"unknown cost", "**Failed**"},
		},
		{
			name: "a rejected pod of unknown cost, kept pods, warnings",
			res: Result{Decision: DecisionPaid, RetainedPodIDs: []string{"pb", "pa"}, Warnings: []string{"careful"},
				Attempts: []cost.Attempt{rejected, {Number: 2, Candidate: "live-2", GPU: a4000, PodID: "pb", Outcome: cost.OutcomeRejected}}},
			runErr: errors.New("exhausted"),
			want: []string{"plus 1 with unknown cost.\n", "**Kept for inspection (still billing):** pa, pb\n",
				"\n> [!WARNING]\n> careful\n", "| live-2 | NVIDIA RTX A4000 | pb | unknown | rejected | - |"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.res.Summary(tc.runErr)
			for _, w := range tc.want {
				assert.Check(t, is.Contains(got, w))
			}
			for _, w := range tc.notWant {
				assert.Check(t, !strings.Contains(got, w), "%q in:\n%s", w, got)
			}
		})
	}
}

// TestLoadReputation: no path is no record; a missing file is a cold start
// said in the note; an unreadable or invalid record is a problem naming the
// input and the path (the action warns), with no record.
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
	assert.Check(t, rec == nil && err == nil)
	assert.Check(t, is.Equal(note, `reputation: reputation-file "`+missing+`" does not exist yet: candidates in the seed's order`))

	_, _, err = LoadReputation("reputation-file", dir) // a directory cannot be read as a file
	assert.Check(t, is.ErrorContains(err, `input reputation-file: "`+dir+`": `))
	assert.Check(t, is.ErrorContains(err, "want a readable reputation record (JSON) or an empty value"))

	_, _, err = LoadReputation("reputation-file", invalid)
	assert.Check(t, is.ErrorContains(err, `input reputation-file: "`+invalid+`": `))

	want, perr := reputation.Parse([]byte(`{"version":1,"observations":[]}`))
	if perr != nil { // the record's format is reputation's: only compare when it accepts this one
		t.Skipf("reputation.Parse: %v", perr)
	}
	rec, note, err = LoadReputation("reputation-file", valid)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(note, ""))
	assert.Check(t, is.DeepEqual(*rec, want))
}

// TestOffer: a catalog entry is priced in a cloud only when offered there,
// at that cloud's price; an absent availability is not in stock.
func TestOffer(t *testing.T) {
	both := runpod.GPUType{ID: a4000, Memory: 16, Secure: true, Community: true, Availability: runpod.AvailabilityHigh,
		Price:       runpod.GPUPrice{Secure: 0.25, Community: 0.17},
		DataCenters: []runpod.ResourceAvailability{{ID: "US-TX-3", Availability: runpod.AvailabilityLow}}}
	secureOnly, communityOnly := both, both
	secureOnly.Community, communityOnly.Secure = false, false
	unlisted := both
	unlisted.Availability, unlisted.DataCenters = "", nil
	stock := []plan.DataCenterStock{{ID: "US-TX-3", Availability: "LOW"}}
	for _, tc := range []struct {
		name  string
		g     runpod.GPUType
		cloud config.Cloud
		want  plan.Offer
	}{
		{name: "secure", g: both, cloud: config.CloudSecure,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "SECURE", PricePerHour: 0.25, Availability: "HIGH", DataCenters: stock}},
		{name: "community", g: both, cloud: config.CloudCommunity,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "COMMUNITY", PricePerHour: 0.17, Availability: "HIGH", DataCenters: stock}},
		{name: "secure asked, community only", g: communityOnly, cloud: config.CloudSecure,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "SECURE", Availability: "HIGH", DataCenters: stock}},
		{name: "community asked, secure only", g: secureOnly, cloud: config.CloudCommunity,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "COMMUNITY", Availability: "HIGH", DataCenters: stock}},
		{name: "availability absent", g: unlisted, cloud: config.CloudSecure,
			want: plan.Offer{GPUID: a4000, MemoryGB: 16, Cloud: "SECURE", PricePerHour: 0.25, Availability: "NONE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(offer(tc.g, tc.cloud), tc.want))
		})
	}
}
