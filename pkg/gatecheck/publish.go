package gatecheck

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/wire"
)

// MaxOutputBytes is GitHub's limit on a check run's output summary and text.
const MaxOutputBytes = 65535

// PodEvidence describes the accepted pod that ran the GPU tests.
type PodEvidence struct {
	ID           string
	GPU          string
	Tier         string
	PricePerHour money.Rate
	// PriceUnknown says no hourly price was captured; the gate shows
	// "unknown" rather than a made-up $0.00.
	PriceUnknown   bool
	StartupSeconds int
	Attempts       int
	// CostMarkdown is the cost report, appended to the check's text.
	CostMarkdown string
}

// ServerlessEvidence describes the one Serverless job that ran the GPU tests.
type ServerlessEvidence struct {
	// PayloadSHA256 is the approved payload's checksum: the gate records
	// exactly which sources the job tested.
	PayloadSHA256 string
	WorkerSHA256  string // the Go worker the template fetched
	JobID         string
	JobStatus     string // COMPLETED, FAILED, CANCELLED, TIMED_OUT
	GPUPool       string // e.g. AMPERE_16
	// CUDAExecuted is the worker's proof that a kernel ran and was read back.
	CUDAExecuted bool
}

// Evidence is everything a gate publication states.
type Evidence struct {
	Kind      Kind
	HeadSHA   string // the commit the check is attached to (the PR head)
	TestedRef string // the SHA that was tested (merge SHA or dispatched SHA)
	CheckName string // default DefaultCheckName
	// Reason explains failed, skipped and not-required outcomes.
	Reason string
	// Pod is the accepted pod for paid and failed outcomes, when one ran.
	Pod *PodEvidence
	// Serverless is the job of serverless outcomes (and of failed ones of
	// the Serverless lane, when a payload was built).
	Serverless *ServerlessEvidence
	// ReusedCheckURL links the earlier gate a reused outcome relies on.
	ReusedCheckURL string
	// RunID and RunURL identify the workflow run; RunID feeds the re-run command.
	RunID  int64
	RunURL string
	// LocalEvidenceURL links the SHA-bound evidence comment of a local validation.
	LocalEvidenceURL string
	CompletedAt      time.Time
	// Key is the tested tree and lane; set, the marker is v2 and records it
	// beside the tested ref (the merge SHA, kept for the record).
	Key *TreeKey
	// CheckRunID is this lane's in-progress gate (authorize's
	// gate-check-run-id); set, Publish completes it instead of creating one.
	CheckRunID int64
	// Tiers are the rows of a gate over several pods (a matrix lane's tiers,
	// a pod lost to its host and its re-run): shown as a table, and a paid
	// gate names its pods through them instead of Pod.
	Tiers []TierRow
}

// conclusions maps each kind to the check conclusion branch protection sees.
var conclusions = map[Kind]string{
	KindPaid:        "success",
	KindReused:      "success",
	KindNotRequired: "success",
	KindLocal:       "success",
	KindFailed:      "failure",
	KindSkipped:     "neutral",
	KindServerless:  "success",
}

// Content builds the check run for the evidence: conclusion, external_id,
// title, a summary naming the evidence and, on failure, the exact re-run command.
func Content(e Evidence) (ghapi.CheckRunInput, error) {
	var externalID string
	var err error
	if e.Kind == KindLocal {
		externalID, err = LocalExternalID(e.TestedRef)
	} else {
		externalID, err = FormatMarker(e.TestedRef, e.Kind, e.Key)
	}
	if err != nil {
		return ghapi.CheckRunInput{}, err
	}
	if !wire.IsCommitSHA(e.HeadSHA) {
		return ghapi.CheckRunInput{}, fmt.Errorf("gate: head SHA %q: want a full lowercase commit SHA", e.HeadSHA)
	}
	switch {
	case e.Kind == KindReused && e.ReusedCheckURL == "":
		return ghapi.CheckRunInput{}, fmt.Errorf("gate: a reused gate must link the earlier check (ReusedCheckURL is empty)")
	case e.Kind == KindPaid && e.Pod == nil && len(e.Tiers) == 0:
		return ghapi.CheckRunInput{}, fmt.Errorf("gate: a paid gate must name the accepted pod (Pod is nil, and no tier rows)")
	case e.Kind == KindServerless:
		if err := e.Serverless.checkSuccess(); err != nil {
			return ghapi.CheckRunInput{}, fmt.Errorf("gate: %w", err)
		}
	}
	if e.Serverless != nil && e.Serverless.PayloadSHA256 != "" && !IsSHA256(e.Serverless.PayloadSHA256) {
		return ghapi.CheckRunInput{}, fmt.Errorf("gate: payload SHA-256 %q: want 64 lowercase hex digits", e.Serverless.PayloadSHA256)
	}
	name := e.CheckName
	if name == "" {
		name = DefaultCheckName
	}
	title, summary := describe(e)
	text := ""
	if e.Pod != nil {
		text = e.Pod.CostMarkdown
	}
	completed := e.CompletedAt
	if completed.IsZero() {
		completed = time.Now().UTC()
	}
	return ghapi.CheckRunInput{
		Name:        name,
		HeadSHA:     e.HeadSHA,
		ExternalID:  externalID,
		DetailsURL:  e.RunURL,
		Status:      "completed",
		Conclusion:  conclusions[e.Kind],
		CompletedAt: completed,
		Title:       title,
		Summary:     clip(summary),
		Text:        clip(text),
	}, nil
}

func describe(e Evidence) (title, summary string) {
	var b strings.Builder
	fmt.Fprintf(&b, "Tested ref: `%s` (on head `%s`)\n\n", e.TestedRef, e.HeadSHA)
	if e.Key != nil {
		fmt.Fprintf(&b, "Tested tree: `%s`, lane digest `%s`\n\n", e.Key.Tree, e.Key.Lane)
	}
	switch e.Kind {
	case KindPaid:
		title = describePaid(&b, e)
	case KindReused:
		title = "GPU tests passed earlier for this tested ref (reused)"
		what := "this exact tested ref"
		if e.Key != nil {
			what = "this exact tested ref, or the identical tree with the identical lane"
		}
		fmt.Fprintf(&b, "No pod was paid for: an earlier gate already validated %s.\n\nEvidence: %s\n", what, e.ReusedCheckURL)
	case KindFailed:
		title = "GPU tests failed"
		if e.Reason != "" {
			fmt.Fprintf(&b, "Reason: %s\n\n", e.Reason)
		}
		if e.Pod != nil {
			writePod(&b, e.Pod)
		}
		if e.Serverless != nil {
			writeServerless(&b, e.Serverless)
		}
	case KindNotRequired:
		title = "GPU tests not required"
		fmt.Fprintf(&b, "%s\n", cmp.Or(e.Reason, "The change touches none of the configured GPU paths."))
	case KindLocal:
		title = "GPU tests passed on a maintainer's local GPU"
		fmt.Fprintf(&b, "Evidence: %s\n", cmp.Or(e.LocalEvidenceURL, "(no link)"))
	case KindServerless:
		title = "GPU tests passed in one Serverless job"
		if e.Serverless.GPUPool != "" {
			title += " on " + e.Serverless.GPUPool
		}
		writeServerless(&b, e.Serverless)
	case KindSkipped:
		title = "GPU tests skipped"
		fmt.Fprintf(&b, "%s\n", cmp.Or(e.Reason, "The paid path was skipped."))
	}
	if len(e.Tiers) > 0 {
		b.WriteString("\n")
		writeTiers(&b, e.Tiers)
	}
	if e.RunURL != "" {
		fmt.Fprintf(&b, "\nWorkflow run: %s\n", e.RunURL)
	}
	if e.Kind == KindFailed && e.RunID > 0 {
		fmt.Fprintf(&b, "\nTo re-run the failed jobs:\n\n```sh\ngh run rerun %d --failed\n```\n", e.RunID)
	}
	return title, b.String()
}

// describePaid writes a paid gate's pod, or over several pods its reason
// (the tiers' rows follow), and returns its title.
func describePaid(b *strings.Builder, e Evidence) string {
	if len(e.Tiers) > 0 {
		if e.Reason != "" {
			fmt.Fprintf(b, "%s\n\n", e.Reason)
		}
		return tierTitle(e.Tiers)
	}
	writePod(b, e.Pod)
	return fmt.Sprintf("GPU tests passed on %s", e.Pod.GPU)
}

func writePod(b *strings.Builder, p *PodEvidence) {
	tb := mdtable.New("accepted pod", "GPU", "tier", "$/h", "startup", "attempts")
	price := perHourCell(p.PricePerHour)
	if p.PriceUnknown {
		price = "unknown"
	}
	tb.Row(mdtable.Code(p.ID), p.GPU, p.Tier, price, fmt.Sprintf("%d s", p.StartupSeconds), fmt.Sprint(p.Attempts))
	b.WriteString(tb.String())
}

// checkSuccess refuses a serverless success without the evidence it stands
// on: the approved payload's checksum and the worker's CUDA proof.
func (s *ServerlessEvidence) checkSuccess() error {
	switch {
	case s == nil:
		return fmt.Errorf("a serverless gate must name its job (Serverless is nil)")
	case !IsSHA256(s.PayloadSHA256):
		return fmt.Errorf("a serverless gate must record the payload SHA-256: %q is not 64 lowercase hex digits", s.PayloadSHA256)
	case !s.CUDAExecuted:
		return fmt.Errorf("a serverless gate needs the worker's CUDA proof (cuda_executed is false)")
	}
	return nil
}

// IsSHA256 reports whether s is a SHA-256 as the gate records it: 64 lowercase hex digits.
func IsSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

func writeServerless(b *strings.Builder, s *ServerlessEvidence) {
	tb := mdtable.New("Serverless job", "status", "GPU pool", "CUDA executed")
	tb.Row(mdtable.Code(cmp.Or(s.JobID, "(none)")), cmp.Or(s.JobStatus, "unknown"), cmp.Or(s.GPUPool, "unknown"), fmt.Sprint(s.CUDAExecuted))
	b.WriteString(tb.String() + "\n")
	fmt.Fprintf(b, "Payload SHA-256: `%s`\n", cmp.Or(s.PayloadSHA256, "(no payload was built)"))
	if s.WorkerSHA256 != "" {
		fmt.Fprintf(b, "Worker SHA-256: `%s`\n", s.WorkerSHA256)
	}
}

// clip keeps s inside GitHub's limit, cutting on a UTF-8 boundary and saying so.
func clip(s string) string {
	if len(s) <= MaxOutputBytes {
		return s
	}
	const note = "\n\n… (truncated to fit GitHub's 65535-byte limit)"
	cut := MaxOutputBytes - len(note)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}

// CheckRunCreator creates a check run. *ghapi.Client has it.
type CheckRunCreator interface {
	CreateCheckRun(ctx context.Context, in ghapi.CheckRunInput) (*github.CheckRun, error)
}

// CheckRunUpdater completes an in-progress gate. *ghapi.Client has it.
type CheckRunUpdater interface {
	UpdateCheckRun(ctx context.Context, id int64, in ghapi.CheckRunInput) (*github.CheckRun, error)
}

// Publish creates the gate check for the evidence and returns it; with
// CheckRunID it completes that in-progress gate instead, so the head never
// keeps a gate that stays in progress beside the final one.
func Publish(ctx context.Context, c CheckRunCreator, e Evidence) (*github.CheckRun, error) {
	in, err := Content(e)
	if err != nil {
		return nil, err
	}
	if e.CheckRunID != 0 {
		u, ok := c.(CheckRunUpdater)
		if !ok || e.CheckRunID < 0 {
			return nil, fmt.Errorf("publish %s gate: cannot complete in-progress gate %d (no updater, or not a check run id)", e.Kind, e.CheckRunID)
		}
		run, err := u.UpdateCheckRun(ctx, e.CheckRunID, in)
		if err != nil {
			return nil, fmt.Errorf("publish %s gate: complete in-progress gate %d: %w", e.Kind, e.CheckRunID, err)
		}
		return run, nil
	}
	run, err := c.CreateCheckRun(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("publish %s gate: %w", e.Kind, err)
	}
	return run, nil
}

// openGate starts the content of a gate that is not concluded yet (in
// progress, or following another lane's): the marker its success would carry
// (kind paid), the check's name, and the summary's lines naming what is tested.
func openGate(e Evidence) (marker, name string, summary *strings.Builder, err error) {
	marker, err = FormatMarker(e.TestedRef, KindPaid, e.Key)
	if err != nil {
		return "", "", nil, err
	}
	if !wire.IsCommitSHA(e.HeadSHA) {
		return "", "", nil, fmt.Errorf("gate: head SHA %q: want a full lowercase commit SHA", e.HeadSHA)
	}
	summary = &strings.Builder{}
	fmt.Fprintf(summary, "Tested ref: `%s` (on head `%s`)\n\n", e.TestedRef, e.HeadSHA)
	if e.Key != nil {
		fmt.Fprintf(summary, "Tested tree: `%s`, lane digest `%s`\n\n", e.Key.Tree, e.Key.Lane)
	}
	return marker, cmp.Or(e.CheckName, DefaultCheckName), summary, nil
}

// InProgressContent is the gate a lane publishes before its first create: in
// progress, with the marker its success would carry (kind paid), so a second
// lane for the same key finds it, waits for it and reuses its result.
func InProgressContent(e Evidence, startedAt time.Time) (ghapi.CheckRunInput, error) {
	marker, name, b, err := openGate(e)
	if err != nil {
		return ghapi.CheckRunInput{}, err
	}
	b.WriteString("This lane is testing this tested ref. Other lanes for the same tree and lane wait for its result instead of paying again.\n")
	if e.RunURL != "" {
		fmt.Fprintf(b, "\nWorkflow run: %s\n", e.RunURL)
	}
	return ghapi.CheckRunInput{
		Name: name, HeadSHA: e.HeadSHA, ExternalID: marker, DetailsURL: e.RunURL,
		Status: "in_progress", StartedAt: startedAt, Title: "GPU tests in progress", Summary: b.String(),
	}, nil
}
