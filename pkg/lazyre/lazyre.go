// Package lazyre holds regular expressions that compile on first use. The
// image runs one multi-call program for every action, so each package-level
// regexp.MustCompile of every linked package would run at every start of every
// role; a lazyre.Regexp declared at package level is static data instead, and
// costs nothing until a role matches against it.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled the first time it is used, then
// shared; it is safe for concurrent use. Declare it as
// `var nameRE = lazyre.Regexp{Pattern: `...`}`; an invalid pattern panics on
// first use as regexp.MustCompile would (TestLazyPatternsCompile in
// action-tests/rules compiles every one).
type Regexp struct {
	// Pattern is the RE2 syntax the expression compiles from.
	Pattern string

	once sync.Once
	re   *regexp.Regexp
}

// Compiled returns the compiled expression, compiling it on the first call.
func (r *Regexp) Compiled() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.Pattern) })
	return r.re
}

// MatchString reports whether s contains a match, as regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.Compiled().MatchString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Compiled().FindStringSubmatch(s) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Compiled().ReplaceAllString(src, repl)
}
