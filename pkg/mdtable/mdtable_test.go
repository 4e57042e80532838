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
	tests := []struct {
		name  string
		table func() *Table
		want  string
	}{
		{
			name: "rows keep the header's columns",
			table: func() *Table {
				tb := New("#", "reason")
				tb.Row("1", Cell("pod | EXITED\nwhile starting"))
				tb.Row("2")
				tb.Row("3", "x", "dropped")
				return tb
			},
			want: "| # | reason |\n|---|---|\n| 1 | pod \\| EXITED while starting |\n| 2 | |\n| 3 | x |\n",
		},
		{
			name:  "no rows is a header and separator",
			table: func() *Table { return New("a", "b") },
			want:  "| a | b |\n|---|---|\n",
		},
		{
			name: "empty header cells are single spaces",
			table: func() *Table {
				tb := New("", "")
				tb.Row("Spend", "$1")
				return tb
			},
			want: "| | |\n|---|---|\n| Spend | $1 |\n",
		},
		{
			name: "right-aligned columns; indexes outside the header are ignored",
			table: func() *Table {
				tb := New("GPU", "Pods", "Spend").AlignRight(1, 2, 3, -1)
				tb.Row("A100", "2", "$3")
				return tb
			},
			want: "| GPU | Pods | Spend |\n|---|---:|---:|\n| A100 | 2 | $3 |\n",
		},
		{
			name: "the first column can be right-aligned",
			table: func() *Table {
				return New("#", "x").AlignRight(0)
			},
			want: "| # | x |\n|---:|---|\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.table().String(), tc.want)
		})
	}
}
