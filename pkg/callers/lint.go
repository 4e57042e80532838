package callers

import (
	"io"
	"strings"

	"github.com/rhysd/actionlint"
)

// Lint runs actionlint (as a library, shellcheck and pyflakes off: the
// callers run no scripts) over the rendered workflows and returns its
// findings, one line each, naming the file.
func Lint(files []File) ([]string, error) {
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		return nil, err
	}
	var findings []string
	for _, f := range files {
		if !strings.HasPrefix(f.Path, ".github/workflows/") {
			continue
		}
		errs, err := linter.Lint(f.Path, []byte(f.Text), nil)
		if err != nil {
			return nil, err
		}
		for _, e := range errs {
			findings = append(findings, e.Error())
		}
	}
	return findings, nil
}
