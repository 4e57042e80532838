package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/google/go-github/v66/github"
)

// Scope says where a self-hosted runner is registered.
type Scope string

// Runner scopes.
const (
	// ScopeRepo registers runners on Options.Owner/Options.Repo.
	ScopeRepo Scope = "repo"
	// ScopeOrg registers runners on Options.Org.
	ScopeOrg Scope = "org"
)

// maxJITLabels is GitHub's limit on labels in one JIT request.
const maxJITLabels = 100

// JITRequest describes a just-in-time runner to register.
type JITRequest struct {
	// Name is the runner's name, unique within the scope.
	Name string
	// Labels are the runner's only labels (JIT adds no implicit
	// self-hosted/OS labels); 1 to 100.
	Labels []string
	// RunnerGroupID is required by GitHub; 1 is the Default group.
	RunnerGroupID int64
	// WorkFolder is the runner's work directory; empty means GitHub's "_work".
	WorkFolder string
	// Scope is where to register; empty means ScopeRepo.
	Scope Scope
}

// JITConfig is a minted single-use runner configuration. EncodedConfig is a
// secret (it registers a runner); String and GoString hide it.
type JITConfig struct {
	RunnerID      int64
	Name          string
	EncodedConfig string
}

// String describes the config without its secret.
func (j JITConfig) String() string {
	return fmt.Sprintf("JIT config for runner %q (id %d, config redacted)", j.Name, j.RunnerID)
}

// GoString keeps %#v from printing the secret.
func (j JITConfig) GoString() string { return j.String() }

// GenerateJITConfig mints a JIT runner configuration with one POST, sent again
// only after a 429 (which registered nothing). It is never retried after
// another failure: a retry after a lost answer that did register
// the runner gets 409. A 409 is answered by looking the runner up by name and
// returning *RunnerExistsError (errors.Is ErrRunnerExists), so the caller
// decides; after any other failure the runner may still have been
// registered, so look it up before reusing the name. The encoded config is
// added to the redactor, and passed to Options.OnSecret, before it is returned.
func (c *Client) GenerateJITConfig(ctx context.Context, req JITRequest) (*JITConfig, error) {
	scope, err := c.checkScope(req.Scope)
	if err != nil {
		return nil, err
	}
	if err := validateJITRequest(req); err != nil {
		return nil, err
	}
	body := &github.GenerateJITConfigRequest{Name: req.Name, RunnerGroupID: req.RunnerGroupID, Labels: req.Labels}
	if req.WorkFolder != "" {
		body.WorkFolder = github.String(req.WorkFolder)
	}

	const op = "generate JIT config"
	var minted *github.JITRunnerConfig
	if scope == ScopeOrg {
		minted, _, err = c.gh.Actions.GenerateOrgJITConfig(ctx, c.org, body)
	} else {
		minted, _, err = c.gh.Actions.GenerateRepoJITConfig(ctx, c.owner, c.repo, body)
	}
	if err != nil {
		if statusOf(err) != http.StatusConflict {
			return nil, c.fail(op, err, nil)
		}
		exists := &RunnerExistsError{Name: req.Name}
		runner, found, lookupErr := c.RunnerByName(ctx, req.Name, scope)
		switch {
		case lookupErr != nil:
			exists.LookupErr = lookupErr
		case found:
			exists.Runner = runner
		}
		return nil, &Error{Op: op, StatusCode: http.StatusConflict, Err: exists, redactor: c.redactor}
	}

	encoded := minted.GetEncodedJITConfig()
	if encoded == "" {
		return nil, c.fail(op, errors.New("GitHub's answer has no encoded_jit_config"), nil)
	}
	c.learnSecret(encoded)
	name := minted.GetRunner().GetName()
	if name == "" {
		name = req.Name
	}
	return &JITConfig{RunnerID: minted.GetRunner().GetID(), Name: name, EncodedConfig: encoded}, nil
}

// RunnerByName finds the runner named exactly name, using GitHub's name
// filter and reading every page (bounded by DefaultMaxPages).
func (c *Client) RunnerByName(ctx context.Context, name string, scope Scope) (*github.Runner, bool, error) {
	scope, err := c.checkScope(scope)
	if err != nil {
		return nil, false, err
	}
	if name == "" {
		return nil, false, errors.New("ghapi: runner name is empty")
	}
	opts := &github.ListRunnersOptions{Name: github.String(name), ListOptions: github.ListOptions{PerPage: perPage}}
	runners, err := collectPages("list runners named "+name, DefaultMaxPages, func(page int) ([]*github.Runner, *github.Response, error) {
		opts.Page = page
		var list *github.Runners
		var resp *github.Response
		var err error
		if scope == ScopeOrg {
			list, resp, err = c.gh.Actions.ListOrganizationRunners(ctx, c.org, opts)
		} else {
			list, resp, err = c.gh.Actions.ListRunners(ctx, c.owner, c.repo, opts)
		}
		if err != nil {
			return nil, resp, err
		}
		return list.Runners, resp, nil
	})
	if err != nil {
		return nil, false, c.fail("find runner "+name, err, nil)
	}
	for _, r := range runners {
		// The filter is GitHub's; the exact match is ours.
		if r.GetName() == name {
			return r, true, nil
		}
	}
	return nil, false, nil
}

// DeleteRunner removes a self-hosted runner. A runner that is already gone
// (404) counts as deleted: JIT runners remove themselves after their job.
func (c *Client) DeleteRunner(ctx context.Context, runnerID int64, scope Scope) error {
	scope, err := c.checkScope(scope)
	if err != nil {
		return err
	}
	if runnerID <= 0 {
		return fmt.Errorf("ghapi: runner id is %d; want a positive id", runnerID)
	}
	if scope == ScopeOrg {
		_, err = c.gh.Actions.RemoveOrganizationRunner(ctx, c.org, runnerID)
	} else {
		_, err = c.gh.Actions.RemoveRunner(ctx, c.owner, c.repo, runnerID)
	}
	if err != nil && statusOf(err) == http.StatusNotFound {
		return nil
	}
	return c.fail(fmt.Sprintf("delete runner %d", runnerID), err, nil)
}

// checkScope defaults an empty scope to ScopeRepo and checks that an org
// scope has an organization to talk to.
func (c *Client) checkScope(s Scope) (Scope, error) {
	switch s {
	case "", ScopeRepo:
		return ScopeRepo, nil
	case ScopeOrg:
		if c.org == "" {
			return "", errors.New("ghapi: scope \"org\" needs Options.Org")
		}
		return ScopeOrg, nil
	}
	return "", fmt.Errorf("ghapi: scope %q: want %q or %q", string(s), ScopeRepo, ScopeOrg)
}

func validateJITRequest(req JITRequest) error {
	if err := checkPrintable("JIT runner name", req.Name); err != nil {
		return err
	}
	if req.RunnerGroupID <= 0 {
		return fmt.Errorf("ghapi: JIT runner group id is %d; want a positive id (1 is the Default group)", req.RunnerGroupID)
	}
	if n := len(req.Labels); n == 0 || n > maxJITLabels {
		return fmt.Errorf("ghapi: JIT request has %d labels; want 1 to %d", n, maxJITLabels)
	}
	for i, label := range req.Labels {
		if err := checkPrintable(fmt.Sprintf("JIT label %d", i+1), label); err != nil {
			return err
		}
		// The runner splits its label list on commas.
		if strings.Contains(label, ",") {
			return fmt.Errorf("ghapi: JIT label %q contains a comma", label)
		}
	}
	return nil
}

// checkPrintable rejects empty values and control characters, which GitHub
// names never contain and which would corrupt logs.
func checkPrintable(what, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("ghapi: %s is empty", what)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return fmt.Errorf("ghapi: %s %q contains a control character", what, v)
	}
	return nil
}
