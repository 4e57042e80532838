package gatecheck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestFollowMarkerRoundTrip(t *testing.T) {
	f, err := ParseFollowMarker(FollowPrefix + "42:" + mergeKeyM)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(f.Leader, int64(42)))
	assert.Check(t, is.DeepEqual(f.Marker, Marker{TestedRef: merge, Kind: KindPaid, Key: keyT}))
	assert.Check(t, is.Equal(f.String(), FollowPrefix+"42:"+mergeKeyM))

	for _, bad := range []string{
		mergeKeyM, FollowPrefix + "0:" + mergeKeyM, FollowPrefix + "x:" + mergeKeyM, FollowPrefix + "42",
		FollowPrefix + "42:" + "runpod-gpu-gate:v1:main:paid",
	} {
		_, err := ParseFollowMarker(bad)
		assert.Check(t, err != nil, "%q parsed", bad)
	}
	_, err = ParseMarker(FollowPrefix + "42:" + mergeKeyM)
	assert.Check(t, err != nil, "a follow gate is never a gate to reuse")
}

func FuzzParseFollowMarker(f *testing.F) {
	f.Add(FollowPrefix + "42:" + "runpod-gpu-gate:v1:" + merge + ":paid")
	f.Add(FollowPrefix + "1:runpod-gpu-gate:v2:" + merge + ":paid:tree:" + strings.Repeat("7", 40) + ":lane:" + strings.Repeat("1", 64))
	f.Add(FollowPrefix + "-1:")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseFollowMarker(s)
		if err != nil {
			return
		}
		if m.Leader <= 0 {
			t.Fatalf("ParseFollowMarker(%q) accepted leader %d", s, m.Leader)
		}
		if _, err := ParseFollowMarker(m.String()); err != nil {
			t.Fatalf("ParseFollowMarker(%q) formats to %q, which does not parse: %v", s, m.String(), err)
		}
	})
}

// The follow gate is queued, names its leader, and says when the leader counts as lost.
func TestFollowContent(t *testing.T) {
	leader := gateRun(7, DefaultCheckName, mergeKeyM, "in_progress", "", ourApp, time.Time{})
	leader.StartedAt = &github.Timestamp{Time: t0}
	in, err := FollowContent(Evidence{HeadSHA: head, TestedRef: merge, Key: keyT, RunURL: "https://github.com/o/r/actions/runs/5"}, leader, 2*time.Hour)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(in.Status, "queued"))
	assert.Check(t, is.Equal(in.ExternalID, FollowPrefix+"7:"+mergeKeyM))
	assert.Check(t, is.Equal(in.Name, DefaultCheckName))
	assert.Check(t, is.Equal(in.DetailsURL, "https://github.com/o/r/actions/runs/5"))
	assert.Check(t, is.Contains(in.Summary, "gate 7 (https://github.com/o/r/runs/7)"))
	assert.Check(t, is.Contains(in.Summary, "counts as lost at 2026-11-20T12:00:00Z"))
	assert.Check(t, is.Equal(in.Conclusion, ""))

	_, err = FollowContent(Evidence{HeadSHA: "main", TestedRef: merge}, leader, time.Hour)
	assert.Check(t, is.ErrorContains(err, `head SHA "main"`))
	_, err = FollowContent(Evidence{HeadSHA: head, TestedRef: merge}, &github.CheckRun{}, time.Hour)
	assert.Check(t, is.ErrorContains(err, "leader check run id 0"))
}

// followFixture is a leader's published gate (id 20, app ourApp) and a fake
// holding follow gates on two heads.
func followFixture(conclusion string) (*fakeChecks, *github.CheckRun) {
	f := &fakeChecks{now: t0, nextID: 10}
	gate := gateRun(20, DefaultCheckName, ExternalIDPrefixV2+merge+":paid:tree:"+tree+":lane:"+lane, "completed", conclusion, ourApp, t0)
	return f, gate
}

// The leader's gate completes exactly the follow gates that wait for it (or
// an older, dead stake) for its key from its app, on the heads given: reused
// when it passed, failed when it did not.
func TestCompleteFollowers(t *testing.T) {
	for _, tc := range []struct {
		name       string
		conclusion string
		kind       Kind
		wantKind   Kind
		wantConcl  string
	}{
		{name: "a passed leader: its followers reuse it", conclusion: "success", kind: KindPaid, wantKind: KindReused, wantConcl: "success"},
		{name: "a failed leader: its followers fail, so a later delivery tests again", conclusion: "failure", kind: KindFailed,
			wantKind: KindFailed, wantConcl: "failure"},
		{name: "a withdrawn or skipped leader never passes its followers", conclusion: "neutral", kind: KindSkipped,
			wantKind: KindFailed, wantConcl: "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, gate := followFixture(tc.conclusion)
			follow := func(leader string) string { return FollowPrefix + leader + ":" + mergeKeyM }
			mine := f.add("queued", "", follow("20"), t0)                                             // waits for this leader
			older := f.addOn(earlierHead, "queued", "", follow("3"), t0)                              // waited for a dead stake
			younger := f.add("queued", "", follow("25"), t0)                                          // waits for a younger leader
			otherKey := f.add("queued", "", FollowPrefix+"20:runpod-gpu-gate:v1:"+merge2+":paid", t0) // another tested ref, no key
			done := f.add("completed", "success", follow("20"), t0)                                   // already completed
			foreign := f.add("queued", "", follow("20"), t0)                                          // another app's
			foreign.App = &github.App{ID: github.Int64(999)}
			e := Evidence{Kind: tc.kind, HeadSHA: head, TestedRef: merge, Key: keyT}

			got, err := CompleteFollowers(context.Background(), f, gate, e, []string{head, earlierHead, head, "main"})

			assert.NilError(t, err)
			assert.Check(t, is.Equal(got.Kind, tc.wantKind))
			assert.Check(t, is.DeepEqual(f.lists, []string{head, earlierHead}), "each head listed once")
			var ids []int64
			for _, r := range got.Completed {
				ids = append(ids, r.GetID())
			}
			assert.Check(t, is.DeepEqual(ids, []int64{mine.GetID(), older.GetID()}))
			for _, r := range []*github.CheckRun{mine, older} {
				assert.Check(t, is.Equal(r.GetStatus(), "completed"))
				assert.Check(t, is.Equal(r.GetConclusion(), tc.wantConcl))
				assert.Check(t, is.Equal(r.GetExternalID(), ExternalIDPrefixV2+merge+":"+string(tc.wantKind)+":tree:"+tree+":lane:"+lane))
			}
			for _, r := range []*github.CheckRun{younger, otherKey, foreign} {
				assert.Check(t, is.Equal(r.GetStatus(), "queued"), "check run %d", r.GetID())
			}
			assert.Check(t, is.Equal(done.GetConclusion(), "success"))
			last := f.updates[len(f.updates)-1]
			if tc.wantKind == KindReused {
				assert.Check(t, is.Contains(last.Summary, "https://github.com/o/r/runs/20"), "links the leader's gate")
			} else {
				assert.Check(t, is.Contains(last.Summary, "this head waited for gate 20"))
				assert.Check(t, is.Contains(last.Summary, "re-run its workflow run to test it"))
			}
		})
	}
}

// A head that cannot be listed does not stop the others; the error names it.
func TestCompleteFollowersReportsWhatItCouldNotDo(t *testing.T) {
	f, gate := followFixture("success")
	f.listErr = errors.New("502 Bad Gateway")
	got, err := CompleteFollowers(context.Background(), f, gate, Evidence{Kind: KindPaid, HeadSHA: head, TestedRef: merge, Key: keyT}, []string{head, earlierHead})
	assert.Check(t, is.ErrorContains(err, "list the follow gates on "+head+": 502 Bad Gateway"))
	assert.Check(t, is.ErrorContains(err, "list the follow gates on "+earlierHead))
	assert.Check(t, is.Len(got.Completed, 0))
}
