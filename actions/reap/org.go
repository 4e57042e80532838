package reapaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/reap"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// orgSweepBudget bounds the whole organization sweep, inside the workflow
// step's 12 minutes: a rate-limit hold that does not fit what is left defers
// the remaining repositories instead of holding the job.
const orgSweepBudget = 10 * time.Minute

// loginPattern is what GitHub accepts as an organization login.
var loginPattern = lazyre.Regexp{Pattern: `^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`}

// repoNamePattern is what GitHub accepts as a repository name.
var repoNamePattern = lazyre.Regexp{Pattern: `^[A-Za-z0-9._-]+$`}

// runOrg is the organization mode: every repository of org whose pods are in
// the account, each checked through the App's installation on it.
func runOrg(ctx context.Context, io *actionio.IO, in Inputs, retentionCap time.Duration, relPath string) error {
	if err := checkOrgInputs(in); err != nil {
		return err
	}
	org, repos, appID, key := in.Organization, in.Repositories, in.AppID, in.PrivateKey
	fraction := float64(in.RateLimitReserve) / 100
	rp, rpPolicy, err := actionkit.RunPod(io, in.RunPodInputs, reqpolicy.WithReserve(reqpolicy.IETFQuota, fraction))
	if err != nil {
		return err
	}
	// One GitHub policy for the App and every installation client: they
	// share the App's budget, so they share its reserve and cooldown.
	ghPolicy := actionkit.GitHubPolicy(io, reqpolicy.WithReserve(reqpolicy.GitHubQuota, fraction))
	base := ghapi.Options{BaseURL: io.Getenv("GITHUB_API_URL"), Policy: ghPolicy, OnSecret: io.Mask}
	appOpts := base
	appOpts.App = &ghapi.AppAuth{AppID: appID, PrivateKeyPEM: []byte(key)}
	app, err := ghapi.NewAppClient(appOpts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, orgSweepBudget)
	defer cancel()
	event := io.Getenv("GITHUB_EVENT_NAME")
	sweeper := &reap.OrgSweeper{
		Pods:    rp,
		Repos:   &orgRepos{app: app, base: base, appID: appID, key: []byte(key)},
		Deleter: &lifecycle.Deleter{Pods: rp, Policy: rpPolicy, Logf: io.Infof},
		Pace:    reservePace(rpPolicy, ghPolicy),
		Logf:    io.Infof,
	}
	endSweep := io.Phase("sweep: the pods of " + org + "'s repositories")
	rec, sweepErr := sweeper.Sweep(ctx, reap.OrgRequest{
		OrgScope: reap.OrgScope{Organization: org, Repositories: repos, Workflows: in.Workflows},
		Execute:  reap.ShouldExecute(event, in.Execute), Event: event, RetentionCap: retentionCap,
	})
	endSweep()
	warnRepositories(io, rec)

	// The record and summary are written whatever happened: they are the evidence.
	errs := []error{sweepErr, rec.WriteFile(in.RecordPath)}
	errs = append(errs, actionio.WriteOutputs[outputs](io, outputs{DecisionRecord: relPath, Execute: rec.Execute,
		ReclaimPodIDs: strings.Join(rec.PodIDs(reap.DecisionReclaim), ","), ErrorPodIDs: strings.Join(rec.PodIDs(reap.DecisionError), ",")}))
	if err := io.AddSummary(rec.Markdown()); err != nil {
		io.Warningf("job summary: %v", err)
	}
	return errors.Join(errs...)
}

// checkOrgInputs refuses an organization sweep that cannot be scoped or
// authenticated: the login and repository names as GitHub writes them, and
// the App's id and key (the mode reads each repository through the App).
func checkOrgInputs(in Inputs) error {
	org := in.Organization
	if !loginPattern.MatchString(org) {
		return &actionio.InputError{Input: "organization", Value: org, Expected: "an organization login (letters, digits and '-', at most 39)"}
	}
	for _, r := range in.Repositories {
		owner, name, hasOwner := strings.Cut(r, "/")
		if !hasOwner {
			owner, name = org, r
		}
		if !strings.EqualFold(owner, org) || !loginPattern.MatchString(owner) || !repoNamePattern.MatchString(name) {
			return &actionio.InputError{Input: "repositories", Value: r, Expected: fmt.Sprintf("repository names of %s, one per line (name or %s/name)", org, org)}
		}
	}
	if in.AppID == 0 {
		return &actionio.InputError{Input: "app-id", Expected: "the GitHub App's id: the organization mode checks each repository's runs through the App's installation on it"}
	}
	if in.PrivateKey == "" {
		return &actionio.InputError{Input: "app-private-key", Expected: "the App's PEM private key (required with organization)"}
	}
	return nil
}

// warnRepositories raises a warning for each repository the sweep could not
// finish: failed, deferred, or holding pods the App cannot see.
func warnRepositories(io *actionio.IO, rec *reap.OrgRecord) {
	for _, rr := range rec.Repositories {
		switch rr.Status {
		case reap.RepoFailed:
			io.Warningf("%s: %s", rr.Repository, rr.Reason)
		case reap.RepoDeferred:
			io.Warningf("%s: deferred to the next sweep: %s", rr.Repository, rr.Reason)
		case reap.RepoSkipped:
			// Pods the App cannot see may bill on, past the backstop too:
			// nothing else in this sweep would say so.
			if n := len(rr.Pods); n > 0 && rr.Pods[0].Reason == reap.ReasonAppCannotSee {
				io.Warningf("%s: %d pod(s) left untouched: %s (install the App there, or sweep it with the repository's own reaper)", rr.Repository, n, rr.Reason)
			}
		}
	}
}

// orgRepos connects to a repository through the App's installation on it.
type orgRepos struct {
	app   *ghapi.AppClient
	base  ghapi.Options
	appID int64
	key   []byte
	// byInstallation holds the first client of each installation (the sweep
	// connects to one repository at a time).
	byInstallation map[int64]*ghapi.Client
}

// Connect finds the App's installation on repository (owner/name) and
// returns a client authenticated as it; a 404 means the App cannot see it.
func (o *orgRepos) Connect(ctx context.Context, repository string) (reap.RunAPI, error) {
	owner, name, _ := strings.Cut(repository, "/")
	lctx, cancel := context.WithTimeout(reqpolicy.WithAttemptLimit(ctx, reap.DefaultLookupAttempts), reap.DefaultLookupTimeout)
	defer cancel()
	inst, err := o.app.RepoInstallation(lctx, owner, name)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		return nil, fmt.Errorf("%w (GitHub answers 404 for the App's installation on %s: not installed there, not selected, or the repository is gone)", reap.ErrAppCannotSee, repository)
	case err != nil:
		return nil, err
	}
	// One client per installation: its token, minted once, reads every
	// repository the installation covers.
	if c, ok := o.byInstallation[inst]; ok {
		return c.ForRepository(owner, name)
	}
	opts := o.base
	opts.Owner, opts.Repo = owner, name
	opts.App = &ghapi.AppAuth{AppID: o.appID, InstallationID: inst, PrivateKeyPEM: o.key}
	c, err := ghapi.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	if o.byInstallation == nil {
		o.byInstallation = map[int64]*ghapi.Client{}
	}
	o.byInstallation[inst] = c
	return c, nil
}

// reservePace waits, before each repository, for any rate-limit window a
// policy holds to keep its reserve; a hold that does not fit the sweep's
// deadline defers the rest of the sweep.
func reservePace(policies ...*reqpolicy.Policy) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for _, p := range policies {
			until, why := p.Held()
			d := until.Sub(p.Now())
			if d <= 0 {
				continue
			}
			if err := p.Wait(ctx, d, "rate-limit reserve"); err != nil {
				return fmt.Errorf("%s; waiting %s does not fit the sweep's remaining time (%v)", why, d.Round(time.Second), err)
			}
		}
		return nil
	}
}
