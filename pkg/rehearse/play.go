package rehearse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/actions"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// The simulated pull request's head and merge commits.
var (
	headSHA  = strings.Repeat("a1", 20)
	mergeSHA = strings.Repeat("b2", 20)
)

// fastTimings replace the configuration's waits in the rehearsal's copy of
// it: the simulated hosts boot in a second, so a poll of a second is enough.
var fastTimings = map[string]any{"startup_poll_seconds": 1, "startup_timeout_seconds": 30, "create_deadline_seconds": 10, "setup_budget_seconds": 60}

// stage is one rehearsal's simulated world: the cloud, the repository's
// copy of the configuration, the pull request and the lane's run.
type stage struct {
	cloud     *cloud.Cloud
	workspace string
	lane      *workflowFile
	ciName    string
	pr        int
	runID     int64
	// head is the pull request's head commit; gateApp the App the gate is
	// published as (the simulated GitHub's own App unless a caller's).
	head    string
	gateApp int64
	// ownsCloud: the stage started its cloud and closes it.
	ownsCloud bool
	// real runs the caller's own jobs' steps for real (Options.RealSteps); nil: it does not.
	real *realSteps

	mu        sync.Mutex
	jobs      []JobResult
	worstCase string
}

var worstCaseRE = regexp.MustCompile(`lane plan: worst-case spend ([^;\n]+)`)

// play runs the lane caller lane on a new simulated cloud and returns what
// it did: its jobs, the gate, the worst case.
func play(ctx context.Context, lane *workflowFile, repo []*workflowFile, cfgText []byte, suite map[string]*suiteWorkflow, o Options) (*Played, error) {
	s, err := newStage(lane, repo, cfgText)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if o.RealSteps {
		if s.real, err = newRealSteps(o.Dir, o.StepsLog); err != nil {
			return nil, err
		}
	}
	played, err := s.play(ctx, suite, map[string]any{}, map[string]string{"RUNPOD_API_KEY": cloud.RunPodKey})
	if err == nil && s.real != nil {
		err = errors.Join(s.real.errs...)
	}
	if err == nil && o.played != nil {
		o.played(s)
	}
	return played, err
}

// play plays the stage's lane for its pull request with the repository's
// variables (no App: the lane publishes with the run's token, as the
// simulated GitHub's App) and the environment's secrets.
func (s *stage) play(ctx context.Context, suite map[string]*suiteWorkflow, vars map[string]any, secrets map[string]string) (*Played, error) {
	lane := s.lane
	wf := *lane.WF
	p := &workflowplay.Play{
		Github: map[string]any{
			"event_name": "workflow_run", "token": cloud.GitHubToken, "repository": cloud.Repository,
			"run_id": float64(s.runID), "run_attempt": "1",
			"event": map[string]any{
				"repository":   map[string]any{"default_branch": "main"},
				"workflow_run": map[string]any{"name": s.ciName, "event": "pull_request", "status": "in_progress", "head_sha": s.head, "pull_requests": []any{map[string]any{"number": float64(s.pr)}}},
			},
		},
		Vars:   vars,
		Action: s.action(ctx),
		Job:    s.job(ctx),
		Load: func(file string) (*workflowplay.Workflow, error) {
			if sw, ok := suite[file]; ok {
				return sw.WF, nil
			}
			return nil, fmt.Errorf("%s is not one of the lane's reusable workflows this program carries", file)
		},
		JobDone: s.jobDone,
		Context: ctx,
	}
	if s.real != nil {
		p.Machine = s.real.hostedMachine(s)
	}
	if _, _, err := p.Run(&wf, map[string]any{}, secrets); err != nil {
		return nil, fmt.Errorf("play %s: %w", lane.Path, err)
	}
	return s.played(), nil
}

func newStage(lane *workflowFile, repo []*workflowFile, cfgText []byte) (*stage, error) {
	cfg, err := config.Parse(cfgText, config.DefaultPath)
	if err != nil {
		return nil, err
	}
	c, err := cloud.Start(cloud.Options{Clock: simclock.Real{}, Market: market(cfg),
		RunPodOptions: []runpodsim.Option{runpodsim.WithProvisioningDelay(200 * time.Millisecond)}})
	if err != nil {
		return nil, fmt.Errorf("start the simulated cloud: %w", err)
	}
	c.Model.ProofTime = 700 * time.Millisecond
	s := &stage{cloud: c, lane: lane, head: headSHA, gateApp: cloud.AppID, ownsCloud: true}
	if err := s.setUp(repo, cfgText); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// setUp writes the workspace's configuration, registers the repository's
// workflows, opens the pull request, starts its CI and the lane's run.
func (s *stage) setUp(repo []*workflowFile, cfgText []byte) error {
	if err := s.writeWorkspace(cfgText); err != nil {
		return err
	}
	var err error
	gh := s.cloud.GitHub
	ciPath := ""
	for _, w := range repo {
		if w.Path != cloud.Workflow {
			if _, err := gh.AddWorkflow(cloud.Repository, w.Path, w.Name); err != nil {
				return err
			}
		}
		if names := s.lane.workflowRunNames(); ciPath == "" && len(names) > 0 && w.Name == names[0] {
			ciPath, s.ciName = w.Path, w.Name
		}
	}
	if s.pr, err = gh.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Title: "A change that needs the GPU", Author: "alice",
		HeadRef: "feature", HeadSHA: headSHA, MergeCommitSHA: mergeSHA}); err != nil {
		return err
	}
	if ciPath != "" { // the user's CI, in progress: what starts the lane
		if _, err := gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: ciPath, Event: "pull_request",
			HeadSHA: headSHA, HeadBranch: "feature", PullRequests: []int{s.pr}, Status: "in_progress", Jobs: []githubsim.JobSpec{{Name: "build", Status: "in_progress"}}}); err != nil {
			return err
		}
	}
	// The lane's run; a job that waits keeps it in progress while GPU jobs join it.
	s.runID, err = gh.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: s.lane.Path, Event: "workflow_run",
		HeadSHA: headSHA, HeadBranch: "feature", PullRequests: []int{s.pr}, Jobs: []githubsim.JobSpec{{Name: "finish", Status: "waiting"}}})
	return err
}

// writeWorkspace writes the run's checkout: the configuration with fast timings.
func (s *stage) writeWorkspace(cfgText []byte) error {
	var err error
	if s.workspace, err = os.MkdirTemp("", "runpod-gpu-rehearse-"); err != nil {
		return err
	}
	fast, err := withFastTimings(cfgText)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.workspace, ".github"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.workspace, config.DefaultPath), fast, 0o644)
}

func (s *stage) close() {
	if s.ownsCloud {
		s.cloud.Close()
	}
	if s.workspace != "" {
		_ = os.RemoveAll(s.workspace)
	}
	if s.real != nil {
		_ = os.RemoveAll(s.real.root)
	}
}

// withFastTimings is the configuration with the rehearsal's waits.
func withFastTimings(cfgText []byte) ([]byte, error) {
	doc := map[string]any{}
	if err := yaml.Unmarshal(cfgText, &doc); err != nil {
		return nil, err
	}
	for k, v := range fastTimings {
		doc[k] = v
	}
	return yaml.Marshal(doc)
}

// market is the simulated catalog: the default market's GPU types plus any
// the configuration names, each with one healthy host that boots in a second.
func market(cfg *config.Config) *runpodsim.Market {
	m := runpodsim.DefaultMarket()
	known := map[string]bool{}
	for _, g := range m.GPUTypes {
		known[g.ID] = true
	}
	for _, tier := range cfg.GPUTiers {
		for _, id := range tier.GPUIDs {
			if !known[id] {
				known[id] = true
				m.GPUTypes = append(m.GPUTypes, runpodsim.GPUType{ID: id, Name: id, MemoryGB: 48, SecurePrice: 1, CommunityPrice: 0.8})
			}
		}
	}
	m.Hosts = nil
	for i, g := range m.GPUTypes {
		m.Hosts = append(m.Hosts, runpodsim.HostProfile{ID: fmt.Sprintf("host-%d", i+1), DataCenterID: "US-TX-3", GPUTypeID: g.ID,
			DriverCUDA: "12.8", MaxPTXISA: "8.7", BootSeconds: 1, Healthy: true, VRAMGB: g.MemoryGB})
	}
	return &m
}

// simInputs are what only the simulation adds to a step's inputs: its API
// URLs, the proof it serves, the simulated GitHub's App and short polls.
func (s *stage) simInputs(role string, inputs map[string]string) {
	c := s.cloud
	switch role {
	case "authorize":
		inputs["registry-api-url"], inputs["gate-app-id"] = c.RegistryURL, fmt.Sprint(s.gateApp)
		inputs["lane-wait-seconds"], inputs["lane-poll-seconds"] = "60", "1"
	case "provision":
		inputs["runpod-api-url"], inputs["registry-api-url"] = c.RunPodURL, c.RegistryURL
		inputs["proof-url"], inputs["proof-sha256"], inputs["gate-app-id"] = c.ProofURL, c.ProofSHA256, fmt.Sprint(s.gateApp)
	case "watchdog":
		inputs["runpod-api-url"], inputs["poll-seconds"] = c.RunPodURL, "1"
	case "cleanup":
		inputs["runpod-api-url"] = c.RunPodURL
	}
}

// action runs one of the lane's actions in this process, as the runner
// runs the image's program: its inputs as INPUT_* variables, the run's
// GITHUB_* variables, and the file commands' files, read back after.
func (s *stage) action(ctx context.Context) func(role string, inputs map[string]string) (string, map[string]string) {
	return func(role string, inputs map[string]string) (string, map[string]string) {
		s.simInputs(role, inputs)
		out, stdout, err := s.runStep(ctx, role, inputs)
		if m := worstCaseRE.FindStringSubmatch(stdout); role == "provision" && m != nil {
			s.mu.Lock()
			s.worstCase = strings.TrimSpace(m[1])
			s.mu.Unlock()
		}
		if err != nil {
			return "failure", out
		}
		return "success", out
	}
}

func (s *stage) runStep(ctx context.Context, role string, inputs map[string]string) (map[string]string, string, error) {
	files, err := os.MkdirTemp("", "runpod-gpu-rehearse-step-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(files)
	env := map[string]string{
		"CI": "true", "GITHUB_ACTIONS": "true", "HOME": files,
		"GITHUB_API_URL": s.cloud.GitHubURL, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": cloud.Repository,
		"GITHUB_RUN_ID": fmt.Sprint(s.runID), "GITHUB_RUN_ATTEMPT": "1", "GITHUB_WORKFLOW_REF": cloud.Repository + "/" + s.lane.Path + "@refs/heads/main",
		"GITHUB_WORKSPACE": s.workspace, "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_ACTOR": cloud.MaintainerBob, "GITHUB_TRIGGERING_ACTOR": cloud.MaintainerBob,
	}
	for _, name := range []string{"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_STATE", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_EVENT_PATH"} {
		env[name] = filepath.Join(files, strings.ToLower(name))
		content := []byte{}
		if name == "GITHUB_EVENT_PATH" {
			content = []byte("null")
		}
		if err := os.WriteFile(env[name], content, 0o600); err != nil {
			return nil, "", err
		}
	}
	for k, v := range inputs {
		env["INPUT_"+strings.ToUpper(k)] = v // the runner upper-cases input names and keeps their dashes
	}
	var stdout bytes.Buffer
	code := actionkit.RunRole(ctx, []string{"runpod-gpu-actions", role}, func(k string) string { return env[k] }, &stdout, actions.All())
	outputs, perr := workflowplay.ReadFileCommand(env["GITHUB_OUTPUT"])
	if perr != nil {
		return nil, stdout.String(), perr
	}
	if code != 0 {
		return outputs, stdout.String(), fmt.Errorf("%s exited %d", role, code)
	}
	return outputs, stdout.String(), nil
}

// job runs a job that is the caller's own or a script: a GPU job (on a
// pod's runner label) joins the lane's run on that label with its steps,
// which the simulated GitHub hands to the pod's runner; any other stands done.
func (s *stage) job(ctx context.Context) func(id string, job *workflowplay.WorkflowJob, c workflowplay.Contexts) (string, map[string]string) {
	return func(id string, job *workflowplay.WorkflowJob, c workflowplay.Contexts) (string, map[string]string) {
		if !onRunnerLabel(job) {
			return "success", nil
		}
		label, err := workflowplay.Interpolate(job.RunsOn.(string), c)
		if err != nil || label == "" {
			return "failure", nil
		}
		if s.real != nil {
			return s.real.gpuJob(ctx, s, id, job, c, label), nil
		}
		jobID, err := s.cloud.GitHub.AddJob(cloud.Repository, s.runID, githubsim.JobSpec{Name: jobName(id, job), Labels: []string{label}, Steps: gpuSteps(job, c)})
		if err != nil {
			return "failure", nil
		}
		return s.waitJob(ctx, jobID), nil
	}
}

// gpuSteps are a GPU job's steps as the simulated runner runs them, each
// briefly and successfully; a step whose if: is false after successful
// steps (a retry of one that failed) is skipped.
func gpuSteps(job *workflowplay.WorkflowJob, c workflowplay.Contexts) []githubsim.StepSpec {
	steps := map[string]any{}
	c.Values = mapsClone(c.Values)
	c.Values["steps"], c.Status = steps, workflowplay.Status{Success: true}
	var out []githubsim.StepSpec
	for i, st := range job.Steps {
		name := st.Name
		if name == "" {
			name = fmt.Sprintf("step %d", i+1)
		}
		if ok, err := workflowplay.Condition(st.If, c); err == nil && !ok {
			out = append(out, githubsim.StepSpec{Name: name, Conclusion: "skipped"})
			continue
		}
		if st.ID != "" {
			steps[st.ID] = map[string]any{"outcome": "success", "conclusion": "success", "outputs": map[string]any{}}
		}
		out = append(out, githubsim.StepSpec{Name: name, Duration: 300 * time.Millisecond})
	}
	return out
}

func mapsClone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// waitJob waits for a job of the lane's run to complete and returns its conclusion.
func (s *stage) waitJob(ctx context.Context, jobID int64) string {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		jobs, err := s.cloud.GitHub.Jobs(cloud.Repository, s.runID, 1)
		if err != nil {
			return "failure"
		}
		for _, j := range jobs {
			if j.ID == jobID && j.Status == "completed" {
				return j.Conclusion
			}
		}
		select {
		case <-ctx.Done():
			return "cancelled"
		case <-tick.C:
		}
	}
}

func (s *stage) jobDone(path []string, id string, job *workflowplay.WorkflowJob, run workflowplay.JobRun) {
	name := job.Name
	if name == "" || strings.Contains(name, "${{") {
		name = id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := strings.Join(append(append([]string{}, path...), ""), " / ")
	s.jobs = append(s.jobs, JobResult{ID: prefix + id, Name: prefix + name, Result: run.Result})
}

// played reads what the lane left: the gate on the head, the worst case provision printed.
func (s *stage) played() *Played {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &Played{Workflow: s.lane.Path, CI: s.ciName, PullRequest: s.pr, Jobs: s.jobs, WorstCase: s.worstCase}
	name := s.lane.gateCheckName()
	var latest *githubsim.CheckRun
	for _, c := range s.cloud.GitHub.CheckRuns(cloud.Repository, s.head) {
		if c.Name == name && (latest == nil || c.ID > latest.ID) {
			latest = &c
		}
	}
	if latest != nil {
		p.Gate = &Gate{Name: latest.Name, Status: latest.Status, Conclusion: latest.Conclusion, Title: latest.Output.Title}
	}
	return p
}

// defaultGateName is the gate's name unless the lane's check-name input says otherwise.
const defaultGateName = "CI GPU gate"

// gateCheckName is the name the caller gives the gate (check-name, to
// gpu-lane.yml or gpu-lane-authorize.yml), else the default.
func (f *workflowFile) gateCheckName() string {
	for _, c := range f.suiteCalls() {
		if v, ok := c.Job.With["check-name"].(string); ok && v != "" && !strings.Contains(v, "${{") {
			return v
		}
	}
	return defaultGateName
}
