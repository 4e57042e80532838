package lanes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// badInput is one bad value given to a real binary: the action (or the
// command line) refuses it, naming the input, the value and what is
// expected, before anything is created.
type badInput struct {
	name    string
	action  string // authorize, provision, gate, watchdog, cleanup, serverless or cli
	inputs  map[string]string
	args    []string // cli only
	wantOut string   // in the log: the input (flag), the value as %q and the expected form
	// warnOnly: cleanup warns and carries on (it must delete whatever the
	// inputs say), reading the value as not given.
	warnOnly bool
}

// Values that would start a workflow command in the log, or markup in a
// check run's Markdown.
const (
	newlineCommand = "x\n::warning::forged"
	markupLink     = "[click](https://evil.example/steal)"
)

func badInputCases() []badInput {
	q := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `"`, `\"`), "\n", `\n`) }
	return []badInput{
		// gate's display inputs, before the check run is written.
		{name: "gate pod-id with markup", action: "gate", inputs: map[string]string{"pod-id": "<img src=x onerror=alert(1)>"},
			wantOut: `input pod-id = "<img src=x onerror=alert(1)>": want a RunPod pod id`},
		{name: "gate gpu-type with markup", action: "gate", inputs: map[string]string{"gpu-type": markupLink},
			wantOut: `input gpu-type = "` + markupLink + `": want an exact RunPod GPU id`},
		{name: "gate image with markup", action: "gate", inputs: map[string]string{"image": "![x](https://evil.example/x.png)"},
			wantOut: `input image = "![x](https://evil.example/x.png)": want an image reference`},
		{name: "gate tier with a newline", action: "gate", inputs: map[string]string{"tier": newlineCommand},
			wantOut: `input tier = "` + q(newlineCommand) + `": want a tier name of 1-32 lower-case letters`},
		{name: "gate price 1e308", action: "gate", inputs: map[string]string{"price-per-hour": "1e308"},
			wantOut: `input price-per-hour = "1e308": want a positive number of USD per hour up to 1000`},
		{name: "gate price -1", action: "gate", inputs: map[string]string{"price-per-hour": "-1"},
			wantOut: `input price-per-hour = "-1": want a positive number of USD per hour up to 1000`},
		{name: "gate price NaN", action: "gate", inputs: map[string]string{"price-per-hour": "NaN"},
			wantOut: `input price-per-hour = "NaN": want a positive number of USD per hour up to 1000`},
		{name: "gate check-name with a newline", action: "gate", inputs: map[string]string{"check-name": "CI GPU gate" + newlineCommand},
			wantOut: `input check-name = "CI GPU gate` + q(newlineCommand) + `": want a name of 1 to 100 characters on one line`},

		// The watchdog's, before it watches (or deletes) anything.
		{name: "watchdog pod-id with markup", action: "watchdog", inputs: map[string]string{"pod-id": "**pod**"},
			wantOut: `input pod-id = "**pod**": want a RunPod pod id`},
		{name: "watchdog gpu-type with markup", action: "watchdog", inputs: map[string]string{"gpu-type": "<b>A4000</b>"},
			wantOut: `input gpu-type = "<b>A4000</b>": want an exact RunPod GPU id`},
		{name: "watchdog tier with a newline", action: "watchdog", inputs: map[string]string{"tier": newlineCommand},
			wantOut: `input tier = "` + q(newlineCommand) + `": want a tier`},
		{name: "watchdog price 1e308", action: "watchdog", inputs: map[string]string{"price-per-hour": "1e308"},
			wantOut: `input price-per-hour = "1e308": want a positive number of USD per hour up to 1000`},
		{name: "watchdog price -1", action: "watchdog", inputs: map[string]string{"price-per-hour": "-1"},
			wantOut: `input price-per-hour = "-1": want`},
		{name: "watchdog price NaN", action: "watchdog", inputs: map[string]string{"price-per-hour": "NaN"},
			wantOut: `input price-per-hour = "NaN": want`},
		{name: "watchdog empty runner label", action: "watchdog", inputs: map[string]string{"runner-label": ""},
			wantOut: `input runner-label: provision's runner-label output (the input is required with pod-id`},
		{name: "watchdog job name with a newline", action: "watchdog", inputs: map[string]string{"gpu-job-name": "GPU tests" + newlineCommand},
			wantOut: `input gpu-job-name = "GPU tests` + q(newlineCommand) + `": want a name of 1 to 100 characters on one line`},
		{name: "watchdog runner label with a newline", action: "watchdog", inputs: map[string]string{"runner-label": "runpod-gpu-1" + newlineCommand},
			wantOut: `input runner-label = "runpod-gpu-1` + q(newlineCommand) + `": want a runner label`},

		// cleanup warns and deletes anyway: its deletion never depends on a report input.
		{name: "cleanup gpu-type with markup", action: "cleanup", inputs: map[string]string{"gpu-type": markupLink}, warnOnly: true,
			wantOut: `::warning::input gpu-type = "` + markupLink + `": want an exact RunPod GPU id`},
		{name: "cleanup tier with a newline", action: "cleanup", inputs: map[string]string{"tier": newlineCommand}, warnOnly: true,
			wantOut: `::warning::input tier = "` + q(newlineCommand) + `": want a tier`},
		{name: "cleanup price 1e308", action: "cleanup", inputs: map[string]string{"price-per-hour": "1e308"}, warnOnly: true,
			wantOut: `::warning::input price-per-hour = "1e308": want a positive number of USD per hour up to 1000`},
		{name: "cleanup price NaN", action: "cleanup", inputs: map[string]string{"price-per-hour": "NaN"}, warnOnly: true,
			wantOut: `::warning::input price-per-hour = "NaN": want`},
		{name: "cleanup pod-id with markup", action: "cleanup", inputs: map[string]string{"pod-id": "<i>x</i>"}, warnOnly: true,
			wantOut: `::warning::input pod-id = "<i>x</i>": want a RunPod pod id`},

		// authorize, before its in-progress gate.
		{name: "authorize expected-head-sha with a newline", action: "authorize", inputs: map[string]string{"expected-head-sha": harness.HeadSHA + newlineCommand},
			wantOut: `input expected-head-sha = "` + harness.HeadSHA + q(newlineCommand) + `": want a full commit SHA`},
		{name: "authorize fork-approval-label with a newline", action: "authorize", inputs: map[string]string{"fork-approval-label": "gpu-approved" + newlineCommand},
			wantOut: `input fork-approval-label = "gpu-approved` + q(newlineCommand) + `": want a GitHub label name`},
		{name: "authorize check-name with a newline", action: "authorize", inputs: map[string]string{"check-name": "CI GPU gate" + newlineCommand},
			wantOut: `input check-name = "CI GPU gate` + q(newlineCommand) + `": want a name`},
		{name: "authorize lane-ref with a newline", action: "authorize", inputs: map[string]string{"lane-ref": cloud.Repository + "/" + cloud.Workflow + "@refs/heads/main" + newlineCommand},
			wantOut: `input lane-ref = "` + cloud.Repository + "/" + cloud.Workflow + `@refs/heads/main` + q(newlineCommand) + `": want a ref`},

		// provision, before any pod.
		{name: "provision check-name with a newline", action: "provision", inputs: map[string]string{"check-name": "CI GPU gate" + newlineCommand},
			wantOut: `input check-name = "CI GPU gate` + q(newlineCommand) + `": want a name`},
		{name: "provision config-path outside the workspace", action: "provision", inputs: map[string]string{"config-path": "../../etc/runpod-gpu.yml"},
			wantOut: `input config-path = "../../etc/runpod-gpu.yml": want a path inside`},
		{name: "provision spend record from the future, billing unreadable", action: "provision",
			inputs:  map[string]string{"config-path": ".github/budget.yml", "spend-record": "spend.json"},
			wantOut: `the spend record's writtenAt 2999-01-01T00:00:00Z is after now`},

		// The Serverless action, before any template, endpoint or job.
		{name: "serverless tested-ref ../x", action: "serverless", inputs: map[string]string{"tested-ref": "../x"},
			wantOut: `input tested-ref = "../x": want a full commit SHA`},
		{name: "serverless ledger-branch main;id", action: "serverless", inputs: map[string]string{"ledger-branch": "main;id"},
			wantOut: `input ledger-branch = "main;id": want a branch name`},
		{name: "serverless ledger-artifact ../x", action: "serverless", inputs: map[string]string{"ledger-artifact": "../x"},
			wantOut: `input ledger-artifact = "../x": want an artifact name`},

		// The command line's up, before any pod.
		{name: "cli up --image $(id)", action: "cli", args: []string{"--image", "$(id)"}, wantOut: `--image "$(id)": want an image reference`},
		{name: "cli up --image with a newline", action: "cli", args: []string{"--image", "runpod/pytorch\nid"}, wantOut: `--image "runpod/pytorch\nid": want an image reference`},
		{name: "cli up --image http://", action: "cli", args: []string{"--image", "http://evil.example/image"}, wantOut: `--image "http://evil.example/image": want an image reference`},
	}
}

// budgetConfig is fastConfig with a daily budget, for the spend-record case.
const budgetConfig = fastConfig + "budget:\n  daily_usd: 5\n"

// futureSpendRecord is dated in the year 2999: with billing unreadable it
// would otherwise read as "$0 spent today".
const futureSpendRecord = `{"version": 1, "writtenAt": "2999-01-01T00:00:00Z", "since": "2999-01-01", "until": "2999-01-01", "days": []}`

// TestBadInputsSpendNothing: every bad value of the audit's battery, through
// the real binaries on the simulated cloud, is answered with an error (or,
// in cleanup, a warning) naming the input, the value and what is expected,
// and the cloud's create counters do not move: no pod created, no Serverless
// template, endpoint or job, no check run.
func TestBadInputsSpendNothing(t *testing.T) {
	// Billing cannot be read (403): the budget has only the spend record.
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{ServerErrors: []runpodsim.ServerErrorFault{
		{Match: runpodsim.Match{Route: "GET /v2/billing/pods"}, When: runpodsim.Trigger{Every: 1}, Status: 403},
		{Match: runpodsim.Match{Route: "GET /v2/billing/serverless"}, When: runpodsim.Trigger{Every: 1}, Status: 403},
	}}, fastConfig)
	assert.NilError(t, os.WriteFile(filepath.Join(s.Workspace, ".github", "budget.yml"), []byte(budgetConfig), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(s.Workspace, "spend.json"), []byte(futureSpendRecord), 0o644))
	pr := s.openPR(t)
	sls := startServerlessWith(t, slsOptions{worker: runpodsim.JobWorkerFunc(func(context.Context, runpodsim.WorkerJob) runpodsim.WorkerResult {
		return runpodsim.WorkerResult{Error: "a job of a bad input ran"}
	})})
	cli := newCLIWorld(t, runpodsim.Faults{})

	for _, tc := range badInputCases() {
		t.Run(tc.name, func(t *testing.T) {
			checksBefore := s.GitHub.CountRequests("POST", "/repos/*/*/check-runs")
			var code int
			var out string
			switch tc.action {
			case "cli":
				var stdout, stderr string
				code, stdout, stderr = cli.run(t, append([]string{"up", "--name", "dev", "--gpus", "L4:1", "--poll", "100ms"}, tc.args...)...)
				out = stdout + stderr
			case "serverless":
				st := sls.step(t, junitCommand)
				for k, v := range tc.inputs {
					st.Inputs[k] = v
				}
				res := harness.RunStep(t, st)
				code, out = res.ExitCode, res.Stdout
			default:
				st := s.badInputStep(t, pr, tc.action)
				for k, v := range tc.inputs {
					st.Inputs[k] = v
				}
				res := harness.RunStep(t, st)
				code, out = res.ExitCode, res.Stdout
			}

			assert.Check(t, is.Contains(out, tc.wantOut))
			if tc.warnOnly {
				assert.Check(t, is.Equal(code, 0), out)
			} else {
				assert.Check(t, code != 0, "a bad input is an error:\n%s", out)
			}
			assert.Check(t, !strings.Contains(out, "\n::warning::forged"), "the value's newline reached the log as a workflow command")
			assert.Check(t, is.Len(s.RunPod.Pods(), 0), "no pod created")
			assert.Check(t, is.Len(cli.sim.Pods(), 0), "no developer pod created")
			assert.Check(t, is.Equal(s.GitHub.CountRequests("POST", "/repos/*/*/check-runs"), checksBefore), "no check run created")
			assert.Check(t, is.Len(sls.RunPod.Jobs(), 0), "no Serverless job submitted")
			assert.Check(t, is.Len(sls.RunPod.ServerlessResources(), 0), "no Serverless template or endpoint created")
		})
	}
}

// badInputStep is a step of action whose inputs are all good: each case
// spoils one.
func (s *simulated) badInputStep(t *testing.T, pr int, action string) harness.Step {
	t.Helper()
	switch action {
	case "authorize":
		st := s.AuthorizeStep(pr, "bob")
		st.Inputs["in-progress-gate"] = "true"
		return st
	case "provision":
		return s.ProvisionStep(pr)
	case "gate":
		return s.GateStep(pr, map[string]string{"kind": "paid", "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA,
			"gpu-job-result": "success", "pod-id": "pod7h9k2m4n6p", "gpu-type": harness.A4000, "tier": "ampere", "price-per-hour": "0.25"})
	case "watchdog":
		env := s.RunnerEnv()
		return harness.Step{Action: "watchdog", Workspace: s.Workspace, Env: env, Inputs: map[string]string{
			"runpod-api-key": cloud.RunPodKey, "runpod-api-url": s.RunPodURL, "github-token": cloud.GitHubToken,
			"pr-number": harness.Itoa(pr), "expected-head-sha": harness.HeadSHA, "poll-seconds": "1",
			"pod-id": "pod7h9k2m4n6p", "runner-label": "runpod-gpu-9100-1-c1-0123456789abcdef", "price-per-hour": "0.25",
			"gpu-type": harness.A4000, "tier": "ampere"}}
	case "cleanup":
		st := s.cleanupStep(s.RunID, map[string]string{"price-per-hour": "0.25", "gpu-type": harness.A4000, "tier": "ampere"})
		st.Env["RUNNER_TEMP"] = t.TempDir()
		return st
	}
	t.Fatalf("no step for action %q", action)
	return harness.Step{}
}
