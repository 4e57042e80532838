package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// read describes one GitHub read a check makes, so that its failure can say
// what to do instead of showing a status line.
type read struct {
	// what is read, as a user names it: "the environment runpod-gpu of o/r".
	what string
	// scope is the classic token scope it needs ("repo", "admin:org");
	// permission the fine-grained token's ("Environments: read").
	scope, permission string
	// missing says what to check when GitHub answers "not found".
	missing string
}

// failure turns a failed GitHub read into what is wrong and what to do: a
// token to refresh, a scope or permission to grant, a thing to create or a
// name to correct, a wait. It never shows GitHub's raw status line.
func failure(err error, r read) (problem, todo string) {
	var rl *ghapi.RateLimitError
	if errors.As(err, &rl) {
		wait := "an hour"
		if !rl.Reset.IsZero() {
			wait = "until " + rl.Reset.UTC().Format(time.RFC3339)
		} else if rl.RetryAfter > 0 {
			wait = rl.RetryAfter.String()
		}
		return fmt.Sprintf("GitHub's rate limit stopped reading %s", r.what),
			fmt.Sprintf("wait %s, then run doctor again", wait)
	}
	status := 0
	var ge *ghapi.Error
	if errors.As(err, &ge) {
		status = ge.StatusCode
	}
	switch {
	case status == http.StatusUnauthorized:
		return fmt.Sprintf("GitHub refused the token reading %s: it is invalid or expired", r.what),
			"refresh it: gh auth refresh, then GH_TOKEN=$(gh auth token) runpod-gpu doctor; or set GH_TOKEN to a new token of a repository administrator"
	case status == http.StatusForbidden:
		scope, permission := r.scope, r.permission
		if h := acceptedHeader(err, "X-Accepted-OAuth-Scopes"); h != "" {
			scope = h
		}
		if h := acceptedHeader(err, "X-Accepted-GitHub-Permissions"); h != "" {
			permission = h
		}
		return fmt.Sprintf("the token may not read %s", r.what),
			fmt.Sprintf("use a repository administrator's token with the scope %s (gh auth refresh -s %s), or a fine-grained token with %s on the repository",
				scope, strings.SplitN(scope, ",", 2)[0], permission)
	case status == http.StatusNotFound:
		return fmt.Sprintf("GitHub could not find %s, or the token cannot see that", r.what),
			r.missing + "; and that GH_TOKEN belongs to an account that can see the repository (a private one needs the repo scope)"
	case status >= 500, status == http.StatusRequestTimeout, status == 0 && transient(err):
		return fmt.Sprintf("GitHub did not answer reading %s (a server error or a time-out)", r.what),
			"retry later; https://www.githubstatus.com says whether GitHub is down"
	case status != 0:
		msg := "it refused the request"
		var er *github.ErrorResponse
		if errors.As(err, &er) && er.Message != "" {
			msg = fmt.Sprintf("it answered %q", er.Message)
		}
		return fmt.Sprintf("GitHub would not let doctor read %s: %s", r.what, msg),
			fmt.Sprintf("check %s in the repository's settings, then run doctor again", r.what)
	}
	// Not an HTTP answer: an answer that did not decode, a listing past its bound.
	return fmt.Sprintf("reading %s failed: %v", r.what, err), "run doctor again; if it fails the same way, check " + r.what + " in the repository's settings"
}

// transient reports a failure with no answer behind it (a time-out, a
// broken connection), as against an answer doctor could not use.
func transient(err error) bool {
	return !errors.Is(err, ghapi.ErrUnusableAnswer) && !errors.Is(err, ghapi.ErrPageBound)
}

// acceptedHeader reads a header of GitHub's refusal: the scopes or
// permissions the endpoint accepts.
func acceptedHeader(err error, name string) string {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return strings.TrimSpace(er.Response.Header.Get(name))
	}
	return ""
}

// runpodFailure turns a failed RunPod call into what is wrong and what to do.
func runpodFailure(err error, env string) (problem, todo string) {
	switch {
	case errors.Is(err, runpod.ErrUnauthorized):
		return "RunPod refused the key: it is invalid or was revoked",
			fmt.Sprintf("create one (RunPod console → Settings → API Keys), store it as the secret %s of the environment %s and export it as RUNPOD_API_KEY for doctor", secretRunPodKey, env)
	case errors.Is(err, runpod.ErrForbidden):
		return "RunPod refused the key's access to pods",
			"give the key read and write access to pods (RunPod console → Settings → API Keys: a restricted key lacks it), or create an unrestricted one"
	case errors.Is(err, runpod.ErrRateLimited), errors.Is(err, runpod.ErrServer), errors.Is(err, runpod.ErrTransport),
		errors.Is(err, context.DeadlineExceeded):
		return "RunPod did not answer (a server error, a rate limit or a time-out)", "retry later; https://uptime.runpod.io says whether RunPod is down"
	}
	return "RunPod's answer could not be read", "run doctor again; check RUNPOD_API_URL if you set it"
}
