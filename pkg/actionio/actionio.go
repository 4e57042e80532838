// Package actionio is the one place an action's main talks to the Actions
// runner: typed inputs read from INPUT_* variables, outputs written through the
// GITHUB_OUTPUT file command, the job summary, masks and log lines.
//
// It wraps sethvargo/go-githubactions and removes its sharp edges: inputs keep
// the exact action.yml spelling; values containing a newline or the file-command
// delimiter are refused instead of injecting extra outputs; the summary is capped
// below GitHub's 1 MiB per-step limit; a missing GITHUB_OUTPUT is an error, never
// a panic; every log line passes through the redactor.
package actionio

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/runpod-gpu/pkg/inputform"
	"github.com/org/runpod-gpu/pkg/redact"
	"github.com/org/runpod-gpu/pkg/wire"
)

// fileCommandDelimiter is the fixed heredoc delimiter go-githubactions writes;
// a value containing it could end the heredoc early and smuggle outputs in.
const fileCommandDelimiter = "_GitHubActionsFileCommandDelimeter_"

// MaxSummaryBytes keeps a step's summary under GitHub's 1 MiB limit, above which
// the runner drops the whole summary.
const MaxSummaryBytes = 1000 * 1024

// IO is an action's connection to the runner. It is safe for concurrent use.
type IO struct {
	action   *githubactions.Action
	masker   *githubactions.Action // writes ::add-mask:: unredacted: the runner must see the secret to mask it
	getenv   func(string) string
	out      io.Writer
	redactor *redact.Redactor

	mu         sync.Mutex
	summaryLen int
	groups     int             // Group calls not yet ended: only the outermost reaches the runner
	outputs    map[string]bool // the outputs the action declared; nil allows any (tests of one package)
}

// New returns an IO writing log lines to out and reading the environment
// through getenv (os.Getenv in production, a map in tests). Secrets registered
// with redactor never reach out.
func New(out io.Writer, getenv func(string) string, redactor *redact.Redactor) *IO {
	if redactor == nil {
		redactor = redact.NewRedactor()
	}
	r := &IO{getenv: getenv, out: out, redactor: redactor}
	r.action = githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(&redactingWriter{io: r}))
	r.masker = githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(out))
	for _, name := range RunnerSecrets {
		redactor.Add(getenv(name)) // the runner masks them in its log; nothing this IO writes shows them either
	}
	return r
}

// RunnerSecrets are the variables through which the runner hands every
// action a credential of its own: the job's runtime token (artifacts,
// caches) and, with id-token: write, the OIDC request token. An action holds
// them whether or not it uses them, so its redactor knows them too.
var RunnerSecrets = []string{"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "GITHUB_TOKEN"}

// Redactor returns the redactor every log line passes through.
func (r *IO) Redactor() *redact.Redactor { return r.redactor }

// Getenv reads an environment variable (GITHUB_RUN_ID and the like).
func (r *IO) Getenv(key string) string { return r.getenv(key) }

// InputError names the input, its value and what was expected.
type InputError struct {
	Input, Value, Expected string
}

func (e *InputError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("input %s: %s", e.Input, e.Expected)
	}
	return fmt.Sprintf("input %s = %q: want %s", e.Input, e.Value, e.Expected)
}

// input returns the trimmed input exactly as named in action.yml. Actions
// read their inputs through ReadInputs only, so that their declaration is
// the whole story.
func (r *IO) input(name string) string {
	return r.action.GetInput(name)
}

// Mask registers a secret learned at run time (a minted token, a JIT config):
// the runner masks it and the redactor removes it from everything this IO writes.
func (r *IO) Mask(secret string) {
	if strings.TrimSpace(secret) == "" {
		return
	}
	r.redactor.Add(secret)
	r.masker.AddMask(secret)
}

// parseBool reads a YAML 1.2 core boolean (true/True/TRUE/false/False/FALSE).
func parseBool(name, v string) (bool, error) {
	switch v {
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	default:
		return false, &InputError{Input: name, Value: v, Expected: "true or false"}
	}
}

// parseBoundedInt reads an integer in [min, max].
func parseBoundedInt(name, v string, min, max int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min || n > max {
		return 0, &InputError{Input: name, Value: v, Expected: fmt.Sprintf("an integer from %d to %d", min, max)}
	}
	return n, nil
}

// SHAForm is what a commit SHA input must be.
const SHAForm = inputform.SHAForm

// checkSHA accepts a full commit SHA (wire.IsCommitSHA).
func checkSHA(v string) error {
	if !wire.IsCommitSHA(v) {
		return errors.New(SHAForm)
	}
	return nil
}

// RequireSHA is the error of a SHA input that a rule between inputs makes
// required (expected-head-sha once pr-number is set), or nil when it is set.
func RequireSHA(name string, v CommitSHA) error {
	if v == "" {
		return &InputError{Input: name, Expected: SHAForm + " (the input is required)"}
	}
	return nil
}

// lines splits a multi-line input into trimmed, non-empty lines.
func lines(v string) []string {
	var out []string
	for _, l := range strings.Split(v, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// setOutput writes one output. Values with a newline or the file-command
// delimiter are refused (they could inject outputs), and so are secrets.
// Actions write outputs through WriteOutputs only.
func (r *IO) setOutput(name, value string) (err error) {
	if strings.ContainsAny(value, "\r\n") || strings.Contains(value, fileCommandDelimiter) {
		return fmt.Errorf("output %s: value contains a newline or the file-command delimiter; refusing to write it", name)
	}
	if r.redactor.Redact(value) != value {
		return fmt.Errorf("output %s: value contains a secret; refusing to write it", name)
	}
	r.mu.Lock()
	undeclared := r.outputs != nil && !r.outputs[name]
	r.mu.Unlock()
	if undeclared {
		return fmt.Errorf("output %s: the action declares no such output; refusing to write it", name)
	}
	if r.getenv("GITHUB_OUTPUT") == "" {
		return errors.New("GITHUB_OUTPUT is not set: is this running as a GitHub Action?")
	}
	defer func() {
		if p := recover(); p != nil { // go-githubactions panics on unwritable files
			err = fmt.Errorf("output %s: %v", name, p)
		}
	}()
	r.action.SetOutput(name, value)
	return nil
}

// AddSummary appends Markdown to the job summary, redacted, and stops at
// MaxSummaryBytes with a note rather than letting GitHub drop the whole summary.
func (r *IO) AddSummary(markdown string) (err error) {
	if r.getenv("GITHUB_STEP_SUMMARY") == "" {
		return errors.New("GITHUB_STEP_SUMMARY is not set: is this running as a GitHub Action?")
	}
	md := r.redactor.Redact(markdown)
	r.mu.Lock()
	room := MaxSummaryBytes - r.summaryLen
	if room <= 0 {
		r.mu.Unlock()
		return nil
	}
	if len(md) > room {
		const note = "\n\n… (summary truncated to stay under GitHub's 1 MiB limit)\n"
		md = md[:max(room-len(note), 0)] + note
	}
	r.summaryLen += len(md)
	r.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job summary: %v", p)
		}
	}()
	r.action.AddStepSummary(md)
	return nil
}

// Infof writes one plain log line.
func (r *IO) Infof(format string, args ...any) { r.action.Infof("%s", fmt.Sprintf(format, args...)) }

// Noticef writes a notice annotation.
func (r *IO) Noticef(format string, args ...any) {
	r.action.Noticef("%s", fmt.Sprintf(format, args...))
}

// Warningf writes a warning annotation.
func (r *IO) Warningf(format string, args ...any) {
	r.action.Warningf("%s", fmt.Sprintf(format, args...))
}

// Errorf writes an error annotation (it does not exit).
func (r *IO) Errorf(format string, args ...any) { r.action.Errorf("%s", fmt.Sprintf(format, args...)) }

// Annotation places an error annotation on a line of a repository file, as
// the runner shows it in the diff and on the run's page.
type Annotation struct {
	// Title heads the annotation; empty leaves GitHub's default.
	Title string
	// File is relative to the repository root (the workspace); GitHub shows
	// an annotation on an absolute or outside path on the run only.
	File string
	// Line and Column are 1-based; 0 leaves them out.
	Line, Column int
}

// ErrorAt writes an error annotation at a place in a file (it does not exit).
func (r *IO) ErrorAt(at Annotation, format string, args ...any) {
	props := map[string]string{}
	for k, v := range map[string]string{"title": at.Title, "file": at.File} {
		if v != "" {
			props[k] = v
		}
	}
	if at.File != "" && at.Line > 0 {
		props["line"] = strconv.Itoa(at.Line)
		if at.Column > 0 {
			props["col"] = strconv.Itoa(at.Column)
		}
	}
	r.action.WithFieldsMap(props).Errorf("%s", fmt.Sprintf(format, args...))
}

// Group starts a collapsible log group; EndGroup ends it. GitHub does not nest
// groups, so a Group inside an open one only logs its title.
func (r *IO) Group(title string) {
	r.mu.Lock()
	open := r.groups > 0
	r.groups++
	r.mu.Unlock()
	if open {
		r.Infof("%s", title)
		return
	}
	r.action.Group(title)
}

// EndGroup ends the group Group opened; an unmatched call does nothing, so the
// runner never sees an ::endgroup:: without its ::group::.
func (r *IO) EndGroup() {
	r.mu.Lock()
	if r.groups == 0 {
		r.mu.Unlock()
		return
	}
	r.groups--
	last := r.groups == 0
	r.mu.Unlock()
	if last {
		r.action.EndGroup()
	}
}

// Phase folds a long phase of the log (a plan, one attempt, a sweep) into a
// group titled title and returns the function that ends it; calling that
// more than once ends the group once.
func (r *IO) Phase(title string) (end func()) {
	r.Group(title)
	return sync.OnceFunc(r.EndGroup)
}

// redactingWriter passes every log byte through the redactor on its way out.
type redactingWriter struct{ io *IO }

func (w *redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.io.out, w.io.redactor.Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
