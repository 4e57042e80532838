package lanes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// GET /v2/pods/{id} answers a record that is not the published pod of this
// run attempt: the real cleanup binary deletes
// the pod, prices it from provision's snapshot, never from that record, and
// prints a ::warning:: naming the pod.
func TestCleanupDoesNotPriceAnotherPodsRecord(t *testing.T) {
	// The observed case: a record started ~334 days ago, priced at ~28.9 M seconds.
	longAgo := time.Now().Add(-28_900_000 * time.Second).UTC().Format(time.RFC3339)
	runID := int64(9100) // startCloud's run
	tests := []struct {
		name string
		edit func(pod map[string]any)
	}{
		{name: "another pod's record", edit: func(pod map[string]any) {
			other := ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: 4242, Attempt: 1, Candidate: 1}
			pod["id"], pod["name"], pod["env"] = "otherpod000001", other.PodName(), other.Env()
			pod["startedAt"], pod["cost"] = longAgo, 0.10
		}},
		{name: "our id with another run's name and tags", edit: func(pod map[string]any) {
			other := ownership.Tags{Repository: cloud.Repository, Workflow: cloud.Workflow, RunID: runID + 1, Attempt: 1, Candidate: 1}
			pod["name"], pod["env"], pod["startedAt"], pod["cost"] = other.PodName(), other.Env(), longAgo, 0.10
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rewrite := runpodsim.RewriteFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{First: 1},
				Body: func(_ int, body []byte) []byte {
					var pod map[string]any
					if err := json.Unmarshal(body, &pod); err != nil {
						return body
					}
					tc.edit(pod)
					out, _ := json.Marshal(pod)
					return out
				}}
			s := startCloud(t, cleanupMarket(), runpodsim.Faults{Rewrites: []runpodsim.RewriteFault{rewrite}}, fastConfig)
			assert.Equal(t, s.RunID, runID)
			id := s.cleanupLaunch(t, s.RunID, 1, 1)

			started := time.Now().Add(-90 * time.Second).UTC().Format(time.RFC3339)
			res := harness.RunStep(t, s.cleanupStep(s.RunID, map[string]string{"pod-id": id, "price-per-hour": "0.25", "started-at": started, "gpu-type": harness.A4000}))
			assert.Equal(t, res.ExitCode, 0, res.Stdout)
			assert.Equal(t, s.cleanupStatus(t, id), runpodsim.StatusTerminated)
			assert.Check(t, is.Contains(res.Stdout, "::warning::pod "+id+": record before deletion unreadable or unusable"),
				"a warning names the pod:\n%s", res.Stdout)
			assert.Check(t, is.Contains(res.Summary, "| Price | $0.25/h (provision snapshot) |"))
			assert.Check(t, is.Contains(res.Summary, "| Paid window | "+started+" → "))

			usd, err := strconv.ParseFloat(res.Outputs["cost-usd"], 64)
			assert.NilError(t, err, res.Outputs["cost-usd"])
			assert.Check(t, usd < 0.05, "priced from the snapshot (~100 s at $0.25/h), not the other record: $%v", usd)
			data, err := os.ReadFile(filepath.Join(s.Workspace, res.Outputs["cost-artifact-path"]))
			assert.NilError(t, err)
			artifact, err := cost.ParseArtifact(data)
			assert.NilError(t, err)
			assert.Equal(t, artifact.Report.Price, cost.KnownPrice(money.PerHour(0.25), "provision snapshot"))
			assert.Equal(t, artifact.Report.Window.Start.String(), started)
		})
	}
}

// An unreadable record (a 503 on the one capture read) is a ::warning::
// naming the pod too, not an info line: a cost the report cannot show is
// something the maintainer must see.
func TestCleanupUnreadableRecordWarns(t *testing.T) {
	getFails := runpodsim.ServerErrorFault{Match: runpodsim.Match{Route: "GET /v2/pods/{id}"}, When: runpodsim.Trigger{First: 1}, Status: 503}
	s := startCloud(t, cleanupMarket(), runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{getFails}}, fastConfig)
	id := s.cleanupLaunch(t, s.RunID, 1, 1)
	res := harness.RunStep(t, s.cleanupStep(s.RunID, map[string]string{"pod-id": id, "price-per-hour": "0.25"}))
	assert.Equal(t, res.ExitCode, 0, res.Stdout)
	assert.Check(t, is.Contains(res.Stdout, "::warning::pod "+id+": record before deletion unreadable or unusable"), res.Stdout)
}
