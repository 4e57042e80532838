package mdtable

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestCell(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a | b", `a \| b`},
		{"line one\nline two\r\n  three", "line one line two three"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"  padded\t", "padded"},
		{"", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, Cell(tc.in), tc.want, "Cell(%q)", tc.in)
	}
}

func TestCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"pod-1", "`pod-1`"},
		{"a|b", "`a\\|b`"},
		{"x <= y", "`x <= y`"},
		{"has ` tick", "``has ` tick``"},
		{"`edge", "`` `edge ``"},
		{"two\nlines", "`two lines`"},
	}
	for _, tc := range tests {
		assert.Equal(t, Code(tc.in), tc.want, "Code(%q)", tc.in)
	}
}

func TestTable(t *testing.T) {
	tb := New("#", "reason")
	tb.Row("1", Cell("pod | EXITED\nwhile starting"))
	tb.Row("2")
	tb.Row("3", "x", "dropped")
	assert.Equal(t, tb.String(), "| # | reason |\n|---|---|\n| 1 | pod \\| EXITED while starting |\n| 2 |  |\n| 3 | x |\n")
}
