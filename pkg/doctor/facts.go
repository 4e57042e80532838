package doctor

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/ghapi"
)

// Names the checks look for, as the README and runpod-gpu init write them.
const (
	defaultEnvironment = "runpod-gpu"
	defaultCheckName   = "CI GPU gate"
	varAppID           = "RUNPOD_GPU_APP_ID"
	varInstallationID  = "RUNPOD_GPU_APP_INSTALLATION_ID"
	varRunnerAppID     = "RUNPOD_GPU_RUNNER_APP_ID"
	varRunnerInstallID = "RUNPOD_GPU_RUNNER_APP_INSTALLATION_ID"
	secretRunPodKey    = "RUNPOD_API_KEY"
	secretAppKey       = "RUNPOD_GPU_APP_PRIVATE_KEY"
	secretRunnerAppKey = "RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY"
	workflowsDir       = ".github/workflows"
)

// facts are what every check reads, gathered once.
type facts struct {
	fullName, owner, repo, defaultBranch string
	private                              bool

	variables    map[string]string
	variablesErr error
	// workflows are the default branch's workflow files, by path.
	workflows    map[string]string
	workflowsErr error
	// lane, reap and costs are the callers found among them (nil: none).
	lane, reap, costs *caller
	config            *config.Config
	configErr         error
	// rules are the rules active rulesets apply to the default branch;
	// mergeQueue is set when one of them is a merge queue.
	rules      []ghapi.BranchRule
	rulesErr   error
	mergeQueue bool
	// released is the suite's action image, read by the first check that
	// needs it (actionImage).
	released *releasedImage
}

// UnreadableError is Run's failure when the repository itself cannot be
// read: what is wrong and what to do, as a check's row says it.
type UnreadableError struct{ Problem, Fix string }

// Error returns "problem: fix".
func (e *UnreadableError) Error() string { return e.Problem + ": " + e.Fix }

// caller is a workflow that calls one of the suite's reusable workflows.
type caller struct {
	path, text string
	workflow   string // the suite workflow it calls: gpu-lane.yml, …
	suite      string // OWNER/runpod-gpu
	ref        string
	with       map[string]any
	// triggers are its workflow_run workflows; nil without workflow_run.
	triggers []string
}

// input returns a with: value as text, or fallback when absent.
func (c *caller) input(name, fallback string) string {
	if c == nil {
		return fallback
	}
	v, ok := c.with[name]
	if !ok || v == nil {
		return fallback
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// environment is the environment the callers' secret-holding jobs run in.
func (f *facts) environment() string { return f.lane.input("environment", defaultEnvironment) }

// runnerApp reports whether the lane uses a second App for runners.
func (f *facts) runnerApp() bool { return f.lane.input("runner-app-id", "") != "" }

// gather reads the repository, its variables, its workflows and configuration.
func gather(ctx context.Context, d Deps) (*facts, error) {
	r, err := d.GitHub.Repository(ctx)
	if err != nil {
		name := d.GitHub.Owner() + "/" + d.GitHub.Repo()
		problem, todo := failure(err, read{what: "the repository " + name, scope: "repo", permission: "Metadata: read",
			missing: fmt.Sprintf("check the name %s (--repo, or the origin of the checkout)", name)})
		return nil, &UnreadableError{Problem: problem, Fix: todo}
	}
	f := &facts{fullName: r.GetFullName(), owner: d.GitHub.Owner(), repo: d.GitHub.Repo(),
		defaultBranch: r.GetDefaultBranch(), private: r.GetPrivate()}
	f.variables, f.variablesErr = d.GitHub.RepositoryVariables(ctx)
	f.rules, f.rulesErr = d.GitHub.ActiveBranchRules(ctx, f.defaultBranch)
	for _, rule := range f.rules {
		f.mergeQueue = f.mergeQueue || rule.Type == "merge_queue"
	}
	f.workflows, f.workflowsErr = readWorkflows(ctx, d)
	for _, p := range slices.Sorted(maps.Keys(f.workflows)) {
		c := parseCaller(p, f.workflows[p])
		switch {
		case c == nil:
		case (c.workflow == "gpu-lane.yml" || c.workflow == "serverless-lane.yml") && f.lane == nil:
			f.lane = c
		case c.workflow == "reap.yml" && f.reap == nil:
			f.reap = c
		case c.workflow == "cost-history.yml" && f.costs == nil:
			f.costs = c
		}
	}
	configPath := f.lane.input("config-path", callers.ConfigPath)
	data, err := d.GitHub.FileAt(ctx, configPath, "")
	if err == nil {
		f.config, err = config.Parse(data, configPath)
	}
	f.configErr = err
	return f, nil
}

// readWorkflows reads every workflow file of the default branch.
func readWorkflows(ctx context.Context, d Deps) (map[string]string, error) {
	names, err := d.GitHub.DirAt(ctx, workflowsDir, "")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range names {
		if ext := path.Ext(n); ext != ".yml" && ext != ".yaml" {
			continue
		}
		data, err := d.GitHub.FileAt(ctx, workflowsDir+"/"+n, "")
		if err != nil {
			return nil, err
		}
		out[workflowsDir+"/"+n] = string(data)
	}
	return out, nil
}

// parseCaller reads a workflow that calls the suite; nil for any other.
func parseCaller(p, text string) *caller {
	var doc struct {
		On   yaml.Node `yaml:"on"`
		Jobs map[string]struct {
			Uses string         `yaml:"uses"`
			With map[string]any `yaml:"with"`
		} `yaml:"jobs"`
	}
	if yaml.Unmarshal([]byte(text), &doc) != nil {
		return nil
	}
	ids := make([]string, 0, len(doc.Jobs))
	for id := range doc.Jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		call, ok := callers.ParseSuiteCall(doc.Jobs[id].Uses)
		if !ok {
			continue
		}
		c := &caller{path: p, text: text, suite: call.Suite, workflow: call.Workflow, ref: call.Ref, with: doc.Jobs[id].With}
		c.triggers = workflowRunNames(&doc.On)
		return c
	}
	return nil
}

// workflowRunNames reads on.workflow_run.workflows; nil without workflow_run.
func workflowRunNames(on *yaml.Node) []string {
	if on.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(on.Content); i += 2 {
		if on.Content[i].Value != "workflow_run" {
			continue
		}
		var wr struct {
			Workflows []string `yaml:"workflows"`
		}
		_ = on.Content[i+1].Decode(&wr)
		if wr.Workflows == nil {
			wr.Workflows = []string{}
		}
		return wr.Workflows
	}
	return nil
}

// intVar reads a numeric repository variable.
func (f *facts) intVar(name string) (int64, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(f.variables[name]), 10, 64)
	return v, err == nil && v > 0
}
