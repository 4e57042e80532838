package cost

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Attempts carry where their pod ran, when they ended and the host verdict
// through provision's output and the cost artifact; records written before
// they did read with those fields unknown, and a verdict that is none of the
// defined ones is refused, naming the key and the value.
func TestAttemptPlacementJSON(t *testing.T) {
	ended := time.Date(2026, 11, 2, 10, 4, 5, 0, time.UTC)
	full := Attempt{Number: 1, Candidate: "live-1", GPU: "NVIDIA L4", PodID: "p1", Price: KnownPrice(0.44, "v2 cost"),
		Outcome: OutcomeRejected, Reason: "EXITED while starting", Seconds: KnownSeconds(90),
		Cloud: "SECURE", DataCenter: "EU-RO-1", Driver: "12.8", Host: HostFailed, At: ended}
	tests := []struct {
		name    string
		in      string
		want    Attempt
		wantErr string
	}{
		{name: "round trip", in: FormatAttempts([]Attempt{full}), want: full},
		{name: "an older record: placement, verdict and time unknown",
			in: `[{"attempt":1,"candidate":"live-1","gpu":"NVIDIA L4","podId":"p1","price":{"perHour":0.44,"known":true,"source":"v2 cost"},` +
				`"outcome":"rejected","reason":"EXITED while starting","seconds":90}]`,
			want: Attempt{Number: 1, Candidate: "live-1", GPU: "NVIDIA L4", PodID: "p1", Price: KnownPrice(0.44, "v2 cost"),
				Outcome: OutcomeRejected, Reason: "EXITED while starting", Seconds: KnownSeconds(90)}},
		{name: "an unknown verdict", in: `[{"attempt":1,"outcome":"rejected","host":"flaky"}]`, wantErr: `key "[0].host"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAttempts(tc.in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.ErrorContains(t, err, `"flaky": want worked, failed or no value`)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, []Attempt{tc.want})
		})
	}
	// Unknown fields stay out of the written form, so older readers see what they knew.
	old := FormatAttempts([]Attempt{{Number: 1, Outcome: OutcomeNoCapacity}})
	for _, key := range []string{"cloud", "dataCenter", "driver", "host", `"at"`} {
		assert.Check(t, !strings.Contains(old, key), "%s written for an attempt without it: %s", key, old)
	}
}

// The accepted pod's placement comes from its record before deletion, and
// only from a record that describes it.
func TestReportPlacementFromThePodRecord(t *testing.T) {
	start := wire.KnownTime(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC))
	rec := func(id string) *runpod.Pod {
		return &runpod.Pod{ID: id, Status: runpod.PodRunning, Cost: 0.44, StartedAt: start, GPU: &runpod.PodGPU{ID: "NVIDIA L4"},
			Cloud: "COMMUNITY", DataCenterID: "EU-RO-1", CudaVersion: "12.8"}
	}
	tests := []struct {
		name              string
		record            *runpod.Pod
		cloud, dc, driver string
	}{
		{name: "its own record", record: rec("p1"), cloud: "COMMUNITY", dc: "EU-RO-1", driver: "12.8"},
		{name: "another pod's record says nothing about it", record: rec("other")},
		{name: "no record", record: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := BuildReport(Evidence{PodID: "p1", Record: tc.record, DeletedAt: wire.KnownTime(time.Date(2026, 11, 2, 10, 10, 0, 0, time.UTC))})
			assert.Check(t, is.Equal(r.Cloud, tc.cloud))
			assert.Check(t, is.Equal(r.DataCenter, tc.dc))
			assert.Check(t, is.Equal(r.Driver, tc.driver))

			data, err := json.Marshal(r)
			assert.NilError(t, err)
			var back Report
			assert.NilError(t, json.Unmarshal(data, &back))
			assert.Check(t, is.Equal(back.DataCenter, tc.dc), "the artifact keeps it: %s", data)
		})
	}
}
