// Package cmdline is the skeleton the repository's command-line programs
// share: a usage error that exits 2, any other error printed as
// "<program>: <error>" with exit 1, and the GitHub token and repository read
// from the environment as gh reads them. Each program's main (pkg/cmd/<program>)
// stays one screen; its behaviour lives in a package.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// ErrUsage marks a command line that could not be understood; the flag set has
// already printed why and the usage, and ExitCode turns it into exit status 2.
var ErrUsage = errors.New("usage")

// ErrNoToken is the error of Token when neither GH_TOKEN nor GITHUB_TOKEN is set.
var ErrNoToken = errors.New("no token: set GH_TOKEN or GITHUB_TOKEN (e.g. GH_TOKEN=$(gh auth token))")

// Parse parses args with fs, whose output and Usage are already set. Any
// failure, -h included, is ErrUsage: the flag package has printed the reason.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return ErrUsage
	}
	return nil
}

// Usagef prints "<program>: <message>" and then fs's usage to fs's output, and
// returns ErrUsage; the program is the flag set's name.
func Usagef(fs *flag.FlagSet, format string, a ...any) error {
	fmt.Fprintf(fs.Output(), fs.Name()+": "+format+"\n", a...)
	fs.Usage()
	return ErrUsage
}

// ExitCode is the exit status for the error a program ended with: 0 for nil,
// 2 for ErrUsage (already explained), otherwise 1 after printing
// "<program>: <err>" to stderr.
func ExitCode(program string, err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	default:
		fmt.Fprintln(stderr, program+":", err)
		return 1
	}
}

// Token returns the GitHub token from GH_TOKEN, else GITHUB_TOKEN, or ErrNoToken.
func Token(getenv func(string) string) (string, error) {
	if token := getenv("GH_TOKEN"); token != "" {
		return token, nil
	}
	if token := getenv("GITHUB_TOKEN"); token != "" {
		return token, nil
	}
	return "", ErrNoToken
}

// Repository returns the repository a program was given as a flag, else
// $GH_REPO, as gh does; "" when neither is set, for the caller's own fallback.
func Repository(flagValue string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	return getenv("GH_REPO")
}
