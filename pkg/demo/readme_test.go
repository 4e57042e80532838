package demo

// The README states what the demo's first paid run cost; these tests hold
// those figures to a run of the demo, so a change to the demo's scenario or
// to the cost report that moves them fails until the README says the same.

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// cmpDemoFigures compares demoFigures field by field.
var cmpDemoFigures = cmp.AllowUnexported(demoFigures{})

// readmeFile is the repository's README, relative to this package.
const readmeFile = "../../README.md"

// readmeFiguresMark names the README's marked section with the demo's figures.
const readmeFiguresMark = "demo-figures"

// demoFigures are the figures of the demo's first paid run that the README
// states: the rejected candidate's and the accepted pod's.
type demoFigures struct {
	rejectedGPU, rejectedPrice, rejectedCost string
	rejectedSeconds                          int
	gpu, price, cost, total                  string
	testSeconds, paidSeconds                 int
}

// demoFigureREs read each figure from the first trigger's cost report.
var demoFigureREs = map[string]*regexp.Regexp{
	"gpu":         regexp.MustCompile(`(?m)^\| GPU \| ([^|\n]+?) \|$`),
	"price":       regexp.MustCompile(`(?m)^\| Price \| (\$[0-9.]+/h)`),
	"paidSeconds": regexp.MustCompile(`(?m)^\| Paid seconds \(start to deletion\) \| ([0-9]+) \|$`),
	"cost":        regexp.MustCompile(`(?m)^\| Estimated cost \(start to deletion\) \| (\$[0-9.]+) \|$`),
	"testSeconds": regexp.MustCompile(`(?m)^\| tests \| Run GPU tests \| ([0-9]+) \|`),
	// # | candidate | GPU | pod | seconds | price | cost | reason
	"rejected": regexp.MustCompile(`(?m)^\| 1 \| [^|\n]+ \| ([^|\n]+?) \| [^|\n]+ \| ([0-9]+) \| (\$[0-9.]+/h)[^|\n]* \| (\$[0-9.]+) \|`),
	"total":    regexp.MustCompile(`\*\*Estimated run total\*\* [^:\n]*: (\$[0-9.]+)`),
}

// parseDemoFigures reads the figures from the part of the demo page the
// README shows (pictureMarkdown's section: the gate and the cleanup).
func parseDemoFigures(section string) (demoFigures, error) {
	found := map[string][]string{}
	for name, re := range demoFigureREs {
		m := re.FindStringSubmatch(section)
		if m == nil {
			return demoFigures{}, fmt.Errorf("the demo's cost report has no %s figure (%s)", name, re)
		}
		found[name] = m[1:]
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n } // the patterns admit digits only
	r := found["rejected"]
	return demoFigures{
		rejectedGPU: r[0], rejectedSeconds: atoi(r[1]), rejectedPrice: r[2], rejectedCost: r[3],
		gpu: found["gpu"][0], price: found["price"][0], cost: found["cost"][0], total: found["total"][0],
		testSeconds: atoi(found["testSeconds"][0]), paidSeconds: atoi(found["paidSeconds"][0]),
	}, nil
}

// sentence is what the README says of the figures.
func (f demoFigures) sentence() string {
	return fmt.Sprintf("In the demo (seed 1) the first candidate, an %s at %s, is rejected after %d paid seconds (%s); "+
		"the accepted %s at %s runs the tests for %d of its %d paid seconds (%s): %s in all.",
		f.rejectedGPU, f.rejectedPrice, f.rejectedSeconds, f.rejectedCost,
		f.gpu, f.price, f.testSeconds, f.paidSeconds, f.cost, f.total)
}

// readmeFigures returns the README's demo-figures section, its lines joined.
func readmeFigures(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(readmeFile)
	assert.NilError(t, err)
	_, rest, ok := strings.Cut(string(data), "<!-- "+readmeFiguresMark+":start -->")
	assert.Assert(t, ok, "%s has no <!-- %s:start --> section", readmeFile, readmeFiguresMark)
	section, _, ok := strings.Cut(rest, "<!-- "+readmeFiguresMark+":end -->")
	assert.Assert(t, ok, "%s: the %s section is not closed", readmeFile, readmeFiguresMark)
	return strings.Join(strings.Fields(section), " ")
}

// TestReadmeFiguresAreTheDemos: the figures the README states about the
// demo (seed 1, the README's story) are the ones a run of the demo reports.
func TestReadmeFiguresAreTheDemos(t *testing.T) {
	figures, err := parseDemoFigures(pictureMarkdown(t, play(t, 1)))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(readmeFigures(t), figures.sentence()),
		"%s's demo figures (<!-- %s --> section) no longer match a run of the demo: write what the demo reports", readmeFile, readmeFiguresMark)
}

func TestParseDemoFigures(t *testing.T) {
	const report = "| GPU | NVIDIA RTX A5000 |\n| Price | $0.27/h (v2 cost while running) |\n" +
		"| Paid seconds (start to deletion) | 475 |\n| Estimated cost (start to deletion) | $0.0356 |\n" +
		"| tests | Run GPU tests | 372 | $0.0279 |\n" +
		"| 1 | live-1 | NVIDIA RTX A4000 | vteic349sfvaj2 | 25 | $0.25/h (catalog list price) | $0.0017 | the proof failed |\n" +
		"**Estimated run total** (accepted pod and every rejected candidate): $0.0374\n"
	want := demoFigures{rejectedGPU: "NVIDIA RTX A4000", rejectedSeconds: 25, rejectedPrice: "$0.25/h", rejectedCost: "$0.0017",
		gpu: "NVIDIA RTX A5000", price: "$0.27/h", cost: "$0.0356", total: "$0.0374", testSeconds: 372, paidSeconds: 475}
	tests := []struct {
		name, report string
		want         demoFigures
		wantErr      string
	}{
		{name: "every figure", report: report, want: want},
		{name: "no rejected candidate", report: strings.Replace(report, "| 1 | live-1", "| x | live-1", 1), wantErr: "no rejected figure"},
		{name: "no total", report: strings.Replace(report, "Estimated run total", "Run total", 1), wantErr: "no total figure"},
		{name: "no test stage", report: strings.Replace(report, "Run GPU tests", "Tests", 1), wantErr: "no testSeconds figure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDemoFigures(tc.report)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(got, tc.want, cmpDemoFigures))
			assert.Check(t, is.Equal(got.sentence(), "In the demo (seed 1) the first candidate, an NVIDIA RTX A4000 at $0.25/h, "+
				"is rejected after 25 paid seconds ($0.0017); the accepted NVIDIA RTX A5000 at $0.27/h runs the tests for 372 "+
				"of its 475 paid seconds ($0.0356): $0.0374 in all."))
		})
	}
}
