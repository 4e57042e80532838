package harness

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// Simulated is a simulated cloud plus a consumer repository workspace holding
// the config, and the run the steps belong to.
type Simulated struct {
	*cloud.Cloud
	Workspace string
	RunID     int64
}

// RunnerEnv is the environment the runner gives every step of the run.
func (s *Simulated) RunnerEnv() map[string]string {
	return map[string]string{
		"GITHUB_API_URL": s.GitHubURL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": cloud.Repository,
		"GITHUB_RUN_ID": fmt.Sprint(s.RunID), "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_WORKFLOW_REF": cloud.Repository + "/" + cloud.Workflow + "@refs/heads/main",
		"GITHUB_WORKSPACE":    s.Workspace, "GITHUB_EVENT_NAME": "workflow_dispatch",
	}
}

// The GPU types of the simulated market the tests name.
const (
	A4000 = "NVIDIA RTX A4000"
	A5000 = "NVIDIA RTX A5000"
	L4    = "NVIDIA L4"
)

// HeadSHA and MergeSHA are the simulated pull request's head and merge commits.
var (
	HeadSHA  = strings.Repeat("a", 40)
	MergeSHA = strings.Repeat("b", 40)
)

// ProvisionStep is the provision action for PR pr of the simulated repository.
func (s *Simulated) ProvisionStep(pr int) Step {
	return Step{
		Action: "provision", Workspace: s.Workspace, Env: s.RunnerEnv(),
		Inputs: map[string]string{
			"runpod-api-key": cloud.RunPodKey, "github-token": cloud.GitHubToken, "runpod-api-url": s.RunPodURL,
			"registry-api-url": s.RegistryURL, "proof-url": s.ProofURL, "proof-sha256": s.ProofSHA256,
			"pr-number": Itoa(pr), "expected-head-sha": HeadSHA, "tested-ref": MergeSHA, "gate-app-id": Itoa(int(cloud.AppID)),
		},
	}
}

// WithoutMasks drops ::add-mask:: commands, which the runner consumes and never logs.
func WithoutMasks(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// AuthorizeStep is the authorize action for PR pr, triggered by actor.
func (s *Simulated) AuthorizeStep(pr int, actor string) Step {
	env := s.RunnerEnv()
	env["GITHUB_ACTOR"], env["GITHUB_TRIGGERING_ACTOR"] = actor, actor
	return Step{
		Action: "authorize", Workspace: s.Workspace, Env: env,
		Inputs: map[string]string{
			"github-token": cloud.GitHubToken, "pr-number": Itoa(pr), "expected-head-sha": HeadSHA,
			"gate-app-id": Itoa(int(cloud.AppID)),
		},
	}
}

// GateStep is the gate action for PR pr with the given inputs on top of the credentials.
func (s *Simulated) GateStep(pr int, inputs map[string]string) Step {
	all := map[string]string{"github-token": cloud.GitHubToken, "pr-number": Itoa(pr)}
	for k, v := range inputs {
		all[k] = v
	}
	return Step{Action: "gate", Workspace: s.Workspace, Env: s.RunnerEnv(), Inputs: all}
}

// Itoa is strconv.Itoa, for the many inputs that are numbers.
func Itoa(n int) string { return strconv.Itoa(n) }
