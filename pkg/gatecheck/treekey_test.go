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

var (
	tree      = strings.Repeat("7", 40)
	tree2     = strings.Repeat("8", 40)
	lane      = strings.Repeat("1", 64)
	lane2     = strings.Repeat("2", 64)
	oldHead   = strings.Repeat("d", 40)
	keyT      = &TreeKey{Tree: tree, Lane: lane}
	baseLane  = LaneDefinition{Config: []byte(`{"max_provision_attempts":3}`), TestCommand: "make test-gpu", ImageDigest: "ghcr.io/actions/actions-runner:latest@sha256:" + lane, Workflow: "o/r/.github/workflows/gpu.yml@refs/heads/main", Version: "v1.2.3"}
	mergeKeyM = ExternalIDPrefixV2 + merge + ":paid:tree:" + tree + ":lane:" + lane
)

func TestMarkerRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		key  *TreeKey
		want string
	}{
		{name: "no key is exactly v1", want: "runpod-gpu-gate:v1:" + merge + ":paid"},
		{name: "a key makes v2", key: keyT, want: mergeKeyM},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FormatMarker(merge, KindPaid, tc.key)
			assert.NilError(t, err)
			assert.Equal(t, s, tc.want)
			m, err := ParseMarker(s)
			assert.NilError(t, err)
			assert.DeepEqual(t, m, Marker{TestedRef: merge, Kind: KindPaid, Key: tc.key})
			assert.Equal(t, m.String(), s)
		})
	}
	_, err := ParseExternalID(mergeKeyM)
	assert.ErrorContains(t, err, "want prefix", "an old reader never takes a v2 marker for a v1 one")
}

func TestParseMarkerRejects(t *testing.T) {
	tests := []struct{ in, wantErr string }{
		{"", "want prefix"},
		{"local-gpu-gate:v1:" + merge, "want prefix"},
		{ExternalIDPrefixV2 + merge + ":paid", "want \"runpod-gpu-gate:v2:\"<ref>"},
		{ExternalIDPrefixV2 + merge + ":paid:", "a v2 marker needs its tree key"},
		{ExternalIDPrefixV2 + merge + ":free:tree:" + tree + ":lane:" + lane, `kind "free"`},
		{ExternalIDPrefixV2 + "main:paid:tree:" + tree + ":lane:" + lane, `tested ref "main"`},
		{ExternalIDPrefixV2 + merge + ":paid:tree:" + tree + ":lane:" + lane[:63], "want a SHA-256 digest"},
		{ExternalIDPrefixV2 + merge + ":paid:tree:" + strings.Repeat("A", 40) + ":lane:" + lane, "want a full lowercase tree SHA"},
		{ExternalIDPrefixV2 + merge + ":paid:tree:" + tree + ":lane:" + lane + ":x", "want tree:<tree sha>:lane:<lane digest>"},
		{ExternalIDPrefixV2 + merge + ":paid:leaf:" + tree + ":lane:" + lane, "want tree:<tree sha>:lane:<lane digest>"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseMarker(tc.in)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
	_, err := FormatMarker(merge, KindPaid, &TreeKey{Tree: tree, Lane: "nope"})
	assert.ErrorContains(t, err, `lane "nope": want a SHA-256 digest`)
}

// Every part of the lane changes the digest; a missing part is an error that
// names it, never a digest of less than the whole lane.
func TestLaneDigest(t *testing.T) {
	base, err := LaneDigest(baseLane)
	assert.NilError(t, err)
	again, _ := LaneDigest(baseLane)
	assert.Equal(t, base, again, "deterministic")
	changes := []struct {
		name    string
		mut     func(*LaneDefinition)
		wantErr string
	}{
		{name: "config", mut: func(d *LaneDefinition) { d.Config = []byte(`{"max_provision_attempts":4}`) }},
		{name: "test command", mut: func(d *LaneDefinition) { d.TestCommand = "make test-gpu FAST=1" }},
		{name: "image digest", mut: func(d *LaneDefinition) { d.ImageDigest = "ghcr.io/actions/actions-runner:latest@sha256:" + lane2 }},
		{name: "workflow", mut: func(d *LaneDefinition) { d.Workflow = "o/r/.github/workflows/gpu.yml@refs/heads/next" }},
		{name: "version", mut: func(d *LaneDefinition) { d.Version = "v1.2.4" }},
		{name: "fields do not run together", mut: func(d *LaneDefinition) {
			d.TestCommand, d.Workflow = "make test-gpuo/r", "/.github/workflows/gpu.yml@refs/heads/main"
		}},
		{name: "no config", mut: func(d *LaneDefinition) { d.Config = nil }, wantErr: "config is empty"},
		{name: "no test command", mut: func(d *LaneDefinition) { d.TestCommand = " " }, wantErr: "input test-command"},
		{name: "image by tag only", mut: func(d *LaneDefinition) { d.ImageDigest = "ghcr.io/actions/actions-runner:latest" }, wantErr: "pinned to its digest"},
		{name: "no workflow", mut: func(d *LaneDefinition) { d.Workflow = "" }, wantErr: "GITHUB_WORKFLOW_REF or input lane-ref"},
		{name: "no version", mut: func(d *LaneDefinition) { d.Version = "" }, wantErr: "version is empty"},
	}
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			d := baseLane
			tc.mut(&d)
			got, err := LaneDigest(d)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, got != base, "changing the %s must change the digest", tc.name)
			assert.NilError(t, (&TreeKey{Tree: tree, Lane: got}).Validate())
		})
	}
}

// byRef lists the runs on each ref; a ref in fail answers an error.
type byRef struct {
	runs  map[string][]*github.CheckRun
	fail  map[string]bool
	asked []string
}

func (b *byRef) ListCheckRunsForRef(_ context.Context, ref, _ string, _ int) ([]*github.CheckRun, error) {
	b.asked = append(b.asked, ref)
	if b.fail[ref] {
		return nil, errors.New("502 Bad Gateway")
	}
	return b.runs[ref], nil
}

// The reuse decision with tree keys: an identical tree and lane matches
// whatever the merge SHA and on an earlier head; a v1 gate and a query without
// a key match only the exact tested ref; a changed lane or tree never matches.
func TestDecideByTreeKey(t *testing.T) {
	v2 := func(id int64, ref string, k TreeKey, conclusion string) *github.CheckRun {
		m, err := FormatMarker(ref, KindPaid, &k)
		assert.NilError(t, err)
		return gateRun(id, DefaultCheckName, m, "completed", conclusion, ourApp, t0.Add(timeOf(id)))
	}
	v1 := func(id int64, ref string) *github.CheckRun {
		return gateRun(id, DefaultCheckName, ExternalIDPrefix+ref+":paid", "completed", "success", ourApp, t0.Add(timeOf(id)))
	}
	k := *keyT
	otherLane, otherTree := TreeKey{Tree: tree, Lane: lane2}, TreeKey{Tree: tree2, Lane: lane}
	tests := []struct {
		name      string
		onHead    []*github.CheckRun
		onOld     []*github.CheckRun
		key       *TreeKey
		earlier   []string
		failOld   bool
		wantReuse bool
		wantID    int64
		wantIn    string
	}{
		{name: "same tree and lane, other merge SHA", onHead: []*github.CheckRun{v2(1, merge2, k, "success")}, key: &k, wantReuse: true, wantID: 1,
			wantIn: "identical tree and lane"},
		{name: "same tree on an earlier head (amended commit)", onOld: []*github.CheckRun{v2(1, merge2, k, "success")}, key: &k, earlier: []string{oldHead},
			wantReuse: true, wantID: 1},
		{name: "earlier head not given", onOld: []*github.CheckRun{v2(1, merge2, k, "success")}, key: &k, wantIn: "no earlier gate"},
		{name: "earlier head unreadable", onOld: []*github.CheckRun{v2(1, merge2, k, "success")}, key: &k, earlier: []string{oldHead}, failOld: true,
			wantIn: "no earlier gate"},
		{name: "other lane, same tree", onHead: []*github.CheckRun{v2(1, merge2, otherLane, "success")}, key: &k, wantIn: "no earlier gate"},
		{name: "other lane, same merge SHA", onHead: []*github.CheckRun{v2(1, merge, otherLane, "success")}, key: &k, wantIn: "no earlier gate"},
		{name: "other tree (moved base)", onHead: []*github.CheckRun{v2(1, merge2, otherTree, "success")}, key: &k, wantIn: "no earlier gate"},
		{name: "no key here: v2 gate of another merge SHA", onHead: []*github.CheckRun{v2(1, merge2, k, "success")}, wantIn: "no earlier gate"},
		{name: "no key here: v2 gate of this merge SHA", onHead: []*github.CheckRun{v2(1, merge, k, "success")}, wantReuse: true, wantID: 1},
		{name: "v1 gate of this merge SHA still counts", onHead: []*github.CheckRun{v1(1, merge)}, key: &k, wantReuse: true, wantID: 1},
		{name: "v1 gate of another merge SHA never matches by tree", onHead: []*github.CheckRun{v1(1, merge2)}, key: &k, wantIn: "no earlier gate"},
		{name: "a newer failure for the tree pays", onHead: []*github.CheckRun{v2(1, merge2, k, "success"), v2(2, merge, k, "failure")}, key: &k,
			wantID: 2, wantIn: "not a reusable success"},
		{name: "earlier heads are not read without a key", onOld: []*github.CheckRun{v1(1, merge)}, earlier: []string{oldHead}, wantIn: "no earlier gate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &byRef{runs: map[string][]*github.CheckRun{head: tc.onHead, oldHead: tc.onOld}, fail: map[string]bool{oldHead: tc.failOld}}
			d := DecideReuse(context.Background(), l, ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp, Key: tc.key, EarlierHeads: tc.earlier})
			assert.Equal(t, d.Reuse, tc.wantReuse, d.Reason)
			assert.Check(t, is.Equal(d.CheckID, tc.wantID))
			if tc.wantIn != "" {
				assert.Check(t, is.Contains(d.Reason, tc.wantIn))
			}
		})
	}
}

// The earlier heads read are bounded, and a head that is not a SHA is skipped.
func TestDecideBoundsEarlierHeads(t *testing.T) {
	l := &byRef{}
	heads := []string{"main", head}
	for i := 0; i < 6; i++ {
		heads = append(heads, strings.Repeat(string(rune('0'+i)), 40))
	}
	DecideReuse(context.Background(), l, ReuseQuery{HeadSHA: head, TestedRef: merge, AppID: ourApp, Key: keyT, EarlierHeads: heads})
	assert.Check(t, is.Len(l.asked, 1+MaxEarlierHeads))
	assert.Check(t, is.Equal(l.asked[0], head))
}

// timeOf orders gates by id: gate n completed n seconds after t0.
func timeOf(id int64) time.Duration { return time.Duration(id) * time.Second }

// A tier's key keeps the tree and names the tier: two tiers of one lane, and
// one tier of two lanes, never share a key, so a tier's gate is reused only
// for that tier of the identical lane.
func TestForTier(t *testing.T) {
	k := TreeKey{Tree: strings.Repeat("1", 40), Lane: strings.Repeat("2", 64)}
	ampere, hopper := k.ForTier("ampere"), k.ForTier("hopper")
	assert.NilError(t, ampere.Validate())
	assert.Check(t, is.Equal(ampere.Tree, k.Tree))
	assert.Check(t, ampere != hopper && ampere.Lane != k.Lane)
	assert.Check(t, is.Equal(ampere, k.ForTier("ampere")), "stable")
	other := TreeKey{Tree: k.Tree, Lane: strings.Repeat("3", 64)}
	assert.Check(t, other.ForTier("ampere") != ampere)
	assert.Check(t, is.Equal(TierCheckName("", "ampere"), "CI GPU gate (ampere)"))
	assert.Check(t, is.Equal(TierCheckName("GPU", "hopper"), "GPU (hopper)"))
}
