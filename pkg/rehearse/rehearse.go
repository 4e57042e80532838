// Package rehearse is runpod-gpu rehearse: it plays a repository's own
// workflow files on the embedded simulated cloud before anything is paid. It
// first checks the lane callers' wiring (the workflow_run trigger names a
// workflow of the repository; each call grants the permissions the suite's
// jobs need and passes the secrets, variables and inputs under the names the
// lane reads; gpu-job-name and test-step-name name the GPU job and its test
// step; no other job runs on the pod's runner label) and names every mistake
// with its fix. With none, it opens a pull request on the simulated GitHub
// with the CI the trigger names in progress and plays the caller with the
// workflow player: the lane's real action code (in this process, each step
// with the runner's INPUT_*/GITHUB_* environment and file commands) against
// the simulated GitHub and RunPod, the GPU job on a simulated pod's runner.
// Every connection it makes goes to a loopback address.
package rehearse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/config"
)

// Options say what to rehearse.
type Options struct {
	// Dir is the repository checkout: its .github/workflows and .github/runpod-gpu.yml.
	Dir string
	// Timeout bounds the whole play; zero means 3 minutes.
	Timeout time.Duration
	// RealSteps runs the caller's own jobs' steps for real, on this machine: each hosted job
	// in a copy of Dir (actions/checkout keeps it as it is), the GPU job in a directory
	// standing for the pod once its runner took it; run: steps are bash processes,
	// upload-artifact and download-artifact go through the simulated GitHub. A job's
	// container: is not started: its steps find what this machine's PATH has (a test puts
	// stand-ins there, a fake nvcc for one). Without it hosted jobs stand done and the GPU
	// job's steps run as names.
	RealSteps bool
	// StepsLog, with RealSteps, receives the output of the steps run for real (each job's
	// log, its secrets masked); nil discards it.
	StepsLog io.Writer
}

// Report is what a rehearsal found.
type Report struct {
	// Mistakes are the wiring mistakes, each with its fix; none means the callers played.
	Mistakes []Mistake `json:"mistakes"`
	// Played are the lane callers played, one each.
	Played []*Played `json:"played"`
}

// Played is one lane caller's play.
type Played struct {
	Workflow    string      `json:"workflow"`
	CI          string      `json:"ci,omitempty"` // the CI workflow the trigger names, in progress
	PullRequest int         `json:"pull_request"`
	Jobs        []JobResult `json:"jobs"`
	Gate        *Gate       `json:"gate"`
	// WorstCase is provision's bound on the run's spend, as it printed it before the first create.
	WorstCase string `json:"worst_case"`
}

// JobResult is one job, called workflows' jobs under their calling job:
// id "gpu / authorize", name "gpu / Authorize", result success.
type JobResult struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Result string `json:"result"`
}

// Gate is the check the lane published on the pull request's head.
type Gate struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
	Title      string `json:"title"`
}

// OK reports whether the rehearsal found no mistake and every played gate passed.
func (r *Report) OK() bool {
	if len(r.Mistakes) > 0 || len(r.Played) == 0 {
		return false
	}
	for _, p := range r.Played {
		if p.Gate == nil || p.Gate.Conclusion != "success" {
			return false
		}
	}
	return true
}

// Run rehearses the repository in o.Dir.
func Run(ctx context.Context, o Options) (*Report, error) {
	repo, err := readWorkflows(o.Dir)
	if err != nil {
		return nil, err
	}
	suite, err := embeddedSuite()
	if err != nil {
		return nil, err
	}
	r := &Report{}
	var lanes []*workflowFile
	for _, f := range repo {
		if f.isLaneCaller() {
			lanes = append(lanes, f)
			r.Mistakes = append(r.Mistakes, checkWiring(f, repo, suite)...)
		}
	}
	if len(lanes) == 0 {
		r.Mistakes = append(r.Mistakes, Mistake{File: ".github/workflows", What: "no workflow calls the GPU lane (gpu-lane.yml, or gpu-lane-authorize.yml and its parts)",
			Fix: "run runpod-gpu init, or copy a caller from .github/docs/workflows.md"})
	}
	cfgText, err := os.ReadFile(filepath.Join(o.Dir, config.DefaultPath))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Mistakes = append(r.Mistakes, Mistake{File: config.DefaultPath, What: "the configuration is missing", Fix: "run runpod-gpu init, which writes it"})
	case err != nil:
		return nil, err
	default:
		if _, err := config.Parse(cfgText, config.DefaultPath); err != nil {
			r.Mistakes = append(r.Mistakes, Mistake{File: config.DefaultPath, What: err.Error(), Fix: "correct the key it names (.github/docs/configuration.md)"})
		}
	}
	if len(r.Mistakes) > 0 {
		return r, nil // a play of wrong wiring stops at its first symptom; the checks named them all
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = loopbackOnly(func() error {
		for _, lane := range lanes {
			p, err := play(ctx, lane, repo, cfgText, suite, o)
			if err != nil {
				return err
			}
			r.Played = append(r.Played, p)
		}
		return nil
	})
	return r, err
}

// readWorkflows reads every workflow file of dir's .github/workflows.
func readWorkflows(dir string) ([]*workflowFile, error) {
	var paths []string
	for _, pattern := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(dir, ".github", "workflows", pattern))
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	slices.Sort(paths)
	if len(paths) == 0 {
		return nil, fmt.Errorf("--dir %s: no .github/workflows/*.yml: want a repository checkout (runpod-gpu init writes the lane's caller)", dir)
	}
	var out []*workflowFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, p)
		f, err := parseWorkflowFile(filepath.ToSlash(rel), string(data))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// WriteText writes the report for a person.
func (r *Report) WriteText(w io.Writer) {
	for _, p := range r.Played {
		fmt.Fprintf(w, "Rehearsal of %s on the simulated cloud (nothing left this machine)\n", p.Workflow)
		if p.CI != "" {
			fmt.Fprintf(w, "  pull request #%d opened; CI %q in progress\n", p.PullRequest, p.CI)
		}
		fmt.Fprintln(w, "Jobs:")
		width := 0
		for _, j := range p.Jobs {
			width = max(width, len(j.ID))
		}
		for _, j := range p.Jobs {
			fmt.Fprintf(w, "  %-*s  %-9s %s\n", width, j.ID, j.Result, strings.TrimPrefix(j.Name, j.ID))
		}
		if p.Gate != nil {
			fmt.Fprintf(w, "Gate %q: %s — %s\n", p.Gate.Name, p.Gate.Conclusion, p.Gate.Title)
		} else {
			fmt.Fprintln(w, "Gate: none published")
		}
		fmt.Fprintf(w, "Worst-case cost of a run: %s\n", orUnknown(p.WorstCase))
	}
	if len(r.Mistakes) == 0 {
		fmt.Fprintln(w, "Wiring: no mistakes")
		return
	}
	fmt.Fprintf(w, "%d wiring mistake(s); nothing was played:\n", len(r.Mistakes))
	for _, m := range r.Mistakes {
		fmt.Fprintf(w, "- %s: %s\n  fix: %s\n", m.File, m.What, m.Fix)
	}
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return "unknown (provision printed none)"
	}
	return s
}
