package watchdog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
	"github.com/org/runpod-gpu/pkg/wire"
)

// epoch is the fakes' virtual start; the pod starts 60 s later.
var epoch = time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)

const (
	podID     = "pod0watched001"
	runID     = int64(9100)
	testLabel = "runpod-gpu-9100-1-c1"
	headSHA   = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

// journal records what the fakes were asked to do, in order, with the virtual time.
type journal struct {
	mu     sync.Mutex
	clock  *simclock.Virtual
	events []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, fmt.Sprintf("+%s ", j.clock.Now().Sub(epoch))+fmt.Sprintf(format, args...))
}

func (j *journal) String() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.events, "\n")
}

// fakePods serves one pod record and records deletions.
type fakePods struct {
	j         *journal
	record    *runpod.Pod
	getErr    error
	deleteErr error
	deleted   bool
	// state, when set, changes the record with the virtual time since epoch
	// (a host losing the pod); an error answers instead of the record.
	state func(since time.Duration, p *runpod.Pod) error
}

func (f *fakePods) GetPod(_ context.Context, id string) (*runpod.Pod, error) {
	if f.getErr != nil {
		return nil, f.getErr
	}
	if f.state != nil && !f.deleted {
		p := *f.record
		if err := f.state(f.j.clock.Now().Sub(epoch), &p); err != nil {
			return nil, err
		}
		return &p, nil
	}
	if f.deleted {
		return nil, fmt.Errorf("get pod %s: %w", id, runpod.ErrNotFound)
	}
	p := *f.record
	return &p, nil
}

func (f *fakePods) DeletePod(_ context.Context, id string) error {
	f.j.add("DELETE %s", id)
	if f.deleteErr != nil {
		return f.deleteErr
	}
	f.deleted = true
	return nil
}

// fakeGitHub answers from functions of the virtual time since epoch.
type fakeGitHub struct {
	j     *journal
	clock *simclock.Virtual
	jobs  func(since time.Duration) ([]*github.WorkflowJob, error)
	pr    func(since time.Duration) (*github.PullRequest, error)
	runs  []*github.WorkflowRun // successive GetWorkflowRun answers; the last repeats
	// trees answers CommitTree by commit; a commit it lacks is a 404.
	trees  map[string]string
	cancel error
	reads  int
	// runner answers RunnerByName for testLabel; nil: no such runner.
	runner func(since time.Duration) (*github.Runner, error)
	// removed lists the runner ids DeleteRunner was asked to remove.
	removed []int64
	// inProgress and foreignJobs answer the search for the job that took the runner.
	inProgress  []*github.WorkflowRun
	foreignJobs map[int64][]*github.WorkflowJob
}

func (f *fakeGitHub) RunnerByName(_ context.Context, name string, _ ghapi.Scope) (*github.Runner, bool, error) {
	if f.runner == nil || name != testLabel {
		return nil, false, nil
	}
	r, err := f.runner(f.since())
	if err != nil || r == nil {
		return nil, false, err
	}
	for _, id := range f.removed {
		if id == r.GetID() {
			return nil, false, nil
		}
	}
	return r, true, nil
}

func (f *fakeGitHub) DeleteRunner(_ context.Context, id int64, _ ghapi.Scope) error {
	f.removed = append(f.removed, id)
	return nil
}

func (f *fakeGitHub) ListWorkflowRuns(_ context.Context, _ string, filter ghapi.ListRunsFilter, _ int) ([]*github.WorkflowRun, error) {
	if filter.Status != "in_progress" {
		return nil, fmt.Errorf("runs with status %q: want in_progress", filter.Status)
	}
	return f.inProgress, nil
}

func (f *fakeGitHub) since() time.Duration { return f.clock.Now().Sub(epoch) }

func (f *fakeGitHub) ListAttemptJobs(_ context.Context, run int64, attempt int) ([]*github.WorkflowJob, error) {
	if jobs, ok := f.foreignJobs[run]; ok {
		return jobs, nil
	}
	if run != runID || attempt != 1 {
		return nil, fmt.Errorf("jobs of run %d attempt %d: want the watched attempt", run, attempt)
	}
	if f.jobs == nil {
		return nil, nil
	}
	return f.jobs(f.since())
}

func (f *fakeGitHub) GetPullRequest(_ context.Context, number int) (*github.PullRequest, error) {
	if f.pr == nil {
		return openPR(headSHA), nil
	}
	return f.pr(f.since())
}

func (f *fakeGitHub) GetWorkflowRun(_ context.Context, id int64) (*github.WorkflowRun, error) {
	f.j.add("GET run %d", id)
	if len(f.runs) == 0 {
		return nil, fmt.Errorf("get workflow run %d: 502 Bad Gateway", id)
	}
	run := f.runs[min(f.reads, len(f.runs)-1)]
	f.reads++
	return run, nil
}

func (f *fakeGitHub) CancelWorkflowRun(_ context.Context, id int64) error {
	f.j.add("CANCEL run %d", id)
	return f.cancel
}

func openPR(head string) *github.PullRequest {
	return &github.PullRequest{Number: github.Int(42), State: github.String("open"), Head: &github.PullRequestBranch{SHA: github.String(head)}}
}

func workflowRun(attempt int, status, conclusion string) *github.WorkflowRun {
	run := &github.WorkflowRun{ID: github.Int64(runID), RunAttempt: github.Int(attempt), Status: github.String(status)}
	if conclusion != "" {
		run.Conclusion = github.String(conclusion)
	}
	return run
}

// job is the GPU job with its test step in the given state ("" for not yet).
func job(status, testStatus string) []*github.WorkflowJob {
	steps := []*github.TaskStep{{Name: github.String("Set up job"), Status: github.String("completed"), Conclusion: github.String("success"),
		StartedAt: stamp(70), CompletedAt: stamp(80)}}
	switch {
	case testStatus != "":
		steps = append(steps, &github.TaskStep{Name: github.String("Run GPU tests"), Status: github.String(testStatus), StartedAt: stamp(80)})
	case status == "in_progress":
		// Setup still running: the step a stalled download would leave open.
		steps = append(steps, &github.TaskStep{Name: github.String("Download test archive"), Status: github.String("in_progress"), StartedAt: stamp(80)})
	}
	j := &github.WorkflowJob{Name: github.String("GPU tests"), Status: github.String(status), Labels: []string{testLabel},
		RunnerName: github.String(testLabel), StartedAt: stamp(70), Steps: steps}
	if status == "completed" {
		j.Conclusion, j.CompletedAt = github.String("failure"), stamp(90)
	}
	build := &github.WorkflowJob{Name: github.String("build"), Status: github.String("completed"), RunnerName: github.String("GitHub Actions 3")}
	return []*github.WorkflowJob{build, j}
}

func stamp(sec int) *github.Timestamp {
	return &github.Timestamp{Time: epoch.Add(time.Duration(sec) * time.Second)}
}

// harness is one watch on fakes and a virtual clock.
type harness struct {
	clock *simclock.Virtual
	j     *journal
	pods  *fakePods
	gh    *fakeGitHub
	req   Request
	logs  []string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	clock := simclock.NewVirtual(epoch)
	j := &journal{clock: clock}
	h := &harness{clock: clock, j: j,
		pods: &fakePods{j: j, record: &runpod.Pod{ID: podID, Status: runpod.PodRunning, Cost: 0.69, DataCenterID: "US-TX-3", Runtime: &runpod.PodRuntime{Uptime: 60},
			StartedAt: wire.KnownTime(epoch.Add(60 * time.Second)), GPU: &runpod.PodGPU{ID: "NVIDIA GeForce RTX 4090"}}},
		gh: &fakeGitHub{j: j, clock: clock, runs: []*github.WorkflowRun{workflowRun(1, "in_progress", "")}},
		req: Request{PodID: podID, RunID: runID, Attempt: 1, RunnerLabel: testLabel, PRNumber: 42, ExpectedHeadSHA: headSHA,
			SetupBudget: 900 * time.Second, Lifetime: 3600 * time.Second, Poll: 30 * time.Second},
	}
	// The watch begins a little after the pod's start, as a hosted job does.
	clock.Advance(75 * time.Second)
	return h
}

func (h *harness) run() (Result, error) {
	policy := reqpolicy.New(reqpolicy.WithClock(h.clock), reqpolicy.WithSleeper(h.clock.Sleep))
	deps := Deps{Pods: h.pods, GitHub: h.gh, Policy: policy, Clock: h.clock, Sleep: h.clock.Sleep,
		Logf: func(format string, args ...any) { h.logs = append(h.logs, fmt.Sprintf(format, args...)) }}
	return Run(context.Background(), deps, h.req)
}

// afterStart is the virtual time of an offset from the pod's start.
func afterStart(d time.Duration) time.Time { return epoch.Add(60*time.Second + d) }

func mustSnapshotPrice(t *testing.T, price string) cost.Price {
	t.Helper()
	s, err := cost.ParseSnapshot(price, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return s.Price
}

// queuedGPUJob is this attempt's GPU job still waiting for its runner.
func queuedGPUJob() []*github.WorkflowJob {
	jobs := job("queued", "")
	jobs[1].RunnerName, jobs[1].StartedAt = nil, nil
	return jobs
}

func (g *fakeGitHub) CommitTree(_ context.Context, sha string) (string, error) {
	if tree, ok := g.trees[sha]; ok {
		return tree, nil
	}
	return "", fmt.Errorf("commit %s: %w", sha, ghapi.ErrNotFound)
}

// movedPR is the pull request after a push to head whose merge commit is merge.
func movedPR(head, merge string) *github.PullRequest {
	pr := openPR(head)
	pr.MergeCommitSHA = github.String(merge)
	return pr
}
