package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Outcome is what the workflow does next.
type Outcome string

// Outcomes of Authorize.
const (
	OutcomeRun   Outcome = "run"   // pay for a pod and run the GPU tests
	OutcomeReuse Outcome = "reuse" // publish a reused gate; no pod
	OutcomeSkip  Outcome = "skip"  // no pod; publish Kind unless it is empty
)

// PullRequests is what Authorize reads from GitHub. *ghapi.Client has it.
type PullRequests interface {
	GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error)
	ListPullRequestFiles(ctx context.Context, number int) ([]string, error)
	PermissionRole(ctx context.Context, user string) (string, error)
	gatecheck.CheckRunLister
}

// AuthorizeRequest describes the trigger to authorize.
type AuthorizeRequest struct {
	// Repository is "owner/name" of the repository running the workflow.
	Repository string
	// PRNumber is the pull request; 0 is a manual validation of DispatchSHA.
	PRNumber int
	// ExpectedHeadSHA is the head the trigger was for; a PR whose head moved is obsolete.
	ExpectedHeadSHA string
	// DispatchSHA is the resolved commit of a manual dispatch (PRNumber 0).
	DispatchSHA string
	// Actor is the user who triggered the workflow.
	Actor string
	// MergeGroup, when set, is the merge queue's group this run tests
	// (PRNumber 0): the merge_group event's (MergeGroupFromEvent).
	MergeGroup *MergeGroup
	// ForkApproval, when set, is a maintainer's approval of one fork PR head
	// (ForkApprovalFromTrigger). Without it a fork PR is refused; it is
	// ignored for a PR from this repository, whose author's role decides.
	ForkApproval *ForkApproval
	// IsGPUPath tells whether a changed path needs the GPU lane (config.IsGPUPath);
	// nil means every path does, and the files are not even listed.
	IsGPUPath func(path string) bool
	// Reuse configures the reuse lookup (check name, app id, page bound).
	Reuse gatecheck.ReuseQuery
	// ReadTimeout bounds each GitHub read (roles, PR, files, reuse lookup),
	// retries and rate-limit waits included; 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// Clock is the GitHub client's policy clock, on which read deadlines are
	// set (reqpolicy.Bound) so that virtual time is honoured; nil is the wall clock.
	Clock clock.Clock
	// Lane defines the lane for the tree key (see treekey.go); nil, or a
	// GitHub client that cannot read commit trees, reuses on the tested ref only.
	Lane *gatecheck.LaneDefinition
	// EarlierHeads are earlier heads of the PR whose gates may match by tree,
	// listed before those Authorize finds in the PR's head history itself.
	EarlierHeads []string
	// Claim, when set, publishes this lane's gate in progress before any
	// spend and waits for an older lane for the same key (ClaimOrWait); the
	// GitHub client must then be able to create and update check runs.
	Claim *ClaimOptions
}

// ClaimOptions are the in-progress protocol's bounds (see ClaimRequest).
type ClaimOptions struct {
	LaneBound, Wait, Poll time.Duration
	RunURL                string
	// Runs reads the workflow runs stakes name (gatecheck.RunReader); nil
	// uses the GitHub client when it can.
	Runs gatecheck.RunReader
	// Sleep waits on the policy clock; nil is the wall clock.
	Sleep clock.Sleeper
	Logf  func(format string, args ...any)
}

// TreeReader reads a commit's tree SHA. *ghapi.Client has it.
type TreeReader interface {
	CommitTree(ctx context.Context, sha string) (string, error)
}

// HeadHistoryReader reads a pull request's head pushes (force-pushes with the
// heads before and after, and commits pushed), oldest first. *ghapi.Client has it.
type HeadHistoryReader interface {
	PullRequestHeadHistory(ctx context.Context, number, last int) ([]ghapi.HeadPush, error)
}

// HeadHistoryItems is how many of a pull request's newest head pushes one
// history read asks for (one GraphQL request). Of the heads they name, at most
// gatecheck.MaxEarlierHeads are listed for gates: the reuse lookup of a PR
// trigger with a tree key reads at most 1 + 1 + gatecheck.MaxEarlierHeads
// times (the history, the head's gates, the earlier heads' gates).
const HeadHistoryItems = 30

// Authorization is the answer: what to do and why, pinned to a tested ref.
type Authorization struct {
	Outcome   Outcome
	Reason    string
	TestedRef string
	HeadSHA   string
	// Kind is the gate to publish for a skip ("" = publish nothing).
	Kind gatecheck.Kind
	// ReusedCheckURL and ReusedCheckID name the earlier gate when Outcome is reuse.
	ReusedCheckURL string
	ReusedCheckID  int64
	// ForkApproval is the verified approval a fork PR ran under, nil otherwise.
	ForkApproval *ForkApproval
	// ApproverRole is the approver's role_name when ForkApproval is set.
	ApproverRole string
	// Teammate, with ForkApproval, says the PR is this repository's and who
	// its author is (`carol has role "write"`); "" for a fork PR.
	Teammate string
	// TreeKey is the tested tree and lane, nil when unknown (see Authorize).
	TreeKey *gatecheck.TreeKey
	// GateCheckRunID is this lane's in-progress gate; the gate job completes it.
	GateCheckRunID int64
	// Following is the in-progress gate of the lane this one follows (Outcome
	// skip, no gate to publish): that lane's gate job completes FollowGateID.
	Following, FollowGateID int64
}

// ErrRefused marks triggers that must not spend anything: unapproved forks,
// roles below maintain, unpinnable refs. errors.Is(err, ErrRefused) holds for *RefusedError.
var ErrRefused = errors.New("refused")

// RefusedError says why a trigger was refused.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string        { return "GPU run refused: " + e.Reason }
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refuse(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// privilegedRoles may start paid GPU runs (like check_permission: admin or maintain).
var privilegedRoles = map[string]bool{"admin": true, "maintain": true}

// Authorize decides, before any spend, whether this trigger runs the paid path.
// Refusals are errors; skips and reuse are answers. GitHub errors while reading
// the PR or roles are errors too (nothing is spent on an unknown state), while
// the reuse lookup alone fails open toward running.
func Authorize(ctx context.Context, gh PullRequests, req AuthorizeRequest) (Authorization, error) {
	if req.PRNumber < 0 {
		return Authorization{}, refuse("pull request number %d: want 0 (manual) or a PR number", req.PRNumber)
	}
	if req.ReadTimeout < 0 {
		return Authorization{}, fmt.Errorf("read timeout %s: want 0 (default %s) or more", req.ReadTimeout, gatecheck.DefaultReadTimeout)
	}
	rd := reads{ctx: ctx, clock: req.Clock, limit: req.ReadTimeout}
	if rd.clock == nil {
		rd.clock = clock.Wall{}
	}
	if rd.limit == 0 {
		rd.limit = gatecheck.DefaultReadTimeout
	}
	if req.MergeGroup != nil {
		if req.PRNumber != 0 {
			return Authorization{}, refuse("a merge group run names its PR in its branch; pr-number %d is not for it", req.PRNumber)
		}
		// The merge queue triggered this run, not a person: its PR's own gate is checked instead.
		return authorizeMergeGroup(ctx, rd, gh, req)
	}
	if _, err := checkRole(rd, gh, "triggering actor", req.Actor); err != nil {
		return Authorization{}, err
	}
	if req.PRNumber == 0 {
		if !wire.IsCommitSHA(req.DispatchSHA) {
			return Authorization{}, refuse("manual validation needs a resolved commit SHA, got %q", req.DispatchSHA)
		}
		// A manual confirmation is paid for deliberately: it never reuses.
		return Authorization{Outcome: OutcomeRun, TestedRef: req.DispatchSHA, HeadSHA: req.DispatchSHA,
			Reason: "manual validation of " + req.DispatchSHA}, nil
	}
	return authorizePR(ctx, rd, gh, req)
}

// pinnedPR is a PR trigger as the first read pinned it: its head, the merge
// commit that would be tested, and the fork approval it runs under, if any.
type pinnedPR struct {
	pr           *github.PullRequest
	head, tested string
	approval     *ForkApproval
	approverRole string
	// teammate says who the author of an approved same-repository PR is ("" for a fork PR).
	teammate string
}

// approvalReason starts the reason of a run under an approval.
func (p pinnedPR) approvalReason() string {
	if p.teammate != "" {
		return "PR approved for its author below admin/maintain (" + p.approval.describe() + "); "
	}
	return "fork PR approved (" + p.approval.describe() + "); "
}

// skip answers a skip of the pinned head.
func (p pinnedPR) skip(kind gatecheck.Kind, format string, args ...any) (Authorization, error) {
	return Authorization{Outcome: OutcomeSkip, Kind: kind, HeadSHA: p.head, Reason: fmt.Sprintf(format, args...)}, nil
}

// readPR reads pull request number within the read bound; verb says which
// read it is in an error ("read", "re-read").
func readPR(rd reads, gh PullRequests, verb string, number int) (*github.PullRequest, error) {
	var pr *github.PullRequest
	err := rd.do(fmt.Sprintf("%s PR #%d", verb, number), func(ctx context.Context) (err error) {
		pr, err = gh.GetPullRequest(ctx, number)
		return err
	})
	return pr, err
}

// authorizePR pins a PR trigger at its first read: open, at the expected
// head, from this repository or approved, by a privileged author, not
// labelled for local validation, with a merge commit to test.
func authorizePR(ctx context.Context, rd reads, gh PullRequests, req AuthorizeRequest) (Authorization, error) {
	first, err := readPR(rd, gh, "read", req.PRNumber)
	if err != nil {
		return Authorization{}, err
	}
	p := pinnedPR{pr: first, head: first.GetHead().GetSHA()}
	if first.GetState() != "open" {
		return p.skip("", "PR #%d is %s", req.PRNumber, first.GetState())
	}
	// A fork PR's code is nobody's here until a maintainer approves its exact
	// head: the approval stands in for the author's role, for that SHA only.
	fork := !strings.EqualFold(first.GetHead().GetRepo().GetFullName(), req.Repository)
	if fork {
		if err := p.approve(rd, gh, req, ""); err != nil {
			return Authorization{}, err
		}
	} else {
		// A teammate below admin/maintain gets the same approval at an exact head.
		author := first.GetUser().GetLogin()
		role, err := readRole(rd, gh, "PR author", author)
		if err != nil {
			return Authorization{}, err
		}
		if !privilegedRoles[role] {
			if err := p.approve(rd, gh, req, fmt.Sprintf("%s has role %q", author, role)); err != nil {
				return Authorization{}, err
			}
		}
	}
	if req.ExpectedHeadSHA != "" && p.head != req.ExpectedHeadSHA {
		return p.skip("", "PR #%d head moved from %s to %s: this trigger is obsolete", req.PRNumber, req.ExpectedHeadSHA, p.head)
	}
	if hasLabel(first, gatecheck.LocalLabel) {
		return p.skip("", "PR #%d is labelled %s: the local relay publishes the gate", req.PRNumber, gatecheck.LocalLabel)
	}
	p.tested = first.GetMergeCommitSHA()
	if !wire.IsCommitSHA(p.tested) {
		return Authorization{}, refuse("PR #%d has no merge commit to pin (GitHub has not computed it, or the PR conflicts); re-run later", req.PRNumber)
	}
	if p.approval != nil {
		// What runs is the merge GitHub computed: it must merge exactly the approved head.
		if err := checkApprovedMerge(rd, gh, req, first, p.approval); err != nil {
			return Authorization{}, err
		}
	}
	return authorizePinned(ctx, rd, gh, req, p)
}

// authorizePinned finishes a pinned PR trigger: it skips a PR that changes
// no GPU path, re-reads the PR to confirm nothing moved, then decides between
// running and reusing an earlier gate.
func authorizePinned(ctx context.Context, rd reads, gh PullRequests, req AuthorizeRequest, p pinnedPR) (Authorization, error) {
	if req.IsGPUPath != nil {
		var files []string
		if err := rd.do(fmt.Sprintf("list files of PR #%d", req.PRNumber), func(ctx context.Context) (err error) {
			files, err = gh.ListPullRequestFiles(ctx, req.PRNumber)
			return err
		}); err != nil {
			return Authorization{}, err
		}
		if !slices.ContainsFunc(files, req.IsGPUPath) {
			a, _ := p.skip(gatecheck.KindNotRequired, "PR #%d changes %d file(s), none under the configured GPU paths", req.PRNumber, len(files))
			a.TestedRef = p.tested
			return a, nil
		}
	}

	// Read the PR again: what we authorized must still be what will be tested.
	second, err := readPR(rd, gh, "re-read", req.PRNumber)
	if err != nil {
		return Authorization{}, err
	}
	if second.GetState() != "open" || second.GetHead().GetSHA() != p.head ||
		second.GetBase().GetSHA() != p.pr.GetBase().GetSHA() || second.GetMergeCommitSHA() != p.tested {
		return p.skip("", "PR #%d changed while it was being authorized (head, base or state moved): a newer trigger will test it", req.PRNumber)
	}
	if p.approval != nil && p.approval.Via == ApprovedByLabel && !hasLabel(second, p.approval.Label) {
		return Authorization{}, refuse("PR #%d lost the label %s while it was being authorized: the approval was withdrawn", req.PRNumber, p.approval.Label)
	}
	if p.approval != nil && !second.GetMergeable() {
		return Authorization{}, refuse("PR #%d is no longer mergeable (mergeable %s) on the re-read: its merge commit may not merge the approved head; re-run later",
			req.PRNumber, mergeableState(second))
	}
	return decideRun(ctx, rd, gh, req, p)
}

// decideRun answers run or reuse for a confirmed PR trigger: the reuse
// lookup (or, with Claim, the in-progress protocol) decides, keyed by the
// tested tree when it can be read, over the head's gates and, with a key, the
// PR's earlier heads' (from the PR's own head history). A lane that follows
// another lane testing the same key on this head answers skip: it pays
// nothing and publishes nothing, the leader's gate completes its follow gate.
func decideRun(ctx context.Context, rd reads, gh PullRequests, req AuthorizeRequest, p pinnedPR) (Authorization, error) {
	q := req.Reuse
	q.HeadSHA, q.TestedRef = p.head, p.tested
	var keyNote string
	q.Key, keyNote = treeKey(rd, gh, req.Lane, p.tested)
	if q.Key != nil {
		var note string
		q.EarlierHeads, note = earlierHeads(rd, gh, req, p.head)
		keyNote = joinNotes(keyNote, note)
	}
	d, staked, err := claimOrLookUp(ctx, rd, gh, req, q)
	if err != nil {
		return Authorization{}, err
	}
	if keyNote != "" {
		d.Reason += "; " + keyNote
	}
	a := Authorization{Outcome: OutcomeRun, TestedRef: p.tested, HeadSHA: p.head, Reason: d.Reason,
		ForkApproval: p.approval, ApproverRole: p.approverRole, Teammate: p.teammate, TreeKey: q.Key, GateCheckRunID: staked.GetID()}
	if p.approval != nil {
		a.Reason = p.approvalReason() + a.Reason
	}
	switch {
	case d.Reuse:
		a.Outcome, a.ReusedCheckURL, a.ReusedCheckID = OutcomeReuse, d.CheckURL, d.CheckID
	case d.Following:
		a.Outcome, a.Following, a.FollowGateID, a.GateCheckRunID = OutcomeSkip, d.Leader, staked.GetID(), 0
	}
	return a, nil
}

// claimOrLookUp runs the in-progress protocol when the request has Claim and
// the client can write check runs, else the plain reuse lookup, which fails
// open toward running and so must end within its bound too.
func claimOrLookUp(ctx context.Context, rd reads, gh PullRequests, req AuthorizeRequest, q gatecheck.ReuseQuery) (gatecheck.Claim, *github.CheckRun, error) {
	if cc, ok := gh.(gatecheck.ClaimClient); ok && req.Claim != nil {
		runs := req.Claim.Runs
		if rr, ok := gh.(gatecheck.RunReader); ok && runs == nil {
			runs = rr
		}
		c, err := gatecheck.ClaimOrWait(ctx, cc, gatecheck.ClaimRequest{Query: q, RunURL: req.Claim.RunURL, LaneBound: req.Claim.LaneBound, Runs: runs,
			Wait: req.Claim.Wait, Poll: req.Claim.Poll, ReadTimeout: rd.limit, Clock: rd.clock, Sleep: req.Claim.Sleep, Logf: req.Claim.Logf,
			// A PR's lane tests its head now, which a leader of an earlier head
			// completes; a merge group's head is no PR's head.
			FollowEarlierHeads: req.MergeGroup == nil && req.PRNumber > 0})
		return c, c.Staked, err
	}
	var c gatecheck.Claim
	_ = rd.do("reuse lookup", func(ctx context.Context) error {
		c.Decision = gatecheck.DecideReuse(ctx, gh, q)
		return nil
	})
	return c, nil, nil
}

// earlierHeads are the PR's earlier heads whose gates may carry the same tree
// key: those the request names, then those the PR's head history names, newest
// first — each force-push's head after and before it, then each pushed commit
// — without this head. The history is one read; one that fails only narrows
// the lookup to the heads named, and says so.
func earlierHeads(rd reads, gh PullRequests, req AuthorizeRequest, head string) ([]string, string) {
	heads := slices.Clone(req.EarlierHeads)
	hr, ok := gh.(HeadHistoryReader)
	if !ok || req.PRNumber <= 0 {
		return heads, ""
	}
	var pushes []ghapi.HeadPush
	if err := rd.do(fmt.Sprintf("read the head history of PR #%d", req.PRNumber), func(ctx context.Context) (err error) {
		pushes, err = hr.PullRequestHeadHistory(ctx, req.PRNumber, HeadHistoryItems)
		return err
	}); err != nil {
		return heads, fmt.Sprintf("the PR's earlier heads are unknown (%v): only gates on this head count", err)
	}
	var forced, pushed []string
	for i := len(pushes) - 1; i >= 0; i-- {
		if p := pushes[i]; p.Force {
			forced = append(forced, p.After, p.Before)
		} else {
			pushed = append(pushed, p.Commit)
		}
	}
	for _, h := range slices.Concat(forced, pushed) {
		if wire.IsCommitSHA(h) && h != head && !slices.Contains(heads, h) {
			heads = append(heads, h)
		}
	}
	return heads, ""
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func checkRole(rd reads, gh PullRequests, who, user string) (string, error) {
	role, err := readRole(rd, gh, who, user)
	if err != nil {
		return "", err
	}
	if !privilegedRoles[role] {
		return "", refuse("%s %s has role %q; paid GPU runs need admin or maintain", who, user, role)
	}
	return role, nil
}

// readRole reads user's role_name; an unknown user is a refusal.
func readRole(rd reads, gh PullRequests, who, user string) (string, error) {
	if user == "" {
		return "", refuse("the %s is unknown", who)
	}
	var role string
	if err := rd.do(fmt.Sprintf("read the role of %s %s", who, user), func(ctx context.Context) (err error) {
		role, err = gh.PermissionRole(ctx, user)
		return err
	}); err != nil {
		return "", err
	}
	return role, nil
}

// reads gives each GitHub read of one Authorize its own deadline.
type reads struct {
	ctx   context.Context
	clock clock.Clock
	limit time.Duration
}

// do runs one read under reqpolicy.Bound and, when it fails, says what was
// read and, for a deadline, which bound ended it: the summary tells the user
// that nothing was spent and the job can be re-run.
func (r reads) do(what string, read func(context.Context) error) error {
	ctx, cancel := reqpolicy.Bound(r.ctx, r.clock, r.limit)
	defer cancel()
	err := read(ctx)
	switch {
	case err == nil:
		return nil
	case r.ctx.Err() != nil:
		return fmt.Errorf("%s: cancelled: %w", what, err)
	case errors.Is(err, reqpolicy.ErrWaitExceedsDeadline):
		return fmt.Errorf("%s: GitHub asks for a pause that does not fit the %s read deadline: %w", what, r.limit, err)
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: GitHub did not answer within the %s read deadline: %w", what, r.limit, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// treeKey reads the merge commit's tree and digests the lane. Any doubt (no
// lane, no tree reader, an unreadable tree, a missing part of the lane)
// answers no key, with a note saying why: then only the exact tested ref can
// be reused, as before tree keys existed.
func treeKey(rd reads, gh PullRequests, lane *gatecheck.LaneDefinition, tested string) (*gatecheck.TreeKey, string) {
	tr, ok := gh.(TreeReader)
	if lane == nil || !ok {
		return nil, ""
	}
	digest, err := gatecheck.LaneDigest(*lane)
	if err != nil {
		return nil, fmt.Sprintf("no tree key (%v): only this exact tested ref can be reused", err)
	}
	var tree string
	if err := rd.do("read the tree of "+tested, func(ctx context.Context) (err error) {
		tree, err = tr.CommitTree(ctx, tested)
		return err
	}); err != nil {
		return nil, fmt.Sprintf("no tree key (%v): only this exact tested ref can be reused", err)
	}
	k := gatecheck.TreeKey{Tree: tree, Lane: digest}
	if err := k.Validate(); err != nil {
		return nil, fmt.Sprintf("no tree key (%v): only this exact tested ref can be reused", err)
	}
	return &k, ""
}
