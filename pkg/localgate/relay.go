package localgate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The relay workflow's dispatch inputs (and the relay action's inputs), as
// the local command sends them.
const (
	InputPRNumber  = "pr-number"
	InputSHA       = "sha"
	InputCommentID = "comment-id"
)

// RelayClient is what Verify reads from GitHub. *ghapi.Client has it.
type RelayClient interface {
	GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error)
	PermissionRole(ctx context.Context, user string) (string, error)
	ListIssueComments(ctx context.Context, number int) ([]*github.IssueComment, error)
}

// RelayPublisher is what Relay needs: the reads plus creating the check run.
type RelayPublisher interface {
	RelayClient
	gatecheck.CheckRunCreator
}

// RelayRequest is one dispatch of the relay workflow, as the runner reports it.
type RelayRequest struct {
	Repository string // "owner/name" running the relay (GITHUB_REPOSITORY)
	PRNumber   int    // input pr-number
	SHA        string // input sha: the commit the evidence is for
	CommentID  int64  // input comment-id: the evidence comment
	// Dispatcher is who dispatched the workflow (GITHUB_ACTOR).
	Dispatcher string
	// TriggeringActor is who started this attempt (GITHUB_TRIGGERING_ACTOR);
	// when it differs from Dispatcher (a re-run) that user is checked too.
	TriggeringActor string
	// Event must be workflow_dispatch (GITHUB_EVENT_NAME).
	Event string
	// WorkflowRef must be the default branch, refs/heads/<default> (GITHUB_REF):
	// a relay run from any other branch could be running pull-request code.
	WorkflowRef string
	// CallTimeout bounds each GitHub call of the relay, retries and waits
	// included; 0 means gatecheck.DefaultReadTimeout.
	CallTimeout time.Duration
}

// Verified is what the relay established before publishing.
type Verified struct {
	PRNumber   int
	SHA        string
	BaseSHA    string
	Dispatcher string
	// Fork is the PR's head repository when it is a fork, "" otherwise.
	Fork string
	// DispatcherRole is the dispatcher's role_name (admin or maintain).
	DispatcherRole string
	CommentID      int64
	CommentURL     string
	CommentAuthor  string
	Evidence       Evidence
}

// privilegedRoles may vouch for a local validation (like check_permission).
var privilegedRoles = map[string]bool{ghapi.RoleAdmin: true, ghapi.RoleMaintain: true}

// repositoryRE is "owner/name" as GitHub spells repositories.
var repositoryRE = lazyre.Regexp{Pattern: `^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`}

// Verify re-checks everything the relay relies on, reading GitHub only. A
// failed check is a *RefusedError naming it; a GitHub error is returned
// wrapped (nothing can be verified on an unknown state, so nothing publishes).
func Verify(ctx context.Context, gh RelayClient, req RelayRequest) (Verified, error) {
	if err := req.validate(); err != nil {
		return Verified{}, err
	}
	gh = bounded{RelayClient: gh, limit: req.callTimeout()}
	v := Verified{PRNumber: req.PRNumber, SHA: req.SHA, CommentID: req.CommentID, Dispatcher: req.Dispatcher}

	role, err := requireRole(ctx, gh, CheckDispatcherRole, "dispatcher", req.Dispatcher)
	if err != nil {
		return Verified{}, err
	}
	v.DispatcherRole = role
	if req.TriggeringActor != "" && !strings.EqualFold(req.TriggeringActor, req.Dispatcher) {
		if _, err := requireRole(ctx, gh, CheckDispatcherRole, "re-running actor", req.TriggeringActor); err != nil {
			return Verified{}, err
		}
	}

	first, err := gh.GetPullRequest(ctx, req.PRNumber)
	if err != nil {
		return Verified{}, fmt.Errorf("read PR #%d: %w", req.PRNumber, err)
	}
	// A fork PR is welcome: the relay runs none of its code, and the
	// evidence is vouched for by an admin or maintainer's comment.
	if err := checkPullRequest(first, req.Repository, req.SHA, true); err != nil {
		return Verified{}, err
	}
	if origin := first.GetHead().GetRepo().GetFullName(); !strings.EqualFold(origin, req.Repository) {
		v.Fork = origin
		if v.Fork == "" {
			v.Fork = "a deleted repository"
		}
	}
	if want := "refs/heads/" + first.GetBase().GetRepo().GetDefaultBranch(); req.WorkflowRef != want {
		return Verified{}, refuse(CheckTrigger, "the relay runs on %q, not on the default branch (%s); dispatch it on the default branch", req.WorkflowRef, want)
	}
	v.BaseSHA = first.GetBase().GetSHA()

	if err := verifyComment(ctx, gh, req, &v); err != nil {
		return Verified{}, err
	}

	// Read the PR again: a push or a base change while we verified means the
	// evidence may no longer describe what would merge.
	second, err := gh.GetPullRequest(ctx, req.PRNumber)
	if err != nil {
		return Verified{}, fmt.Errorf("re-read PR #%d: %w", req.PRNumber, err)
	}
	if diff := prChanges(first, second); diff != "" {
		return Verified{}, refuse(CheckPRUnchanged, "PR #%d changed while the relay verified it (%s); dispatch the relay again", req.PRNumber, diff)
	}
	return v, nil
}

// verifyComment checks the evidence comment: written by an admin or
// maintainer, marked for the dispatched SHA, and holding readable evidence,
// which it records in v.
func verifyComment(ctx context.Context, gh RelayClient, req RelayRequest, v *Verified) error {
	comment, err := findComment(ctx, gh, req.PRNumber, req.CommentID)
	if err != nil {
		return err
	}
	author := comment.GetUser().GetLogin()
	if _, err := requireRole(ctx, gh, CheckCommentAuthor, "comment author", author); err != nil {
		return err
	}
	body := comment.GetBody()
	firstLine, _, _ := strings.Cut(body, "\n")
	markerSHA, err := ParseMarker(firstLine)
	if err != nil {
		return refuse(CheckMarker, "comment %d: %v", req.CommentID, err)
	}
	if markerSHA != req.SHA {
		return refuse(CheckMarker, "comment %d is evidence for %s, not for the dispatched %s", req.CommentID, markerSHA, req.SHA)
	}
	evidence, err := ParseEvidence(body)
	if err != nil {
		return refuse(CheckEvidence, "comment %d: %v", req.CommentID, err)
	}
	v.CommentURL, v.CommentAuthor, v.Evidence = comment.GetHTMLURL(), author, evidence
	return nil
}

func (req RelayRequest) validate() error {
	switch {
	case !repositoryRE.MatchString(req.Repository):
		return refuse(CheckRequest, "repository %q: want owner/name", clipText(req.Repository))
	case req.PRNumber <= 0:
		return refuse(CheckRequest, "%s %d: want a pull request number", InputPRNumber, req.PRNumber)
	case !wire.IsCommitSHA(req.SHA):
		return refuse(CheckRequest, "%s %q: want a full lowercase commit SHA", InputSHA, clipText(req.SHA))
	case req.CommentID <= 0:
		return refuse(CheckRequest, "%s %d: want the evidence comment's id", InputCommentID, req.CommentID)
	case req.Dispatcher == "":
		return refuse(CheckRequest, "the dispatcher is unknown (GITHUB_ACTOR is empty)")
	case req.Event != "workflow_dispatch":
		return refuse(CheckTrigger, "event %q: the relay runs only from workflow_dispatch", req.Event)
	}
	return nil
}

// requireRole refuses unless user is admin or maintain, per role_name.
func requireRole(ctx context.Context, gh RelayClient, check Check, who, user string) (string, error) {
	if user == "" {
		return "", refuse(check, "the %s is unknown", who)
	}
	role, err := gh.PermissionRole(ctx, user)
	if err != nil {
		return "", fmt.Errorf("read the role of %s %s: %w", who, user, err)
	}
	if !privilegedRoles[role] {
		return "", refuse(check, "%s %s has role %q; a local GPU validation needs admin or maintain", who, user, role)
	}
	return role, nil
}

// checkPullRequest refuses a PR that is closed, comes from a fork (unless
// allowFork), lacks the label or whose head is not sha. The local command and
// the relay share it.
func checkPullRequest(pr *github.PullRequest, repository, sha string, allowFork bool) error {
	n := pr.GetNumber()
	if pr.GetState() != "open" {
		return refuse(CheckPRState, "PR #%d is %s; only an open PR can be validated", n, pr.GetState())
	}
	if origin := pr.GetHead().GetRepo().GetFullName(); !allowFork && !strings.EqualFold(origin, repository) {
		if origin == "" {
			origin = "a deleted repository"
		}
		return refuse(CheckOrigin, "PR #%d comes from the fork %s, not from %s: its code would run on this machine, next to your credentials; "+
			"review it, then pass -allow-fork (ideally in a throwaway VM or container with no credentials)", n, origin, repository)
	}
	if !hasLabel(pr, gatecheck.LocalLabel) {
		return refuse(CheckLabel, "PR #%d is not labelled %s; add the label first", n, gatecheck.LocalLabel)
	}
	if head := pr.GetHead().GetSHA(); head != sha {
		return refuse(CheckHeadSHA, "PR #%d's head is %s, not %s", n, head, sha)
	}
	return nil
}

func hasLabel(pr *github.PullRequest, name string) bool {
	for _, l := range pr.Labels {
		if strings.EqualFold(l.GetName(), name) {
			return true
		}
	}
	return false
}

// findComment finds comment id among the PR's comments, which proves it is on that PR.
func findComment(ctx context.Context, gh RelayClient, number int, id int64) (*github.IssueComment, error) {
	comments, err := gh.ListIssueComments(ctx, number)
	if err != nil {
		return nil, fmt.Errorf("list the comments of PR #%d: %w", number, err)
	}
	for _, c := range comments {
		if c.GetID() == id {
			return c, nil
		}
	}
	return nil, refuse(CheckComment, "comment %d is not on PR #%d", id, number)
}

// prChanges lists what differs between two reads of a PR ("" when nothing that matters).
func prChanges(first, second *github.PullRequest) string {
	var changes []string
	if a, b := first.GetState(), second.GetState(); a != b {
		changes = append(changes, fmt.Sprintf("state %s -> %s", a, b))
	}
	if a, b := first.GetHead().GetSHA(), second.GetHead().GetSHA(); a != b {
		changes = append(changes, fmt.Sprintf("head %s -> %s", a, b))
	}
	if a, b := first.GetHead().GetRepo().GetFullName(), second.GetHead().GetRepo().GetFullName(); a != b {
		changes = append(changes, fmt.Sprintf("head repository %s -> %s", a, b))
	}
	if a, b := first.GetBase().GetSHA(), second.GetBase().GetSHA(); a != b {
		changes = append(changes, fmt.Sprintf("base %s -> %s", a, b))
	}
	if a, b := first.GetBase().GetRef(), second.GetBase().GetRef(); a != b {
		changes = append(changes, fmt.Sprintf("base branch %s -> %s", a, b))
	}
	if hasLabel(first, gatecheck.LocalLabel) && !hasLabel(second, gatecheck.LocalLabel) {
		changes = append(changes, "label "+gatecheck.LocalLabel+" removed")
	}
	return strings.Join(changes, ", ")
}

// PublishOptions says how the relay's gate check looks.
type PublishOptions struct {
	CheckName string // default gatecheck.DefaultCheckName
	RunID     int64  // the relay's workflow run
	RunURL    string // linked as the check's details
	// CompletedAt stamps the check; zero means now.
	CompletedAt time.Time
}

// Published is the relay's answer: what it verified and the check it created.
type Published struct {
	Verified
	ExternalID  string
	CheckRunID  int64
	CheckRunURL string
}

// Relay verifies the request and, only when every check passes, publishes the
// gate on the PR head with external_id local-gpu-gate:v1:<sha>.
func Relay(ctx context.Context, gh RelayPublisher, req RelayRequest, opts PublishOptions) (Published, error) {
	v, err := Verify(ctx, gh, req)
	if err != nil {
		return Published{}, err
	}
	externalID, err := gatecheck.LocalExternalID(v.SHA)
	if err != nil {
		return Published{}, err
	}
	run, err := gatecheck.Publish(ctx, boundedCreate{CheckRunCreator: gh, limit: req.callTimeout()}, gatecheck.Evidence{
		Kind: gatecheck.KindLocal, HeadSHA: v.SHA, TestedRef: v.SHA, CheckName: opts.CheckName,
		LocalEvidenceURL: v.CommentURL, RunID: opts.RunID, RunURL: opts.RunURL, CompletedAt: opts.CompletedAt,
	})
	if err != nil {
		return Published{}, err
	}
	return Published{Verified: v, ExternalID: externalID, CheckRunID: run.GetID(), CheckRunURL: run.GetHTMLURL()}, nil
}

// origin says where the PR comes from, for the summary.
func (v Verified) origin() string {
	if v.Fork != "" {
		return "from the fork " + v.Fork
	}
	return "same repository"
}

// Summary is the job-summary Markdown of a publication.
func (p Published) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Local GPU gate published for `%s`\n\n", p.SHA)
	table := mdtable.New("check", "result")
	rows := [][2]string{
		{"dispatcher", fmt.Sprintf("%s (%s)", p.Dispatcher, p.DispatcherRole)},
		{"PR", fmt.Sprintf("#%d open, %s, labelled %s, head `%s`, unchanged on re-read", p.PRNumber, p.origin(), gatecheck.LocalLabel, p.SHA)},
		{"evidence", fmt.Sprintf("[comment %d](%s) by %s", p.CommentID, p.CommentURL, p.CommentAuthor)},
		{"GPU", fmt.Sprintf("%s, driver %s, CUDA %s", p.Evidence.GPUName, p.Evidence.Driver, p.Evidence.CUDAVersion)},
		{"lane", fmt.Sprintf("%s, log SHA-256 `%s`", p.Evidence.Duration, p.Evidence.LogSHA256)},
		{"gate", fmt.Sprintf("[check %d](%s), external_id `%s`", p.CheckRunID, p.CheckRunURL, p.ExternalID)},
	}
	for _, r := range rows {
		table.Row(r[0], mdtable.Cell(r[1]))
	}
	b.WriteString(table.String())
	return b.String()
}

// callTimeout is each GitHub call's limit.
func (req RelayRequest) callTimeout() time.Duration {
	if req.CallTimeout > 0 {
		return req.CallTimeout
	}
	return gatecheck.DefaultReadTimeout
}

// bounded gives each read of the relay its own deadline: a stalled answer
// fails the relay, naming the read, long before the runner would kill it.
type bounded struct {
	RelayClient
	limit time.Duration
}

func (b bounded) GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error) {
	ctx, cancel := context.WithTimeout(ctx, b.limit)
	defer cancel()
	pr, err := b.RelayClient.GetPullRequest(ctx, number)
	return pr, overdue(ctx, b.limit, err)
}

func (b bounded) PermissionRole(ctx context.Context, user string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, b.limit)
	defer cancel()
	role, err := b.RelayClient.PermissionRole(ctx, user)
	return role, overdue(ctx, b.limit, err)
}

func (b bounded) ListIssueComments(ctx context.Context, number int) ([]*github.IssueComment, error) {
	ctx, cancel := context.WithTimeout(ctx, b.limit)
	defer cancel()
	comments, err := b.RelayClient.ListIssueComments(ctx, number)
	return comments, overdue(ctx, b.limit, err)
}

// boundedCreate gives the gate's creation a deadline too.
type boundedCreate struct {
	gatecheck.CheckRunCreator
	limit time.Duration
}

func (b boundedCreate) CreateCheckRun(ctx context.Context, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	ctx, cancel := context.WithTimeout(ctx, b.limit)
	defer cancel()
	run, err := b.CheckRunCreator.CreateCheckRun(ctx, in)
	return run, overdue(ctx, b.limit, err)
}

// overdue says so when a call failed because its deadline passed.
func overdue(ctx context.Context, limit time.Duration, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s: %w", limit, err)
	}
	return err
}
