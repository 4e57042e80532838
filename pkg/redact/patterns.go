package redact

import (
	"encoding/base64"
	"net/url"
	"strings"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

// keyRE matches credentials by their shape, whoever's they are: RunPod API
// keys (rpa_ and at least 20 letters or digits) and GitHub tokens (personal
// ghp_, OAuth gho_, App installation ghs_, user-to-server ghu_, refresh ghr_,
// and fine-grained github_pat_). A file the lane publishes can hold a key it
// never registered: one the tests printed, or the RunPod key in a job that
// does not hold it.
var keyRE = lazyre.Regexp{Pattern: `rpa_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}`}

// percentRunRE matches a run of URL-encoded text holding at least one escape.
var percentRunRE = lazyre.Regexp{Pattern: `(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9_.~+-])*%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9_.~+-])*`}

// base64RunRE matches a run long enough to encode a key (a Basic
// authorization "x-access-token:<token>" included), in either alphabet.
var base64RunRE = lazyre.Regexp{Pattern: `[A-Za-z0-9+/_-]{28,}={0,2}`}

// Published returns s with every key keyRE knows removed, in its literal,
// URL-encoded and base64 forms (a base64 or URL-encoded run that decodes to
// text holding a key is replaced whole). Everything the lane publishes (job
// summaries, check runs, artifacts, reports) passes through it, registered
// secrets or not.
func Published(s string) string {
	s = keyRE.ReplaceAllString(s, Redacted)
	s = percentRunRE.Compiled().ReplaceAllStringFunc(s, func(run string) string {
		if decoded, err := url.QueryUnescape(run); err == nil && keyRE.MatchString(decoded) {
			return Redacted
		}
		return run
	})
	return base64RunRE.Compiled().ReplaceAllStringFunc(s, func(run string) string {
		if decodesToKey(run) {
			return Redacted
		}
		return run
	})
}

// decodesToKey reports whether run, in any base64 alphabet, padded or not,
// read from any of the three offsets a key can start at within a longer
// encoding, decodes to text holding a key.
func decodesToKey(run string) bool {
	trimmed := strings.TrimRight(run, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for skip := 0; skip < 4 && skip < len(trimmed); skip++ {
			body := trimmed[skip:]
			if len(body)%4 == 1 { // no encoding ends so: a character of the next run
				body = body[:len(body)-1]
			}
			if b, err := enc.DecodeString(body); err == nil && keyRE.Compiled().Match(b) {
				return true
			}
		}
	}
	return false
}
