package rules

// Every YAML block in the README is something a user copies: a workflow, or
// the configuration file. Each must work as written in a new repository,
// whose default token may be read-only: a workflow lints, and a caller of the
// suite's reusable workflows grants the permissions their jobs declare,
// since a called workflow's token gets no more than its caller grants.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
)

// readmeYAMLBlock is one ```yaml block of the README and the heading above it.
type readmeYAMLBlock struct {
	heading, text string
}

// readmeYAMLBlocks returns every ```yaml block of the README, in order.
func readmeYAMLBlocks(t *testing.T) []readmeYAMLBlock {
	t.Helper()
	var blocks []readmeYAMLBlock
	heading := ""
	lines := strings.SplitAfter(readmeText(t), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(line)
		}
		if line != "```yaml\n" {
			continue
		}
		var text strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			text.WriteString(lines[i])
		}
		assert.Assert(t, i < len(lines), "README: the yaml block under %q is not closed", heading)
		blocks = append(blocks, readmeYAMLBlock{heading: heading, text: text.String()})
	}
	assert.Assert(t, len(blocks) > 0, "README has no yaml block")
	return blocks
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

// TestReadmeYAMLBlocksWorkAsWritten: each YAML block of the README is a
// workflow that actionlint accepts (a published reference to the suite read
// as this tree's file) and whose calls of the suite's reusable workflows
// grant the permissions their jobs need, or a configuration file the code
// accepts.
func TestReadmeYAMLBlocksWorkAsWritten(t *testing.T) {
	linter, project := metaLinter(t)
	files := metaWorkflowFiles(t)
	workflows, configs := 0, 0
	for i, b := range readmeYAMLBlocks(t) {
		where := fmt.Sprintf("README yaml block %d (under %q)", i+1, b.heading)
		if !readmeIsWorkflow(b.text) {
			configs++
			_, err := config.Parse([]byte(b.text), "README.md")
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

// metaPermissionScopes are the GITHUB_TOKEN scopes read-all and write-all cover.
var metaPermissionScopes = []string{
	"actions", "attestations", "checks", "contents", "deployments", "discussions", "id-token", "issues",
	"models", "packages", "pages", "pull-requests", "repository-projects", "security-events", "statuses",
}

// metaLevel orders permission levels: none < read < write.
var metaLevel = map[string]int{"none": 0, "read": 1, "write": 2}

// metaPermissions reads a permissions value (read-all, write-all or a map of
// scope to level) as a level per scope; declared is false when it is absent.
func metaPermissions(p any) (levels map[string]string, declared bool, err error) {
	levels = map[string]string{}
	switch p := p.(type) {
	case nil:
		return levels, false, nil
	case string:
		level, ok := map[string]string{"read-all": "read", "write-all": "write"}[p]
		if !ok {
			return nil, true, fmt.Errorf("permissions %q: want read-all, write-all or a map of scopes", p)
		}
		for _, s := range metaPermissionScopes {
			levels[s] = level
		}
	case map[string]any:
		for scope, v := range p {
			level, _ := v.(string)
			if _, ok := metaLevel[level]; !ok {
				return nil, true, fmt.Errorf("permission %s: %v: want read, write or none", scope, v)
			}
			levels[scope] = level
		}
	default:
		return nil, true, fmt.Errorf("permissions %v: want read-all, write-all or a map of scopes", p)
	}
	return levels, true, nil
}

// metaWorkflowNeeds returns the permissions the jobs of one of the suite's
// workflows declare (a job's own, else the workflow's), as the highest level
// per scope, following its calls of other suite workflows. A job that
// declares none inherits the caller's token and needs nothing of its own.
func metaWorkflowNeeds(name string, files map[string]string, depth int) (map[string]string, error) {
	text, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("%s is not a workflow of this repository", name)
	}
	if depth > 4 {
		return nil, fmt.Errorf("%s: reusable workflows nested too deep", name)
	}
	var wf struct {
		Permissions any `yaml:"permissions"`
		Jobs        map[string]struct {
			Uses        string `yaml:"uses"`
			Permissions any    `yaml:"permissions"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	needs := map[string]string{}
	raise := func(from map[string]string) {
		for scope, level := range from {
			if metaLevel[level] > metaLevel[needs[scope]] {
				needs[scope] = level
			}
		}
	}
	for _, id := range metaSortedKeys(wf.Jobs) {
		job := wf.Jobs[id]
		p := job.Permissions
		if p == nil {
			p = wf.Permissions
		}
		levels, _, err := metaPermissions(p)
		if err != nil {
			return nil, fmt.Errorf("%s: job %s: %w", name, id, err)
		}
		raise(levels)
		if m := metaSuiteWorkflowRE.FindStringSubmatch(job.Uses); m != nil {
			nested, err := metaWorkflowNeeds(m[1], files, depth+1)
			if err != nil {
				return nil, err
			}
			raise(nested)
		}
	}
	return needs, nil
}

// metaCallerPermissionProblems checks that every job of a caller that calls
// one of the suite's reusable workflows declares permissions (its own or the
// workflow's: the default token's depends on the repository's settings, and a
// new repository's is read-only) and grants at least what the called jobs
// declare, and that a workflow-wide grant holds nothing none of its jobs need.
func metaCallerPermissionProblems(block string, files map[string]string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var doc struct {
		Permissions any `yaml:"permissions"`
		Jobs        map[string]struct {
			Uses        string `yaml:"uses"`
			Permissions any    `yaml:"permissions"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		return []string{err.Error()}
	}
	workflowGrant, workflowDeclared, err := metaPermissions(doc.Permissions)
	if err != nil {
		return []string{"workflow: " + err.Error()}
	}
	// What the jobs relying on the workflow-wide grant need, for the excess check.
	inherited := map[string]string{}
	inheritedAll := workflowDeclared // false once a job the check cannot see relies on it
	for _, id := range metaSortedKeys(doc.Jobs) {
		job := doc.Jobs[id]
		grant, declared, err := metaPermissions(job.Permissions)
		if err != nil {
			add("job %s: %v", id, err)
			continue
		}
		m := metaSuiteWorkflowRE.FindStringSubmatch(job.Uses)
		if !declared && m == nil {
			inheritedAll = false
		}
		if m == nil {
			continue
		}
		needs, err := metaWorkflowNeeds(m[1], files, 0)
		if err != nil {
			add("job %s: %v", id, err)
			continue
		}
		if !declared {
			grant, declared = workflowGrant, workflowDeclared
			for scope, level := range needs {
				if metaLevel[level] > metaLevel[inherited[scope]] {
					inherited[scope] = level
				}
			}
		}
		if !declared {
			add("job %s calls %s but declares no permissions: a new repository's default token is read-only; grant %s", id, m[1], metaFormatPermissions(needs))
			continue
		}
		for _, scope := range metaSortedKeys(needs) {
			if metaLevel[grant[scope]] < metaLevel[needs[scope]] {
				have := grant[scope]
				if have == "" {
					have = "none"
				}
				add("job %s calls %s, whose jobs need %s: %s; the caller grants %s", id, m[1], scope, needs[scope], have)
			}
		}
	}
	if inheritedAll {
		for _, scope := range metaSortedKeys(workflowGrant) {
			if metaLevel[workflowGrant[scope]] > metaLevel[inherited[scope]] {
				add("the workflow grants %s: %s, which no called job needs (least privilege)", scope, workflowGrant[scope])
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// metaFormatPermissions writes levels as a flow mapping, sorted by scope.
func metaFormatPermissions(levels map[string]string) string {
	parts := make([]string, 0, len(levels))
	for _, scope := range metaSortedKeys(levels) {
		parts = append(parts, scope+": "+levels[scope])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// TestMetaCallerPermissionCheckDetectsMistakes plants each mistake in a
// caller; reap.yml's job needs actions: write, cost-history.yml's actions: read.
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
		{name: "two callers share the grant", block: "permissions: {actions: write}\n" + reap + costs},
		{name: "no permissions", block: reap,
			want: []string{"job reap calls reap.yml but declares no permissions: a new repository's default token is read-only; grant {actions: write}"}},
		{name: "too little", block: "permissions: {actions: read}\n" + reap,
			want: []string{"job reap calls reap.yml, whose jobs need actions: write; the caller grants read"}},
		{name: "empty grant", block: "permissions: {}\n" + reap,
			want: []string{"job reap calls reap.yml, whose jobs need actions: write; the caller grants none"}},
		{name: "job grant overrides the workflow's", block: "permissions: {actions: write}\n" + reap + "    permissions: {contents: read}\n",
			want: []string{"job reap calls reap.yml, whose jobs need actions: write; the caller grants none", "the workflow grants actions: write, which no called job needs (least privilege)"}},
		{name: "more than needed", block: "permissions: {actions: read, checks: write}\njobs:\n" + costs,
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
