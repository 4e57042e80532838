package watchdog

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/wire"
)

// The summary says what became of the pod and the run in every case: only
// an early end that did not confirm the deletion warns that the pod may bill.
func TestSummaryNamesThePodsAndTheRunsFate(t *testing.T) {
	started := wire.KnownTime(afterStart(0))
	for _, tc := range []struct {
		name   string
		res    Result
		runErr error
		want   []string
	}{
		{name: "pod already gone", res: Result{Outcome: OutcomePodGone, Reason: "pod p1 was already deleted", PodID: "p1"},
			want: []string{"**pod-gone**: pod p1 was already deleted.", "- Pod `p1`: not deleted by the watchdog\n"}},
		{name: "watch interrupted", res: Result{Outcome: OutcomeInterrupted, Reason: "the watch was\ncancelled", PodID: "p1", StartedAt: started},
			want: []string{"**interrupted**: the watch was cancelled.", "- Pod `p1`: not deleted by the watchdog\n",
				"- Provider start: 2030-01-02T03:01:00Z; test step reached: false\n"}},
		{name: "deletion unconfirmed", res: Result{Outcome: OutcomeSetupExpired, PodID: "p1",
			Cancel: Cancel{Skipped: "the pod's deletion is unconfirmed;\ncancelling only follows a confirmed deletion"}},
			runErr: errors.New("deletion of pod p1 unconfirmed"),
			want: []string{"- Pod `p1`: **deletion unconfirmed: it may still be billing**; cleanup retries, or delete it by hand\n",
				"- Workflow run: not cancelled: the pod's deletion is unconfirmed; cancelling only follows a confirmed deletion\n",
				"\n**Watchdog failed:** deletion of pod p1 unconfirmed\n"}},
		{name: "cancel failed", res: Result{Outcome: OutcomeObsolete, PodID: "p1", Deleted: true, DeletedAt: afterStart(time.Minute), TestsStarted: true, StartedAt: started,
			Cancel: Cancel{Err: errors.New("workflow run not cancelled: 403")}},
			want: []string{"- Pod `p1`: deleted, confirmed at 2030-01-02T03:02:00Z\n", "test step reached: true\n",
				"- Workflow run: **cancel failed**: workflow run not cancelled: 403\n"}},
		{name: "cancelled", res: Result{Outcome: OutcomeObsolete, PodID: "p1", Deleted: true, DeletedAt: afterStart(time.Minute), Cancel: Cancel{Requested: true}},
			want: []string{"- Workflow run: cancelled (this attempt only; a newer attempt is never cancelled)\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.res.Summary(tc.runErr)
			for _, w := range tc.want {
				assert.Check(t, is.Contains(got, w))
			}
			assert.Check(t, is.Equal(strings.Contains(got, "may still be billing"), tc.name == "deletion unconfirmed"), got)
			assert.Check(t, is.Equal(strings.Contains(got, "Workflow run:"), tc.res.Cancel != (Cancel{})), got)
			assert.Check(t, is.Equal(strings.Contains(got, "Provider start:"), tc.res.StartedAt.Known()), got)
			assert.Check(t, is.Equal(strings.Contains(got, "Watchdog failed"), tc.runErr != nil), got)
		})
	}
}
