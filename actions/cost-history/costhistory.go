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
	"github.com/org/runpod-gpu/pkg/runpod"
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
	// The RunPod key is optional: without it the report is the estimates alone.
	RunPodAPIKey   string              `input:"runpod-api-key,secret" default:"" desc:"RunPod API key that may read billing. With it the report sets the estimates beside RunPod's billing for the same days (per day and per run: estimated, billed, drift) and names every billed pod or endpoint the lane never recorded. Store it as a secret."`
	RunPodAPIURL   actionio.ServiceURL `input:"runpod-api-url" default:"https://api.runpod.io" desc:"RunPod API base URL (override for proxies and tests): https, without user info (http only on a loopback host)."`
	DriftThreshold int                 `input:"drift-threshold-percent" default:"5" min:"1" max:"1000" desc:"Drift between estimate and bill, in percent of the estimate, above which a run or day is a warning (::warning::); drifts under a cent never are."`
	// The reviewed tiers the right-sizing advice weighs.
	ConfigPath string `input:"config-path" default:"" path:"GITHUB_WORKSPACE" desc:"Path of the runpod-gpu configuration (its reviewed gpu_tiers), inside the workspace. With it, and the GPU jobs' recorded usage (artifact runpod-gpu-usage-<run>-<attempt>), the report names per tier the smallest reviewed tier that would have held the tests and a cheaper one; tier memory and prices come from RunPod's catalog (runpod-api-key). Empty: the recorded usage without advice."`

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
	opts := history.Options{Dir: dir, Range: &rng, GitHub: gh, Workflow: in.Workflow, Logf: io.Infof, DriftThreshold: float64(in.DriftThreshold) / 100}
	var rp *runpod.Client
	if in.RunPodAPIKey != "" {
		if rp, _, err = actionkit.RunPod(io, actionkit.RunPodInputs{APIKey: in.RunPodAPIKey, APIURL: in.RunPodAPIURL}); err != nil {
			return err
		}
		opts.Billing = rp
	}
	if opts.Tiers, err = tiers(ctx, io, in, rp); err != nil {
		return err
	}
	res, err := history.Run(ctx, opts)
	if err != nil {
		return err
	}
	for _, w := range res.BillingWarnings {
		io.Warningf("%s", w)
	}
	if err := actionio.WriteOutputs[outputs](io, outputs{ReportJSON: res.JSONPath, ReportMarkdown: res.MarkdownPath,
		ReputationFile: res.ReputationPath, SpendFile: res.SpendPath}); err != nil {
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
	// SpendFile is the budget's fallback record of the same days, which the
	// lanes read when RunPod's billing cannot be (their spend-record input).
	SpendFile string `output:"spend-file"`
}
