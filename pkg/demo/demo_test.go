package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func play(t *testing.T, seed uint64) string {
	t.Helper()
	var out bytes.Buffer
	assert.NilError(t, Run(context.Background(), &out, seed))
	return out.String()
}

// The demo prints every job's summary as its action writes it; these are the
// lines a reader relies on.
func TestDemoPrintsEveryStage(t *testing.T) {
	out := play(t, 1)
	for _, want := range []string{
		"**Decision: run**",                      // authorize
		"| live-1 | NVIDIA RTX A4000 |",          // the cheapest host...
		"| rejected | pod EXITED while starting", // ...fails the CUDA proof
		"SMOKE FAIL: the driver rejected PTX ISA 8.7 (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)", // and its log says why
		"**Accepted**",                      // the next one is accepted
		"Plan (worst-case spend",            // the plan and its bound
		"## Your GPU job (simulated)",       // the simulated GPU job ran on the JIT runner
		"| Run GPU tests |",                 //
		"## RunPod GPU watchdog",            // under the watchdog, which deletes the pod when it ends
		"**job-finished**",                  //
		":paid`",                            // the gate says paid
		"## RunPod GPU cleanup",             // cleanup reports the cost
		"#### Paid window by stage",         // with the stage chart
		"```mermaid\ngantt\n",               //
		"| 1 | live-1 | NVIDIA RTX A4000 |", // provision's rejected candidate is in the run total
		"**Estimated run total** (accepted pod and every rejected candidate)",
		"Estimates, not invoices",      //
		"**Decision: reuse**",          // the duplicate trigger
		"No pod was created.",          //
		":reused`",                     // is answered by a reused gate
		"### RunPod reaper (executed)", // the reaper reclaims the orphan
		"### Serverless lane",          // the Serverless lane runs the same PR's tests as one job
		"`NVIDIA RTX A4000` only (pool AMPERE_16, its other cards excluded)",
		"| Endpoint and template deleted | confirmed |",
		"## RunPod GPU cost history", // and the cost history sums it all up
		"spent on GPU pods and Serverless jobs",
		"`serverless` lane",
		"```mermaid\nxychart-beta\n", //
	} {
		assert.Check(t, strings.Contains(out, want), "the demo's output lacks %q", want)
	}
	assert.Check(t, !regexp.MustCompile(`rpa_|ghs_`).MatchString(out), "no credential in the demo's output")
}

// The same seed plays the same scenario (loopback ports and generated ids aside).
func TestDemoIsDeterministic(t *testing.T) {
	ports := regexp.MustCompile(`127\.0\.0\.1:\d+`)
	a, b := ports.ReplaceAllString(play(t, 7), "PORT"), ports.ReplaceAllString(play(t, 7), "PORT")
	assert.Equal(t, a, b)
}

// story is what a reader of a played scenario notices: whether a host was
// refused, how long the tests ran, how old the orphan was.
func story(out string) string {
	refused := strings.Contains(out, "SMOKE FAIL")
	tests := regexp.MustCompile(`\| Run GPU tests \| (\S+) \|`).FindStringSubmatch(out)
	orphan := regexp.MustCompile(`run completed (\S+) ago`).FindStringSubmatch(out)
	if tests == nil || orphan == nil {
		return "incomplete"
	}
	return fmt.Sprintf("refused=%v tests=%s orphan=%s", refused, tests[1], orphan[1])
}

// --seed plays different scenarios, as its help says: seed 1 the README's,
// others vary the refused host, the tests' length and the orphan's age, and
// every one still pays once, reuses the gate and reclaims the orphan.
func TestSeedsPlayDifferentScenarios(t *testing.T) {
	assert.Check(t, is.Contains(SeedHelp, "1 plays the README's story"))
	stories := map[string]uint64{}
	refused := map[bool]int{}
	for seed := uint64(1); seed <= 12; seed++ {
		out := play(t, seed) // Run fails unless the story pays, reuses and reaps
		s := story(out)
		assert.Check(t, s != "incomplete", "seed %d", seed)
		stories[s] = seed
		refused[strings.Contains(out, "SMOKE FAIL")]++
	}
	assert.Check(t, len(stories) >= 10, "12 seeds played %d different scenarios: %v", len(stories), stories)
	assert.Check(t, refused[true] > 0 && refused[false] > 0, "the cheapest host is refused in some scenarios, not all: %v", refused)
	assert.Check(t, is.Contains(story(play(t, 1)), "refused=true tests=6m12s orphan=30m0s"), "seed 1 is the README's story")
}

// Each job's summary keeps its own heading; the demo adds none above it.
func TestDemoHeadingsAreNotDoubled(t *testing.T) {
	lines := strings.Split(play(t, 1), "\n")
	level := func(line string) int {
		n := len(line) - len(strings.TrimLeft(line, "#"))
		if n == 0 || !strings.HasPrefix(line[n:], " ") {
			return 0
		}
		return n
	}
	for i, line := range lines {
		l := level(line)
		if l == 0 {
			continue
		}
		next := i + 1
		for next < len(lines) && strings.TrimSpace(lines[next]) == "" {
			next++
		}
		if next < len(lines) {
			n := level(lines[next])
			assert.Check(t, n == 0 || n > l, "heading %q is followed at once by %q", line, lines[next])
		}
	}
}

// A normal run reads like one: no request error or failure in any summary.
func TestDemoNormalRunShowsNoErrorNote(t *testing.T) {
	for _, seed := range []uint64{1, 8} { // a refused host, and none
		out := play(t, seed)
		for _, bad := range []string{"Not Found", "unavailable (", "[!WARNING]", "[!CAUTION]", "failed:", "runpod: ", "github: "} {
			assert.Check(t, !strings.Contains(out, bad), "seed %d: the page says %q", seed, bad)
		}
	}
}

// The demo writes the page it is asked for and nothing else: not into the
// working directory (a repository checkout), not into the temporary one.
func TestDemoLeavesNoStrayFile(t *testing.T) {
	work, tmp := t.TempDir(), t.TempDir()
	t.Chdir(work)
	t.Setenv("TMPDIR", tmp)
	assert.NilError(t, RunCLI(context.Background(), io.Discard, io.Discard, 1, "demo.md"))
	entries, err := os.ReadDir(work)
	assert.NilError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Check(t, is.DeepEqual(names, []string{"demo.md"}))
	left, err := os.ReadDir(tmp)
	assert.NilError(t, err)
	assert.Check(t, is.Len(left, 0), "left in TMPDIR: %v", left)
}

// The reaper and the cost history price the orphan the same: the history
// reads the reaper's decision record of the pod it deleted.
func TestReaperAndHistoryPriceTheOrphanTheSame(t *testing.T) {
	for _, seed := range []uint64{1, 2, 8} {
		out := play(t, seed)
		reaped := regexp.MustCompile(`\| \w+ \| rgpu-(\d+)-1-c1 \| \d+ \| 1 \| reclaim \|[^|]+\|[^|]+\| (\$[0-9.]+) \|`).FindStringSubmatch(out)
		assert.Assert(t, reaped != nil, "seed %d: no reclaimed orphan in the reaper's summary", seed)
		row := regexp.MustCompile(`\| \[` + reaped[1] + `/1\]\([^)]+\) \|[^\n]*\| (\$[0-9.]+) \| complete \|`).FindStringSubmatch(out)
		assert.Assert(t, row != nil, "seed %d: the history has no row for the orphan's run %s", seed, reaped[1])
		assert.Check(t, is.Equal(row[1], reaped[2]), "seed %d: the reaper says %s, the history %s", seed, reaped[2], row[1])
	}
}

// The page's closing total is the cost history's (pods and the Serverless
// job), which the simulator's pod meter never exceeds: estimates run to the
// confirmed deletion.
func TestFooterTotalIsTheHistorys(t *testing.T) {
	for _, seed := range []uint64{1, 2, 8} {
		out := play(t, seed)
		history := regexp.MustCompile(`\*\*\$([0-9.]+)\*\* spent on GPU pods and Serverless jobs from`).FindStringSubmatch(out)
		footer := regexp.MustCompile(`Spent on GPU pods and Serverless jobs, as the cost history counts it: \*\*\$([0-9.]+)\*\*\. The simulator's own pod meter says \$([0-9.]+):`).FindStringSubmatch(out)
		assert.Assert(t, history != nil && footer != nil, "seed %d", seed)
		assert.Check(t, is.Equal(footer[1], history[1]), "seed %d", seed)
		var total, meter float64
		_, err := fmt.Sscan(footer[1]+" "+footer[2], &total, &meter)
		assert.NilError(t, err)
		assert.Check(t, meter <= total+0.00005 && total-meter < 0.01, "seed %d: meter $%v, history $%v", seed, meter, total)
	}
}
