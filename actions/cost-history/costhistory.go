// Package costhistoryaction is the cost-history action: from a scheduled
// workflow it collects the GPU workflow's attempts of a date range into an
// evidence directory and reports what their pods cost, as a JSON file and as
// the job summary. From the same attempts it writes the reputation record the
// lane's provision reads, so the lane learns from the repository's own history.
// The work is pkg/history's.
package costhistoryaction

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/history"
)

// Action is the cost-history action, as the image's program runs it (role cost-history).
var Action = actionkit.NewAction(run, reflect.TypeFor[outputs]())

// Inputs are the cost-history action's inputs.
type Inputs struct {
	Since string `input:"since" default:"" desc:"First UTC date (YYYY-MM-DD) of runs to collect. Give since and until together; with neither, the report covers the last 7 full days (today excluded), which suits a weekly schedule."`
	Until string `input:"until" default:"" desc:"Last UTC date (YYYY-MM-DD) of runs to collect, inclusive. Default as for since."`
	// Directory's default lies in the runner's temp dir, computed at run time;
	// any directory given must lie there, in HOME or in the workspace.
	Directory string `input:"directory" default:"" desc:"Evidence directory, inside RUNNER_TEMP, HOME or the workspace; it must lie outside any git working tree. Default: $RUNNER_TEMP/runpod-gpu-history. Later steps see it where the runner mounts RUNNER_TEMP into container actions; otherwise use a directory under /github/home."`
	Workflow  string `input:"workflow" default:"runpod-gpu.yml" desc:"File names of the GPU workflows whose runs are collected, comma-separated: the pod lane's caller and the Serverless lane's (runpod-gpu.yml, runpod-gpu-serverless.yml) share one report and one total."`

	actionkit.GitHubInputs `desc.github-token:"Token that reads workflow runs, logs and artifacts (actions read)." desc.app-id:"GitHub App id, to read as an App installation instead of with github-token." desc.app-installation-id:"The App's installation id; required with app-id." desc.app-private-key:"The App's PEM private key; required with app-id."`
}

func run(ctx context.Context, io *actionio.IO, in Inputs) error {
	rng, err := history.ParseRangeOr(in.Since, in.Until, history.LastFullDays(time.Now(), history.DefaultDays))
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, in.GitHubInputs, "")
	if err != nil {
		return err
	}
	def := filepath.Join(cmp.Or(io.Getenv(actionio.RootTemp), os.TempDir()), "runpod-gpu-history")
	dir, err := io.ResolvePath("directory", in.Directory, def, actionio.RootTemp, "HOME", actionio.RootWorkspace)
	if err != nil {
		return err
	}
	res, err := history.Run(ctx, history.Options{Dir: dir, Range: &rng, GitHub: gh, Workflow: in.Workflow, Logf: io.Infof})
	if err != nil {
		return err
	}
	if err := actionio.WriteOutputs[outputs](io, outputs{ReportJSON: res.JSONPath, ReportMarkdown: res.MarkdownPath, ReputationFile: res.ReputationPath}); err != nil {
		return err
	}
	return io.AddSummary(res.Report.Markdown())
}

// outputs are the cost-history action's outputs: where the report was written.
type outputs struct {
	ReportJSON     string `output:"report-json"`
	ReportMarkdown string `output:"report-markdown"`
	// ReputationFile is the reputation record built from the same attempts,
	// which the lane's provision reads (its reputation-file input).
	ReputationFile string `output:"reputation-file"`
}
