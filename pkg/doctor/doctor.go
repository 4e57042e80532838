// Package doctor checks a repository's set-up for the GPU lane before its
// first pull request, and says for each check what is wrong and exactly what
// to do: the App and the permissions each job needs, the environment and its
// default-branch-only policy (with the merge queue's branches when a ruleset
// has a merge queue), the secrets and variables (names only), the gate
// required from the App by a ruleset or branch protection, the callers and
// configuration on the default branch, the lane's workflow names, the action
// image and the image pods start from pulled without credentials, the suite's
// release environment and its reviewers, the RunPod key (REST) and,
// optionally, its balance (GraphQL), and the runner group. A read GitHub refuses becomes what to do, never a
// status line. It only reads: nothing is created, changed or billed.
package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// Status is a check's outcome.
type Status string

// The statuses a check ends in.
const (
	// StatusOK: the check passed; Message says what was found.
	StatusOK Status = "ok"
	// StatusFix: something must change; Message says what is wrong, Fix what to do.
	StatusFix Status = "fix"
	// StatusUnknown: doctor could not tell with what it was given (no App
	// key, no RunPod key, the balance's GraphQL line); Fix says how to let it.
	// An unknown check never fails doctor.
	StatusUnknown Status = "unknown"
)

// Check is one row of the report. Its JSON form is stable: scripts read
// id, status, message and fix.
type Check struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status Status `json:"status"`
	// Message is what was found: the set-up that passed, or what is wrong.
	Message string `json:"message"`
	// Fix says exactly what to do; empty for a check that passed.
	Fix string `json:"fix"`
}

// Failed reports whether the check needs a fix.
func (c Check) Failed() bool { return c.Status == StatusFix }

// Report is every check, in a fixed order.
type Report struct {
	Repository    string `json:"repository"`
	DefaultBranch string `json:"defaultBranch,omitempty"`
	// OK is true when no check needs a fix (unknown ones do not count).
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Failed counts the checks that need a fix.
func (r Report) Failed() int {
	n := 0
	for _, c := range r.Checks {
		if c.Failed() {
			n++
		}
	}
	return n
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
	CheckPodImage         = "pod-image"
	CheckRelease          = "release"
	CheckRunPod           = "runpod"
	CheckBalance          = "balance"
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
	// Images checks the anonymous pull of the action image and of the image
	// pods start from.
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
		checkWorkflowNames, checkImage, checkPodImage, checkRelease, checkRunPod, checkBalance, checkRunnerGroup,
	} {
		row := c(ctx, d, f)
		rep.OK = rep.OK && !row.Failed()
		rep.Checks = append(rep.Checks, row)
	}
	return rep, nil
}

// Text renders the report as rows: "ok" with what was found, "FIX" with
// what is wrong and, below, "fix:" with what to do, or "?" for a check doctor
// could not make, with how to let it.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "runpod-gpu doctor: %s (default branch %s)\n\n", r.Repository, r.DefaultBranch)
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.ID))
	}
	unknown := 0
	for _, c := range r.Checks {
		switch c.Status {
		case StatusOK:
			fmt.Fprintf(&b, "ok    %-*s  %s: %s\n", width, c.ID, c.Title, c.Message)
		case StatusFix:
			fmt.Fprintf(&b, "FIX   %-*s  %s: %s\n      %*s  fix: %s\n", width, c.ID, c.Title, c.Message, width, "", c.Fix)
		default:
			unknown++
			fmt.Fprintf(&b, "?     %-*s  %s: %s\n      %*s  to check it: %s\n", width, c.ID, c.Title, c.Message, width, "", c.Fix)
		}
	}
	failed := r.Failed()
	switch {
	case failed > 0:
		fmt.Fprintf(&b, "\n%d of %d checks need a fix.\n", failed, len(r.Checks))
	case unknown > 0:
		fmt.Fprintf(&b, "\nNo check needs a fix (%d could not be made, see ?): open a pull request and the lane runs.\n", unknown)
	default:
		b.WriteString("\nEvery check passed: open a pull request and the lane runs.\n")
	}
	return b.String()
}

func ok(id, title, format string, args ...any) Check {
	return Check{ID: id, Title: title, Status: StatusOK, Message: fmt.Sprintf(format, args...)}
}

// fix is a failed check: what is wrong, and what to do.
func fix(id, title, problem, todo string) Check {
	return Check{ID: id, Title: title, Status: StatusFix, Message: problem, Fix: todo}
}

// unknown is a check doctor could not make: why, and how to let it.
func unknown(id, title, why, howTo string) Check {
	return Check{ID: id, Title: title, Status: StatusUnknown, Message: why, Fix: howTo}
}
