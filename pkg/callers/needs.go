package callers

import "fmt"

// SuiteNeeds is what each of the suite's reusable workflows needs from its
// caller's token: the highest level per scope its jobs declare, following
// its nested calls. It is written out so that runpod-gpu init, which runs
// in another repository, has it; action-tests/rules computes it from the
// workflow files (WorkflowNeeds) and fails when the two differ.
var SuiteNeeds = map[string]Levels{
	"gpu-lane.yml": {"actions": "write", "checks": "write", "contents": "read", "pull-requests": "read"},
	// The lane in parts, around a GPU job the caller writes.
	"gpu-lane-authorize.yml": {"actions": "read", "checks": "write", "contents": "read", "pull-requests": "read"},
	"gpu-lane-provision.yml": {"checks": "read", "contents": "read", "pull-requests": "read"},
	"gpu-lane-watchdog.yml":  {"actions": "write", "contents": "read", "pull-requests": "read"},
	"gpu-lane-finish.yml":    {"actions": "read", "checks": "write", "pull-requests": "read"},
	"serverless-lane.yml":    {"actions": "read", "checks": "write", "contents": "read", "pull-requests": "read"},
	"reap.yml":               {"actions": "write"},
	"reap-org.yml":           {},
	"cost-history.yml":       {"actions": "read"},
	"local-gate.yml":         {"checks": "write", "issues": "read", "pull-requests": "read"},
}

// SuiteNeedsOf looks a workflow up in SuiteNeeds.
func SuiteNeedsOf(name string) (Levels, error) {
	needs, ok := SuiteNeeds[name]
	if !ok {
		return nil, fmt.Errorf("%s is not a reusable workflow of the suite", name)
	}
	return needs, nil
}
