package gate

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/wire"
)

// JobResult is a job's result as a workflow sees it in needs.<job>.result.
type JobResult string

// The results GitHub reports for a finished job.
const (
	JobSuccess   JobResult = "success"
	JobFailure   JobResult = "failure"
	JobCancelled JobResult = "cancelled"
	JobSkipped   JobResult = "skipped"
)

// RequestError names the request field, spelled as the gate action's input,
// that is wrong, its value and what is expected.
type RequestError struct {
	Input, Value, Expected string
}

func (e *RequestError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("input %s is empty: want %s", e.Input, e.Expected)
	}
	return fmt.Sprintf("input %s = %q: want %s", e.Input, e.Value, e.Expected)
}

// Publisher is what Conclude reads and writes on GitHub. *ghapi.Client has it.
type Publisher interface {
	GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error)
	gatecheck.CheckRunCreator
}

// ConcludeRequest says how a workflow run ended. Its fields mirror the gate
// action's inputs, and errors name those inputs.
type ConcludeRequest struct {
	// PRNumber > 0 makes Conclude re-read the PR's labels right before
	// publishing: a PR labelled gatecheck.LocalLabel gets no gate from the paid workflow.
	PRNumber int
	// Kind, when set, is published as it is. When empty, the kind is derived
	// from Decision, SkipKind and GPUJobResult (see ResolveKind).
	Kind gatecheck.Kind
	// Decision is the authorize step's decision output.
	Decision Outcome
	// SkipKind is the authorize step's gate-kind output: what a skip publishes.
	SkipKind gatecheck.Kind
	// GPUJobResult is needs.<GPU test job>.result.
	GPUJobResult JobResult
	// Lane is the path that ran the GPU tests: LanePod (the default) or
	// LaneServerless, whose successful job publishes KindServerless.
	Lane Lane
	// Evidence is what the gate states; Conclude fills in its Kind.
	Evidence gatecheck.Evidence
	// LaneImage is the runner image digest in Evidence.Key's lane digest
	// (authorize's lane-image) and Image the one the pod ran (provision's
	// image). A paid or failed gate records the key only when they are equal.
	LaneImage, Image string
	// Tiers are the lane's pods (tiers.go): a matrix lane's tiers, or a pod
	// lost to its host and its re-run, decided row by row.
	Tiers TierRequest
}

// Lane names the path that ran the GPU tests.
type Lane string

// The lanes: a pod with a runner, or one Serverless job.
const (
	LanePod        Lane = "pod"
	LaneServerless Lane = "serverless"
)

// Concluded is what Conclude did.
type Concluded struct {
	// Kind is the gate published; empty when nothing was.
	Kind gatecheck.Kind
	// Reason says why this kind was chosen, or why nothing was published.
	Reason string
	// CheckRun is the published gate; nil when nothing was published.
	CheckRun *github.CheckRun
	// TierChecks are a matrix lane's checks per tier, published before the gate.
	TierChecks []TierCheck
	// Followers are the follow gates of other lanes this gate completed
	// (gatecheck.CompleteFollowers); FollowersErr says what it could not do.
	Followers    gatecheck.Followers
	FollowersErr error
}

// ResolveKind chooses the gate to publish; an empty kind with a nil error
// means publish nothing. An explicit Kind wins; otherwise:
//
//	decision reuse                         → reused
//	decision skip                          → SkipKind (empty: nothing)
//	decision run, GPU job success          → paid (serverless in the Serverless lane)
//	decision run, GPU job failure          → failed
//	decision run, GPU job cancelled        → failed
//	decision run, GPU job skipped          → reused when ReusedCheckURL is set
//	                                         (provision found an earlier gate), else failed
//
// A run that did not succeed is never published as a success: the gate fails closed.
func (r ConcludeRequest) ResolveKind() (kind gatecheck.Kind, reason string, err error) {
	if r.Kind != "" {
		return r.explicitKind()
	}
	switch r.Decision {
	case OutcomeReuse, OutcomeSkip:
		// The GPU job never runs after these decisions: a result of its run
		// says the inputs are not of one workflow run.
		if r.GPUJobResult == JobSuccess || r.GPUJobResult == JobFailure {
			return "", "", &RequestError{Input: "gpu-job-result", Value: string(r.GPUJobResult),
				Expected: fmt.Sprintf("skipped or empty: decision %s runs no GPU job", r.Decision)}
		}
	}
	switch r.Decision {
	case OutcomeReuse:
		return gatecheck.KindReused, "authorize found an earlier passing gate for this tested ref", nil
	case OutcomeSkip:
		if r.SkipKind == "" {
			return "", "authorize skipped the paid path, and this skip publishes no gate", nil
		}
		if err := publishable("gate-kind", r.SkipKind); err != nil {
			return "", "", err
		}
		return r.SkipKind, "authorize skipped the paid path", nil
	case OutcomeRun:
	case "":
		return "", "", &RequestError{Input: "decision", Expected: "run, reuse or skip (the authorize step's decision output), or set kind"}
	default:
		return "", "", &RequestError{Input: "decision", Value: string(r.Decision), Expected: "run, reuse or skip"}
	}
	switch r.Lane {
	case "", LanePod, LaneServerless:
	default:
		return "", "", &RequestError{Input: "lane", Value: string(r.Lane), Expected: "pod or serverless"}
	}
	if r.Lane != LaneServerless && r.Tiers.tiered() {
		kind, reason := r.resolveTiers()
		return kind, reason, nil
	}
	return r.resolveRun()
}

// resolveRun is a run's gate from the GPU job's result (see ResolveKind).
func (r ConcludeRequest) resolveRun() (kind gatecheck.Kind, reason string, err error) {
	switch r.GPUJobResult {
	case JobSuccess:
		if r.Lane == LaneServerless {
			return gatecheck.KindServerless, "the Serverless job succeeded", nil
		}
		return gatecheck.KindPaid, "the GPU test job succeeded", nil
	case JobFailure:
		return gatecheck.KindFailed, "the GPU test job failed", nil
	case JobCancelled:
		return gatecheck.KindFailed, "the GPU test job was cancelled", nil
	case JobSkipped:
		if r.Lane == LaneServerless {
			return gatecheck.KindFailed, "the Serverless job was skipped: it never ran the tests", nil
		}
		if r.Evidence.ReusedCheckURL != "" {
			return gatecheck.KindReused, "provision found an earlier passing gate for this tested ref", nil
		}
		return gatecheck.KindFailed, "the GPU test job was skipped: provisioning did not hand it a runner", nil
	case "":
		return "", "", &RequestError{Input: "gpu-job-result", Expected: "the GPU test job's result (needs.<job>.result) when decision is run"}
	default:
		return "", "", &RequestError{Input: "gpu-job-result", Value: string(r.GPUJobResult), Expected: "success, failure, cancelled or skipped"}
	}
}

// explicitKind checks a given kind against the rest of the request: when
// decision or gpu-job-result is given too, they must choose the same kind (a
// kind paid beside a failed GPU job would publish a success for it), and a
// lane named must be the kind's.
func (r ConcludeRequest) explicitKind() (gatecheck.Kind, string, error) {
	if err := publishable("kind", r.Kind); err != nil {
		return "", "", err
	}
	if r.Decision != "" || r.GPUJobResult != "" {
		derived := r
		derived.Kind = ""
		want, _, err := derived.ResolveKind()
		if err != nil {
			return "", "", err
		}
		if want != r.Kind {
			return "", "", &RequestError{Input: "kind", Value: string(r.Kind), Expected: fmt.Sprintf(
				"what decision %q and gpu-job-result %q choose (%s), or no decision and gpu-job-result", r.Decision, r.GPUJobResult, cmp.Or(string(want), "no gate"))}
		}
	}
	if (r.Lane == LanePod && r.Kind == gatecheck.KindServerless) || (r.Lane == LaneServerless && r.Kind == gatecheck.KindPaid) {
		return "", "", &RequestError{Input: "kind", Value: string(r.Kind), Expected: fmt.Sprintf("a kind of the %s lane", r.Lane)}
	}
	return r.Kind, "kind " + string(r.Kind) + " was given", nil
}

// publishable accepts every kind but local: only the relay, which verifies a
// maintainer's SHA-bound evidence, may publish a local gate.
func publishable(input string, k gatecheck.Kind) error {
	if k == gatecheck.KindLocal {
		return &RequestError{Input: input, Value: string(k),
			Expected: "paid, serverless, reused, failed, not-required or skipped (local gates come from the local-gate relay, which verifies the evidence)"}
	}
	if !k.Known() {
		return &RequestError{Input: input, Value: string(k), Expected: "one of " + gatecheck.KindList()}
	}
	return nil
}

// Conclude publishes the gate that ends a workflow run: it resolves the kind,
// checks the evidence that kind needs, re-reads the PR's label and publishes.
// For a PR labelled gatecheck.LocalLabel it publishes nothing, because the local relay
// owns the gate then and the paid workflow must never override it; a failed
// re-read publishes nothing either and is an error.
func Conclude(ctx context.Context, gh Publisher, r ConcludeRequest) (Concluded, error) {
	kind, reason, err := r.ResolveKind()
	if err != nil {
		return Concluded{}, err
	}
	if kind == "" {
		return Concluded{Reason: reason}, nil
	}
	e := r.tierEvidence()
	if err := checkEvidence(kind, e); err != nil {
		return Concluded{}, err
	}
	prHead := ""
	if r.PRNumber > 0 {
		pr, err := gh.GetPullRequest(ctx, r.PRNumber)
		if err != nil {
			return Concluded{}, fmt.Errorf("re-read PR #%d for the %s label (nothing published, so a local gate cannot be overridden): %w",
				r.PRNumber, gatecheck.LocalLabel, err)
		}
		prHead = pr.GetHead().GetSHA()
		if hasLabel(pr, gatecheck.LocalLabel) {
			why := fmt.Sprintf("PR #%d is labelled %s: the local relay publishes the gate", r.PRNumber, gatecheck.LocalLabel)
			if e.CheckRunID != 0 {
				// This lane's in-progress gate must not stay in progress.
				e.Kind, e.Reason = gatecheck.KindSkipped, why
				if _, err := gatecheck.Publish(ctx, gh, e); err != nil {
					return Concluded{}, err
				}
			}
			return Concluded{Reason: why}, nil
		}
	}
	if e.Key != nil && (kind == gatecheck.KindPaid || kind == gatecheck.KindFailed) && (r.Image == "" || r.Image != r.LaneImage) {
		// The pod did not provably run the image the key names: record the
		// tested ref only, so this gate is never reused by tree.
		e.Key = nil
		reason = joinNonEmpty(reason, fmt.Sprintf("the pod's image %q is not the keyed lane's %q, so the gate records no tree key", r.Image, r.LaneImage))
	}
	e.Kind = kind
	switch {
	case r.Kind != "": // an explicit kind states only the reason given with it
	case kind == gatecheck.KindFailed, len(e.Tiers) > 0:
		// The jobs' results are the fact (and a host fault's re-run is
		// news); a given reason adds detail to it.
		e.Reason = joinNonEmpty(reason, e.Reason)
	case e.Reason == "":
		e.Reason = reason
	}
	var tierChecks []TierCheck
	if r.Lane != LaneServerless && r.Tiers.tiered() {
		tierChecks = publishTierChecks(ctx, gh, r, e)
	}
	run, err := gatecheck.Publish(ctx, gh, e)
	if err != nil {
		return Concluded{}, err
	}
	done := Concluded{Kind: kind, Reason: reason, CheckRun: run, TierChecks: tierChecks}
	done.Followers, done.FollowersErr = completeFollowers(ctx, gh, run, e, prHead)
	return done, nil
}

// completeFollowers completes, with the gate just published, the follow gates
// of lanes that followed this lane's stake, on the gate's head and on the PR's
// head now. Only a lane that staked (Evidence.CheckRunID) has followers.
func completeFollowers(ctx context.Context, gh Publisher, run *github.CheckRun, e gatecheck.Evidence, prHead string) (gatecheck.Followers, error) {
	cc, ok := gh.(gatecheck.ClaimClient)
	if !ok || e.CheckRunID == 0 {
		return gatecheck.Followers{}, nil
	}
	return gatecheck.CompleteFollowers(ctx, cc, run, e, []string{e.HeadSHA, prHead})
}

// checkEvidence checks that the evidence names what a gate of kind states:
// the SHAs it is attached to and tested, and the proof its kind needs.
func checkEvidence(kind gatecheck.Kind, e gatecheck.Evidence) error {
	switch {
	case !wire.IsCommitSHA(e.HeadSHA):
		return &RequestError{Input: "head-sha", Value: e.HeadSHA, Expected: "the full commit SHA the gate is attached to (authorize's head-sha output)"}
	case !wire.IsCommitSHA(e.TestedRef):
		return &RequestError{Input: "tested-ref", Value: e.TestedRef, Expected: "the full commit SHA that was tested (authorize's tested-ref output)"}
	case kind == gatecheck.KindPaid && e.Pod == nil && len(e.Tiers) == 0:
		return &RequestError{Input: "pod-id", Expected: "the accepted pod's id (the provision step's pod-id output): a paid gate names its evidence"}
	case kind == gatecheck.KindServerless && (e.Serverless == nil || e.Serverless.PayloadSHA256 == ""):
		return &RequestError{Input: "payload-sha256", Expected: "the payload's SHA-256 (the serverless step's payload-sha256 output): a serverless gate records what it tested"}
	case e.Serverless != nil && e.Serverless.PayloadSHA256 != "" && !gatecheck.IsSHA256(e.Serverless.PayloadSHA256):
		return &RequestError{Input: "payload-sha256", Value: e.Serverless.PayloadSHA256, Expected: "64 lowercase hex digits (the serverless step's payload-sha256 output)"}
	case kind == gatecheck.KindServerless && !e.Serverless.CUDAExecuted:
		return &RequestError{Input: "cuda-executed", Value: "false", Expected: "true (the serverless step's cuda-executed output): a serverless gate needs the worker's CUDA proof"}
	case kind == gatecheck.KindReused && e.ReusedCheckURL == "":
		return &RequestError{Input: "reused-check-url", Expected: "the earlier gate's URL (authorize's or provision's reused-check-url output): a reused gate links its evidence"}
	}
	return checkEvidenceFits(kind, e)
}

// checkEvidenceFits refuses evidence the gate's kind cannot have: a pod for
// a gate that paid for none, the Serverless lane's payload or job on a pod's
// gate, both lanes' evidence at once.
func checkEvidenceFits(kind gatecheck.Kind, e gatecheck.Evidence) error {
	serverless := e.Serverless != nil && (e.Serverless.PayloadSHA256 != "" || e.Serverless.JobID != "")
	switch {
	case e.Pod != nil && kind != gatecheck.KindPaid && kind != gatecheck.KindFailed:
		return &RequestError{Input: "pod-id", Value: e.Pod.ID, Expected: fmt.Sprintf("empty: a %s gate paid for no pod", kind)}
	case e.Pod != nil && serverless:
		return &RequestError{Input: "pod-id", Value: e.Pod.ID, Expected: "empty beside the Serverless job's evidence (payload-sha256, job-id): a gate has one lane's evidence"}
	case serverless && kind != gatecheck.KindServerless && kind != gatecheck.KindFailed:
		return &RequestError{Input: "payload-sha256", Value: e.Serverless.PayloadSHA256,
			Expected: fmt.Sprintf("empty, with job-id: a %s gate ran no Serverless job", kind)}
	}
	return nil
}

// Summary renders the gate job's summary: what was published and why.
func (c Concluded) Summary() string {
	var b strings.Builder
	b.WriteString("## CI GPU gate\n\n")
	if c.CheckRun == nil {
		fmt.Fprintf(&b, "No gate published: %s.\n", c.Reason)
		return b.String()
	}
	fmt.Fprintf(&b, "Published **%s** as [%s](%s) (conclusion %s): %s.\n\n",
		c.Kind, c.CheckRun.GetName(), c.CheckRun.GetHTMLURL(), c.CheckRun.GetConclusion(), c.Reason)
	fmt.Fprintf(&b, "external_id: `%s`\n", c.CheckRun.GetExternalID())
	for _, t := range c.TierChecks {
		if t.Err != nil {
			fmt.Fprintf(&b, "\n- tier %s: its own check could not be published (%v); it is not reusable by tree\n", t.Tier, t.Err)
			continue
		}
		fmt.Fprintf(&b, "\n- tier %s: %s, [its own check](%s)\n", t.Tier, t.Kind, t.URL)
	}
	if n := len(c.Followers.Completed); n > 0 {
		fmt.Fprintf(&b, "\nCompleted %d follow gate(s) of lanes that waited for this one, as %s:", n, c.Followers.Kind)
		for _, f := range c.Followers.Completed {
			fmt.Fprintf(&b, " [%d](%s)", f.GetID(), f.GetHTMLURL())
		}
		b.WriteString("\n")
	}
	if c.FollowersErr != nil {
		fmt.Fprintf(&b, "\n**Follow gates not completed**: %v. Re-run the lanes that followed this one.\n", c.FollowersErr)
	}
	return b.String()
}

func hasLabel(pr *github.PullRequest, name string) bool {
	for _, l := range pr.Labels {
		if strings.EqualFold(l.GetName(), name) {
			return true
		}
	}
	return false
}

func joinNonEmpty(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, ": ")
}
