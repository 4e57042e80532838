package rules

// Every action's README.md, beside its action.yml, is that action's reference
// page. A reader trusts its tables over the metadata, so they must list
// exactly the action.yml's inputs (name, required, default) and outputs; its
// YAML examples are copied into workflows, so they must parse and call this
// suite's actions only with declared inputs (the check the workflows get,
// metaCheckActionRefs); and its links must lead somewhere.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The columns of an action README's two tables, as the reference pages write them.
var (
	actionReadmeInputColumns  = []string{"Input", "Required", "Default", "Description"}
	actionReadmeOutputColumns = []string{"Output", "Description"}
)

// actionReadmeNoDefault is the Default cell of an input whose action.yml has no default key.
const actionReadmeNoDefault = "—"

// actionReadmeUsesRE finds a call of one of this suite's published actions in an example.
var actionReadmeUsesRE = regexp.MustCompile(`uses:\s*org/runpod-gpu/actions/([a-z0-9-]+)`)

// actionReadmeText reads actions/<name>/README.md; ok is false when it is missing.
func actionReadmeText(t *testing.T, name string) (text string, ok bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, "actions", name, "README.md"))
	if os.IsNotExist(err) {
		return "", false
	}
	assert.NilError(t, err)
	return string(data), true
}

// actionReadmeRow is one body row of a README table: its cells and its line.
type actionReadmeRow struct {
	cells []string
	line  int
}

// actionReadmeCells splits a table row into trimmed cells; an escaped pipe
// (\|) stays inside its cell, unescaped.
func actionReadmeCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// actionReadmeTable returns the body rows of the first table under the
// "## <heading>" heading, after checking its header row names columns.
func actionReadmeTable(readme, heading string, columns []string) ([]actionReadmeRow, error) {
	lines := strings.Split(readme, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "## "+heading {
			start = i + 1
			break
		}
	}
	want := "| " + strings.Join(columns, " | ") + " |"
	if start < 0 {
		return nil, fmt.Errorf("no %q heading: add it, followed by a table whose header is %s", "## "+heading, want)
	}
	i := start
	for i < len(lines) && !strings.HasPrefix(lines[i], "|") && !strings.HasPrefix(lines[i], "## ") {
		i++
	}
	if i == len(lines) || !strings.HasPrefix(lines[i], "|") {
		return nil, fmt.Errorf("no table under %q: add one whose header is %s", "## "+heading, want)
	}
	if got := actionReadmeCells(lines[i]); strings.Join(got, "|") != strings.Join(columns, "|") {
		return nil, fmt.Errorf("line %d: the %s table's header is %q; write %s", i+1, heading, lines[i], want)
	}
	var rows []actionReadmeRow
	for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ { // past the header and its separator
		rows = append(rows, actionReadmeRow{cells: actionReadmeCells(lines[i]), line: i + 1})
	}
	return rows, nil
}

// actionReadmeRequired is an input's Required cell.
func actionReadmeRequired(in metaInput) string {
	if in.Required {
		return "yes"
	}
	return "no"
}

// actionReadmeDefault is an input's Default cell: the action.yml's value in a
// code span (`""` for an empty one), or a dash when it declares none.
func actionReadmeDefault(in metaInput) string {
	switch {
	case in.Default == nil:
		return actionReadmeNoDefault
	case *in.Default == "":
		return "`\"\"`"
	default:
		return "`" + *in.Default + "`"
	}
}

// actionReadmeName reads the name cell, `name`; ok is false for anything else.
func actionReadmeName(cell string) (name string, ok bool) {
	if len(cell) < 3 || !strings.HasPrefix(cell, "`") || !strings.HasSuffix(cell, "`") || strings.Count(cell, "`") != 2 {
		return "", false
	}
	return cell[1 : len(cell)-1], true
}

// actionReadmeRows reads the rows of the table under "## <heading>" by name;
// ok is false when there is no such table. Malformed and repeated rows are
// problems, left out of the map.
func actionReadmeRows(readme, heading string, columns []string) (byName map[string]actionReadmeRow, problems []string, ok bool) {
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	rows, err := actionReadmeTable(readme, heading, columns)
	if err != nil {
		return nil, []string{err.Error()}, false
	}
	byName = map[string]actionReadmeRow{}
	for _, r := range rows {
		if len(r.cells) != len(columns) {
			add("line %d: the %s row has %d cells, not %d (%s); escape a | inside a cell as \\|", r.line, heading, len(r.cells), len(columns), strings.Join(columns, " | "))
			continue
		}
		name, ok := actionReadmeName(r.cells[0])
		if !ok {
			add("line %d: the first cell %q must be the name in backticks, e.g. `%s`", r.line, r.cells[0], strings.Trim(r.cells[0], "` "))
			continue
		}
		if _, dup := byName[name]; dup {
			add("line %d: %q is listed twice in the %s table; remove one row", r.line, name, heading)
			continue
		}
		if r.cells[len(columns)-1] == "" {
			add("line %d: %q has no description; condense the action.yml's", r.line, name)
		}
		byName[name] = r
	}
	return byName, problems, true
}

// actionReadmeOneLine folds a (possibly folded-block) description onto one line.
func actionReadmeOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// actionReadmeTableProblems compares a README's Inputs and Outputs tables
// with the action.yml, each problem saying what to change in the README.
func actionReadmeTableProblems(readme string, a metaActionYML) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(a.Inputs) > 0 {
		rows, rowProblems, ok := actionReadmeRows(readme, "Inputs", actionReadmeInputColumns)
		problems = append(problems, rowProblems...)
		for _, name := range metaSortedKeys(a.Inputs) {
			in := a.Inputs[name]
			r, listed := rows[name]
			switch {
			case !ok: // no table: reported once above
			case !listed:
				add("input %q is declared in action.yml but missing from the Inputs table; add the row | `%s` | %s | %s | %s |",
					name, name, actionReadmeRequired(in), actionReadmeDefault(in), actionReadmeOneLine(in.Description))
			default:
				if got, want := r.cells[1], actionReadmeRequired(in); got != want {
					add("line %d: input %q has Required %q, but action.yml says required: %t; write %s", r.line, name, got, in.Required, want)
				}
				if got, want := r.cells[2], actionReadmeDefault(in); got != want {
					add("line %d: input %q has Default %s, but action.yml's default is %s; write %s", r.line, name, got, want, want)
				}
			}
		}
		for _, name := range metaSortedKeys(rows) {
			if _, declared := a.Inputs[name]; !declared {
				add("line %d: the Inputs table lists %q, which action.yml does not declare; remove the row (or declare the input)", rows[name].line, name)
			}
		}
	}
	if len(a.Outputs) > 0 {
		rows, rowProblems, ok := actionReadmeRows(readme, "Outputs", actionReadmeOutputColumns)
		problems = append(problems, rowProblems...)
		for _, name := range metaSortedKeys(a.Outputs) {
			if _, listed := rows[name]; ok && !listed {
				add("output %q is declared in action.yml but missing from the Outputs table; add the row | `%s` | %s |", name, name, actionReadmeOneLine(a.Outputs[name].Description))
			}
		}
		for _, name := range metaSortedKeys(rows) {
			if _, declared := a.Outputs[name]; !declared {
				add("line %d: the Outputs table lists %q, which action.yml does not declare; remove the row (or declare the output)", rows[name].line, name)
			}
		}
	}
	return problems
}

// actionReadmeBlock is one ```yaml block of an action README and its first line.
type actionReadmeBlock struct {
	text string
	line int
}

// actionReadmeYAMLBlocks returns the README's ```yaml blocks; the root
// README's readmeYAMLBlocks reads only that file, so this is its twin for any text.
func actionReadmeYAMLBlocks(readme string) (blocks []actionReadmeBlock, err error) {
	lines := strings.SplitAfter(readme, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimRight(lines[i], "\n") != "```yaml" {
			continue
		}
		b := actionReadmeBlock{line: i + 2}
		var text strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			text.WriteString(lines[i])
		}
		if i == len(lines) {
			return blocks, fmt.Errorf("the yaml block at line %d is not closed; end it with ```", b.line-1)
		}
		b.text = text.String()
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// actionReadmeExampleWorkflow reads an example as a workflow: a whole one
// (it has jobs), one step (a mapping with uses or run) or a list of steps,
// which become the steps of one job named example.
func actionReadmeExampleWorkflow(text string) (metaWorkflow, error) {
	var doc any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return metaWorkflow{}, err
	}
	var wf metaWorkflow
	switch d := doc.(type) {
	case map[string]any:
		if readmeIsWorkflow(text) {
			err := yaml.Unmarshal([]byte(text), &wf)
			return wf, err
		}
		if d["uses"] == nil && d["run"] == nil {
			return wf, nil // not a step: nothing calls an action
		}
		var step metaStep
		if err := yaml.Unmarshal([]byte(text), &step); err != nil {
			return wf, err
		}
		wf.Jobs = map[string]metaJob{"example": {Steps: []metaStep{step}}}
	case []any:
		var steps []metaStep
		if err := yaml.Unmarshal([]byte(text), &steps); err != nil {
			return wf, err
		}
		wf.Jobs = map[string]metaJob{"example": {Steps: steps}}
	}
	return wf, nil
}

// actionReadmeExampleProblems checks the README's ```yaml blocks: each
// parses, every step calling one of this suite's actions names only declared
// inputs and gives the required ones (metaCheckActionRefs), and at least one
// block calls the action the README is for.
func actionReadmeExampleProblems(readme, self string, actions map[string]metaActionYML) []string {
	var problems []string
	blocks, err := actionReadmeYAMLBlocks(readme)
	if err != nil {
		problems = append(problems, err.Error())
	}
	callsSelf := false
	for _, b := range blocks {
		where := fmt.Sprintf("the yaml block from line %d", b.line)
		wf, err := actionReadmeExampleWorkflow(b.text)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s does not parse as YAML (%v); fix it so a reader can paste it", where, err))
			continue
		}
		calls, stepCalls := actionReadmeUsesRE.FindAllStringSubmatch(b.text, -1), 0
		for _, job := range wf.Jobs {
			for _, st := range job.Steps {
				if metaActionRefRE.MatchString(st.Uses) && !strings.HasPrefix(st.Uses, "./") {
					stepCalls++
				}
			}
		}
		if stepCalls != len(calls) {
			problems = append(problems, fmt.Sprintf("%s has %d uses: of org/runpod-gpu/actions/… but %d steps that call them; write the example as a step, a list of steps or a whole workflow", where, len(calls), stepCalls))
		}
		for _, m := range calls {
			callsSelf = callsSelf || m[1] == self
		}
		for _, p := range metaCheckActionRefs(wf, actions) {
			problems = append(problems, fmt.Sprintf("%s: %s; change the example to match that action's action.yml", where, p))
		}
	}
	if !callsSelf {
		problems = append(problems, fmt.Sprintf("no ```yaml example calls the action: add one under \"## Example\" with a step `uses: org/runpod-gpu/actions/%s@v1`", self))
	}
	return problems
}

// actionReadmeLinkRE finds a Markdown link's target.
var actionReadmeLinkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// actionReadmeAnchor is GitHub's anchor for a heading: lower case, spaces to
// hyphens, every other character but letters, digits, - and _ dropped.
func actionReadmeAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// actionReadmeAnchors lists the anchors of a Markdown file's headings,
// skipping fenced blocks (a YAML comment is no heading).
func actionReadmeAnchors(markdown string) map[string]bool {
	anchors := map[string]bool{}
	for _, l := range markdownProse(markdown) {
		if strings.HasPrefix(l, "#") {
			anchors[actionReadmeAnchor(strings.TrimLeft(l, "#"))] = true
		}
	}
	return anchors
}

// markdownProse returns a Markdown file's lines outside fenced blocks
// (indented fences, as in a list item, included).
func markdownProse(markdown string) []string {
	var prose []string
	fenced := false
	for _, l := range strings.Split(markdown, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			prose = append(prose, l)
		}
	}
	return prose
}

// markdownLinkTargets returns the targets of a Markdown file's relative
// links and images, outside fenced blocks.
func markdownLinkTargets(markdown string) []string {
	var targets []string
	for _, m := range actionReadmeLinkRE.FindAllStringSubmatch(strings.Join(markdownProse(markdown), "\n"), -1) {
		if target := m[1]; !strings.Contains(target, "://") && !strings.HasPrefix(target, "mailto:") {
			targets = append(targets, target)
		}
	}
	return targets
}

// markdownLinkProblems checks every relative link of markdown, the text of
// the file at file: the target exists and, for a Markdown file (markdown
// itself for a bare #anchor), so does the heading it names.
func markdownLinkProblems(file, markdown string) []string {
	var problems []string
	for _, target := range markdownLinkTargets(markdown) {
		path, anchor, _ := strings.Cut(target, "#")
		to, name, text := filepath.Join(filepath.Dir(file), path), path, markdown
		if path != "" {
			data, err := os.ReadFile(to)
			if err != nil {
				problems = append(problems, fmt.Sprintf("the link %s leads nowhere (%v); point it at an existing file", target, err))
				continue
			}
			text = string(data)
		} else {
			to, name = file, filepath.Base(file)
		}
		if anchor != "" && strings.HasSuffix(to, ".md") && !actionReadmeAnchors(text)[anchor] {
			problems = append(problems, fmt.Sprintf("the link %s names no heading of %s; point it at a section that exists", target, name))
		}
	}
	return problems
}

// actionReadmeLinkProblems checks every relative link of the README at dir.
func actionReadmeLinkProblems(dir, readme string) []string {
	return markdownLinkProblems(filepath.Join(dir, "README.md"), readme)
}

// TestActionReadmeTablesMatchActionYML: every action has a README.md whose
// Inputs and Outputs tables list exactly its action.yml's.
func TestActionReadmeTablesMatchActionYML(t *testing.T) {
	for name, a := range metaLoadActions(t) {
		readme, ok := actionReadmeText(t, name)
		if !assert.Check(t, ok, "actions/%s/README.md is missing: write the action's reference page (what it does, ## Inputs and ## Outputs tables as in actions/provision/README.md, ## Example, ## See also)", name) {
			continue
		}
		problems := actionReadmeTableProblems(readme, a)
		assert.Check(t, len(problems) == 0, "actions/%s/README.md disagrees with its action.yml:\n  %s", name, strings.Join(problems, "\n  "))
	}
}

// TestActionReadmeExamplesUseDeclaredInputs: every ```yaml block of an action
// README parses, calls this suite's actions only with inputs they declare,
// and one of them calls the action itself.
func TestActionReadmeExamplesUseDeclaredInputs(t *testing.T) {
	actions := metaLoadActions(t)
	for name := range actions {
		readme, ok := actionReadmeText(t, name)
		if !ok {
			continue // TestActionReadmeTablesMatchActionYML reports it
		}
		problems := actionReadmeExampleProblems(readme, name, actions)
		assert.Check(t, len(problems) == 0, "actions/%s/README.md:\n  %s", name, strings.Join(problems, "\n  "))
	}
}

// TestActionReadmeLinksResolve: the See also links lead to files and
// headings that exist, so shortening the root README cannot strand them.
func TestActionReadmeLinksResolve(t *testing.T) {
	for _, name := range metaActionDirs(t) {
		readme, ok := actionReadmeText(t, name)
		if !ok {
			continue
		}
		problems := actionReadmeLinkProblems(filepath.Join(metaRepoRoot, "actions", name), readme)
		assert.Check(t, len(problems) == 0, "actions/%s/README.md:\n  %s", name, strings.Join(problems, "\n  "))
	}
}

// TestActionReadmeChecksDetectMistakes plants each mistake in a README for a
// two-input, one-output action and expects the problem that names the fix.
func TestActionReadmeChecksDetectMistakes(t *testing.T) {
	empty, token := "", "${{ github.token }}"
	a := metaActionYML{
		Inputs: map[string]metaInput{
			"runpod-api-key": {Description: "RunPod API key.", Required: true},
			"github-token":   {Description: "Token.", Default: &token},
			"pod-id":         {Description: "The pod.", Default: &empty},
		},
		Outputs: map[string]metaOutput{"outcome": {Description: "How it ended."}},
	}
	const inputs = "## Inputs\n\n| Input | Required | Default | Description |\n|---|---|---|---|\n" +
		"| `runpod-api-key` | yes | — | RunPod API key. |\n" +
		"| `github-token` | no | `${{ github.token }}` | Token. |\n" +
		"| `pod-id` | no | `\"\"` | The pod. |\n"
	const outputs = "\n## Outputs\n\n| Output | Description |\n|---|---|\n| `outcome` | How it ended. |\n"
	tests := []struct {
		name, readme string
		want         []string
	}{
		{name: "agrees", readme: inputs + outputs},
		{name: "a row removed", readme: strings.Replace(inputs, "| `pod-id` | no | `\"\"` | The pod. |\n", "", 1) + outputs,
			want: []string{"input \"pod-id\" is declared in action.yml but missing from the Inputs table; add the row | `pod-id` | no | `\"\"` | The pod. |"}},
		{name: "a row too many", readme: inputs + "| `pod` | no | `\"\"` | Old name. |\n" + outputs,
			want: []string{"line 8: the Inputs table lists \"pod\", which action.yml does not declare; remove the row (or declare the input)"}},
		{name: "wrong required", readme: strings.Replace(inputs, "| yes | — |", "| no | — |", 1) + outputs,
			want: []string{"line 5: input \"runpod-api-key\" has Required \"no\", but action.yml says required: true; write yes"}},
		{name: "wrong default", readme: strings.Replace(inputs, "`${{ github.token }}`", "`GITHUB_TOKEN`", 1) + outputs,
			want: []string{"line 6: input \"github-token\" has Default `GITHUB_TOKEN`, but action.yml's default is `${{ github.token }}`; write `${{ github.token }}`"}},
		{name: "empty default written as a dash", readme: strings.Replace(inputs, "`\"\"`", "—", 1) + outputs,
			want: []string{"line 7: input \"pod-id\" has Default —, but action.yml's default is `\"\"`; write `\"\"`"}},
		{name: "no outputs table", readme: inputs,
			want: []string{"no \"## Outputs\" heading: add it, followed by a table whose header is | Output | Description |"}},
		{name: "an output missing", readme: inputs + strings.Replace(outputs, "| `outcome` | How it ended. |\n", "", 1),
			want: []string{"output \"outcome\" is declared in action.yml but missing from the Outputs table; add the row | `outcome` | How it ended. |"}},
		{name: "an unescaped pipe", readme: strings.Replace(inputs, "| Token. |", "| Token a | b. |", 1) + outputs,
			want: []string{"line 6: the Inputs row has 5 cells, not 4 (Input | Required | Default | Description); escape a | inside a cell as \\|",
				"input \"github-token\" is declared in action.yml but missing from the Inputs table; add the row | `github-token` | no | `${{ github.token }}` | Token. |"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(actionReadmeTableProblems(tc.readme, a), tc.want))
		})
	}

	actions := metaLoadActions(t)
	examples := []struct {
		name, readme string
		want         []string
	}{
		{name: "a list of steps", readme: "```yaml\n- id: r\n  uses: org/runpod-gpu/actions/reap@v1\n  with:\n    runpod-api-key: x\n- run: echo ${{ steps.r.outputs.execute }}\n```\n"},
		{name: "one step", readme: "```yaml\nuses: org/runpod-gpu/actions/reap@v1\nwith: {runpod-api-key: x}\n```\n"},
		{name: "an undeclared input", readme: "```yaml\n- uses: org/runpod-gpu/actions/reap@v1\n  with:\n    runpod-api-key: x\n    dry-run: \"true\"\n```\n",
			want: []string{`the yaml block from line 2: jobs.example.steps[0] (org/runpod-gpu/actions/reap@v1): input "dry-run" is not declared by actions/reap; change the example to match that action's action.yml`}},
		{name: "a required input left out", readme: "```yaml\n- uses: org/runpod-gpu/actions/reap@v1\n```\n",
			want: []string{`the yaml block from line 2: jobs.example.steps[0] (org/runpod-gpu/actions/reap@v1): required input "runpod-api-key" is missing; change the example to match that action's action.yml`}},
		{name: "not YAML", readme: "```yaml\n- uses: org/runpod-gpu/actions/reap@v1\n  with: [\n```\n",
			want: []string{"the yaml block from line 2 does not parse as YAML (yaml: line 2: did not find expected node content); fix it so a reader can paste it",
				"no ```yaml example calls the action: add one under \"## Example\" with a step `uses: org/runpod-gpu/actions/reap@v1`"}},
		{name: "no example of the action", readme: "```yaml\n- uses: org/runpod-gpu/actions/gate@v1\n```\n",
			want: []string{"no ```yaml example calls the action: add one under \"## Example\" with a step `uses: org/runpod-gpu/actions/reap@v1`"}},
		{name: "a block left open", readme: "```yaml\n- uses: org/runpod-gpu/actions/reap@v1\n",
			want: []string{"the yaml block at line 1 is not closed; end it with ```",
				"no ```yaml example calls the action: add one under \"## Example\" with a step `uses: org/runpod-gpu/actions/reap@v1`"}},
		{name: "a call that is no step", readme: "```yaml\nexample: {uses: org/runpod-gpu/actions/reap@v1}\n```\n",
			want: []string{"the yaml block from line 2 has 1 uses: of org/runpod-gpu/actions/… but 0 steps that call them; write the example as a step, a list of steps or a whole workflow"}},
	}
	for _, tc := range examples {
		t.Run(tc.name, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(actionReadmeExampleProblems(tc.readme, "reap", actions), tc.want))
		})
	}

	dir := filepath.Join(metaRepoRoot, "actions", "reap")
	assert.Check(t, is.Len(actionReadmeLinkProblems(dir, "[a](../../README.md#reference) [b](../../.github/workflows/reap.yml) [c](https://example.com/x)"), 0))
	assert.Check(t, is.DeepEqual(actionReadmeLinkProblems(dir, "[a](../../README.md#no-such-section)"),
		[]string{"the link ../../README.md#no-such-section names no heading of ../../README.md; point it at a section that exists"}))
	assert.Check(t, is.DeepEqual(actionReadmeLinkProblems(dir, "# Reap\n[a](#reap) [b](#no-such-section)"),
		[]string{"the link #no-such-section names no heading of README.md; point it at a section that exists"}), "a bare anchor is the page's own heading")
	assert.Check(t, is.Len(actionReadmeLinkProblems(dir, "[b](../../.github/workflows/nope.yml)"), 1))
	assert.Check(t, is.Len(actionReadmeLinkProblems(dir, "```yaml\nx: a[0](b)\n```\n"), 0), "a fenced block holds no link")
	assert.Check(t, is.Len(actionReadmeLinkProblems(dir, "- x\n  ```sh\n  # [a](#no-such-section)\n  ```\n"), 0), "nor does an indented one")
	page := filepath.Join(metaRepoRoot, ".github", "docs", "setup.md")
	assert.Check(t, is.Len(markdownLinkProblems(page, "[a](setup.md#2-the-environment-and-its-secrets) [b](../../README.md) [c](cli.md)"), 0), "links are relative to their page")
	assert.Check(t, is.Len(markdownLinkProblems(page, "[a](README.md)"), 1))
	assert.Check(t, is.Equal(actionReadmeAnchor(" An organization's reaper"), "an-organizations-reaper"))
	assert.Check(t, is.Equal(actionReadmeAnchor(" 3. The workflows"), "3-the-workflows"))
}
