package devcli

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 2

// lineDiff shows how theirs (the file on disk) differs from ours (what init
// writes), line by line, in unified-diff style with a little context.
func lineDiff(path, theirs, ours string) string {
	a, b := strings.SplitAfter(theirs, "\n"), strings.SplitAfter(ours, "\n")
	// lcs[i][j] is the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		mark byte
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops, i, j = append(ops, op{' ', a[i]}), i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops, i = append(ops, op{'-', a[i]}), i+1
		default:
			ops, j = append(ops, op{'+', b[j]}), j+1
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s (yours)\n+++ %s (what init writes)\n", path, path)
	lastShown := -1
	for k, o := range ops {
		near := false
		for d := max(0, k-diffContext); d <= min(len(ops)-1, k+diffContext); d++ {
			near = near || ops[d].mark != ' '
		}
		if !near || o.line == "" {
			continue
		}
		if lastShown >= 0 && k > lastShown+1 {
			out.WriteString("@@\n")
		}
		out.WriteString(string(o.mark) + strings.TrimSuffix(o.line, "\n") + "\n")
		lastShown = k
	}
	return out.String()
}
