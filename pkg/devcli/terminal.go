package devcli

import (
	"fmt"
	"strings"
	"unicode"
)

// terminalSafe is the one sanitiser of text an API gave (a pod's name, id,
// status, GPU, zone, owner tag) before it reaches the terminal: control
// characters, escape sequences, tabs and newlines, and the invisible format
// characters (bidirectional overrides) are written as \x.., \u.... escapes,
// so a pod named by someone else cannot repaint the owner column the user is
// asked to confirm, or move the cursor over the question. Clean text is
// returned as it is.
func terminalSafe(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar:
			b.WriteString(`\ufffd`)
		case !unsafeRune(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// unsafeRune reports a rune that changes what a terminal shows rather than
// showing itself: a control character (ESC, CR, TAB, C1) or a format one
// (U+202E RIGHT-TO-LEFT OVERRIDE, zero-width characters).
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' || r == unicode.ReplacementChar
}

// terminalSafeLines is terminalSafe for multi-line text the command line
// composed (doctor's report): its own line breaks are kept, and each line is
// sanitised.
func terminalSafeLines(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = terminalSafe(l)
	}
	return strings.Join(lines, "\n")
}
