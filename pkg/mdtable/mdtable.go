// Package mdtable writes the GitHub-flavoured Markdown tables of the job
// summaries, check runs and reports, with the one cell escaper they share.
package mdtable

import "strings"

// cellEscaper keeps text inside its cell: a pipe would end the cell, and
// angle brackets would open HTML that GitHub renders (or strips) in a summary.
var cellEscaper = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;")

// Cell makes text safe inside one table cell (or a list item): whitespace,
// line breaks included, collapses to single spaces, so the text cannot end
// the row; pipes are escaped and angle brackets written as entities. Text
// inside a code span is written through Code instead, since a code span shows
// an entity literally.
func Cell(s string) string {
	return cellEscaper.Replace(strings.Join(strings.Fields(s), " "))
}

// Code writes s as a code span safe inside a cell: whitespace collapses as in
// Cell and pipes are escaped (GitHub's table parser removes the backslash
// before the code span is read); a backtick in s widens the fence.
func Code(s string) string {
	s = strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// Table is a Markdown table built row by row. Cells are Markdown as given
// (bold, links, code spans): text from outside goes through Cell or Code.
// Every Markdown table in the project is written through it, so the
// separator row and the cell spacing are the same everywhere.
type Table struct {
	header []string
	right  []bool
	rows   strings.Builder
}

// New starts a table with its header row.
func New(header ...string) *Table {
	return &Table{header: header, right: make([]bool, len(header))}
}

// AlignRight right-aligns the columns at the given indexes (the first column
// is 0), which is how amounts and counts read best; an index outside the
// header is ignored. It returns t so a table can be declared in one line.
func (t *Table) AlignRight(cols ...int) *Table {
	for _, c := range cols {
		if c >= 0 && c < len(t.right) {
			t.right[c] = true
		}
	}
	return t
}

// Row adds a row; missing cells are left empty and extra ones dropped, so
// every row has the header's columns.
func (t *Table) Row(cells ...string) {
	row := make([]string, len(t.header))
	copy(row, cells)
	writeLine(&t.rows, row)
}

// writeLine writes one row; an empty cell is a single space, so an empty
// header reads "| | |".
func writeLine(b *strings.Builder, cells []string) {
	b.WriteString("|")
	for _, c := range cells {
		if c == "" {
			b.WriteString(" |")
			continue
		}
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n")
}

// String returns the table, each row ending in a newline.
func (t *Table) String() string {
	var b strings.Builder
	writeLine(&b, t.header)
	b.WriteString("|")
	for _, right := range t.right {
		if right {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	b.WriteString(t.rows.String())
	return b.String()
}
