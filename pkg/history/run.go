package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/redact"
)

// The report files Run writes into the evidence directory.
const (
	JSONReportFile     = "report.json"
	MarkdownReportFile = "report.md"
)

// Options configure Run.
type Options struct {
	// Dir is the evidence directory; it must lie outside any git working tree.
	Dir string
	// Range selects the attempts by their run's creation day and is collected
	// first; nil regenerates the report from every saved attempt, offline.
	Range *Range
	// GitHub is the client collection uses; required with a Range.
	GitHub GitHub
	// Workflow names the workflow files whose runs are collected, comma- or
	// space-separated ("runpod-gpu.yml, runpod-gpu-serverless.yml": the pod
	// lane's and the Serverless lane's callers in one report); "" means DefaultWorkflow.
	Workflow string
	Logf     func(format string, args ...any)
	// Billing reads RunPod's billing for the Range, to reconcile the
	// estimates with (billing.go); nil keeps the billing saved earlier.
	Billing BillingSource
	// DriftThreshold is the share of an estimate its bill may drift by
	// before the report warns; 0 means DefaultDriftThreshold.
	DriftThreshold float64
	// Clock dates the billing read; nil means the wall clock.
	Clock clock.Clock
	// Tiers are the configuration's reviewed tiers the right-sizing advice
	// weighs (TierOffers); nil reports the recorded usage without advice.
	Tiers []TierOffer
}

// Result is what Run produced.
type Result struct {
	Report       *Report
	JSONPath     string
	MarkdownPath string
	// ReputationPath is the reputation record (ReputationFile) built from
	// the report's pods, for provision's reputation-file input.
	ReputationPath string
	Reputation     ReputationStats
	Collected      *CollectStats // nil for an offline regeneration
	// BillingWarnings are the reconciliation's warnings (drifts above the
	// threshold, untracked charges, an unreadable bill), for ::warning::.
	BillingWarnings []string
	// SpendPath is the budget's fallback record of the report's days
	// (budget.RecordFile), for the lanes' spend-record input.
	SpendPath string
}

// Run is the cost history's one entry point: with a range it collects the
// range's evidence and reports on it; without one it reports on the saved
// evidence with no network access. The reports are written into the evidence
// directory as JSONReportFile and MarkdownReportFile.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Dir == "" {
		return Result{}, errors.New("evidence directory: empty; want a directory outside the repository")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return Result{}, fmt.Errorf("evidence directory %q: %w", o.Dir, err)
	}
	if err := CheckOutsideRepository(dir); err != nil {
		return Result{}, err
	}
	workflows, err := workflowFiles(o.Workflow)
	if err != nil {
		return Result{}, err
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}

	var res Result
	if o.Range != nil {
		var all CollectStats
		for _, workflow := range workflows {
			stats, err := collect(ctx, o, dir, workflow, logf)
			if err != nil {
				return Result{}, err
			}
			all.add(stats)
		}
		res.Collected = &all
	} else if keys, err := (store{dir: dir}).keys(); err != nil || len(keys) == 0 {
		return Result{}, fmt.Errorf("%w in %s: collect with a date range first", ErrNoEvidence, dir)
	}
	if o.Range != nil && o.Billing != nil {
		if err := saveBilling(ctx, o, dir, logf); err != nil {
			return Result{}, err
		}
	}
	if err := writeReports(&res, dir, o, logf); err != nil {
		return Result{}, err
	}
	return res, nil
}

// collect collects o.Range's evidence into dir.
func collect(ctx context.Context, o Options, dir, workflow string, logf func(string, ...any)) (CollectStats, error) {
	if o.GitHub == nil {
		return CollectStats{}, errors.New("collecting needs a GitHub client")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return CollectStats{}, fmt.Errorf("evidence directory: %w", err)
	}
	c := &Collector{GitHub: o.GitHub, Dir: dir, Workflow: workflow, Logf: logf}
	stats, err := c.Collect(ctx, *o.Range)
	if err != nil {
		return CollectStats{}, err
	}
	logf("collected %s: %d runs, %d attempts (%d already saved, %d now complete, %d to retry next time), %d searches",
		o.Range, stats.Runs, stats.Attempts, stats.Cached, stats.Complete, stats.Incomplete, stats.Searches)
	return stats, nil
}

// writeReports summarizes dir's evidence within rng and writes the JSON and
// Markdown reports and the reputation record, saying in res where.
func writeReports(res *Result, dir string, o Options, logf func(string, ...any)) error {
	report, err := Summarize(dir, o.Range)
	if err != nil {
		return err
	}
	if res.BillingWarnings, err = reconcileSaved(report, dir, o); err != nil {
		return err
	}
	report.RightSizing = report.rightSize(o.Tiers)
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	res.Report = report
	res.JSONPath, res.MarkdownPath = filepath.Join(dir, JSONReportFile), filepath.Join(dir, MarkdownReportFile)
	if err := writePublished(res.JSONPath, append(data, '\n')); err != nil {
		return err
	}
	if err := writePublished(res.MarkdownPath, []byte(report.Markdown())); err != nil {
		return err
	}
	rec, stats := report.Reputation()
	data, err = rec.Marshal()
	if err != nil {
		return err
	}
	res.ReputationPath, res.Reputation = filepath.Join(dir, ReputationFile), stats
	if err := writePublished(res.ReputationPath, append(data, '\n')); err != nil {
		return err
	}
	logf("reputation: %d observation(s) written to %s; left out: %d pod(s) with no known data center (older records), "+
		"%d whose attempt showed nothing about the host, %d undated", stats.Observations, ReputationFile, stats.NoDataCenter, stats.NoVerdict, stats.Undated)
	return writeSpend(res, dir, report, o)
}

// workflowFileRE is a workflow file name, which goes into an API path.
var workflowFileRE = lazyre.Regexp{Pattern: `^[A-Za-z0-9_.-]+\.ya?ml$`}

// workflowFiles splits a comma- or space-separated list of workflow files.
func workflowFiles(list string) ([]string, error) {
	names := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
	if len(names) == 0 {
		return []string{DefaultWorkflow}, nil
	}
	var out []string
	for _, n := range names {
		w, err := workflowFile(n)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out, nil
}

// workflowFile accepts a workflow file name, or its path in the repository.
func workflowFile(name string) (string, error) {
	if name == "" {
		return DefaultWorkflow, nil
	}
	base := strings.TrimPrefix(name, ".github/workflows/")
	if !workflowFileRE.MatchString(base) {
		return "", fmt.Errorf("workflow %q: want a workflow file name such as %s", name, DefaultWorkflow)
	}
	return base, nil
}

// CheckOutsideRepository refuses a directory inside a git working tree: the
// evidence holds whole workflow logs, which must not end up in a commit.
func CheckOutsideRepository(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return fmt.Errorf("%w: %s is inside %s; choose a directory outside it, e.g. under the temp directory", ErrInsideRepository, abs, d)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("evidence directory %s: %w", abs, err)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// writePublished writes a file the workflow publishes (the reports, the
// reputation and spend records, uploaded as artifacts and shown as the job
// summary) with every key redact.Published finds removed: the evidence is
// written by jobs that print what the tests printed.
func writePublished(path string, data []byte) error {
	return writeAtomic(path, []byte(redact.Published(string(data))))
}

// writeAtomic replaces a file so that a reader never sees half of it.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
