package gate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/wire"
)

// ApprovalLabel is the default label whose labeled event approves a fork PR's
// head at that moment for one paid GPU run.
const ApprovalLabel = "gpu-approved"

// ApprovalVia says how a maintainer approved a fork PR's head.
type ApprovalVia string

// The two ways to approve a fork PR's head.
const (
	// ApprovedByDispatch: an admin or maintainer dispatched the lane with
	// approved-fork-sha set to the head they reviewed.
	ApprovedByDispatch ApprovalVia = "dispatch"
	// ApprovedByLabel: an admin or maintainer added the approval label, and
	// this run is the pull_request_target labeled event that recorded the head.
	ApprovedByLabel ApprovalVia = "label"
)

// ForkApproval is a maintainer's approval to run one fork PR head on a paid
// GPU. It binds a person to an exact SHA: any other head is not approved.
type ForkApproval struct {
	Via ApprovalVia
	// SHA is the approved PR head.
	SHA string
	// Approver is who dispatched, or who added the label (the event's sender).
	Approver string
	// Label is the approval label (Via label); it must still be on the PR.
	Label string
}

// ApprovalTrigger is what the runner says about this run, from which
// ForkApprovalFromTrigger derives the approval.
type ApprovalTrigger struct {
	// EventName is GITHUB_EVENT_NAME (the caller's event inside a reusable workflow).
	EventName string
	// Actor is GITHUB_ACTOR: who dispatched (a re-run keeps the original dispatcher).
	Actor string
	// ApprovedSHA is the input approved-fork-sha ("" when none).
	ApprovedSHA string
	// Label is the approval label (input fork-approval-label).
	Label string
	// PRNumber is the PR under authorization.
	PRNumber int
	// Payload reads the event payload (GITHUB_EVENT_PATH); it is called only
	// for a pull_request_target event.
	Payload func() ([]byte, error)
}

// labeledEvent is the part of a pull_request_target payload the label path reads.
type labeledEvent struct {
	Action string `json:"action"`
	Label  *struct {
		Name string `json:"name"`
	} `json:"label"`
	Sender *struct {
		Login string `json:"login"`
	} `json:"sender"`
	PullRequest *struct {
		Number int `json:"number"`
		Head   *struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
}

// ForkApprovalFromTrigger returns the approval this run carries, nil when it
// carries none. An approval that is present but cannot be trusted (a SHA
// input outside workflow_dispatch, an unreadable or inconsistent labeled
// payload) is a *RefusedError: anything unreadable is not approved.
//
// The label path trusts only the labeled event's own payload for the SHA:
// GitHub's API records when a label was added but not when a plain push moved
// the head, so the payload is the only record of the head at labelling time.
func ForkApprovalFromTrigger(t ApprovalTrigger) (*ForkApproval, error) {
	if t.ApprovedSHA != "" {
		if t.EventName != "workflow_dispatch" {
			return nil, refuse("approved-fork-sha is honoured only when an admin or maintainer dispatches the lane (workflow_dispatch), not on %q: "+
				"a SHA passed from any other event is not a person's approval", t.EventName)
		}
		if !wire.IsCommitSHA(t.ApprovedSHA) {
			return nil, refuse("approved-fork-sha %.80q: want the fork PR's full head commit SHA (40 or 64 lower-case hex digits)", t.ApprovedSHA)
		}
		if t.Actor == "" {
			return nil, refuse("approved-fork-sha is set but the dispatcher is unknown (GITHUB_ACTOR is empty)")
		}
		return &ForkApproval{Via: ApprovedByDispatch, SHA: t.ApprovedSHA, Approver: t.Actor}, nil
	}
	if t.EventName != "pull_request_target" || t.Label == "" || t.Payload == nil {
		return nil, nil
	}
	raw, err := t.Payload()
	if err != nil {
		return nil, refuse("read the pull_request_target event payload: %v; a label approval cannot be verified", err)
	}
	var ev labeledEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, refuse("parse the pull_request_target event payload: %v; a label approval cannot be verified", err)
	}
	if ev.Action != "labeled" || ev.Label == nil || !strings.EqualFold(ev.Label.Name, t.Label) {
		return nil, nil // not the approval label being added: no approval
	}
	switch {
	case ev.PullRequest == nil || ev.PullRequest.Head == nil || !wire.IsCommitSHA(ev.PullRequest.Head.SHA):
		return nil, refuse("the %s labeled event names no pull request head SHA; the approval cannot be bound to a commit", t.Label)
	case ev.PullRequest.Number != t.PRNumber:
		return nil, refuse("the %s labeled event is for PR #%d, not for pr-number %d", t.Label, ev.PullRequest.Number, t.PRNumber)
	case ev.Sender == nil || ev.Sender.Login == "":
		return nil, refuse("the %s labeled event names no sender; who approved is unknown", t.Label)
	}
	return &ForkApproval{Via: ApprovedByLabel, SHA: ev.PullRequest.Head.SHA, Approver: ev.Sender.Login, Label: t.Label}, nil
}

// describe says who approved what, for reasons and the summary.
func (f *ForkApproval) describe() string {
	if f.Via == ApprovedByLabel {
		return fmt.Sprintf("label %s added by %s at head %s", f.Label, f.Approver, f.SHA)
	}
	return fmt.Sprintf("dispatch by %s with approved-fork-sha %s", f.Approver, f.SHA)
}
