package devcli

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ownership"
)

func TestTerminalSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "dev-box", want: "dev-box"},
		{in: "GPU für alle ✓", want: "GPU für alle ✓"},
		{in: "x\x1b[2K\x1b[1Adeveloper:alice", want: `x\x1b[2K\x1b[1Adeveloper:alice`},
		{in: "a\tb\nc\rd", want: `a\x09b\x0ac\x0dd`},
		{in: "evil\u202Eecila", want: `evil\u202eecila`},
		{in: "c1\u009bcsi", want: `c1\x9bcsi`},
		{in: "zero\u200bwidth", want: `zero\u200bwidth`},
		{in: "bad\xffutf8", want: `bad\ufffdutf8`},
	}
	for _, tc := range tests {
		assert.Check(t, is.Equal(terminalSafe(tc.in), tc.want), "%q", tc.in)
	}
	assert.Check(t, is.Equal(terminalSafeLines("ok    app\nfail  env \x1b[31mred\n"), "ok    app\nfail  env \\x1b[31mred\n"))
}

// A pod name RunPod gives with escape sequences cannot repaint what ls shows
// or the owner column down asks the user to confirm: it is printed escaped.
func TestLsAndDownPrintAPIPodNamesEscaped(t *testing.T) {
	w := newWorld(t)
	w.otherPod(t, "box", ownership.DeveloperEnv("bob"))
	// Erase the line, move up, and write a forged owner over the real one.
	forged := `box\u001b[2K\u001b[1A\rbox  developer:alice\u202e`
	w.rewrite = func(body string) string { return strings.Replace(body, `"name":"box"`, `"name":"`+forged+`"`, 1) }

	r := w.run("ls")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stdout, `box\x1b[2K\x1b[1A\x0dbox  developer:alice\u202e`))
	assert.Check(t, is.Contains(r.stdout, "developer:bob"))

	pods := w.run("ls", "--json")
	id := pods.stdout[strings.Index(pods.stdout, `"id": "`)+len(`"id": "`):]
	id = id[:strings.Index(id, `"`)]
	w.stdin = "n\n"
	r = w.run("down", id)
	assert.Equal(t, r.code, ExitUsage, r.stderr)
	assert.Check(t, is.Contains(r.stderr, "developer:bob"))
	assert.Check(t, is.Contains(r.stderr, `Delete pod `+id+` (box\x1b[2K\x1b[1A\x0dbox  developer:alice\u202e)? [y/N]`))
	for _, out := range []string{r.stdout + r.stderr, w.run("ls").stdout} {
		assert.Check(t, !strings.ContainsAny(out, "\x1b\r\u202e"), "a raw control character reached the terminal: %q", out)
	}
}
