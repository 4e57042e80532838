package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/ghapi"
)

// Approved runs: a PR whose code is not a maintainer's own — a fork PR, or a
// PR of this repository whose author is below admin/maintain — runs on a paid
// GPU only at a head an admin or maintainer approved (ForkApproval), and only
// as the merge of exactly that head:
//
//   - the approver is admin or maintain (role_name), the approved SHA is the
//     head now (any push voids it), and a label approval's label is still on
//     the PR;
//   - a label approval is bound to the labeller's review: their standing
//     verdict on the PR is an approving review at exactly the labelled head;
//   - on every read of the PR, mergeable is true, and the merge commit GitHub
//     computed has parents exactly (base, approved head): a push and a revert
//     in the start-up window, whose merge commit GitHub has not recomputed yet,
//     does not get another head's merge tested.

// MergeCommitReader reads a commit's tree and parents. *ghapi.Client has it.
type MergeCommitReader interface {
	GitCommit(ctx context.Context, sha string) (ghapi.Commit, error)
}

// ReviewLister lists a PR's submitted reviews, oldest first. *ghapi.Client has it.
type ReviewLister interface {
	ListPullRequestReviews(ctx context.Context, number int) ([]*github.PullRequestReview, error)
}

// approve verifies the approval the pinned PR runs under and records it:
// teammate is "" for a fork PR, else who its author is (`carol has role "write"`).
func (p *pinnedPR) approve(rd reads, gh PullRequests, req AuthorizeRequest, teammate string) error {
	f := req.ForkApproval
	who := "fork approver"
	if teammate != "" {
		who = "approver"
	}
	if f == nil {
		if teammate == "" {
			origin := p.pr.GetHead().GetRepo().GetFullName()
			if origin == "" {
				origin = "a deleted repository"
			}
			return refuse("PR #%d comes from %s, not from %s: a fork PR runs on a paid GPU only at a head an admin or maintainer approved "+
				"(dispatch the lane with approved-fork-sha set to the reviewed head, or approve it in a review and add the label %s)", req.PRNumber, origin, req.Repository, ApprovalLabel)
		}
		return refuse("PR author %s; paid GPU runs need admin or maintain, or an admin or maintainer's approval of the exact head they read "+
			"(dispatch the lane with approved-fork-sha set to the reviewed head, or approve it in a review and add the label %s)", teammate, ApprovalLabel)
	}
	role, err := checkRole(rd, gh, who, f.Approver)
	if err != nil {
		return err
	}
	if p.head != f.SHA {
		return refuse("PR #%d's head is %s, not the approved %s: a push after the approval voids it; an admin or maintainer must approve the new head",
			req.PRNumber, p.head, f.SHA)
	}
	if f.Via == ApprovedByLabel {
		if !hasLabel(p.pr, f.Label) {
			return refuse("PR #%d no longer carries the label %s: the approval was withdrawn", req.PRNumber, f.Label)
		}
		if err := checkReview(rd, gh, req, f); err != nil {
			return err
		}
	}
	p.approval, p.approverRole, p.teammate = f, role, teammate
	return nil
}

// reviewVerdicts are the review states that state or change a reviewer's
// verdict; a comment-only review (COMMENTED) leaves it as it was.
var reviewVerdicts = map[string]bool{"APPROVED": true, "CHANGES_REQUESTED": true, "DISMISSED": true}

// checkReview binds a label approval to its labeller's review: their latest
// verdict on the PR must be an approving review at exactly the labelled head.
func checkReview(rd reads, gh PullRequests, req AuthorizeRequest, f *ForkApproval) error {
	rl, ok := gh.(ReviewLister)
	if !ok {
		return refuse("the %s label of %s cannot be checked against a review (this client reads no reviews); a label approval counts only with one", f.Label, f.Approver)
	}
	var reviews []*github.PullRequestReview
	if err := rd.do(fmt.Sprintf("list the reviews of PR #%d", req.PRNumber), func(ctx context.Context) (err error) {
		reviews, err = rl.ListPullRequestReviews(ctx, req.PRNumber)
		return err
	}); err != nil {
		return err
	}
	var last *github.PullRequestReview
	for _, r := range reviews {
		if strings.EqualFold(r.GetUser().GetLogin(), f.Approver) && reviewVerdicts[r.GetState()] {
			last = r
		}
	}
	switch {
	case last == nil || last.GetState() != "APPROVED":
		return refuse("PR #%d: %s added the label %s without a standing approving review: a label approves only the exact commit its labeller approved "+
			"in a review (Files changed → Review changes → Approve, then add the label)", req.PRNumber, f.Approver, f.Label)
	case last.GetCommitID() != f.SHA:
		return refuse("PR #%d: %s's approving review is at %s, not at the labelled head %s: approve the head you read in a review, then add the label again",
			req.PRNumber, f.Approver, last.GetCommitID(), f.SHA)
	}
	return nil
}

// checkApprovedMerge checks, for an approved run, that GitHub's merge commit
// merges exactly the approved head into the base the PR names, and that the PR
// is mergeable: otherwise the merge commit may be one GitHub computed for
// another head and has not recomputed yet.
func checkApprovedMerge(rd reads, gh PullRequests, req AuthorizeRequest, pr *github.PullRequest, f *ForkApproval) error {
	merge, base := pr.GetMergeCommitSHA(), pr.GetBase().GetSHA()
	if !pr.GetMergeable() {
		return refuse("PR #%d is not mergeable (mergeable %s): its merge commit %s may not merge the approved head %s; re-run once GitHub has computed the merge",
			req.PRNumber, mergeableState(pr), merge, f.SHA)
	}
	mr, ok := gh.(MergeCommitReader)
	if !ok {
		return refuse("PR #%d's merge commit %s cannot be checked (this client reads no commits); an approved run needs it to merge exactly the approved head", req.PRNumber, merge)
	}
	var commit ghapi.Commit
	if err := rd.do("read the merge commit "+merge, func(ctx context.Context) (err error) {
		commit, err = mr.GitCommit(ctx, merge)
		return err
	}); err != nil {
		return err
	}
	if len(commit.Parents) != 2 || commit.Parents[0] != base || commit.Parents[1] != f.SHA {
		return refuse("PR #%d's merge commit %s merges (%s), not exactly (base %s, approved head %s): GitHub computed it for another head "+
			"(a push since the approval, even one pushed back) and nothing is tested until it is recomputed; re-run later",
			req.PRNumber, merge, strings.Join(commit.Parents, ", "), base, f.SHA)
	}
	return nil
}

// mergeableState shows a PR's mergeable field as read: true, false or null.
func mergeableState(pr *github.PullRequest) string {
	if pr.Mergeable == nil {
		return "null: not computed yet"
	}
	return fmt.Sprint(pr.GetMergeable())
}
