// Package costhistory is the cost history action: from a scheduled
// workflow it collects the GPU workflow's attempts of a date range into an
// evidence directory and reports what their pods cost, as a JSON file and as
// the job summary. From the same attempts it writes the reputation record the
// lane's provision reads, so the lane learns from the repository's own history.
package costhistory

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/history"
)

// Run is the cost-history action: it reads its inputs and writes its outputs and job
// summary through io. actions/cost-history/main.go and the image's multi-call binary
// (role cost-history) both hand it to actionkit.
func Run(ctx context.Context, io *actionio.IO) error {
	rng, err := history.ParseRangeOr(io.Input("since"), io.Input("until"), history.LastFullDays(time.Now(), history.DefaultDays))
	if err != nil {
		return err
	}
	gh, err := actionkit.GitHub(ctx, io, "")
	if err != nil {
		return err
	}
	// The evidence goes to the runner's temp dir by default; any directory
	// given must lie there, in HOME (/github/home, as action.yml advises) or
	// in the workspace, never elsewhere on the runner.
	def := filepath.Join(or(io.Getenv(actionio.RootTemp), os.TempDir()), "runpod-gpu-history")
	dir, err := io.PathInput("directory", def, actionio.RootTemp, "HOME", actionio.RootWorkspace)
	if err != nil {
		return err
	}
	res, err := history.Run(ctx, history.Options{Dir: dir, Range: &rng, GitHub: gh, Workflow: io.Input("workflow"), Logf: io.Infof})
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

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
