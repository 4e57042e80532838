package lanes

import (
	"regexp"
	"strings"
)

var (
	podIDRE    = regexp.MustCompile(`\b[a-z0-9]{14}\b`)
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s)\b`)
	moneyRE    = regexp.MustCompile(`\$0\.\d{4}`)
	secondsRE  = regexp.MustCompile(`\b\d+ paid seconds`)
	cellRE     = regexp.MustCompile(`\| \d+ \| \$`)
	acceptRE   = regexp.MustCompile(`\| \d+ to acceptance \|`)
	onlineRE   = regexp.MustCompile(`online \d+ s`)
	tsRE       = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	urlRE      = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	attemptRE  = regexp.MustCompile(`runpod-gpu::attempt \{.*\}`)
	// nonceRE is a runner label's random part, different in every run.
	nonceRE = regexp.MustCompile(`(-c[0-9]+)-[0-9a-f]{16}\b`)
)

// normalize replaces what varies between runs (pod ids, loopback ports, real-time
// seconds and the dollars they imply) so golden files compare behaviour.
func normalize(s string, _ *simulated) string {
	for _, r := range []struct {
		re   *regexp.Regexp
		with string
	}{
		{urlRE, "http://127.0.0.1:PORT"}, {tsRE, "TIMESTAMP"}, {podIDRE, "POD_ID"},
		{attemptRE, "runpod-gpu::attempt {…}"}, {moneyRE, "$0.XXXX"}, {secondsRE, "N paid seconds"},
		{cellRE, "| N | $"}, {acceptRE, "| N to acceptance |"}, {onlineRE, "online N s"}, {durationRE, "DURATION"},
	} {
		s = r.re.ReplaceAllLiteralString(s, r.with)
	}
	return nonceRE.ReplaceAllString(s, "${1}-NONCE")
}

// logLines keeps the action's own log lines, not the file commands.
func logLines(stdout string) string {
	var keep []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "::add-mask::") || l == "" {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n") + "\n"
}
