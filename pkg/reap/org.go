package reap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// The organization sweep's own decision and reasons: what it records about a
// pod before (or instead of) the per-repository rules.
const (
	// DecisionDeferred: not decided in this sweep because the rate-limit
	// reserve was reached; untouched, and the next sweep decides.
	DecisionDeferred Decision = "deferred"

	// ReasonOtherOrganization: tagged for a repository of another
	// organization; never touched by this organization's sweep.
	ReasonOtherOrganization Reason = "other-organization"
	// ReasonRepositoryNotListed: a repository of the organization that the
	// repositories allowlist leaves out.
	ReasonRepositoryNotListed Reason = "repository-not-listed"
	// ReasonAppCannotSee: the App has no installation that covers the
	// repository, so no run can be checked and nothing is deleted — not even
	// past the age backstop: whether the repository still uses the suite (and
	// its own reaper) is unknown, and deleting on that doubt is not this
	// sweep's call.
	ReasonAppCannotSee Reason = "app-cannot-see-repository"
	// ReasonInstallationLookupFailed: finding the App's installation failed;
	// the pods are untouched and the repository fails the sweep.
	ReasonInstallationLookupFailed Reason = "installation-lookup-failed"
	// ReasonRateLimitReserve: the pod was not decided (DecisionDeferred).
	ReasonRateLimitReserve Reason = "rate-limit-reserve"
)

// ErrAppCannotSee is what a RepoConnector returns (wrapped) when the App has
// no installation covering the repository.
var ErrAppCannotSee = errors.New("the App has no installation covering the repository")

// RepoConnector gives the run API of one repository of the organization,
// authenticated as the App installation that covers it.
type RepoConnector interface {
	Connect(ctx context.Context, repository string) (RunAPI, error)
}

// OrgScope says which pods an organization sweep may reclaim.
type OrgScope struct {
	// Organization is the organization's login.
	Organization string
	// Repositories, when not empty, limits the sweep to these repositories of
	// the organization (names, with or without "org/").
	Repositories []string
	// Workflows limits every repository's sweep as Scope.Workflows does
	// (empty means LaneWorkflows).
	Workflows []string
}

// OrgRequest is one organization sweep.
type OrgRequest struct {
	OrgScope
	Execute      bool
	Event        string
	RetentionCap time.Duration
}

// OrgSweeper sweeps the pods of every repository of an organization: it lists
// the account's pods once, groups them by the repository their ownership
// tags name, and hands each group to a per-repository Sweeper (the same
// rules, record and reclaim as a repository's own reaper) with that
// repository's installation as its GitHub.
type OrgSweeper struct {
	Pods    PodLister
	Repos   RepoConnector
	Deleter PodDeleter
	Clock   clock.Clock
	// LookupTimeout and LookupAttempts are each repository Sweeper's.
	LookupTimeout  time.Duration
	LookupAttempts int
	// Pace is asked before each repository: nil goes on (it may have waited
	// for a rate-limit window); an error defers this and every later
	// repository to the next sweep. nil never defers.
	Pace func(ctx context.Context) error
	Logf func(format string, args ...any)
}

// RepoStatus is what became of one repository in an organization sweep.
type RepoStatus string

// Repository statuses.
const (
	RepoSwept    RepoStatus = "swept"    // its pods were decided (and, executing, reclaimed)
	RepoSkipped  RepoStatus = "skipped"  // never touched: not listed, or the App cannot see it
	RepoFailed   RepoStatus = "failed"   // some pods could not be settled; the sweep fails
	RepoDeferred RepoStatus = "deferred" // the rate-limit reserve was reached first
)

// RepoRecord is one repository's part of an organization sweep.
type RepoRecord struct {
	Repository string     `json:"repository"`
	Status     RepoStatus `json:"status"`
	// Reason says why the repository was skipped, deferred or failed.
	Reason string      `json:"reason,omitempty"`
	Pods   []PodRecord `json:"pods"`
}

// OrgRecord is the decision record of one organization sweep.
type OrgRecord struct {
	Version      int       `json:"version"`
	CheckedAt    time.Time `json:"checkedAt"`
	Execute      bool      `json:"execute"`
	Event        string    `json:"event,omitempty"`
	Organization string    `json:"organization"`
	// Error is why the sweep could not decide at all (the listing failed).
	Error        string       `json:"error,omitempty"`
	Repositories []RepoRecord `json:"repositories"`
	// Outside are the pods no repository of the organization owns: not the
	// suite's, or another organization's. Their tags are not repeated.
	Outside []PodRecord `json:"outside"`
}

// Counts are one repository's pods by outcome, as the summary shows them.
type Counts struct{ Seen, Reclaimed, Kept, Skipped, Deferred, Errors int }

// Counts tallies the repository's pods; a reclaim whose deletion or
// cancellation failed counts as an error too.
func (r RepoRecord) Counts() Counts {
	c := Counts{Seen: len(r.Pods)}
	for _, p := range r.Pods {
		switch p.Decision {
		case DecisionReclaim:
			c.Reclaimed++
		case DecisionKeep:
			c.Kept++
		case DecisionSkipForeign:
			c.Skipped++
		case DecisionDeferred:
			c.Deferred++
		}
		if p.Failed() {
			c.Errors++
		}
	}
	return c
}

// group is the pods whose tags name one repository of the organization.
type group struct {
	repository string // as the first pod's tags spell it
	pods       []runpod.Pod
}

// podList is a PodLister over pods already listed.
type podList []runpod.Pod

func (l podList) ListPods(context.Context, runpod.ListPodsQuery) ([]runpod.Pod, error) { return l, nil }

// groupByRepository sorts listed pods by the repository their tags name: the groups of
// the organization's repositories, in name order, and records for the pods
// outside the organization (never touched).
func groupByRepository(pods []runpod.Pod, organization string, now time.Time) ([]group, []PodRecord) {
	byKey := map[string]*group{}
	var outside []PodRecord
	for _, p := range pods {
		tags, err := ownership.FromPod(p.Name, p.Env)
		owner, _, _ := strings.Cut(tags.Repository, "/")
		switch {
		case err != nil:
			v := View(p, Scope{})
			outside = append(outside, newPodRecord(v, Verdict{Decision: DecisionSkipForeign, Reason: v.Foreign}, now))
			continue
		case !strings.EqualFold(owner, organization):
			v := View(p, Scope{})
			v.Foreign = ReasonOtherOrganization
			outside = append(outside, newPodRecord(v, Verdict{Decision: DecisionSkipForeign, Reason: ReasonOtherOrganization}, now))
			continue
		}
		key := strings.ToLower(tags.Repository)
		g := byKey[key]
		if g == nil {
			g = &group{repository: tags.Repository}
			byKey[key] = g
		}
		g.pods = append(g.pods, p)
	}
	groups := make([]group, 0, len(byKey))
	for _, g := range byKey {
		groups = append(groups, *g)
	}
	slices.SortFunc(groups, func(a, b group) int {
		return strings.Compare(strings.ToLower(a.repository), strings.ToLower(b.repository))
	})
	return groups, outside
}

// listed reports whether repository (org/name) is in the allowlist.
func (s OrgScope) listed(repository string) bool {
	if len(s.Repositories) == 0 {
		return true
	}
	_, name, _ := strings.Cut(repository, "/")
	for _, r := range s.Repositories {
		if strings.EqualFold(r, name) || strings.EqualFold(r, repository) {
			return true
		}
	}
	return false
}

// Sweep lists every pod once and sweeps each repository of the organization
// with its own installation. One repository's failure does not stop the
// others; the error names every failed repository (nil when none failed).
// Deferred repositories are not failures: the next sweep decides them.
func (s *OrgSweeper) Sweep(ctx context.Context, req OrgRequest) (*OrgRecord, error) {
	now := clock.Now(s.Clock)
	rec := &OrgRecord{Version: RecordVersion, CheckedAt: now, Execute: req.Execute, Event: req.Event,
		Organization: req.Organization, Repositories: []RepoRecord{}, Outside: []PodRecord{}}
	pods, err := listAllPods(ctx, s.Pods)
	if err != nil {
		rec.Error = err.Error()
		return rec, fmt.Errorf("reap: list pods (nothing was decided): %w", err)
	}
	groups, outside := groupByRepository(pods, req.Organization, now)
	rec.Outside = append(rec.Outside, outside...)

	var failed []error
	deferred := ""
	for _, g := range groups {
		rr := RepoRecord{Repository: g.repository}
		if !req.listed(g.repository) {
			rr.Status, rr.Reason = RepoSkipped, "not in the repositories input"
			rr.Pods = s.untouched(g.pods, DecisionSkipForeign, ReasonRepositoryNotListed, "")
			rec.Repositories = append(rec.Repositories, rr)
			continue
		}
		if deferred == "" && s.Pace != nil {
			if err := s.Pace(ctx); err != nil {
				deferred = err.Error()
				s.logf("rate-limit reserve reached: deferring %s and every later repository to the next sweep: %s", g.repository, deferred)
			}
		}
		if deferred != "" {
			rr.Status, rr.Reason = RepoDeferred, deferred
			rr.Pods = s.untouched(g.pods, DecisionDeferred, ReasonRateLimitReserve, "")
			rec.Repositories = append(rec.Repositories, rr)
			continue
		}
		rr, err := s.sweepRepo(ctx, g, req)
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", g.repository, err))
		}
		rec.Repositories = append(rec.Repositories, rr)
	}
	if len(failed) == 0 {
		return rec, nil
	}
	return rec, fmt.Errorf("reap: organization sweep: %d of %d repositories failed (the others were swept): %w", len(failed), len(groups), errors.Join(failed...))
}

// sweepRepo sweeps one repository's pods through its installation.
func (s *OrgSweeper) sweepRepo(ctx context.Context, g group, req OrgRequest) (RepoRecord, error) {
	rr := RepoRecord{Repository: g.repository}
	api, err := s.Repos.Connect(ctx, g.repository)
	switch {
	case errors.Is(err, ErrAppCannotSee):
		s.logf("%s: %v; its %d pod(s) are left alone", g.repository, err, len(g.pods))
		rr.Status, rr.Reason = RepoSkipped, err.Error()
		rr.Pods = s.untouched(g.pods, DecisionSkipForeign, ReasonAppCannotSee,
			"the App cannot see this repository: its runs cannot be checked, so nothing is deleted (install the App on it, or let its own reaper sweep it)")
		return rr, nil
	case err != nil:
		rr.Status, rr.Reason = RepoFailed, err.Error()
		rr.Pods = s.untouched(g.pods, DecisionError, ReasonInstallationLookupFailed, err.Error())
		return rr, err
	}
	// The Sweeper's lines are not prefixed: its cost lines are read by
	// machines from the start of the line; this heading names the repository.
	s.logf("repository %s: %d pod(s), checked through the App's installation on it", g.repository, len(g.pods))
	sw := &Sweeper{Pods: podList(g.pods), GitHub: api, Deleter: s.Deleter, Clock: s.Clock,
		LookupTimeout: s.LookupTimeout, LookupAttempts: s.LookupAttempts, Logf: s.Logf}
	one, err := sw.Sweep(ctx, Request{Scope: Scope{Repository: g.repository, Workflows: req.Workflows},
		Execute: req.Execute, Event: req.Event, RetentionCap: req.RetentionCap})
	rr.Pods, rr.Status = one.Pods, RepoSwept
	if err != nil {
		rr.Status, rr.Reason = RepoFailed, err.Error()
	}
	return rr, err
}

// untouched records pods the sweep leaves as they are, without their tags'
// run (it was not checked).
func (s *OrgSweeper) untouched(pods []runpod.Pod, d Decision, r Reason, detail string) []PodRecord {
	now := clock.Now(s.Clock)
	out := make([]PodRecord, 0, len(pods))
	for _, p := range pods {
		v := View(p, Scope{})
		v.Foreign = r // a reason, not the tags: the record shows no run for a pod not checked
		out = append(out, newPodRecord(v, Verdict{Decision: d, Reason: r, Detail: detail}, now))
	}
	return out
}

// PodIDs returns the ids of the pods that got decision d, across repositories.
func (r *OrgRecord) PodIDs(d Decision) []string {
	var ids []string
	for _, rr := range r.Repositories {
		for _, p := range rr.Pods {
			if p.Decision == d {
				ids = append(ids, p.PodID)
			}
		}
	}
	return ids
}

func (s *OrgSweeper) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}
