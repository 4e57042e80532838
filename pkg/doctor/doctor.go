// Package doctor checks a repository's set-up for the GPU lane before its
// first pull request, and says for each check exactly what to fix: the App
// and the permissions each job needs, the environment and its
// default-branch-only policy, the secrets and variables (names only), branch
// protection with the gate bound to the App, the callers and configuration
// on the default branch, the lane's workflow names, the action image pulled
// without credentials, the RunPod key and its balance, and the runner group.
// It only reads: nothing is created, changed or billed.
package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// Check is one row of the report.
type Check struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	OK    bool   `json:"ok"`
	// Detail is what was found, for a check that passed.
	Detail string `json:"detail,omitempty"`
	// Fix says exactly what to do, for a check that did not.
	Fix string `json:"fix,omitempty"`
}

// Report is every check, in a fixed order.
type Report struct {
	Repository    string  `json:"repository"`
	DefaultBranch string  `json:"defaultBranch,omitempty"`
	OK            bool    `json:"ok"`
	Checks        []Check `json:"checks"`
}

// Check ids, in the report's order.
const (
	CheckApp              = "app"
	CheckEnvironment      = "environment"
	CheckSecrets          = "secrets"
	CheckBranchProtection = "branch-protection"
	CheckCallers          = "callers"
	CheckWorkflowNames    = "workflow-names"
	CheckImage            = "image"
	CheckRunPod           = "runpod"
	CheckRunnerGroup      = "runner-group"
)

// Deps are the clients the checks read through.
type Deps struct {
	// GitHub reads the repository, with a token that can read its settings
	// (a repository administrator's).
	GitHub *ghapi.Client
	// Apps returns the client of the App appID (runner: the runner App of
	// the two-App split) from the private key the user gave; nil when no key
	// was given at all.
	Apps func(appID int64, runner bool) (*ghapi.AppClient, error)
	// RunPod reads the account with the key the user gave; nil without one.
	RunPod *runpod.Client
	// Images checks the action image's anonymous pull.
	Images *registry.Resolver
}

// Run runs every check and returns the report; it fails only when the
// repository itself cannot be read.
func Run(ctx context.Context, d Deps) (Report, error) {
	f, err := gather(ctx, d)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Repository: f.fullName, DefaultBranch: f.defaultBranch, OK: true}
	for _, c := range []func(context.Context, Deps, *facts) Check{
		checkApp, checkEnvironment, checkSecrets, checkBranchProtection, checkCallers,
		checkWorkflowNames, checkImage, checkRunPod, checkRunnerGroup,
	} {
		row := c(ctx, d, f)
		rep.OK = rep.OK && row.OK
		rep.Checks = append(rep.Checks, row)
	}
	return rep, nil
}

// Text renders the report as rows: "ok" with what was found, or "fix:" with
// what to do.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "runpod-gpu doctor: %s (default branch %s)\n\n", r.Repository, r.DefaultBranch)
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.ID))
	}
	for _, c := range r.Checks {
		if c.OK {
			fmt.Fprintf(&b, "ok    %-*s  %s: %s\n", width, c.ID, c.Title, c.Detail)
		} else {
			fmt.Fprintf(&b, "FIX   %-*s  %s\n      %*s  fix: %s\n", width, c.ID, c.Title, width, "", c.Fix)
		}
	}
	failed := 0
	for _, c := range r.Checks {
		if !c.OK {
			failed++
		}
	}
	if failed == 0 {
		b.WriteString("\nEvery check passed: open a pull request and the lane runs.\n")
	} else {
		fmt.Fprintf(&b, "\n%d of %d checks need a fix.\n", failed, len(r.Checks))
	}
	return b.String()
}

func ok(id, title, format string, args ...any) Check {
	return Check{ID: id, Title: title, OK: true, Detail: fmt.Sprintf(format, args...)}
}

func fix(id, title, format string, args ...any) Check {
	return Check{ID: id, Title: title, Fix: fmt.Sprintf(format, args...)}
}
