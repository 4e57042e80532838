package actionkit

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/mdtable"
)

// maxAnnotations is how many error annotations GitHub shows for one step;
// it drops the rest silently, so the last slot says how many more there are.
const maxAnnotations = 10

// configTitle heads every config annotation, so they read as one family on
// the run's page and in the pull request's diff.
const configTitle = "runpod-gpu config"

// annotatedError is an error whose annotations the action has already
// written: Main logs it without a second, unplaced annotation.
type annotatedError struct{ error }

func (e annotatedError) Unwrap() error { return e.error }

// reportConfigError puts a config error where the user looks: an error
// annotation on each offending key of the file (shown in the pull request's
// diff), and a job summary listing every problem with what to do.
func reportConfigError(io *actionio.IO, path string, err error) {
	file := repoPath(io, path)
	var b strings.Builder
	b.WriteString("## RunPod GPU configuration error\n\n")
	fmt.Fprintf(&b, "%s was refused before this step made any API call.\n\n", mdtable.Code(file))

	var syntaxErr *config.SyntaxError
	problems := fieldErrors(err)
	switch {
	case len(problems) > 0:
		annotated := 0
		for i, p := range problems {
			if annotated == maxAnnotations-1 && len(problems)-i > 1 {
				io.ErrorAt(actionio.Annotation{Title: configTitle, File: file},
					"%d more problems in this file: the job summary lists them all", len(problems)-i)
				break
			}
			io.ErrorAt(actionio.Annotation{Title: configTitle, File: file, Line: p.Line, Column: p.Column}, "%s", unsourced(p))
			annotated++
		}
		fmt.Fprintf(&b, "%d problem(s); fix them all and push again. Every key is described in the suite's configuration reference, .github/docs/configuration.md.\n\n", len(problems))
		tb := mdtable.New("line", "key", "problem")
		for _, p := range problems {
			line := "–"
			if p.Line > 0 {
				line = fmt.Sprintf("%d:%d", p.Line, p.Column)
			}
			problem := "want " + p.Expected
			if p.Value != "" {
				problem = "got " + p.Value + ", " + problem
			}
			if p.Suggestion != "" {
				problem += "; **did you mean `" + p.Suggestion + "`?**"
			}
			tb.Row(line, mdtable.Code(p.Key), mdCell(problem))
		}
		b.WriteString(tb.String())
	case errors.As(err, &syntaxErr):
		io.ErrorAt(actionio.Annotation{Title: configTitle, File: file, Line: syntaxErr.Line}, "not a valid YAML config: %v", syntaxErr.Err)
		fmt.Fprintf(&b, "It is not one well-formed YAML document: %s\n\nCheck the indentation (spaces, not tabs) and quoting near that line.\n", mdCell(syntaxErr.Err.Error()))
	case errors.Is(err, fs.ErrNotExist):
		io.ErrorAt(actionio.Annotation{Title: configTitle, File: file}, "%v", err)
		fmt.Fprintf(&b, "There is no file at that path. Create it (a minimal config is one `gpu_tiers` entry) and commit it to the default branch, or point the `config-path` input at it.\n")
	default:
		io.ErrorAt(actionio.Annotation{Title: configTitle, File: file}, "%v", err)
		fmt.Fprintf(&b, "It could not be read: %s\n", mdCell(err.Error()))
	}
	if err := io.AddSummary(b.String()); err != nil {
		io.Warningf("job summary: %v", err)
	}
}

// unsourced is a problem's message without its file and line, which the
// annotation carries as its place.
func unsourced(p *config.FieldError) string {
	q := *p
	q.Source, q.Line = "", 0
	return q.Error()
}

// fieldErrors returns every *config.FieldError in err, in order, through
// wrapping and errors.Join.
func fieldErrors(err error) []*config.FieldError {
	switch e := err.(type) {
	case *config.FieldError:
		return []*config.FieldError{e}
	case interface{ Unwrap() []error }:
		var out []*config.FieldError
		for _, inner := range e.Unwrap() {
			out = append(out, fieldErrors(inner)...)
		}
		return out
	}
	if wrapped := errors.Unwrap(err); wrapped != nil {
		return fieldErrors(wrapped)
	}
	return nil
}

// repoPath is path as an annotation names it: relative to the repository
// root (the workspace), forward slashes. GitHub places an annotation in the
// diff only by such a path.
func repoPath(io *actionio.IO, path string) string {
	if ws := io.Getenv(actionio.RootWorkspace); ws != "" && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(ws, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			path = rel
		}
	}
	return filepath.ToSlash(filepath.Clean(path))
}

// mdCell makes text from the file safe inside a Markdown table cell: it
// cannot end the cell or the row, or open HTML.
func mdCell(s string) string { return mdtable.Cell(s) }
