package rules

// Every YAML block on every documentation page (the README and the pages
// under .github) is something a user copies: a workflow, or the
// configuration file. Each must work as written in a new repository,
// whose default token may be read-only: a workflow lints, and a caller of the
// suite's reusable workflows grants the permissions their jobs declare,
// since a called workflow's token gets no more than its caller grants.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
)

// readmeYAMLBlock is one ```yaml block of a page and the heading above it.
type readmeYAMLBlock struct {
	page, heading, text string
}

// yamlBlocksOf returns every ```yaml block of one page's text, in order; a
// block indented under a list item is read without its indentation.
func yamlBlocksOf(page, markdown string) ([]readmeYAMLBlock, error) {
	var blocks []readmeYAMLBlock
	heading, fence := "", ""
	lines := strings.SplitAfter(markdown, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(trimmed)]
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, "```") {
				fence = ""
			}
			continue
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(line)
		case strings.HasPrefix(trimmed, "```") && strings.TrimSpace(trimmed) != "```yaml":
			fence = trimmed // another language's block: its lines are no headings
		}
		if strings.TrimSpace(trimmed) != "```yaml" {
			continue
		}
		var text strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[i], " "), "```"); i++ {
			text.WriteString(strings.TrimPrefix(lines[i], indent))
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s: the yaml block under %q is not closed", page, heading)
		}
		blocks = append(blocks, readmeYAMLBlock{page: page, heading: heading, text: text.String()})
	}
	return blocks, nil
}

// readmeYAMLBlocks returns every ```yaml block of every documentation page,
// page by page, in order.
func readmeYAMLBlocks(t *testing.T) []readmeYAMLBlock {
	t.Helper()
	var blocks []readmeYAMLBlock
	for _, page := range docPages(t) {
		found, err := yamlBlocksOf(page, docText(t, page))
		assert.NilError(t, err)
		blocks = append(blocks, found...)
	}
	assert.Assert(t, len(blocks) > 0, "no documentation page has a yaml block")
	return blocks
}

// cmpAllowYAMLBlock compares readmeYAMLBlock's fields.
var cmpAllowYAMLBlock = cmp.AllowUnexported(readmeYAMLBlock{})

func TestYAMLBlocksOf(t *testing.T) {
	const page = "README.md"
	tests := []struct {
		name, markdown string
		want           []readmeYAMLBlock
		err            string
	}{
		{name: "two blocks under their headings", markdown: "# A\n```yaml\na: 1\n```\n## B\ntext\n```yaml\nb: 2\n```\n",
			want: []readmeYAMLBlock{{page, "# A", "a: 1\n"}, {page, "## B", "b: 2\n"}}},
		{name: "indented under a list item", markdown: "## C\n1. step\n\n   ```yaml\n   on: push\n   jobs: {}\n   ```\n",
			want: []readmeYAMLBlock{{page, "## C", "on: push\njobs: {}\n"}}},
		{name: "a shell comment is no heading", markdown: "## D\n```sh\n# comment\n```\n```yaml\nd: 4\n```\n",
			want: []readmeYAMLBlock{{page, "## D", "d: 4\n"}}},
		{name: "not closed", markdown: "## E\n```yaml\ne: 5\n", err: `README.md: the yaml block under "## E" is not closed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := yamlBlocksOf(page, tc.markdown)
			if tc.err != "" {
				assert.Check(t, is.Error(err, tc.err))
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(got, tc.want, cmpAllowYAMLBlock))
		})
	}
}

// readmeIsWorkflow tells a workflow (it has jobs) from a configuration file.
func readmeIsWorkflow(text string) bool {
	var doc map[string]any
	if yaml.Unmarshal([]byte(text), &doc) != nil {
		return false
	}
	_, ok := doc["jobs"]
	return ok
}

// TestReadmeYAMLBlocksWorkAsWritten: each YAML block of every page is a
// workflow that actionlint accepts (a published reference to the suite read
// as this tree's file) and whose calls of the suite's reusable workflows
// grant the permissions their jobs need, or a configuration file the code
// accepts.
func TestReadmeYAMLBlocksWorkAsWritten(t *testing.T) {
	linter, project := metaLinter(t)
	files := metaWorkflowFiles(t)
	workflows, configs := 0, 0
	for i, b := range readmeYAMLBlocks(t) {
		where := fmt.Sprintf("%s: yaml block %d of the pages (under %q)", b.page, i+1, b.heading)
		if !readmeIsWorkflow(b.text) {
			configs++
			_, err := config.Parse([]byte(b.text), b.page)
			assert.Check(t, err, "%s is neither a workflow nor a valid configuration: %v", where, err)
			continue
		}
		workflows++
		local := metaSuiteCallRE.ReplaceAllString(b.text, "uses: ./.github/workflows/$1")
		errs, err := linter.Lint(metaLintPath("readme-block.yml"), []byte(local), project)
		assert.NilError(t, err)
		assert.Check(t, len(errs) == 0, "%s:\n  %s", where, metaFormatLint(errs))
		assert.Check(t, is.Len(metaCallerPermissionProblems(b.text, files), 0), "%s:\n%s", where, b.text)
	}
	assert.Check(t, workflows >= 4, "the lane, the reaper, the cost history and the relay callers: found %d workflows", workflows)
	assert.Check(t, configs >= 1, "no configuration example")
}

// metaNeedsFromFiles is what the suite's workflows, as this tree has them,
// need from their callers.
func metaNeedsFromFiles(files map[string]string) callers.NeedsFunc {
	return func(name string) (callers.Levels, error) { return callers.WorkflowNeeds(name, files) }
}

// metaCallerPermissionProblems applies the caller check (pkg/callers, which
// runpod-gpu init applies to what it writes) against this tree's workflows.
func metaCallerPermissionProblems(block string, files map[string]string) []string {
	return callers.PermissionProblems(block, metaNeedsFromFiles(files))
}

// TestSuiteNeedsFollowTheWorkflows: the permissions runpod-gpu init grants
// (callers.SuiteNeeds, carried by the program) are what the workflows' jobs
// declare today.
func TestSuiteNeedsFollowTheWorkflows(t *testing.T) {
	files := metaWorkflowFiles(t)
	for name, want := range callers.SuiteNeeds {
		got, err := callers.WorkflowNeeds(name, files)
		assert.NilError(t, err)
		assert.Check(t, is.DeepEqual(map[string]string(got), map[string]string(want)), "%s: update callers.SuiteNeeds", name)
	}
	for name, text := range files {
		if strings.Contains(text, "workflow_call:") {
			_, ok := callers.SuiteNeeds[name]
			assert.Check(t, ok, "reusable workflow %s is missing from callers.SuiteNeeds", name)
		}
	}
}

// TestMetaCallerPermissionCheckDetectsMistakes plants each mistake in a
// caller; reap.yml's job needs actions: write, cost-history.yml's actions: read
// and contents: read.
func TestMetaCallerPermissionCheckDetectsMistakes(t *testing.T) {
	files := metaWorkflowFiles(t)
	const reap = "jobs:\n  reap:\n    uses: org/runpod-gpu/.github/workflows/reap.yml@v1\n"
	const costs = "  costs:\n    uses: org/runpod-gpu/.github/workflows/cost-history.yml@v1\n"
	tests := []struct {
		name, block string
		want        []string
	}{
		{name: "workflow-wide grant", block: "permissions: {actions: write}\n" + reap},
		{name: "job grant", block: reap + "    permissions: {actions: write}\n"},
		{name: "a job's write-all covers it", block: reap + "    permissions: write-all\n"},
		{name: "two callers share the grant", block: "permissions: {actions: write, contents: read}\n" + reap + costs},
		{name: "no permissions", block: reap,
			want: []string{"job reap calls reap.yml but declares no permissions: a new repository's default token is read-only; grant {actions: write}"}},
		{name: "too little", block: "permissions: {actions: read}\n" + reap,
			want: []string{"job reap calls reap.yml, whose jobs need actions: write; the caller grants read"}},
		{name: "empty grant", block: "permissions: {}\n" + reap,
			want: []string{"job reap calls reap.yml, whose jobs need actions: write; the caller grants none"}},
		{name: "job grant overrides the workflow's", block: "permissions: {actions: write}\n" + reap + "    permissions: {contents: read}\n",
			want: []string{"job reap calls reap.yml, whose jobs need actions: write; the caller grants none", "the workflow grants actions: write, which no called job needs (least privilege)"}},
		{name: "more than needed", block: "permissions: {actions: read, contents: read, checks: write}\njobs:\n" + costs,
			want: []string{"the workflow grants checks: write, which no called job needs (least privilege)"}},
		{name: "unknown level", block: "permissions: {actions: all}\n" + reap,
			want: []string{"workflow: permission actions: all: want read, write or none"}},
		{name: "not a suite workflow", block: "permissions: {}\njobs:\n  x:\n    uses: org/runpod-gpu/.github/workflows/nope.yml@v1\n",
			want: []string{"job x: nope.yml is not a workflow of this repository"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := metaCallerPermissionProblems(tc.block, files)
			if tc.want == nil {
				assert.Check(t, is.Len(got, 0), "%v", got)
				return
			}
			assert.Check(t, is.DeepEqual(got, tc.want))
		})
	}
}
