package reqpolicy

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func gitHubHeader(limit, remaining int, reset time.Time) http.Header {
	return http.Header{"X-Ratelimit-Limit": {strconv.Itoa(limit)}, "X-Ratelimit-Remaining": {strconv.Itoa(remaining)},
		"X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)}}
}

func runPodHeader(rate, policy string) http.Header {
	return http.Header{"Ratelimit": {rate}, "Ratelimit-Policy": {policy}}
}

// Two requests go out back to back; the second waits for the first answer's
// window to reset when that answer showed the window below its reserve.
func TestReserveHoldsRequestsUntilTheWindowResets(t *testing.T) {
	tests := []struct {
		name     string
		read     QuotaReader
		fraction float64
		header   func(now time.Time) http.Header
		wantWait time.Duration // the hold before the second request; 0: none
	}{
		{name: "GitHub below the reserve waits for the reset", read: GitHubQuota, fraction: 0.1,
			header:   func(now time.Time) http.Header { return gitHubHeader(5000, 499, now.Add(20*time.Minute)) },
			wantWait: 20 * time.Minute},
		{name: "GitHub at the reserve goes on", read: GitHubQuota, fraction: 0.1,
			header: func(now time.Time) http.Header { return gitHubHeader(5000, 500, now.Add(20*time.Minute)) }},
		{name: "RunPod minute window below the reserve", read: IETFQuota, fraction: 0.1,
			header:   func(time.Time) http.Header { return runPodHeader(`"minute";r=5;t=12`, `"minute";q=60;w=60`) },
			wantWait: 12 * time.Second},
		{name: "RunPod: the longest window below its reserve sets the hold", read: IETFQuota, fraction: 0.1,
			header: func(time.Time) http.Header {
				return runPodHeader(`"minute";r=1;t=30, "hour";r=100;t=1800`, `"minute";q=60;w=60, "hour";q=3000;w=3600`)
			},
			wantWait: 30 * time.Minute},
		{name: "RunPod: windows above their reserve go on", read: IETFQuota, fraction: 0.1,
			header: func(time.Time) http.Header {
				return runPodHeader(`"minute";r=6;t=30, "hour";r=2000;t=1800`, `"minute";q=60;w=60, "hour";q=3000;w=3600`)
			}},
		{name: "RunPod's earlier draft headers below the reserve", read: IETFQuota, fraction: 0.1,
			header: func(time.Time) http.Header {
				return http.Header{"Ratelimit-Limit": {"60"}, "Ratelimit-Remaining": {"3"}, "Ratelimit-Reset": {"20"}}
			},
			wantWait: 20 * time.Second},
		{name: "a window without a policy keeps no reserve", read: IETFQuota, fraction: 0.1,
			header: func(time.Time) http.Header { return http.Header{"Ratelimit": {`"minute";r=0;t=30`}} }},
		{name: "unreadable headers keep no reserve", read: GitHubQuota, fraction: 0.1,
			header: func(time.Time) http.Header { return http.Header{"X-Ratelimit-Remaining": {"zero"}} }},
		{name: "no reserve configured", read: GitHubQuota, fraction: 0,
			header: func(now time.Time) http.Header { return gitHubHeader(5000, 0, now.Add(20*time.Minute)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(WithReserve(tc.read, tc.fraction))
			next := h.script(step{status: 200, header: tc.header(h.clock.Now())}, step{status: 200})
			rt := h.policy.Transport(next)

			for range 2 {
				resp, err := get(context.Background(), rt, "/v2/pods")
				assert.NilError(t, err)
				readAll(resp)
			}

			gap := next.sent[1].at.Sub(next.sent[0].at)
			assert.Check(t, is.Equal(gap, tc.wantWait))
			until, why := h.policy.Held()
			if tc.wantWait == 0 {
				assert.Check(t, until.IsZero(), why)
				return
			}
			assert.Check(t, is.Equal(until, next.sent[0].at.Add(tc.wantWait)))
			assert.Check(t, is.Contains(why, "below the reserve"))
			assert.Check(t, is.Contains(h.log(), "rate-limit reserve: "))
		})
	}
}

// A hold that does not fit the caller's deadline ends the request at once
// with a *WaitError rather than sleeping past the deadline or spending the reserve.
func TestReserveHoldBeyondTheDeadlineStopsTheRequest(t *testing.T) {
	h := newHarness(WithReserve(GitHubQuota, 0.1))
	ctx, cancel := h.withFakeDeadline(5 * time.Minute)
	defer cancel()
	next := h.script(step{status: 200, header: gitHubHeader(1000, 10, h.clock.Now().Add(40*time.Minute))}, step{status: 200})
	rt := h.policy.Transport(next)

	resp, err := get(ctx, rt, "/repos/o/r/actions/runs/1")
	assert.NilError(t, err)
	readAll(resp)
	_, err = get(ctx, rt, "/repos/o/r/actions/runs/2")

	var wait *WaitError
	assert.Assert(t, errors.As(err, &wait), "got %v", err)
	assert.Check(t, is.Equal(next.count(), 1), "the reserve is not spent")
	assert.Check(t, is.Len(h.sleeps.waits, 0), "nothing slept past the deadline")
}

// A 429 that reports the window is handled as before, and its headers hold
// the next request too.
func TestReserveReadsRetryAnswers(t *testing.T) {
	h := newHarness(WithReserve(IETFQuota, 0.1), WithMaxAttempts(2))
	next := h.script(
		step{status: 429, header: http.Header{"Retry-After": {"3"}, "Ratelimit": {`"minute";r=0;t=3`}, "Ratelimit-Policy": {`"minute";q=60;w=60`}}},
		step{status: 200})
	resp, err := get(context.Background(), h.policy.Transport(next), "/v2/pods")
	assert.NilError(t, err)
	readAll(resp)
	assert.Check(t, is.Equal(next.sent[1].at.Sub(next.sent[0].at), 3*time.Second))
	until, _ := h.policy.Held()
	assert.Check(t, is.Equal(until, next.sent[0].at.Add(3*time.Second)))
}

func TestReserveOf(t *testing.T) {
	tests := []struct {
		limit    int
		fraction float64
		want     int
	}{
		{limit: 5000, fraction: 0.1, want: 500},
		{limit: 60, fraction: 0.1, want: 6},
		{limit: 7, fraction: 0.1, want: 1},
		{limit: 0, fraction: 0.1, want: 0},
		{limit: 60, fraction: 0, want: 0},
	}
	for _, tc := range tests {
		assert.Check(t, is.Equal(ReserveOf(tc.limit, tc.fraction), tc.want), "%d × %v", tc.limit, tc.fraction)
	}
}

// The readers' windows as the hold and its message see them, edges included:
// the default resource name, a window at zero, a reset at the bound.
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
		{name: "the earlier draft's RateLimit-Limit, -Remaining and -Reset", read: IETFQuota,
			header: http.Header{"Ratelimit-Limit": {"60, 60;w=60, 3000;w=3600"}, "Ratelimit-Remaining": {"4"}, "Ratelimit-Reset": {"12"}},
			want:   []Window{{Name: "RunPod window", Limit: 60, Remaining: 4, Reset: epoch.Add(12 * time.Second)}}},
		{name: "the earlier draft without a limit keeps none", read: IETFQuota,
			header: http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"12"}},
			want:   []Window{{Name: "RunPod window", Remaining: 0, Reset: epoch.Add(12 * time.Second)}}},
		{name: "the earlier draft with an unreadable reset is no window", read: IETFQuota,
			header: http.Header{"Ratelimit-Limit": {"60"}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"soon"}}},
		{name: "the current draft wins over the earlier one", read: IETFQuota,
			header: http.Header{"Ratelimit": {`"minute";r=5;t=30`}, "Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"12"}},
			want:   []Window{{Name: "RunPod minute", Remaining: 5, Reset: epoch.Add(30 * time.Second)}}},
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
