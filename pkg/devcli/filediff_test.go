package devcli

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct {
		name, theirs, ours, want string
	}{
		{name: "one line changed, with context", theirs: "a\nb\nc\nd\ne\nf\n", ours: "a\nb\nc\nD\ne\nf\n",
			want: "--- f (yours)\n+++ f (what init writes)\n b\n c\n-d\n+D\n e\n f\n"},
		{name: "far-apart changes in two hunks", theirs: "1\n2\n3\n4\n5\n6\n7\n8\n", ours: "0\n2\n3\n4\n5\n6\n7\n9\n",
			want: "--- f (yours)\n+++ f (what init writes)\n-1\n+0\n 2\n 3\n@@\n 6\n 7\n-8\n+9\n"},
		{name: "a line added at the end", theirs: "a\n", ours: "a\nb\n", want: "--- f (yours)\n+++ f (what init writes)\n a\n+b\n"},
		{name: "no final newline", theirs: "a", ours: "b\n", want: "--- f (yours)\n+++ f (what init writes)\n-a\n+b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.Equal(lineDiff("f", tc.theirs, tc.ours), tc.want))
		})
	}
}
