// Command mutation-report summarises gremlins JSON reports for .ci/mutation.
//
// Usage: go run .ci/mutation-report.go -min 85 NAME=REPORT.json ...
//
// It prints one Markdown table (a row per package), then every mutant that was
// not killed, and exits 1 when a package's efficacy is under -min. It lives in
// .ci/ (a directory `go build ./...` skips) because it is a tool for the script,
// not part of the product; it needs nothing but the Go toolchain, which the
// mutation run needs anyway, so a fresh machine has no extra dependency (jq).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

// report is the part of gremlins v0.6.0's -o output this tool reads: every
// mutant with its status (the totals gremlins adds leave out TIMED OUT).
type report struct {
	Files []struct {
		Filename  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// counts holds one package's tally and its survivors.
type counts struct {
	name                                                  string
	total, killed, lived, timedOut, notCovered, notViable int
	survivors                                             []string
}

// efficacy is killed/(killed+lived+timed out): a mutant that makes a test hang
// is a failure of the tests to fail fast, not a kill. ok is false when no
// mutant ran.
func (c counts) efficacy() (pct float64, ok bool) {
	d := c.killed + c.lived + c.timedOut
	if d == 0 {
		return 0, false
	}
	return 100 * float64(c.killed) / float64(d), true
}

// strict also counts mutants no test reaches as surviving.
func (c counts) strict() (pct float64, ok bool) {
	d := c.killed + c.lived + c.timedOut + c.notCovered
	if d == 0 {
		return 0, false
	}
	return 100 * float64(c.killed) / float64(d), true
}

func pct(v float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", v)
}

func load(name, path string) (counts, error) {
	c := counts{name: name}
	raw, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	var r report
	if err := json.Unmarshal(raw, &r); err != nil {
		return c, fmt.Errorf("%s: not a gremlins JSON report: %w", path, err)
	}
	for _, f := range r.Files {
		for _, m := range f.Mutations {
			c.total++
			switch m.Status {
			case "KILLED":
				c.killed++
				continue
			case "LIVED":
				c.lived++
			case "TIMED OUT":
				c.timedOut++
			case "NOT COVERED":
				c.notCovered++
			case "NOT VIABLE":
				c.notViable++
				continue
			default:
				// RUNNABLE or SKIPPED after a real run means the run did not finish.
				return c, fmt.Errorf("%s: %s:%d:%d has status %q; expected KILLED, LIVED, TIMED OUT, NOT COVERED or NOT VIABLE (did the run stop early?)",
					path, f.Filename, m.Line, m.Column, m.Status)
			}
			c.survivors = append(c.survivors, fmt.Sprintf("%-11s %-24s %s:%d:%d", m.Status, m.Type, f.Filename, m.Line, m.Column))
		}
	}
	sort.Strings(c.survivors)
	return c, nil
}

func main() {
	min := flag.Float64("min", 85, "lowest acceptable efficacy, in percent")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mutation-report [-min PCT] NAME=REPORT.json ...")
		os.Exit(2)
	}
	var all []counts
	for _, arg := range flag.Args() {
		name, path, found := strings.Cut(arg, "=")
		if !found {
			fmt.Fprintf(os.Stderr, "mutation-report: argument %q: expected NAME=REPORT.json\n", arg)
			os.Exit(2)
		}
		c, err := load(name, path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutation-report:", err)
			os.Exit(2)
		}
		all = append(all, c)
	}

	fmt.Println("| package | mutants | killed | lived | timed out | not covered | not viable | efficacy | strict score |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	var under []string
	for _, c := range all {
		e, eok := c.efficacy()
		s, sok := c.strict()
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d | %s | %s |\n",
			c.name, c.total, c.killed, c.lived, c.timedOut, c.notCovered, c.notViable, pct(e, eok), pct(s, sok))
		// A package whose mutants no test reaches has no efficacy, and fails.
		if (eok && e < *min) || (!eok && c.notCovered > 0) {
			under = append(under, c.name)
		}
	}
	for _, c := range all {
		if len(c.survivors) == 0 {
			continue
		}
		fmt.Printf("\nNot killed in %s:\n\n```\n%s\n```\n", c.name, strings.Join(c.survivors, "\n"))
	}
	if len(under) > 0 {
		fmt.Printf("\nFAIL: efficacy under %.0f%% in: %s\n", *min, strings.Join(under, ", "))
		os.Exit(1)
	}
	fmt.Printf("\nOK: every package at or above %.0f%% efficacy\n", *min)
}
