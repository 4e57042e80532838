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
	// EarlierHeads are earlier heads of the PR whose gates may match by tree.
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
	// Sleep waits on the policy clock; nil is the wall clock.
	Sleep clock.Sleeper
	Logf  func(format string, args ...any)
}

// TreeReader reads a commit's tree SHA. *ghapi.Client has it.
type TreeReader interface {
	CommitTree(ctx context.Context, sha string) (string, error)
}

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
	// TreeKey is the tested tree and lane, nil when unknown (see Authorize).
	TreeKey *gatecheck.TreeKey
	// GateCheckRunID is this lane's in-progress gate; the gate job completes it.
	GateCheckRunID int64
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
}

// skip answers a skip of the pinned head.
func (p pinnedPR) skip(kind gatecheck.Kind, format string, args ...any) (Authorization, error) {
	return Authorization{Outcome: OutcomeSkip, Kind: kind, HeadSHA: p.head, Reason: fmt.Sprintf(format, args...)}, nil
}

// authorizePR pins a PR trigger at its first read: open, at the expected
// head, from this repository or approved, by a privileged author, not
// labelled for local validation, with a merge commit to test.
func authorizePR(ctx context.Context, rd reads, gh PullRequests, req AuthorizeRequest) (Authorization, error) {
	var first *github.PullRequest
	if err := rd.do(fmt.Sprintf("read PR #%d", req.PRNumber), func(ctx context.Context) (err error) {
		first, err = gh.GetPullRequest(ctx, req.PRNumber)
		return err
	}); err != nil {
		return Authorization{}, err
	}
	p := pinnedPR{pr: first, head: first.GetHead().GetSHA()}
	if first.GetState() != "open" {
		return p.skip("", "PR #%d is %s", req.PRNumber, first.GetState())
	}
	// A fork PR's code is nobody's here until a maintainer approves its exact
	// head: the approval stands in for the author's role, for that SHA only.
	if origin := first.GetHead().GetRepo().GetFullName(); !strings.EqualFold(origin, req.Repository) {
		var err error
		if p.approverRole, err = checkForkApproval(rd, gh, req, first, origin); err != nil {
			return Authorization{}, err
		}
		p.approval = req.ForkApproval
	}
	if req.ExpectedHeadSHA != "" && p.head != req.ExpectedHeadSHA {
		return p.skip("", "PR #%d head moved from %s to %s: this trigger is obsolete", req.PRNumber, req.ExpectedHeadSHA, p.head)
	}
	if p.approval == nil {
		if _, err := checkRole(rd, gh, "PR author", first.GetUser().GetLogin()); err != nil {
			return Authorization{}, err
		}
	}
	if hasLabel(first, gatecheck.LocalLabel) {
		return p.skip("", "PR #%d is labelled %s: the local relay publishes the gate", req.PRNumber, gatecheck.LocalLabel)
	}
	p.tested = first.GetMergeCommitSHA()
	if !wire.IsCommitSHA(p.tested) {
		return Authorization{}, refuse("PR #%d has no merge commit to pin (GitHub has not computed it, or the PR conflicts); re-run later", req.PRNumber)
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
	var second *github.PullRequest
	if err := rd.do(fmt.Sprintf("re-read PR #%d", req.PRNumber), func(ctx context.Context) (err error) {
		second, err = gh.GetPullRequest(ctx, req.PRNumber)
		return err
	}); err != nil {
		return Authorization{}, err
	}
	if second.GetState() != "open" || second.GetHead().GetSHA() != p.head ||
		second.GetBase().GetSHA() != p.pr.GetBase().GetSHA() || second.GetMergeCommitSHA() != p.tested {
		return p.skip("", "PR #%d changed while it was being authorized (head, base or state moved): a newer trigger will test it", req.PRNumber)
	}
	if p.approval != nil && p.approval.Via == ApprovedByLabel && !hasLabel(second, p.approval.Label) {
		return Authorization{}, refuse("PR #%d lost the label %s while it was being authorized: the approval was withdrawn", req.PRNumber, p.approval.Label)
	}
	return decideRun(ctx, rd, gh, req, p)
}

// decideRun answers run or reuse for a confirmed PR trigger: the reuse
// lookup (or, with Claim, the in-progress protocol) decides, keyed by the
// tested tree when it can be read.
func decideRun(ctx context.Context, rd reads, gh PullRequests, req AuthorizeRequest, p pinnedPR) (Authorization, error) {
	q := req.Reuse
	q.HeadSHA, q.TestedRef, q.EarlierHeads = p.head, p.tested, req.EarlierHeads
	var keyNote string
	q.Key, keyNote = treeKey(rd, gh, req.Lane, p.tested)
	// The lookup fails open toward running, so a stalled one must end too:
	// within its bound, as "run".
	var d gatecheck.Decision
	var staked int64
	if cc, ok := gh.(gatecheck.ClaimClient); ok && req.Claim != nil {
		c, err := gatecheck.ClaimOrWait(ctx, cc, gatecheck.ClaimRequest{Query: q, RunURL: req.Claim.RunURL, LaneBound: req.Claim.LaneBound,
			Wait: req.Claim.Wait, Poll: req.Claim.Poll, ReadTimeout: rd.limit, Clock: rd.clock, Sleep: req.Claim.Sleep, Logf: req.Claim.Logf})
		if err != nil {
			return Authorization{}, err
		}
		d = c.Decision
		staked = c.Staked.GetID()
	} else {
		_ = rd.do("reuse lookup", func(ctx context.Context) error {
			d = gatecheck.DecideReuse(ctx, gh, q)
			return nil
		})
	}
	if keyNote != "" {
		d.Reason += "; " + keyNote
	}
	a := Authorization{Outcome: OutcomeRun, TestedRef: p.tested, HeadSHA: p.head, Reason: d.Reason,
		ForkApproval: p.approval, ApproverRole: p.approverRole, TreeKey: q.Key, GateCheckRunID: staked}
	if p.approval != nil {
		a.Reason = "fork PR approved (" + p.approval.describe() + "); " + a.Reason
	}
	if d.Reuse {
		a.Outcome, a.ReusedCheckURL, a.ReusedCheckID = OutcomeReuse, d.CheckURL, d.CheckID
	}
	return a, nil
}

// checkForkApproval verifies the approval a fork PR needs and returns the
// approver's role: the approver is admin or maintain (role_name), the
// approved SHA is the head now (any push since voids it), and a label
// approval's label is still on the PR. Unreadable means not approved.
func checkForkApproval(rd reads, gh PullRequests, req AuthorizeRequest, pr *github.PullRequest, origin string) (string, error) {
	if origin == "" {
		origin = "a deleted repository"
	}
	f := req.ForkApproval
	if f == nil {
		return "", refuse("PR #%d comes from %s, not from %s: a fork PR runs on a paid GPU only at a head an admin or maintainer approved "+
			"(dispatch the lane with approved-fork-sha set to the reviewed head, or add the label %s)", req.PRNumber, origin, req.Repository, ApprovalLabel)
	}
	role, err := checkRole(rd, gh, "fork approver", f.Approver)
	if err != nil {
		return "", err
	}
	if head := pr.GetHead().GetSHA(); head != f.SHA {
		return "", refuse("PR #%d's head is %s, not the approved %s: a push after the approval voids it; an admin or maintainer must approve the new head",
			req.PRNumber, head, f.SHA)
	}
	if f.Via == ApprovedByLabel && !hasLabel(pr, f.Label) {
		return "", refuse("PR #%d no longer carries the label %s: the approval was withdrawn", req.PRNumber, f.Label)
	}
	return role, nil
}

func checkRole(rd reads, gh PullRequests, who, user string) (string, error) {
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
	if !privilegedRoles[role] {
		return "", refuse("%s %s has role %q; paid GPU runs need admin or maintain", who, user, role)
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
