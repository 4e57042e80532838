package gatecheck

// Following a lane instead of paying. A lane that finds another lane's live
// in-progress gate (its stake) for the same key on its own head does not wait
// for it and never pays: it publishes a follow gate on its head, queued, whose
// external_id names the leader's stake and the marker its result will carry,
//
//	runpod-gpu-follow:v1:<leader check run id>:<gate marker>
//
// and ends. The leader's gate job completes every follow gate that names its
// stake (or an older one, which was dead when it led), on its head and on its
// pull request's head, with its result: reused when it passed, failed (with
// the leader's outcome) otherwise, so a later delivery tests the tree again
// and the head is never left with a gate that passes untested. A follow gate
// is never anyone's stake nor a gate to reuse (ParseMarker refuses its
// marker), so a leader that vanished is recognised as it always was: its
// workflow run completed without completing its stake (or, unreadable, the
// stake outlived the lane's bound; stakelife.go), and the next delivery
// leads and pays, and completes the follow gates it finds.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/wire"
)

// FollowPrefix starts a follow gate's external_id.
const FollowPrefix = "runpod-gpu-follow:v1:"

// FollowMarker is a parsed follow gate marker.
type FollowMarker struct {
	// Leader is the check run id of the stake this gate waits for.
	Leader int64
	// Marker is the gate marker this head's gate will carry (kind paid).
	Marker Marker
}

// String formats the follow marker.
func (f FollowMarker) String() string {
	return FollowPrefix + strconv.FormatInt(f.Leader, 10) + ":" + f.Marker.String()
}

// ParseFollowMarker parses a follow gate's external_id.
func ParseFollowMarker(s string) (FollowMarker, error) {
	rest, ok := strings.CutPrefix(s, FollowPrefix)
	if !ok {
		return FollowMarker{}, fmt.Errorf("follow gate external_id %q: want prefix %q", truncate(s), FollowPrefix)
	}
	id, marker, ok := strings.Cut(rest, ":")
	leader, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || leader <= 0 {
		return FollowMarker{}, fmt.Errorf("follow gate external_id %q: want %q<leader check run id>:<gate marker>", truncate(s), FollowPrefix)
	}
	m, err := ParseMarker(marker)
	if err != nil {
		return FollowMarker{}, err
	}
	return FollowMarker{Leader: leader, Marker: m}, nil
}

// FollowContent is the follow gate a lane publishes instead of paying while
// leader (a live stake for the same key on the same head) tests: queued, and
// saying when the leader counts as lost (its start plus the lane's bound).
func FollowContent(e Evidence, leader *github.CheckRun, bound time.Duration) (ghapi.CheckRunInput, error) {
	m, name, b, err := openGate(e)
	if err != nil {
		return ghapi.CheckRunInput{}, err
	}
	if leader.GetID() <= 0 {
		return ghapi.CheckRunInput{}, fmt.Errorf("follow gate: leader check run id %d: want a positive id", leader.GetID())
	}
	parsed, _ := ParseMarker(m)
	fmt.Fprintf(b, "Another lane is testing the same %s: gate %d (%s). Its result completes this gate; no second pod is paid for.\n",
		keyOrRef(ReuseQuery{TestedRef: e.TestedRef, Key: e.Key}), leader.GetID(), leader.GetHTMLURL())
	fmt.Fprintf(b, "\nIf that lane's workflow run ends with gate %d still in progress, the lane was lost: re-run this workflow run, which then tests this head.", leader.GetID())
	if started := leader.GetStartedAt().Time; !started.IsZero() {
		fmt.Fprintf(b, " (Where its run cannot be read, it counts as lost at %s, its start plus the lane's bound.)", started.Add(bound).UTC().Format(time.RFC3339))
	}
	b.WriteString("\n")
	if e.RunURL != "" {
		fmt.Fprintf(b, "\nWorkflow run: %s\n", e.RunURL)
	}
	return ghapi.CheckRunInput{
		Name: name, HeadSHA: e.HeadSHA, ExternalID: FollowMarker{Leader: leader.GetID(), Marker: parsed}.String(), DetailsURL: e.RunURL,
		Status: "queued", Title: "GPU tests: waiting for another lane testing this tree", Summary: b.String(),
	}, nil
}

// Followers are the follow gates CompleteFollowers completed.
type Followers struct {
	Completed []*github.CheckRun
	// Kind is what they were completed as (reused or failed).
	Kind Kind
}

// CompleteFollowers completes, with the result of gate (the leader's gate,
// just published from e), every follow gate on heads, from gate's app, that
// waits for gate or for an older stake and whose key (or, without keys, tested
// ref) is gate's: reused when gate is a reusable success, failed otherwise,
// naming gate either way. It lists each head once; a head it cannot list or a
// follow gate it cannot complete is an error after the others were done.
func CompleteFollowers(ctx context.Context, c ClaimClient, gate *github.CheckRun, e Evidence, heads []string) (Followers, error) {
	out := Followers{Kind: KindReused}
	if gate.GetConclusion() != "success" || !e.Kind.Reusable() {
		out.Kind = KindFailed
	}
	name := e.CheckName
	if name == "" {
		name = DefaultCheckName
	}
	q := ReuseQuery{TestedRef: e.TestedRef, Key: e.Key}
	var errs []error
	seen := map[string]bool{}
	for _, h := range heads {
		if seen[h] || !wire.IsCommitSHA(h) {
			continue
		}
		seen[h] = true
		runs, err := c.ListCheckRunsForRef(ctx, h, name, DefaultMaxPages)
		if err != nil {
			errs = append(errs, fmt.Errorf("list the follow gates on %s: %w", h, err))
			continue
		}
		for _, r := range runs {
			f, ok := followerOf(r, gate, q)
			if !ok {
				continue
			}
			done, err := Publish(ctx, c, followerEvidence(r, f, gate, e, name, out.Kind))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out.Completed = append(out.Completed, done)
		}
	}
	return out, errors.Join(errs...)
}

// followerOf reports whether r is a follow gate gate completes: gate's app,
// not completed, waiting for gate or an older stake, for gate's key or ref.
func followerOf(r, gate *github.CheckRun, q ReuseQuery) (FollowMarker, bool) {
	if r == nil || r.GetStatus() == "completed" || r.GetID() == gate.GetID() || r.GetApp().GetID() != gate.GetApp().GetID() {
		return FollowMarker{}, false
	}
	f, err := ParseFollowMarker(r.GetExternalID())
	if err != nil || f.Leader > gate.GetID() || !sameTests(f.Marker, q) {
		return FollowMarker{}, false
	}
	return f, true
}

func followerEvidence(r *github.CheckRun, f FollowMarker, gate *github.CheckRun, e Evidence, name string, kind Kind) Evidence {
	out := Evidence{Kind: kind, HeadSHA: r.GetHeadSHA(), TestedRef: f.Marker.TestedRef, Key: f.Marker.Key, CheckName: name,
		RunURL: r.GetDetailsURL(), CheckRunID: r.GetID(), ReusedCheckURL: gate.GetHTMLURL()}
	if kind == KindFailed {
		out.Reason = fmt.Sprintf("this head waited for gate %d (%s), the lane testing the same tree, and it ended %s (%s) without a passing result; "+
			"nothing was paid for this head: re-run its workflow run to test it", gate.GetID(), gate.GetHTMLURL(), e.Kind, gate.GetConclusion())
	}
	return out
}
