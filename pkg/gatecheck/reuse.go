package gatecheck

import (
	"context"
	"fmt"
	"sort"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/wire"
)

// DefaultMaxPages bounds the check-run listing (100 a page). GitHub keeps at
// most 1000 runs with one name per check suite, so ten pages cover a suite.
const DefaultMaxPages = 10

// CheckRunLister lists every check run with a name on a ref (filter=all),
// failing when more than maxPages pages would be needed. *ghapi.Client has it.
type CheckRunLister interface {
	ListCheckRunsForRef(ctx context.Context, ref, name string, maxPages int) ([]*github.CheckRun, error)
}

// GitHubActionsAppID is the GitHub Actions app: every check run a workflow's
// GITHUB_TOKEN creates is published as it, so token mode trusts its gates.
const GitHubActionsAppID int64 = 15368

// TrustedGateApp is the app whose gates count for reuse: gateAppID when the
// workflow names one, else the App the action authenticates as (appID), else
// GitHub Actions, which is who github.token publishes as. It never answers 0:
// a gate from an app nobody named could come from anyone with checks: write.
func TrustedGateApp(gateAppID, appID int64) int64 {
	switch {
	case gateAppID > 0:
		return gateAppID
	case appID > 0:
		return appID
	default:
		return GitHubActionsAppID
	}
}

// ReuseQuery says which gate would count.
type ReuseQuery struct {
	HeadSHA   string // the PR head the gates are published on
	TestedRef string // the pinned merge SHA (or the dispatched SHA)
	CheckName string // default DefaultCheckName
	// AppID is the only app whose gates count; 0 means GitHubActionsAppID
	// (token mode), never "any app". See TrustedGateApp.
	AppID    int64
	MaxPages int // default DefaultMaxPages
	// Key is the tested tree and lane (nil: unknown). With it, a gate whose
	// v2 marker carries the same key counts whatever its merge SHA.
	Key *TreeKey
	// EarlierHeads are earlier heads of the same PR (a re-push's "before"),
	// whose gates are listed too: an amended or rebased head is a new commit,
	// and only the tree key can match a gate published on the old one. At
	// most MaxEarlierHeads are read; one that cannot be read is skipped.
	EarlierHeads []string
}

// MaxEarlierHeads bounds the earlier heads one lookup lists (one listing each).
const MaxEarlierHeads = 3

// Decision is the answer of the reuse lookup.
type Decision struct {
	// Reuse is true only when an earlier gate proves this tested ref already passed.
	Reuse  bool
	Reason string
	// CheckID and CheckURL identify the deciding gate, when there is one.
	CheckID  int64
	CheckURL string
}

// DecideReuse answers whether the paid path can be skipped. It fails open:
// any API, parse or program error answers "run the paid path", because paying
// once more is recoverable and skipping an untested ref is not.
func DecideReuse(ctx context.Context, lister CheckRunLister, q ReuseQuery) (d Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = Decision{Reason: fmt.Sprintf("reuse lookup failed (%v): running the paid path", r)}
		}
	}()
	if lister == nil {
		return Decision{Reason: "no GitHub client for the reuse lookup: running the paid path"}
	}
	if !wire.IsCommitSHA(q.TestedRef) || !wire.IsCommitSHA(q.HeadSHA) {
		return Decision{Reason: fmt.Sprintf("tested ref %q or head %q is not a commit SHA: running the paid path", q.TestedRef, q.HeadSHA)}
	}
	if q.AppID < 0 {
		return Decision{Reason: fmt.Sprintf("gate app id %d is not an app id: running the paid path", q.AppID)}
	}
	q.AppID = TrustedGateApp(q.AppID, 0)
	name := q.CheckName
	if name == "" {
		name = DefaultCheckName
	}
	pages := q.MaxPages
	if pages <= 0 {
		pages = DefaultMaxPages
	}
	runs, err := listGates(ctx, lister, q, name, pages)
	if err != nil {
		return Decision{Reason: fmt.Sprintf("reuse lookup failed (%v): running the paid path", err)}
	}
	return decide(runs, name, q)
}

// listGates lists the gates on the head and, when the query has a tree key,
// on its earlier heads. The head's listing must succeed; an earlier head that
// cannot be listed (or is not a SHA) only narrows what can be reused.
func listGates(ctx context.Context, lister CheckRunLister, q ReuseQuery, name string, pages int) ([]*github.CheckRun, error) {
	runs, err := lister.ListCheckRunsForRef(ctx, q.HeadSHA, name, pages)
	if err != nil || q.Key == nil {
		return runs, err
	}
	seen := map[string]bool{q.HeadSHA: true}
	read := 0
	for _, h := range q.EarlierHeads {
		if read == MaxEarlierHeads || ctx.Err() != nil {
			break
		}
		if seen[h] || !wire.IsCommitSHA(h) {
			continue
		}
		seen[h] = true
		read++
		more, err := lister.ListCheckRunsForRef(ctx, h, name, pages)
		if err != nil {
			continue
		}
		runs = append(runs, more...)
	}
	return runs, nil
}

// candidateGate is a gate that validated what the query asks for.
type candidateGate struct {
	run    *github.CheckRun
	marker Marker
	kind   Kind
}

// matchingGates are the gates of runs, from the trusted app, whose marker
// says they tested what q asks for (sameTests), in the given status.
func matchingGates(runs []*github.CheckRun, name string, q ReuseQuery, completed bool) []candidateGate {
	var gates []candidateGate
	seen := map[int64]bool{}
	for _, r := range runs {
		if r == nil || r.GetName() != name || seen[r.GetID()] {
			continue
		}
		if done := r.GetStatus() == "completed"; done != completed || (done && r.CompletedAt == nil) {
			continue
		}
		if r.GetApp().GetID() != q.AppID {
			continue // another app could be anyone with checks: write
		}
		m, err := ParseMarker(r.GetExternalID())
		if err != nil || !sameTests(m, q) {
			continue // no marker, another ref or tree (moved base), or another lane
		}
		seen[r.GetID()] = true
		gates = append(gates, candidateGate{run: r, marker: m, kind: m.Kind})
	}
	return gates
}

func decide(runs []*github.CheckRun, name string, q ReuseQuery) Decision {
	gates := matchingGates(runs, name, q, true)
	if len(gates) == 0 {
		return Decision{Reason: "no earlier gate for tested ref " + q.TestedRef + describeKey(q.Key) + ": running the paid path"}
	}
	sort.Slice(gates, func(i, j int) bool {
		ti, tj := gates[i].run.GetCompletedAt().Time, gates[j].run.GetCompletedAt().Time
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return gates[i].run.GetID() > gates[j].run.GetID()
	})
	newest := gates[0]
	d := Decision{CheckID: newest.run.GetID(), CheckURL: newest.run.GetHTMLURL()}
	switch {
	case newest.run.GetConclusion() == "success" && newest.kind.Reusable():
		d.Reuse = true
		d.Reason = fmt.Sprintf("gate %d already passed tested ref %s (%s): reusing it", d.CheckID, q.TestedRef, newest.kind)
		if newest.marker.TestedRef != q.TestedRef {
			d.Reason = fmt.Sprintf("gate %d already passed merge %s with the identical tree and lane (%s, %s): reusing it for tested ref %s",
				d.CheckID, newest.marker.TestedRef, newest.marker.Key, newest.kind, q.TestedRef)
		}
	default:
		d.Reason = fmt.Sprintf("newest gate %d for tested ref %s is %s/%s, not a reusable success: running the paid path",
			d.CheckID, q.TestedRef, newest.kind, newest.run.GetConclusion())
	}
	return d
}

// describeKey is " (tree:…:lane:…)" for a reason, or "" without a key.
func describeKey(k *TreeKey) string {
	if k == nil {
		return ""
	}
	return " (" + k.String() + ")"
}
