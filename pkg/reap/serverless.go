package reap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// The Serverless lane's orphans. Its endpoint and template carry the attempt's
// unique name (ownership.ServerlessAttemptName), rpg-sls-<repo slug>-<run id>-<run
// attempt>-<8 hex>, the template with "-tpl" appended, and the template's
// environment names the repository (RPG_OWNER). The lane deletes them itself,
// deferred and again in an if: always() step; the reaper is the backstop for a
// runner that was lost, so it reclaims an attempt's resources only once its
// run is over or the lane's cleanup deadline (plus a margin) has passed.

// DefaultServerlessMargin is added to the lane's 30-minute cleanup deadline
// before the reaper reclaims without asking GitHub: the lane's own cleanup,
// which may start just before the deadline, gets the time to finish first.
const DefaultServerlessMargin = 10 * time.Minute

// ServerlessAPI is the part of the RunPod management client the Serverless
// sweep uses (runpod.Client).
type ServerlessAPI interface {
	ListEndpoints(context.Context) ([]runpod.Endpoint, error)
	ListTemplates(context.Context) ([]runpod.Template, error)
	ScaleEndpoint(context.Context, string, runpod.EndpointWorkers) (*runpod.Endpoint, error)
	DeleteEndpoint(context.Context, string) error
	DeleteTemplate(context.Context, string) error
}

// ServerlessReason says why an attempt's resources were reclaimed or kept.
type ServerlessReason string

// The Serverless sweep's reasons.
const (
	SlsReasonDeadline   ServerlessReason = "deadline"   // past the cleanup deadline + margin
	SlsReasonRunDone    ServerlessReason = "run-over"   // the run completed, or a newer attempt started
	SlsReasonRunActive  ServerlessReason = "run-active" // the run's attempt may still clean up itself
	SlsReasonUnproven   ServerlessReason = "unproven"   // RPG_OWNER is not this repository
	SlsReasonLookupFail ServerlessReason = "lookup-failed"
)

// ServerlessRecord is the decision about one attempt's endpoint and template.
type ServerlessRecord struct {
	Attempt    string           `json:"attempt"`
	RunID      int64            `json:"runId"`
	RunAttempt int              `json:"runAttempt"`
	EndpointID string           `json:"endpointId,omitempty"`
	TemplateID string           `json:"templateId,omitempty"`
	CreatedAt  wire.Time        `json:"createdAt"` // the endpoint's; unknown for a lone template
	Decision   Decision         `json:"decision"`
	Reason     ServerlessReason `json:"reason"`
	Detail     string           `json:"detail,omitempty"`
	// Confirmed is set when a fresh listing after the deletions shows neither.
	Confirmed   bool   `json:"confirmed,omitempty"`
	DeleteError string `json:"deleteError,omitempty"`
}

// ServerlessSweeper reclaims the Serverless lane's orphaned endpoints and
// templates of one repository.
type ServerlessSweeper struct {
	API    ServerlessAPI
	GitHub RunAPI
	Clock  clock.Clock
	// Deadline is the lane's absolute cleanup deadline from setup (default
	// the lane's, 30 minutes) and Margin what the reaper adds to it.
	Deadline, Margin time.Duration
	// LookupTimeout and LookupAttempts bound each GitHub lookup, as Sweeper's.
	LookupTimeout  time.Duration
	LookupAttempts int
	Logf           func(format string, args ...any)
}

// ErrServerlessIncomplete is returned when some attempt could not be settled.
var ErrServerlessIncomplete = errors.New("reap: serverless sweep incomplete")

// slsAttempt is one attempt's resources as listed.
type slsAttempt struct {
	name               string
	runID              int64
	runAttempt         int
	endpoint           *runpod.Endpoint
	template           *runpod.Template
	endpoints, tplates []string // every id listed under the names (duplicates are reclaimed too)
}

// Sweep lists endpoints and templates, decides each attempt of repository,
// and with execute scales down, deletes the endpoint then the template, and
// confirms both gone by fresh listings. A failed listing decides nothing.
func (s *ServerlessSweeper) Sweep(ctx context.Context, repository string, execute bool) ([]ServerlessRecord, error) {
	attempts, err := s.list(ctx, repository)
	if err != nil {
		return nil, fmt.Errorf("reap: list serverless endpoints and templates (nothing was decided): %w", err)
	}
	now := clock.Now(s.Clock)
	runs := map[int64]RunInfo{}
	var recs []ServerlessRecord
	var reclaim []int
	for _, a := range attempts {
		rec := s.decide(ctx, repository, a, now, runs)
		s.logf("serverless attempt %s (endpoint %q, template %q): %s, %s%s", a.name, rec.EndpointID, rec.TemplateID, rec.Decision, rec.Reason, suffix(rec.Detail))
		if rec.Decision == DecisionReclaim && execute {
			s.reclaim(ctx, a, &rec)
			reclaim = append(reclaim, len(recs))
		}
		recs = append(recs, rec)
	}
	if len(reclaim) > 0 {
		s.confirm(ctx, repository, recs, reclaim, attempts)
	}
	var bad []string
	for _, r := range recs {
		if r.Decision == DecisionError || r.DeleteError != "" || (execute && r.Decision == DecisionReclaim && !r.Confirmed) {
			bad = append(bad, r.Attempt)
		}
	}
	if len(bad) > 0 {
		return recs, fmt.Errorf("%w: %s undecided or not confirmed deleted; the next sweep retries", ErrServerlessIncomplete, strings.Join(bad, ", "))
	}
	return recs, nil
}

// list groups the repository's endpoints and templates by attempt, in name order.
func (s *ServerlessSweeper) list(ctx context.Context, repository string) ([]*slsAttempt, error) {
	lctx, cancel := context.WithTimeout(ctx, ListPodsTimeout)
	defer cancel()
	eps, err := s.API.ListEndpoints(lctx)
	if err != nil {
		return nil, err
	}
	tpls, err := s.API.ListTemplates(lctx)
	if err != nil {
		return nil, err
	}
	by := map[string]*slsAttempt{}
	var order []string
	get := func(name string, id int64, n int) *slsAttempt {
		a, ok := by[name]
		if !ok {
			a = &slsAttempt{name: name, runID: id, runAttempt: n}
			by[name] = a
			order = append(order, name)
		}
		return a
	}
	for i := range eps {
		name, id, n, isTpl, ok := ownership.ParseServerlessName(repository, eps[i].Name)
		if !ok || isTpl {
			continue
		}
		a := get(name, id, n)
		a.endpoints = append(a.endpoints, eps[i].ID)
		if a.endpoint == nil {
			a.endpoint = &eps[i]
		}
	}
	for i := range tpls {
		name, id, n, isTpl, ok := ownership.ParseServerlessName(repository, tpls[i].Name)
		if !ok || !isTpl {
			continue
		}
		a := get(name, id, n)
		a.tplates = append(a.tplates, tpls[i].ID)
		if a.template == nil {
			a.template = &tpls[i]
		}
	}
	out := make([]*slsAttempt, 0, len(order))
	for _, name := range order {
		out = append(out, by[name])
	}
	return out, nil
}

// decide applies, in order: ownership (RPG_OWNER, on the template, or on the
// endpoint, which shows its template's environment, when the template is
// gone), the deadline backstop (no lookup needed, so no GitHub answer can keep
// an old endpoint alive), then the run: over or superseded is reclaimed,
// running is kept, unreadable is an error.
func (s *ServerlessSweeper) decide(ctx context.Context, repository string, a *slsAttempt, now time.Time, runs map[int64]RunInfo) ServerlessRecord {
	rec := ServerlessRecord{Attempt: a.name, RunID: a.runID, RunAttempt: a.runAttempt, Decision: DecisionKeep}
	if a.endpoint != nil {
		rec.EndpointID, rec.CreatedAt = a.endpoint.ID, a.endpoint.CreatedAt
	}
	if a.template != nil {
		rec.TemplateID = a.template.ID
	}
	owner, from := "", "template"
	switch {
	case a.template != nil:
		owner = a.template.Env["RPG_OWNER"]
	case a.endpoint != nil:
		owner, from = a.endpoint.Env["RPG_OWNER"], "endpoint"
	}
	if !strings.EqualFold(owner, repository) {
		rec.Decision, rec.Reason = DecisionSkipForeign, SlsReasonUnproven
		rec.Detail = fmt.Sprintf("the %s's RPG_OWNER is %q, not %s: not provably this repository's, left alone", from, owner, repository)
		return rec
	}
	if created, known := rec.CreatedAt.Get(); known {
		if limit := created.Add(s.deadline() + s.margin()); now.After(limit) {
			rec.Decision, rec.Reason = DecisionReclaim, SlsReasonDeadline
			rec.Detail = fmt.Sprintf("created %s, past the cleanup deadline %s + margin %s", created.UTC().Format(time.RFC3339), s.deadline(), s.margin())
			return rec
		}
	}
	info, seen := runs[a.runID]
	if !seen {
		info = s.lookupRun(ctx, a.runID)
		runs[a.runID] = info
	}
	switch {
	case errors.Is(info.Err, ghapi.ErrNotFound):
		// The run is gone (deleted, or never this token's): nothing can clean up after it.
		rec.Decision, rec.Reason, rec.Detail = DecisionReclaim, SlsReasonRunDone, fmt.Sprintf("run %d was not found", a.runID)
	case info.Err != nil:
		rec.Decision, rec.Reason, rec.Detail = DecisionError, SlsReasonLookupFail, info.Err.Error()
	case info.ID != a.runID || !strings.EqualFold(info.Repository, repository) || info.LatestAttempt < a.runAttempt:
		// An answer about another run says nothing about this one: wait for the deadline.
		rec.Decision, rec.Reason = DecisionError, SlsReasonLookupFail
		rec.Detail = fmt.Sprintf("asked for run %d of %s attempt %d, the answer is run %d of %q with %d attempts: not trusted",
			a.runID, repository, a.runAttempt, info.ID, info.Repository, info.LatestAttempt)
	case info.LatestAttempt > a.runAttempt:
		rec.Decision, rec.Reason, rec.Detail = DecisionReclaim, SlsReasonRunDone, fmt.Sprintf("attempt %d superseded by attempt %d", a.runAttempt, info.LatestAttempt)
	case info.Completed():
		rec.Decision, rec.Reason, rec.Detail = DecisionReclaim, SlsReasonRunDone, fmt.Sprintf("run %d attempt %d completed", a.runID, a.runAttempt)
	default:
		rec.Reason, rec.Detail = SlsReasonRunActive, fmt.Sprintf("run %d attempt %d is %s: its own cleanup runs first", a.runID, a.runAttempt, info.Status)
	}
	return rec
}

func (s *ServerlessSweeper) lookupRun(ctx context.Context, runID int64) RunInfo {
	sw := Sweeper{GitHub: s.GitHub, LookupTimeout: s.LookupTimeout, LookupAttempts: s.LookupAttempts}
	return sw.lookupRun(ctx, runID)
}

// reclaim scales every endpoint of the attempt to zero workers, deletes it,
// then deletes its templates (a template in use cannot go first). Not found
// counts as deleted; the listing in confirm is the proof either way.
func (s *ServerlessSweeper) reclaim(ctx context.Context, a *slsAttempt, rec *ServerlessRecord) {
	var errs []string
	for _, id := range a.endpoints {
		if _, err := s.API.ScaleEndpoint(ctx, id, runpod.EndpointWorkers{Min: 0, Max: 0}); err != nil && !errors.Is(err, runpod.ErrNotFound) {
			s.logf("serverless endpoint %s: scale to 0: %v (deleting anyway)", id, err)
		}
		if err := s.API.DeleteEndpoint(ctx, id); err != nil && !errors.Is(err, runpod.ErrNotFound) {
			errs = append(errs, fmt.Sprintf("delete endpoint %s: %v", id, err))
		}
	}
	for _, id := range a.tplates {
		if err := s.API.DeleteTemplate(ctx, id); err != nil && !errors.Is(err, runpod.ErrNotFound) {
			errs = append(errs, fmt.Sprintf("delete template %s: %v", id, err))
		}
	}
	rec.DeleteError = strings.Join(errs, "; ")
}

// confirm lists afresh and marks each reclaimed attempt confirmed when
// neither its ids nor its names are listed any more.
func (s *ServerlessSweeper) confirm(ctx context.Context, repository string, recs []ServerlessRecord, idx []int, attempts []*slsAttempt) {
	left, err := s.list(ctx, repository)
	if err != nil {
		for _, i := range idx {
			recs[i].DeleteError = strings.TrimPrefix(recs[i].DeleteError+"; confirmation listing failed: "+err.Error(), "; ")
		}
		return
	}
	still := map[string]bool{}
	for _, a := range left {
		still[a.name] = true
	}
	for _, i := range idx {
		recs[i].Confirmed = !still[recs[i].Attempt]
		if recs[i].Confirmed {
			s.logf("serverless attempt %s: endpoint and template deleted and confirmed absent", recs[i].Attempt)
		} else {
			s.logf("serverless attempt %s: still listed after deletion; the next sweep retries", recs[i].Attempt)
		}
	}
}

func (s *ServerlessSweeper) deadline() time.Duration {
	if s.Deadline > 0 {
		return s.Deadline
	}
	return ownership.ServerlessCleanupDeadline
}

func (s *ServerlessSweeper) margin() time.Duration {
	if s.Margin > 0 {
		return s.Margin
	}
	return DefaultServerlessMargin
}

func (s *ServerlessSweeper) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// ServerlessMarkdown renders the Serverless attempts for the job summary; ""
// when there were none.
func ServerlessMarkdown(recs []ServerlessRecord, execute bool) string {
	if len(recs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Serverless endpoints and templates\n\n")
	tb := mdtable.New("attempt", "endpoint", "template", "decision", "reason", "deleted and confirmed")
	for _, r := range recs {
		done := "–"
		switch {
		case r.Decision == DecisionReclaim && !execute:
			done = "dry run"
		case r.Decision == DecisionReclaim && r.Confirmed:
			done = "yes"
		case r.Decision == DecisionReclaim:
			done = "**no**: " + cell(r.DeleteError)
		}
		tb.Row(mdtable.Code(r.Attempt), mdtable.Code(r.EndpointID), mdtable.Code(r.TemplateID), string(r.Decision),
			cell(string(r.Reason)+suffix(r.Detail)), done)
	}
	b.WriteString(tb.String())
	return b.String()
}
