package lazyre

import (
	"sync"
	"testing"

	"gotest.tools/v3/assert"
)

var wordRE = Regexp{Pattern: `^([a-z]+)-([0-9]+)$`}

func TestRegexpMatchesLikeRegexp(t *testing.T) {
	tests := []struct {
		in      string
		match   bool
		sub     []string
		replace string
	}{
		{in: "pod-12", match: true, sub: []string{"pod-12", "pod", "12"}, replace: "12/pod"},
		{in: "Pod-12", match: false, sub: nil, replace: "Pod-12"},
		{in: "pod-", match: false, sub: nil, replace: "pod-"},
	}
	for _, tc := range tests {
		assert.Equal(t, wordRE.MatchString(tc.in), tc.match, tc.in)
		assert.DeepEqual(t, wordRE.FindStringSubmatch(tc.in), tc.sub)
		assert.Equal(t, wordRE.ReplaceAllString(tc.in, "$2/$1"), tc.replace, tc.in)
	}
}

func TestRegexpCompilesOnceAcrossGoroutines(t *testing.T) {
	r := &Regexp{Pattern: `^a+$`}
	assert.Assert(t, r.re == nil, "nothing compiled before first use")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.Check(t, r.MatchString("aaa"))
		}()
	}
	wg.Wait()
	first := r.Compiled()
	assert.Assert(t, first != nil)
	assert.Assert(t, r.Compiled() == first, "one compiled expression, shared")
}

func TestInvalidPatternPanicsOnFirstUse(t *testing.T) {
	r := &Regexp{Pattern: `(`}
	defer func() { assert.Assert(t, recover() != nil) }()
	r.MatchString("x")
}
