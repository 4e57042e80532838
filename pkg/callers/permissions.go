package callers

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Levels are GITHUB_TOKEN permission levels by scope: "read", "write" or "none".
type Levels map[string]string

// Scopes are the GITHUB_TOKEN scopes read-all and write-all cover.
var Scopes = []string{
	"actions", "attestations", "checks", "contents", "deployments", "discussions", "id-token", "issues",
	"models", "packages", "pages", "pull-requests", "repository-projects", "security-events", "statuses",
}

// rank orders permission levels: none < read < write.
var rank = map[string]int{"none": 0, "read": 1, "write": 2}

// Covers reports whether have grants at least want.
func Covers(have, want string) bool { return rank[have] >= rank[want] }

// String writes the levels as a flow mapping, sorted by scope.
func (l Levels) String() string {
	parts := make([]string, 0, len(l))
	for _, scope := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, scope+": "+l[scope])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// raise lifts l to at least from, scope by scope.
func (l Levels) raise(from Levels) {
	for scope, level := range from {
		if rank[level] > rank[l[scope]] {
			l[scope] = level
		}
	}
}

// ParsePermissions reads a permissions value (read-all, write-all or a map of
// scope to level) as a level per scope; declared is false when it is absent.
func ParsePermissions(p any) (levels Levels, declared bool, err error) {
	levels = Levels{}
	switch p := p.(type) {
	case nil:
		return levels, false, nil
	case string:
		level, ok := map[string]string{"read-all": "read", "write-all": "write"}[p]
		if !ok {
			return nil, true, fmt.Errorf("permissions %q: want read-all, write-all or a map of scopes", p)
		}
		for _, s := range Scopes {
			levels[s] = level
		}
	case map[string]any:
		for scope, v := range p {
			level, _ := v.(string)
			if _, ok := rank[level]; !ok {
				return nil, true, fmt.Errorf("permission %s: %v: want read, write or none", scope, v)
			}
			levels[scope] = level
		}
	default:
		return nil, true, fmt.Errorf("permissions %v: want read-all, write-all or a map of scopes", p)
	}
	return levels, true, nil
}

// suiteCallRE matches a call of one of the suite's reusable workflows (any
// owner's copy, any ref): the suite, the workflow's file and the ref.
var suiteCallRE = regexp.MustCompile(`^([A-Za-z0-9_.-]+/runpod-gpu)/\.github/workflows/([a-z0-9-]+\.yml)@(\S+)$`)

// SuiteCall is a job's call of one of the suite's reusable workflows.
type SuiteCall struct {
	Suite    string // owner/runpod-gpu
	Workflow string // the file, e.g. gpu-lane.yml
	Ref      string // the ref after @
}

// ParseSuiteCall reads a job's uses: value; ok is false unless it calls one
// of the suite's reusable workflows.
func ParseSuiteCall(uses string) (SuiteCall, bool) {
	m := suiteCallRE.FindStringSubmatch(uses)
	if m == nil {
		return SuiteCall{}, false
	}
	return SuiteCall{Suite: m[1], Workflow: m[2], Ref: m[3]}, true
}

// workflowDoc is the part of a workflow these checks read.
type workflowDoc struct {
	Permissions any `yaml:"permissions"`
	Jobs        map[string]struct {
		Uses        string `yaml:"uses"`
		Permissions any    `yaml:"permissions"`
	} `yaml:"jobs"`
}

// WorkflowNeeds returns the permissions the jobs of one of the suite's
// workflows declare (a job's own, else the workflow's), as the highest level
// per scope, following its calls of other suite workflows; files holds the
// suite's workflows by file name. A job that declares none inherits the
// caller's token and needs nothing of its own.
func WorkflowNeeds(name string, files map[string]string) (Levels, error) {
	return workflowNeeds(name, files, 0)
}

func workflowNeeds(name string, files map[string]string, depth int) (Levels, error) {
	text, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("%s is not a workflow of this repository", name)
	}
	if depth > 4 {
		return nil, fmt.Errorf("%s: reusable workflows nested too deep", name)
	}
	var wf workflowDoc
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	needs := Levels{}
	for _, id := range slices.Sorted(maps.Keys(wf.Jobs)) {
		job := wf.Jobs[id]
		p := job.Permissions
		if p == nil {
			p = wf.Permissions
		}
		levels, _, err := ParsePermissions(p)
		if err != nil {
			return nil, fmt.Errorf("%s: job %s: %w", name, id, err)
		}
		needs.raise(levels)
		if call, ok := ParseSuiteCall(job.Uses); ok {
			nested, err := workflowNeeds(call.Workflow, files, depth+1)
			if err != nil {
				return nil, err
			}
			needs.raise(nested)
		}
	}
	return needs, nil
}

// NeedsFunc returns what a suite workflow (by file name) needs from its caller.
type NeedsFunc func(name string) (Levels, error)

// PermissionProblems checks that every job of a caller that calls one of the
// suite's reusable workflows declares permissions (its own or the
// workflow's: the default token's depends on the repository's settings, and a
// new repository's is read-only) and grants at least what the called jobs
// need, and that a workflow-wide grant holds nothing none of its jobs need.
func PermissionProblems(caller string, needsOf NeedsFunc) []string {
	var doc workflowDoc
	if err := yaml.Unmarshal([]byte(caller), &doc); err != nil {
		return []string{err.Error()}
	}
	workflowGrant, workflowDeclared, err := ParsePermissions(doc.Permissions)
	if err != nil {
		return []string{"workflow: " + err.Error()}
	}
	c := permissionCheck{needsOf: needsOf, workflowGrant: workflowGrant, workflowDeclared: workflowDeclared,
		inherited: Levels{}, inheritedAll: workflowDeclared}
	for _, id := range slices.Sorted(maps.Keys(doc.Jobs)) {
		c.job(id, doc.Jobs[id].Uses, doc.Jobs[id].Permissions)
	}
	if c.inheritedAll {
		for _, scope := range slices.Sorted(maps.Keys(workflowGrant)) {
			if rank[workflowGrant[scope]] > rank[c.inherited[scope]] {
				c.add("the workflow grants %s: %s, which no called job needs (least privilege)", scope, workflowGrant[scope])
			}
		}
	}
	slices.Sort(c.problems)
	return c.problems
}

// permissionCheck is one PermissionProblems call's state.
type permissionCheck struct {
	needsOf          NeedsFunc
	workflowGrant    Levels
	workflowDeclared bool
	// inherited is what the jobs relying on the workflow-wide grant need, for
	// the excess check; inheritedAll is false once a job the check cannot
	// see relies on it.
	inherited    Levels
	inheritedAll bool
	problems     []string
}

func (c *permissionCheck) add(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// job checks one job of the caller.
func (c *permissionCheck) job(id, uses string, permissions any) {
	grant, declared, err := ParsePermissions(permissions)
	if err != nil {
		c.add("job %s: %v", id, err)
		return
	}
	call, ok := ParseSuiteCall(uses)
	if !ok {
		if !declared {
			c.inheritedAll = false
		}
		return
	}
	needs, err := c.needsOf(call.Workflow)
	if err != nil {
		c.add("job %s: %v", id, err)
		return
	}
	if !declared {
		grant, declared = c.workflowGrant, c.workflowDeclared
		c.inherited.raise(needs)
	}
	if !declared {
		c.add("job %s calls %s but declares no permissions: a new repository's default token is read-only; grant %s", id, call.Workflow, needs)
		return
	}
	for _, scope := range slices.Sorted(maps.Keys(needs)) {
		if !Covers(grant[scope], needs[scope]) {
			have := grant[scope]
			if have == "" {
				have = "none"
			}
			c.add("job %s calls %s, whose jobs need %s: %s; the caller grants %s", id, call.Workflow, scope, needs[scope], have)
		}
	}
}
