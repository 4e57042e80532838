package rehearse

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// realSteps runs a rehearsal's own jobs' steps on this machine (Options.RealSteps).
type realSteps struct {
	dir  string // the repository checkout, copied for each hosted job
	root string // where the copies and the pods' directories go
	log  io.Writer

	mu   sync.Mutex
	n    int
	errs []error
}

func newRealSteps(dir string, log io.Writer) (*realSteps, error) {
	root, err := os.MkdirTemp("", "runpod-gpu-rehearse-steps-")
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	return &realSteps{dir: dir, root: root, log: &lockedWriter{w: log}}, nil
}

// lockedWriter lets the jobs that run side by side share one log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// next is a fresh directory under root for one job.
func (r *realSteps) next(kind string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return filepath.Join(r.root, fmt.Sprintf("%s-%d", kind, r.n))
}

// hostedMachine gives each hosted job of the caller a copy of the checkout, with the
// run's results service.
func (r *realSteps) hostedMachine(s *stage) func(string, *workflowplay.WorkflowJob, workflowplay.Contexts) *workflowplay.Machine {
	return func(id string, job *workflowplay.WorkflowJob, _ workflowplay.Contexts) *workflowplay.Machine {
		if onRunnerLabel(job) {
			return nil
		}
		dir := r.next("hosted")
		if err := copyTree(r.dir, filepath.Join(dir, "work")); err != nil {
			r.fail(fmt.Errorf("job %s: copy the checkout: %w", id, err))
			return nil
		}
		rt, err := s.cloud.GitHub.RuntimeToken(cloud.Repository, s.runID, jobName(id, job))
		if err != nil {
			r.fail(err)
			return nil
		}
		return &workflowplay.Machine{Workspace: filepath.Join(dir, "work"), Temp: filepath.Join(dir, "temp"), Log: r.log,
			Artifacts: &workflowplay.Artifacts{URL: s.cloud.GitHubURL, Token: rt.Token, RunBackendID: rt.RunBackendID, JobBackendID: rt.JobBackendID}}
	}
}

// gpuJob runs the GPU job on the pod's runner, its steps for real in a directory standing
// for the pod, and returns its conclusion as GitHub gives it.
func (r *realSteps) gpuJob(ctx context.Context, s *stage, id string, job *workflowplay.WorkflowJob, c workflowplay.Contexts, label string) string {
	dir := r.next("pod")
	conclusion, err := s.cloud.RunPodJob(ctx, cloud.PodJob{RunID: s.runID, Name: jobName(id, job), Label: label, Job: job, Contexts: c,
		Machine: &workflowplay.Machine{Workspace: filepath.Join(dir, "work"), Temp: filepath.Join(dir, "temp"), Log: r.log}})
	if err != nil {
		r.fail(fmt.Errorf("job %s: %w", id, err))
		return "failure"
	}
	return conclusion
}

func (r *realSteps) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// copyTree copies the files of src (its .git left out) to dst, keeping their modes.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil // links and devices stay behind
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
