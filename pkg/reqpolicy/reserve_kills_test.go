package reqpolicy

import (
	"net/http"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The readers' windows as the hold and its message see them (mutation kills
// for reserve.go: the default resource name, a window at zero, a reset at
// the bound).
func TestQuotaReaderWindows(t *testing.T) {
	reset := epoch.Add(30 * time.Minute)
	tests := []struct {
		name   string
		read   QuotaReader
		header http.Header
		want   []Window
	}{
		{name: "GitHub without a resource is core", read: GitHubQuota, header: gitHubHeader(5000, 0, reset),
			want: []Window{{Name: "GitHub core", Limit: 5000, Remaining: 0, Reset: reset}}},
		{name: "GitHub names the resource", read: GitHubQuota,
			header: func() http.Header {
				h := gitHubHeader(30, 3, reset)
				h.Set("X-RateLimit-Resource", "search")
				return h
			}(),
			want: []Window{{Name: "GitHub search", Limit: 30, Remaining: 3, Reset: reset}}},
		{name: "GitHub negative remaining is unreadable", read: GitHubQuota, header: gitHubHeader(5000, -1, reset)},
		{name: "GitHub zero limit is unreadable", read: GitHubQuota, header: gitHubHeader(0, 0, reset)},
		{name: "GitHub reset at the epoch is unreadable", read: GitHubQuota, header: gitHubHeader(5000, 0, time.Unix(0, 0))},
		{name: "RunPod window at zero, reset at the bound", read: IETFQuota,
			header: runPodHeader(`"day";r=0;t=31622400`, `"day";q=50000;w=86400`),
			want:   []Window{{Name: "RunPod day", Limit: 50000, Remaining: 0, Reset: epoch.Add(maxWindowSeconds * time.Second)}}},
		{name: "RunPod reset past the bound is no window", read: IETFQuota,
			header: runPodHeader(`"day";r=0;t=31622401`, `"day";q=50000;w=86400`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(tc.read(tc.header, epoch), tc.want))
		})
	}
}

// A fraction of 1 would keep every request for others: it is refused like
// any fraction outside (0, 1), and the policy keeps no reserve.
func TestReserveFractionOutsideTheRangeKeepsNone(t *testing.T) {
	for _, fraction := range []float64{0, 1, 1.5, -0.1} {
		h := newHarness(WithReserve(GitHubQuota, fraction))
		assert.Check(t, h.policy.reserve == nil, "fraction %v", fraction)
	}
	h := newHarness(WithReserve(nil, 0.1))
	assert.Check(t, h.policy.reserve == nil, "no reader")
}
