package serverless

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// drift rewrites an endpoint answer's JSON: RunPod answering other settings than asked for.
func drift(change func(e map[string]any)) func(int, []byte) []byte {
	return func(status int, body []byte) []byte {
		var e map[string]any
		if json.Unmarshal(body, &e) != nil {
			return body
		}
		change(e)
		out, _ := json.Marshal(e)
		return out
	}
}

// driftCases are the settings the lane asks for, each changed in RunPod's answer.
var driftCases = []struct {
	name   string
	change func(e map[string]any)
	want   string
}{
	{"flashboot", func(e map[string]any) { e["flashboot"] = "FLASHBOOT" }, `flashboot "FLASHBOOT", want "OFF"`},
	{"scaling type", func(e map[string]any) { e["scaling"] = map[string]any{"type": "REQUEST_COUNT", "requestCount": 4} }, `scaling.type "REQUEST_COUNT", want "QUEUE_DELAY"`},
	{"scaling value", func(e map[string]any) { e["scaling"] = map[string]any{"type": "QUEUE_DELAY", "queueDelay": 1} }, "scaling.queueDelay 1, want 4"},
	{"data-center pin", func(e map[string]any) { e["dataCenterIds"] = []string{"US-TX-3"} }, "dataCenterIds [US-TX-3], want none"},
	{"disk", func(e map[string]any) { e["disk"] = 50 }, "disk 50 GB, want 20 GB"},
	{"idle timeout", func(e map[string]any) { e["workers"].(map[string]any)["idleTimeout"] = 60 }, "workers.idleTimeout 60, want 5"},
	{"workersMax", func(e map[string]any) { e["workers"].(map[string]any)["max"] = 3 }, "workers.max 3, want 1"},
	{"GPU exclusions", func(e map[string]any) { e["gpu"].(map[string]any)["excludedTypes"] = []string{"NVIDIA RTX A5000"} }, "gpu.excludedTypes [NVIDIA RTX A5000], want none"},
	{"execution timeout", func(e map[string]any) { e["timeout"] = 600000 }, "timeout 600000 ms, want 900000 ms"},
}

// TestSetupRefusesEveryDriftedSetting: an endpoint whose answers show
// another setting than the lane asked for is refused with the setting's
// name, and what setup created is removed; no job is submitted.
func TestSetupRefusesEveryDriftedSetting(t *testing.T) {
	for _, route := range []string{"POST /v2/serverless", "GET /v2/serverless/{id}"} {
		for _, tc := range driftCases {
			t.Run(route+"/"+tc.name, func(t *testing.T) {
				w := newSimWorld(t, simConfig{api: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{
					{Match: runpodsim.Match{Route: route}, When: runpodsim.Trigger{Every: 1}, Body: drift(tc.change)}}}})
				r, err := w.setup()
				assert.Check(t, errors.Is(err, ErrSettingsMismatch), "%v", err)
				assert.Check(t, is.ErrorContains(err, tc.want))
				assert.Check(t, is.Len(w.live(), 0), "the endpoint and template were removed")
				assert.Check(t, r.CleanupConfirmed)
				_, err = w.run(context.Background())
				assert.Check(t, err != nil)
				assert.Check(t, is.Equal(w.requests()["POST /v2/{endpoint}/run"], 0), "no job on an endpoint whose settings differ")
			})
		}
	}
}

// TestHealthBeforeTheJobRemovesAnEndpointThatDrifted: the settings are read
// again right before the job is submitted; a drift seen only then is refused
// and removes the endpoint, and the job is never submitted.
func TestHealthBeforeTheJobRemovesAnEndpointThatDrifted(t *testing.T) {
	// The endpoint's second read is health's, before the job.
	w := newSimWorld(t, simConfig{api: runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{{Match: runpodsim.Match{Route: "GET /v2/serverless/{id}"},
		When: runpodsim.Trigger{Nth: []int{2}}, Body: drift(func(e map[string]any) { e["flashboot"] = "PRIORITY_FLASHBOOT" })}}}})
	_, err := w.setup()
	assert.NilError(t, err)
	_, err = w.run(context.Background())
	assert.Check(t, errors.Is(err, ErrSettingsMismatch), "%v", err)
	assert.Check(t, is.ErrorContains(err, `flashboot "PRIORITY_FLASHBOOT", want "OFF"`))
	assert.Check(t, is.ErrorContains(err, "the endpoint and template were removed"))
	assert.Check(t, is.Len(w.live(), 0))
	assert.Check(t, is.Equal(w.requests()["POST /v2/{endpoint}/run"], 0))
}

// poolMarket is the default market with AMPERE_16 holding the pool's real
// cards, the A4000 first.
func poolMarket() *runpodsim.Market {
	m := runpodsim.DefaultMarket()
	m.GPUTypes = append(m.GPUTypes,
		runpodsim.GPUType{ID: "NVIDIA RTX A4500", Name: "RTX A4500", Pool: "AMPERE_16", MemoryGB: 20, SecurePrice: 0.34, CommunityPrice: 0.19, ServerlessPrice: 0.58},
		runpodsim.GPUType{ID: "NVIDIA RTX 4000 Ada Generation", Name: "RTX 4000 Ada", Pool: "AMPERE_16", MemoryGB: 20, SecurePrice: 0.38, CommunityPrice: 0.2, ServerlessPrice: 0.58})
	return &m
}

// TestSetupExcludesThePoolsOtherCards: "one A4000" is an A4000, not any card
// of its pool: the endpoint excludes the others, so a scheduler that would
// pick another card can only pick the A4000; a type outside the pool is
// refused before anything is created.
func TestSetupExcludesThePoolsOtherCards(t *testing.T) {
	var placed []string
	worker := passingWorker(t)
	w := newSimWorld(t, simConfig{market: poolMarket(), place: func(eligible []string) string { return eligible[len(eligible)-1] },
		worker: runpodsim.JobWorkerFunc(func(ctx context.Context, j runpodsim.WorkerJob) runpodsim.WorkerResult {
			placed = append(placed, j.GPUType)
			return worker.Run(ctx, j)
		})})
	r, err := w.setup()
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(r.Asked.Endpoint.GPU.ExcludedTypes, []string{"NVIDIA RTX 4000 Ada Generation", "NVIDIA RTX A4500"}))
	assert.Check(t, is.Equal(r.Asked.GPUType, "NVIDIA RTX A4000"))
	_, err = w.run(context.Background())
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(placed, []string{"NVIDIA RTX A4000"}))

	other := newSimWorld(t, simConfig{market: poolMarket()})
	other.lane.Settings.GPUType = "NVIDIA L4"
	_, err = other.setup()
	assert.Check(t, is.ErrorContains(err, `GPU type "NVIDIA L4" is not in Serverless pool AMPERE_16 (its cards: [NVIDIA RTX A4000, NVIDIA RTX A4500, NVIDIA RTX 4000 Ada Generation])`))
	assert.Check(t, is.ErrorContains(err, "nothing created"))
	assert.Check(t, is.Equal(other.requests()["POST /v2/templates"], 0))
}

// TestCreateAfterA429LooksTheNameUpFirst: a create answered 429 is sent again
// only after a lookup by its unique name found nothing; a 429 whose create
// happened all the same is reconciled by name and never sent again.
func TestCreateAfterA429LooksTheNameUpFirst(t *testing.T) {
	t.Run("nothing was created", func(t *testing.T) {
		w := newSimWorld(t, simConfig{api: runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{
			{Match: runpodsim.Match{Route: "POST /v2/templates"}, When: runpodsim.Trigger{First: 1}},
			{Match: runpodsim.Match{Route: "POST /v2/serverless"}, When: runpodsim.Trigger{First: 2}}}}})
		_, err := w.setup()
		assert.NilError(t, err)
		got := w.requests()
		assert.Check(t, is.Equal(got["POST /v2/templates"], 2), "sent again once the name was not listed")
		assert.Check(t, is.Equal(got["POST /v2/serverless"], 3))
		assert.Check(t, is.Equal(strings.Count(w.logs.String(), "looking the name up before sending it again"), 3), w.logs.String())
		assert.Check(t, is.Len(w.live(), 2), "one template and one endpoint")
		assert.Check(t, lookupBeforeEachResend(w.sim.Requests(), "POST /v2/serverless", "GET /v2/serverless"))
	})
	t.Run("the create happened all the same", func(t *testing.T) {
		w := newSimWorld(t, simConfig{faults: runpodsim.ServerlessFaults{LostCreates: []runpodsim.ServerlessLostCreate{
			{Route: "POST /v2/serverless", When: runpodsim.Trigger{First: 1}, Status: 429}}}})
		r, err := w.setup()
		assert.NilError(t, err)
		assert.Check(t, is.Equal(w.requests()["POST /v2/serverless"], 1), "never sent again")
		assert.Check(t, is.Equal(r.Endpoint.Detail, "reconciled by name after a lost create answer"))
		assert.Check(t, is.Len(w.live(), 2))
	})
	t.Run("429 every time", func(t *testing.T) {
		w := newSimWorld(t, simConfig{api: runpodsim.Faults{RateLimits: []runpodsim.RateLimitFault{
			{Match: runpodsim.Match{Route: "POST /v2/templates"}, When: runpodsim.Trigger{Every: 1}}}}})
		r, err := w.setup()
		assert.Check(t, errors.Is(err, ErrUnresolved), "%v", err)
		assert.Check(t, is.Equal(w.requests()["POST /v2/templates"], createSends), "a bounded number of sends")
		assert.Check(t, is.Equal(r.Template.State, StateUnresolved))
	})
}

// lookupBeforeEachResend reports whether every repeated create of route was
// preceded, since the one before it, by a listing (lookup) request.
func lookupBeforeEachResend(reqs []runpodsim.RequestRecord, create, lookup string) bool {
	seen, listed := 0, false
	for _, r := range reqs {
		switch r.Route {
		case create:
			if seen > 0 && !listed {
				return false
			}
			seen, listed = seen+1, false
		case lookup:
			listed = true
		}
	}
	return seen > 1 && slices.ContainsFunc(reqs, func(r runpodsim.RequestRecord) bool { return r.Route == lookup })
}
