// Package ghsetup makes a repository's GitHub side ready for the GPU lane:
// the runpod-gpu environment with its deployment branch policy, the
// environment's secrets (sealed with its public key), the repository
// variables the shipped workflows read, a ruleset requiring "CI GPU gate"
// from the lane's App (classic protection where rulesets are unavailable),
// and the lane's files committed on a branch with a pull request opened.
//
// It first plans (Planner.Plan reads the repository and lists each change it
// would make, so a dry run prints them and changes nothing, and a repository
// already set up yields an empty plan), then applies (Plan.Apply), stopping
// at the first refusal with what to do.
package ghsetup

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/redact"
)

// Names the lane uses on GitHub.
const (
	// Environment is the deployment environment whose secrets the lane's jobs read.
	Environment = "runpod-gpu"
	// SetupBranch is the branch the lane's files are committed on.
	SetupBranch = "runpod-gpu/setup"
	// GateCheck is the check the lane publishes and the ruleset requires.
	GateCheck = "CI GPU gate"
	// RulesetName names the ruleset the set-up makes.
	RulesetName = "runpod-gpu: require CI GPU gate"
)

// File is a file the set-up commits on SetupBranch.
type File struct {
	Path, Text string
}

// Request is what the repository should have.
type Request struct {
	// Secrets are environment secrets (name → value); values are never printed.
	Secrets map[string]string
	// ReplaceSecrets overwrites secrets that exist (GitHub never shows a
	// value, so an existing secret is otherwise left as it is).
	ReplaceSecrets bool
	// Variables are repository variables (name → value), where the shipped
	// workflows read them (vars.RUNPOD_GPU_APP_ID and
	// vars.RUNPOD_GPU_APP_INSTALLATION_ID).
	Variables map[string]string
	// AppID is the App the required check is bound to (integration_id); 0
	// reads the repository variable RUNPOD_GPU_APP_ID, and without one the
	// required check is left as a remaining step.
	AppID int64
	// Files are committed on SetupBranch with a pull request to the default
	// branch; none skips that step.
	Files []File
	// PullTitle and PullBody describe the pull request.
	PullTitle, PullBody string
}

// Change is one change a plan makes.
type Change struct {
	// Step is the part of the set-up: token, environment, secret, variable,
	// protection, branch, file or pull request.
	Step string
	// What says what changes, in words; it never holds a secret.
	What  string
	apply func(ctx context.Context) error
}

// Plan is the changes that make the repository what the request asks,
// in the order they can be made.
type Plan struct {
	// Repository is owner/name.
	Repository string
	Changes    []Change
	// Notes say what the set-up cannot do or check (a token without a scopes
	// header, a step that remains); they are not changes.
	Notes []string
	// Remaining are steps left to the user, in order.
	Remaining []string
	// PullURL is the set-up's open pull request, once there is one.
	PullURL string
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// Planner reads a repository's set-up and plans and applies changes to it.
type Planner struct {
	gh          *github.Client
	owner, repo string
	redactor    *redact.Redactor
	// random seals secrets; crypto/rand unless a test sets it.
	random io.Reader
}

// New returns a Planner for the repository c is bound to, with c's
// credentials, retries and deadlines.
func New(c *ghapi.Client) *Planner {
	return &Planner{gh: c.REST(), owner: c.Owner(), repo: c.Repo(), redactor: c.Redactor(), random: rand.Reader}
}

// StepError is a refusal from GitHub during one step, with what to do.
type StepError struct {
	Step   string
	Status int // HTTP status; 0 when none arrived
	Hint   string
	Err    error
}

// Error says which step failed, GitHub's status and what to do.
func (e *StepError) Error() string {
	msg := e.Step + ": " + e.Err.Error()
	if e.Hint != "" {
		msg += " — " + e.Hint
	}
	return msg
}

// Unwrap returns GitHub's error.
func (e *StepError) Unwrap() error { return e.Err }

// ScopeError names the OAuth scopes a classic token lacks.
type ScopeError struct {
	Missing []string
}

// Error names each missing scope and how to add them.
func (e *ScopeError) Error() string {
	return fmt.Sprintf("the GitHub token lacks the scope(s) %s: run 'gh auth refresh -s %s' (or make a token with them) and set GH_TOKEN",
		strings.Join(e.Missing, ", "), strings.Join(e.Missing, ","))
}

// hints say what to do when GitHub refuses a step (403, or 404 where a
// token without access sees nothing), by step.
var hints = map[string]string{
	"repository":   "the token must reach the repository: a classic token needs the repo scope, a fine-grained one access to this repository",
	"environment":  "creating environments needs admin rights on the repository (fine-grained token: Administration: write and Environments: write)",
	"secret":       "environment secrets need admin rights (fine-grained token: Secrets: write and Environments: write)",
	"variable":     "repository variables need admin rights (fine-grained token: Variables: write)",
	"protection":   "rulesets and branch protection need admin rights (fine-grained token: Administration: write)",
	"branch":       "committing needs write access (fine-grained token: Contents: write; a classic token the repo scope)",
	"file":         "committing workflow files needs the workflow scope (fine-grained token: Contents: write and Workflows: write)",
	"pull request": "opening a pull request needs Pull requests: write",
}

// stepErr wraps a failed call of step, redacted, with the hint for a refusal.
func (p *Planner) stepErr(step string, err error) error {
	if err == nil {
		return nil
	}
	status := 0
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		status = er.Response.StatusCode
		err = fmt.Errorf("GitHub answered %d %s", status, er.Message)
	}
	hint := ""
	if status == http.StatusForbidden || status == http.StatusNotFound || status == http.StatusUnauthorized {
		hint = hints[step]
	}
	if status == http.StatusUnauthorized {
		hint = "GitHub refused the token (401): check GH_TOKEN or GITHUB_TOKEN"
	}
	return &StepError{Step: step, Status: status, Hint: hint, Err: errors.New(p.redactor.Redact(err.Error()))}
}

// statusOf is the HTTP status of a go-github error; 0 when none.
func statusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// Apply makes the plan's changes in order, calling done after each, and
// stops at the first failure: what was done stays done, and planning again
// finds only what remains.
func (p *Plan) Apply(ctx context.Context, done func(Change)) error {
	for _, c := range p.Changes {
		if err := c.apply(ctx); err != nil {
			return err
		}
		if done != nil {
			done(c)
		}
	}
	return nil
}
