package config

import (
	"strings"
	"unicode/utf8"
)

// maxSuggestRunes bounds the keys nearestKey compares: the distance is
// quadratic, and a hostile key of a megabyte must not make it so.
const maxSuggestRunes = 64

// nearestKey returns the known key an unknown one was most likely meant to
// be, or "" when none is close enough to be worth saying. Keys are compared
// without case, "_" or "-" (minVramGB, min-vram-gb and minvram_gb all mean
// min_vram_gb); a known key is close when it is at most a quarter of its
// length away in edits (one at least, three at most), counting a swap of two
// neighbours as one, or when the unknown key is the first half or more of
// exactly one known key (startup_timeout for startup_timeout_seconds). A tie
// suggests nothing: a wrong guess costs the user more than none.
func nearestKey(unknown string, known []string) string {
	u := normalizeKey(unknown)
	if u == "" || utf8.RuneCountInString(u) > maxSuggestRunes {
		return ""
	}
	best, bestDist, tied := "", -1, false
	for _, k := range known {
		n := normalizeKey(k)
		d := editDistance(u, n)
		if d > min(max(1, len(n)/4), 3) {
			continue
		}
		switch {
		case bestDist < 0 || d < bestDist:
			best, bestDist, tied = k, d, false
		case d == bestDist:
			tied = true
		}
	}
	if bestDist >= 0 {
		if tied {
			return ""
		}
		return best
	}
	prefixOf := ""
	for _, k := range known {
		if n := normalizeKey(k); strings.HasPrefix(n, u) && 2*len(u) >= len(n) {
			if prefixOf != "" {
				return ""
			}
			prefixOf = k
		}
	}
	return prefixOf
}

// normalizeKey drops what people vary when they misremember a key: case,
// underscores and dashes.
func normalizeKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours, each one edit.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j] is the distance between x[:i] and y[:j].
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
