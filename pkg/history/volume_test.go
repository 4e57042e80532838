package history

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// The cost history shows a network volume's storage as RunPod bills it
// (GET /v2/billing/network-volumes, read over HTTP from the simulated
// RunPod): its own table, never an untracked pod, and left out of the
// budget's days, as the live budget check leaves it out.
func TestNetworkVolumeStorageInTheCostHistory(t *testing.T) {
	since := time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC)
	clock := simclock.NewVirtual(t0)
	srv, err := runpodsim.New(runpodsim.WithClock(clock), runpodsim.WithAPIKey("rp_key"),
		runpodsim.WithNetworkVolumes(
			runpodsim.NetworkVolume{ID: "agv6w2qcg7", Name: "warm", Size: 100, DataCenter: "EU-RO-1", Since: since},
			runpodsim.NetworkVolume{ID: "vol0theirs", Name: "theirs", Size: 500, DataCenter: "EU-RO-1", Since: since, Account: "another-team"}))
	assert.NilError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	clock.Advance(3 * 24 * time.Hour) // to 2026-10-09 09:00
	policy := reqpolicy.New(reqpolicy.WithClock(clock), reqpolicy.WithSleeper(clock.Sleep))
	client := runpod.New(ts.URL, "rp_key", runpod.WithPolicy(policy))

	rng := Range{Since: date(2026, 10, 6), Until: date(2026, 10, 7)}
	b := FetchBilling(context.Background(), client, rng, clock.Now())
	assert.Check(t, is.Equal(b.Error, ""))
	daily := 100 * runpodsim.VolumePricePerGBMonth / 730 * 24 // $0.230137 a day
	var volumeDays []string
	for _, c := range b.Charges {
		assert.Check(t, is.Equal(c.Kind, KindNetworkVolume), "no pod ran")
		assert.Check(t, is.Equal(c.ID, "agv6w2qcg7"), "another account's volume is not billed to this one")
		volumeDays = append(volumeDays, c.day())
	}
	assert.Check(t, is.DeepEqual(volumeDays, []string{"2026-10-06", "2026-10-07", "2026-10-08"}), "the range's days and the day after")

	r := summarize([]Attempt{billedAttempt(1, t0, podOf("p", 0.1))}, nil)
	rec := Reconcile(r, b, nil, 0)
	assert.Check(t, is.Len(rec.Untracked, 0), "storage is not an untracked pod")
	assert.Assert(t, is.Len(rec.Volumes, 1))
	assert.Check(t, is.DeepEqual(rec.Volumes[0].Days, []string{"2026-10-06", "2026-10-07", "2026-10-08"}))
	assert.Check(t, rec.Volumes[0].BilledUSD > money.FromDollars(3*daily-1e-4) && rec.Volumes[0].BilledUSD < money.FromDollars(3*daily+1e-4), "billed %v", rec.Volumes[0].BilledUSD)
	for _, d := range rec.Days {
		assert.Check(t, is.Equal(d.UntrackedUSD, money.Amount(0)), "%s: storage is not in the budget's day", d.Day)
	}

	r.Billing = rec
	md := r.Markdown()
	assert.Check(t, is.Contains(md, "Network volume storage (warm data; billed by the hour whether or not a pod mounts it, and not counted in the budget): **$0.6904**."))
	assert.Check(t, is.Contains(md, "| `agv6w2qcg7` | 3 | 2026-10-06 | 2026-10-08 | $0.6904 |"), "%s", md[strings.Index(md, "Network volume"):])
}
