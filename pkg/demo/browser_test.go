package demo

// The demo's --markdown page rendered as a reader sees it: GitHub-flavoured
// Markdown (marked) with every Mermaid chart drawn by each current major of
// the npm mermaid package, in headless Chromium (Debian's chromium). Every
// chart must render without error and every bar must sit where its data says:
// the Gantt's bars at their stage's start and length, the xychart's bars at
// their value's height. The page's picture (the README's) is taken from the
// same rendering with -update.
//
// .ci/run installs chromium and fetches the pinned npm files
// (.ci/browser-deps, pkg/demo/testdata/browser/deps.txt) into a cache
// directory outside the repository; this test fetches them too when they are
// missing and npm is there. It skips only when no Chromium is installed.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"
)

// browserDep is one pinned npm file (a line of testdata/browser/deps.txt).
type browserDep struct{ name, version, sha256, file string }

func (d browserDep) path(dir string) string {
	return filepath.Join(dir, d.name+"-"+d.version, filepath.Base(d.file))
}

func readBrowserDeps(t *testing.T) []browserDep {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "browser", "deps.txt"))
	assert.NilError(t, err)
	var deps []browserDep
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		assert.Assert(t, is.Len(f, 4), "deps.txt: %q", line)
		deps = append(deps, browserDep{name: f[0], version: f[1], sha256: f[2], file: f[3]})
	}
	return deps
}

// browserDepsDir is where .ci/browser-deps puts the files.
func browserDepsDir(t *testing.T) string {
	if dir := os.Getenv("RUNPOD_GPU_BROWSER_DEPS"); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	assert.NilError(t, err, "no cache directory for the browser test's npm files: set RUNPOD_GPU_BROWSER_DEPS")
	return filepath.Join(cache, "runpod-gpu", "browser-deps")
}

// ensureBrowserDeps returns the directory holding every pinned file,
// fetching missing ones with .ci/browser-deps.
func ensureBrowserDeps(t *testing.T, deps []browserDep) string {
	t.Helper()
	dir := browserDepsDir(t)
	missing := func() bool {
		for _, d := range deps {
			if st, err := os.Stat(d.path(dir)); err != nil || st.Size() == 0 {
				return true
			}
		}
		return false
	}
	if !missing() {
		return dir
	}
	_, err := exec.LookPath("npm")
	assert.NilError(t, err, "the browser test's npm files are missing from %s and npm is not installed: run .ci/browser-deps where npm is", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", "..", ".ci", "browser-deps"))
	cmd.Env = append(os.Environ(), "RUNPOD_GPU_BROWSER_DEPS="+dir)
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, ".ci/browser-deps: %s", out)
	assert.Assert(t, !missing(), ".ci/browser-deps left files missing in %s:\n%s", dir, out)
	return dir
}

// findChromium returns Debian's chromium, or skips: the one reason to skip.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("SKIP browser test: no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it)")
	return ""
}

// pageServer serves the harness page with the Markdown, marked and one mermaid.
func pageServer(t *testing.T, markdown []byte, markedJS, mermaidJS string) string {
	t.Helper()
	harness, err := os.ReadFile(filepath.Join("testdata", "browser", "page.html"))
	assert.NilError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/page.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(harness)
	})
	mux.HandleFunc("/page.md", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Write(markdown)
	})
	mux.HandleFunc("/marked.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, markedJS) })
	mux.HandleFunc("/mermaid.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, mermaidJS) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/page.html"
}

// runChromium runs headless Chromium with the flags that work on a machine
// with no outside network (no background connections, a fresh profile), the
// page given virtual time to render its charts.
func runChromium(t *testing.T, chromium string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=30000"}
	cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	assert.NilError(t, err, "chromium %s: %s", strings.Join(args, " "), stderr.String())
	return out
}

// rendered is the harness page's report.
type rendered struct {
	Errors []string        `json:"errors"`
	Charts []renderedChart `json:"charts"`
	Height int             `json:"height"`
}

type renderedChart struct {
	Kind  string         `json:"kind"`
	Role  string         `json:"role"`
	Error string         `json:"error"`
	Bars  []renderedBar  `json:"bars"`
	Ticks []renderedTick `json:"ticks"` // an xychart's value axis
}

type renderedTick struct {
	Label string  `json:"label"`
	Y     float64 `json:"y"`
}

type renderedBar struct {
	ID     string  `json:"id"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

var reportRE = regexp.MustCompile(`(?s)<pre id="report">(.*?)</pre>`)

// renderPage renders the page in Chromium and returns its report.
func renderPage(t *testing.T, chromium, url string) rendered {
	t.Helper()
	dom := runChromium(t, chromium, "--dump-dom", url)
	m := reportRE.FindSubmatch(dom)
	assert.Assert(t, m != nil && len(m[1]) > 0, "the page wrote no report (did it finish rendering?):\n%.2000s", dom)
	var r rendered
	assert.NilError(t, json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r))
	return r
}

// mermaidBlock is one ```mermaid block of the Markdown and the bars its data
// asks for: a Gantt's tasks (id, start, end) or an xychart's bar values.
type mermaidBlock struct {
	kind   string
	tasks  []ganttTask
	values []float64
}

type ganttTask struct {
	id         string
	start, end float64
}

var (
	ganttTaskRE = regexp.MustCompile(`:\s*(s\d+),\s*(\d+),\s*(\d+)\s*$`)
	xyBarRE     = regexp.MustCompile(`^\s*bar \[(.*)\]\s*$`)
)

// mermaidBlocks reads the charts the Markdown holds and their data.
func mermaidBlocks(t *testing.T, markdown string) []mermaidBlock {
	t.Helper()
	var blocks []mermaidBlock
	sc := bufio.NewScanner(strings.NewReader(markdown))
	var cur *mermaidBlock
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && line == "```mermaid":
			cur = &mermaidBlock{}
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil && cur.kind == "":
			cur.kind = strings.TrimSpace(line)
		case cur != nil:
			if m := ganttTaskRE.FindStringSubmatch(line); m != nil {
				start, _ := strconv.ParseFloat(m[2], 64)
				end, _ := strconv.ParseFloat(m[3], 64)
				cur.tasks = append(cur.tasks, ganttTask{id: m[1], start: start, end: end})
			}
			if m := xyBarRE.FindStringSubmatch(line); m != nil {
				for v := range strings.SplitSeq(m[1], ",") {
					f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
					assert.NilError(t, err, line)
					cur.values = append(cur.values, f)
				}
			}
		}
	}
	return blocks
}

// barTolerance is how far, in pixels, a bar may sit from where its data
// puts it: Mermaid rounds positions to whole pixels.
const barTolerance = 2.0

// ganttProblems compares a Gantt's drawn bars with its tasks: one scale maps
// every task's start to its bar's left edge and its length to the bar's width.
func ganttProblems(b mermaidBlock, c renderedChart) []string {
	var problems []string
	if len(c.Bars) != len(b.tasks) {
		return []string{"gantt: " + strconv.Itoa(len(c.Bars)) + " bars drawn for " + strconv.Itoa(len(b.tasks)) + " tasks"}
	}
	first, last := b.tasks[0], b.tasks[len(b.tasks)-1]
	left := c.Bars[0].X
	scale := (c.Bars[len(c.Bars)-1].X + c.Bars[len(c.Bars)-1].Width - left) / (last.end - first.start)
	for i, task := range b.tasks {
		bar := c.Bars[i]
		wantX, wantW := left+(task.start-first.start)*scale, (task.end-task.start)*scale
		if bar.ID != task.id || math.Abs(bar.X-wantX) > barTolerance || math.Abs(bar.Width-wantW) > barTolerance {
			problems = append(problems, "gantt task "+task.id+": bar "+bar.ID+" at x="+strconv.FormatFloat(bar.X, 'f', 1, 64)+
				" width "+strconv.FormatFloat(bar.Width, 'f', 1, 64)+", want x="+strconv.FormatFloat(wantX, 'f', 1, 64)+
				" width "+strconv.FormatFloat(wantW, 'f', 1, 64))
		}
	}
	return problems
}

// xyProblems compares an xychart's bars with its values: each bar's top
// sits at its value on the chart's own value axis (read from the axis'
// lowest and highest tick labels and where they are drawn).
func xyProblems(b mermaidBlock, c renderedChart) []string {
	if len(c.Bars) != len(b.values) {
		return []string{"xychart: " + strconv.Itoa(len(c.Bars)) + " bars drawn for " + strconv.Itoa(len(b.values)) + " values"}
	}
	lo, hi := renderedTick{Y: math.NaN()}, renderedTick{Y: math.NaN()}
	var loV, hiV float64
	for _, tick := range c.Ticks {
		v, err := strconv.ParseFloat(tick.Label, 64)
		if err != nil || math.IsNaN(tick.Y) {
			continue
		}
		if math.IsNaN(lo.Y) || v < loV {
			lo, loV = tick, v
		}
		if math.IsNaN(hi.Y) || v > hiV {
			hi, hiV = tick, v
		}
	}
	if math.IsNaN(lo.Y) || hiV <= loV {
		return []string{"xychart: the value axis has fewer than two numeric ticks"}
	}
	var problems []string
	for i, v := range b.values {
		want := lo.Y + (v-loV)/(hiV-loV)*(hi.Y-lo.Y)
		if math.Abs(c.Bars[i].Y-want) > barTolerance {
			problems = append(problems, "xychart value "+strconv.FormatFloat(v, 'f', -1, 64)+": bar top at y="+
				strconv.FormatFloat(c.Bars[i].Y, 'f', 1, 64)+", the axis puts it at y="+strconv.FormatFloat(want, 'f', 1, 64))
		}
	}
	return problems
}

// chartProblems checks a rendered page against the charts its Markdown holds.
func chartProblems(blocks []mermaidBlock, r rendered) []string {
	problems := append([]string{}, r.Errors...)
	if len(r.Charts) != len(blocks) {
		return append(problems, strconv.Itoa(len(r.Charts))+" charts rendered for "+strconv.Itoa(len(blocks))+" mermaid blocks")
	}
	for i, b := range blocks {
		c := r.Charts[i]
		switch {
		case c.Error != "":
			problems = append(problems, b.kind+": "+c.Error)
		case c.Role == "error" || c.Role == "":
			problems = append(problems, b.kind+": drawn as an error diagram")
		case b.kind == "gantt":
			problems = append(problems, ganttProblems(b, c)...)
		case strings.HasPrefix(b.kind, "xychart"):
			problems = append(problems, xyProblems(b, c)...)
		}
	}
	return problems
}

// TestDemoPageRendersInTheBrowser renders the demo's --markdown page with
// every pinned major of mermaid.
func TestDemoPageRendersInTheBrowser(t *testing.T) {
	chromium := findChromium(t)
	deps := readBrowserDeps(t)
	dir := ensureBrowserDeps(t, deps)
	page := []byte(play(t, 1))
	blocks := mermaidBlocks(t, string(page))
	kinds := map[string]int{}
	for _, b := range blocks {
		kinds[b.kind]++
	}
	assert.Assert(t, kinds["gantt"] >= 1 && kinds["xychart-beta"] >= 1, "the demo page's charts: %v", kinds)

	var marked string
	for _, d := range deps {
		if d.name == "marked" {
			marked = d.path(dir)
		}
	}
	majors := 0
	for _, d := range deps {
		if d.name != "mermaid" {
			continue
		}
		majors++
		t.Run("mermaid-"+d.version, func(t *testing.T) {
			r := renderPage(t, chromium, pageServer(t, page, marked, d.path(dir)))
			assert.Check(t, is.Len(chartProblems(blocks, r), 0), "mermaid %s", d.version)
		})
	}
	assert.Check(t, majors >= 2, "deps.txt pins %d majors of mermaid", majors)
}

// TestChartCheckSeesMisplacedBars feeds the check the drawing Mermaid 11
// made of the old chart (every bar from 00:00) and an error diagram.
func TestChartCheckSeesMisplacedBars(t *testing.T) {
	blocks := mermaidBlocks(t, "```mermaid\ngantt\n    dateFormat x\n    a (25 s) :s0, 0, 25000\n    b (4 s) :s1, 25000, 29000\n    c (11 s) :s2, 29000, 40000\n```\n"+
		"```mermaid\nxychart-beta\n    bar [2, 1]\n```\n")
	axis := []renderedTick{{Label: "2", Y: 100}, {Label: "1", Y: 300}, {Label: "0", Y: 500}}
	good := rendered{Charts: []renderedChart{
		{Kind: "gantt", Role: "gantt", Bars: []renderedBar{{ID: "s0", X: 75, Width: 50}, {ID: "s1", X: 125, Width: 8}, {ID: "s2", X: 133, Width: 22}}},
		{Kind: "xychart-beta", Role: "xychart", Bars: []renderedBar{{Y: 100}, {Y: 300}}, Ticks: axis},
	}}
	assert.Check(t, is.Len(chartProblems(blocks, good), 0))

	atZero := good
	atZero.Charts = []renderedChart{
		{Kind: "gantt", Role: "gantt", Bars: []renderedBar{{ID: "s0", X: 75, Width: 50}, {ID: "s1", X: 75, Width: 58}, {ID: "s2", X: 75, Width: 80}}},
		good.Charts[1],
	}
	assert.Check(t, is.Len(chartProblems(blocks, atZero), 2), "two bars drawn from 00:00")

	broken := good
	broken.Charts = []renderedChart{good.Charts[0], {Kind: "xychart-beta", Role: "error"}}
	assert.Check(t, is.Contains(strings.Join(chartProblems(blocks, broken), "\n"), "drawn as an error diagram"))

	flat := good
	flat.Charts = []renderedChart{good.Charts[0], {Kind: "xychart-beta", Role: "xychart", Bars: []renderedBar{{Y: 100}, {Y: 100}}, Ticks: axis}}
	assert.Check(t, is.Len(chartProblems(blocks, flat), 1), "a bar at the wrong height")
}

// pictureFile is the README's picture of what a pull request gets.
const pictureFile = "testdata/pr-summary.png"

// pictureMaxBytes keeps the committed picture small.
const pictureMaxBytes = 300 << 10

// TestReadmePicture takes, with -update, the README's picture from the
// rendered demo page (what a PR's gate and cleanup summaries look like),
// writing the Markdown it rendered beside it and stamping the PNG with that
// Markdown's SHA-256 (TestReadmePictureIsTheDemos holds both to the demo),
// and checks the committed one is a small PNG.
func TestReadmePicture(t *testing.T) {
	if golden.FlagUpdate() { // -update
		chromium := findChromium(t)
		deps := readBrowserDeps(t)
		dir := ensureBrowserDeps(t, deps)
		var marked, mermaid string
		for _, d := range deps {
			switch {
			case d.name == "marked":
				marked = d.path(dir)
			case d.name == "mermaid" && strings.HasPrefix(d.version, "11."):
				mermaid = d.path(dir) // the major GitHub draws with today
			}
		}
		page := []byte(pictureMarkdown(t, play(t, 1)))
		url := pageServer(t, page, marked, mermaid)
		r := renderPage(t, chromium, url)
		assert.Assert(t, is.Len(chartProblems(mermaidBlocks(t, string(page)), r), 0))
		out := filepath.Join(t.TempDir(), "shot.png")
		runChromium(t, chromium, "--screenshot="+out, "--window-size=920,"+strconv.Itoa(r.Height), url)
		data, err := os.ReadFile(out)
		assert.NilError(t, err)
		data, err = pngWithText(data, pictureStampKey, sourceStamp(page)) // the picture names its source
		assert.NilError(t, err)
		assert.NilError(t, os.WriteFile(pictureSourceFile, page, 0o644))
		assert.NilError(t, os.WriteFile(pictureFile, data, 0o644))
	}
	data, err := os.ReadFile(pictureFile)
	assert.NilError(t, err, "run: go test ./pkg/demo -run TestReadmePicture -update (needs chromium)")
	img, err := png.Decode(bytes.NewReader(data))
	assert.NilError(t, err)
	assert.Check(t, img.Bounds().Dx() >= 600 && img.Bounds().Dy() >= 400, "picture %v", img.Bounds())
	assert.Check(t, len(data) <= pictureMaxBytes, "%s is %d bytes: keep it under %d", pictureFile, len(data), pictureMaxBytes)
}

// pictureMarkdown is the part of the demo page the README shows: what the
// first trigger's pull request gets, the gate and cleanup's cost summary.
func pictureMarkdown(t *testing.T, page string) string {
	t.Helper()
	start := strings.Index(page, "\n## CI GPU gate\n")
	assert.Assert(t, start >= 0, "the demo page has no gate summary")
	rest := page[start:]
	end := strings.Index(rest, "\n---\n")
	assert.Assert(t, end >= 0, "the first trigger's section does not end")
	return "# What a pull request gets (go run ./pkg/cmd/demo)\n" + rest[:end] + "\n"
}
