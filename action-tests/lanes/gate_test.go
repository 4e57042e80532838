package lanes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// gateMovedMergeSHA is the PR's merge ref after its base moved.
var gateMovedMergeSHA = strings.Repeat("c", 40)

// gateChecks reads the gates on head back through the simulated GitHub's API, oldest first.
func (s *simulated) gateChecks(t *testing.T, head string) []*github.CheckRun {
	t.Helper()
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: s.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName})
	assert.NilError(t, err)
	runs, err := gh.ListCheckRunsForRef(context.Background(), head, gatecheck.DefaultCheckName, 0)
	assert.NilError(t, err)
	return runs
}

// gateRunOK runs a step that must succeed and leak nothing.
func gateRunOK(t *testing.T, s *simulated, st harness.Step) harness.StepResult {
	t.Helper()
	res := harness.RunStep(t, st)
	assert.Assert(t, res.ExitCode == 0, "%s exited %d:\n%s", st.Action, res.ExitCode, res.Stdout)
	assertNoSecrets(t, s, res)
	return res
}

// gatePaidTrigger runs one trigger of the paid path for pr as a workflow would:
// authorize, provision at the authorized tested ref, then the gate from the
// GPU job's success and the accepted pod's outputs.
func gatePaidTrigger(t *testing.T, s *simulated, pr int) (authorized, provisioned, published harness.StepResult) {
	t.Helper()
	authorized = gateRunOK(t, s, s.AuthorizeStep(pr, "bob"))
	assert.Assert(t, is.Equal(authorized.Outputs["decision"], "run"), authorized.Stdout)
	pst := s.ProvisionStep(pr)
	pst.Inputs["tested-ref"] = authorized.Outputs["tested-ref"]
	provisioned = gateRunOK(t, s, pst)
	assert.Assert(t, is.Equal(provisioned.Outputs["paid-path"], "paid"))
	p := provisioned.Outputs
	published = gateRunOK(t, s, s.GateStep(pr, map[string]string{
		"decision": authorized.Outputs["decision"], "gpu-job-result": "success",
		"head-sha": authorized.Outputs["head-sha"], "tested-ref": authorized.Outputs["tested-ref"],
		"pod-id": p["pod-id"], "gpu-type": p["gpu-type"], "tier": p["tier"], "price-per-hour": p["price-per-hour"],
		"startup-seconds": p["startup-seconds"], "attempts": p["attempts"],
	}))
	return authorized, provisioned, published
}

func TestGatePublishesEachKind(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	assert.NilError(t, os.WriteFile(filepath.Join(s.Workspace, "cost.md"), []byte("## Cost\n\n| stage | seconds |\n"), 0o644))
	pod := map[string]string{"pod-id": "pod7h9k2m4n6p", "gpu-type": harness.A4000, "tier": "ampere", "price-per-hour": "0.25",
		"startup-seconds": "41", "attempts": "2", "cost-report-path": "cost.md"}
	earlier := "https://github.com/org/gpu-project/runs/1"
	tests := []struct {
		kind           gatecheck.Kind
		inputs         map[string]string
		withPod        bool
		wantConclusion string
		wantSummary    []string
		wantText       string
	}{
		{kind: gatecheck.KindPaid, withPod: true, wantConclusion: "success",
			wantSummary: []string{"`pod7h9k2m4n6p`", harness.A4000, "| ampere | 0.25 | 41 s | 2 |"}, wantText: "## Cost"},
		{kind: gatecheck.KindReused, inputs: map[string]string{"reused-check-url": earlier}, wantConclusion: "success",
			wantSummary: []string{"No pod was paid for", "Evidence: " + earlier}},
		{kind: gatecheck.KindFailed, withPod: true, inputs: map[string]string{"reason": "tests exited 1"}, wantConclusion: "failure",
			wantSummary: []string{"Reason: tests exited 1", "`pod7h9k2m4n6p`", "gh run rerun 9100 --failed"}, wantText: "## Cost"},
		{kind: gatecheck.KindNotRequired, inputs: map[string]string{"reason": "PR #1 changes 1 file(s), none under the configured GPU paths"},
			wantConclusion: "success", wantSummary: []string{"none under the configured GPU paths"}},
		{kind: gatecheck.KindSkipped, inputs: map[string]string{"reason": "the PR is a draft"}, wantConclusion: "neutral",
			wantSummary: []string{"the PR is a draft"}},
	}
	outputs := map[gatecheck.Kind]map[string]string{}
	for _, tc := range tests {
		inputs := map[string]string{"kind": string(tc.kind), "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA}
		for k, v := range tc.inputs {
			inputs[k] = v
		}
		if tc.withPod {
			for k, v := range pod {
				inputs[k] = v
			}
		}
		res := gateRunOK(t, s, s.GateStep(pr, inputs))
		assert.Check(t, is.Equal(res.Outputs["kind"], string(tc.kind)))
		assert.Check(t, is.Contains(res.Summary, "Published **"+string(tc.kind)+"**"))
		outputs[tc.kind] = res.Outputs
	}

	checks := s.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, len(tests)))
	byExternalID := map[string]*github.CheckRun{}
	for _, c := range checks {
		byExternalID[c.GetExternalID()] = c
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			want, err := gatecheck.FormatExternalID(harness.MergeSHA, tc.kind)
			assert.NilError(t, err)
			c := byExternalID[want]
			assert.Assert(t, c != nil, "no gate with external_id %s", want)
			assert.Check(t, is.Equal(c.GetName(), gatecheck.DefaultCheckName))
			assert.Check(t, is.Equal(c.GetStatus(), "completed"))
			assert.Check(t, is.Equal(c.GetConclusion(), tc.wantConclusion))
			assert.Check(t, is.Equal(c.GetDetailsURL(), "https://github.com/"+cloud.Repository+"/actions/runs/9100/attempts/1"))
			assert.Check(t, is.Equal(outputs[tc.kind]["external-id"], want))
			assert.Check(t, is.Equal(outputs[tc.kind]["check-run-url"], c.GetHTMLURL()))
			assert.Check(t, is.Equal(outputs[tc.kind]["check-run-id"], harness.Itoa(int(c.GetID()))))
			for _, part := range tc.wantSummary {
				assert.Check(t, is.Contains(c.GetOutput().GetSummary(), part))
			}
			if tc.kind != gatecheck.KindFailed {
				assert.Check(t, !strings.Contains(c.GetOutput().GetSummary(), "gh run rerun"), "only a failure asks for a re-run")
			}
			assert.Check(t, is.Contains(c.GetOutput().GetText(), tc.wantText))
		})
	}
}

func TestGateRefusesBadRequests(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	tests := []struct {
		name    string
		inputs  map[string]string
		wantErr string
	}{
		{name: "local gates belong to the relay", inputs: map[string]string{"kind": "local"}, wantErr: `input kind = "local"`},
		{name: "paid without its pod", inputs: map[string]string{"decision": "run", "gpu-job-result": "success"}, wantErr: "input pod-id is empty"},
		{name: "no decision", inputs: map[string]string{"gpu-job-result": "success"}, wantErr: "input decision is empty"},
		{name: "bad price", inputs: map[string]string{"kind": "paid", "pod-id": "p1", "price-per-hour": "NaN"}, wantErr: `input price-per-hour = "NaN"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inputs := map[string]string{"head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			res := harness.RunStep(t, s.GateStep(pr, inputs))
			assert.Check(t, is.Equal(res.ExitCode, 1))
			assert.Check(t, is.Contains(res.Stdout, tc.wantErr))
		})
	}
	assert.Check(t, is.Len(s.gateChecks(t, harness.HeadSHA), 0), "nothing published")
}

func TestGateDuplicateTriggerPaysOnce(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	_, _, first := gatePaidTrigger(t, s, pr)
	wantPaid, err := gatecheck.FormatExternalID(harness.MergeSHA, gatecheck.KindPaid)
	assert.NilError(t, err)
	assert.Equal(t, first.Outputs["external-id"], wantPaid)

	// The same trigger delivered again, in another workflow run.
	s.RunID = 9101
	again := gateRunOK(t, s, s.AuthorizeStep(pr, "bob"))
	assert.Equal(t, again.Outputs["decision"], "reuse", again.Stdout)
	assert.Equal(t, again.Outputs["reused-check-url"], first.Outputs["check-run-url"])
	assert.Check(t, is.Contains(again.Summary, "**Decision: reuse**"))
	// Had the workflow gone on to provision, the provisioner's own lookup would also pay nothing.
	provisioned := gateRunOK(t, s, s.ProvisionStep(pr))
	assert.Check(t, is.Equal(provisioned.Outputs["paid-path"], "reused"))
	reused := gateRunOK(t, s, s.GateStep(pr, map[string]string{
		"decision": again.Outputs["decision"], "gpu-job-result": "skipped", "reused-check-url": again.Outputs["reused-check-url"],
		"head-sha": again.Outputs["head-sha"], "tested-ref": again.Outputs["tested-ref"],
	}))

	assert.Check(t, is.Len(s.RunPod.Pods(), 1), "exactly one pod was ever created")
	checks := s.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, 2))
	wantReused, err := gatecheck.FormatExternalID(harness.MergeSHA, gatecheck.KindReused)
	assert.NilError(t, err)
	var second *github.CheckRun
	for _, c := range checks {
		if c.GetExternalID() == wantReused {
			second = c
		}
	}
	assert.Assert(t, second != nil, "no %s gate", wantReused)
	assert.Check(t, is.Equal(reused.Outputs["external-id"], wantReused))
	assert.Check(t, is.Equal(second.GetConclusion(), "success"))
	assert.Check(t, is.Contains(second.GetOutput().GetSummary(), "Evidence: "+first.Outputs["check-run-url"]), "the reused gate links the paid one")
	assert.Check(t, is.Contains(second.GetDetailsURL(), "/actions/runs/9101/"))
}

func TestGateMovedBasePaysAgain(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	gatePaidTrigger(t, s, pr)
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
		p.BaseSHA, p.MergeCommitSHA = strings.Repeat("e", 40), gateMovedMergeSHA
	}))

	s.RunID = 9101
	authorized, _, published := gatePaidTrigger(t, s, pr)
	assert.Check(t, is.Equal(authorized.Outputs["tested-ref"], gateMovedMergeSHA))
	assert.Check(t, is.Len(s.RunPod.Pods(), 2), "a new merge ref is new code: it pays again")
	want, err := gatecheck.FormatExternalID(gateMovedMergeSHA, gatecheck.KindPaid)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(published.Outputs["external-id"], want))
	assert.Check(t, is.Len(s.gateChecks(t, harness.HeadSHA), 2))
}

func TestGateLabelledPRPublishesNothing(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	labelled, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature",
		MergeCommitSHA: harness.MergeSHA, Labels: []string{gatecheck.LocalLabel}})
	assert.NilError(t, err)
	authorized := gateRunOK(t, s, s.AuthorizeStep(labelled, "bob"))
	assert.Check(t, is.Equal(authorized.Outputs["decision"], "skip"))
	assert.Check(t, is.Equal(authorized.Outputs["gate-kind"], ""), "a labelled PR's skip publishes nothing")
	assert.Check(t, is.Contains(authorized.Outputs["reason"], "labelled gpu-validated-locally"))
	res := gateRunOK(t, s, s.GateStep(labelled, map[string]string{
		"decision": "skip", "gate-kind": authorized.Outputs["gate-kind"], "head-sha": authorized.Outputs["head-sha"],
	}))
	assert.Check(t, is.Equal(res.Outputs["kind"], ""))
	assert.Check(t, is.Contains(res.Summary, "No gate published"))

	// The label added after authorize said run: the gate re-reads it and still publishes nothing.
	s.RunID = 9101
	late := strings.Repeat("f", 40)
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: late, HeadRef: "late", MergeCommitSHA: harness.MergeSHA})
	assert.NilError(t, err)
	st := s.AuthorizeStep(pr, "bob")
	st.Inputs["expected-head-sha"] = late
	assert.Equal(t, gateRunOK(t, s, st).Outputs["decision"], "run")
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) { p.Labels = []string{gatecheck.LocalLabel} }))
	res = gateRunOK(t, s, s.GateStep(pr, map[string]string{
		"decision": "run", "gpu-job-result": "success", "head-sha": late, "tested-ref": harness.MergeSHA, "pod-id": "pod7h9k2m4n6p",
	}))
	assert.Check(t, is.Equal(res.Outputs["check-run-url"], ""))
	assert.Check(t, is.Contains(res.Stdout, "the local relay publishes the gate"))

	assert.Check(t, is.Len(s.gateChecks(t, harness.HeadSHA), 0))
	assert.Check(t, is.Len(s.gateChecks(t, late), 0))
}

func TestAuthorizeRefusesEndToEnd(t *testing.T) {
	tests := []struct {
		name    string
		spec    githubsim.PullRequestSpec
		actor   string
		wantLog string
	}{
		{name: "fork", spec: githubsim.PullRequestSpec{Author: "alice", HeadRepo: "mallory/gpu-project"}, actor: "bob",
			wantLog: `comes from mallory/gpu-project, not from ` + cloud.Repository + `: a fork PR runs on a paid GPU only at a head an admin or maintainer approved`},
		{name: "author with write", spec: githubsim.PullRequestSpec{Author: "carol"}, actor: "bob", wantLog: `PR author carol has role "write"`},
		{name: "actor with read", spec: githubsim.PullRequestSpec{Author: "alice"}, actor: "erin", wantLog: `triggering actor erin has role "read"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig)
			spec := tc.spec
			spec.HeadSHA, spec.HeadRef, spec.MergeCommitSHA = harness.HeadSHA, "feature", harness.MergeSHA
			pr, err := s.GitHub.AddPullRequest(cloud.Repository, spec)
			assert.NilError(t, err)
			res := harness.RunStep(t, s.AuthorizeStep(pr, tc.actor))
			assert.Check(t, is.Equal(res.ExitCode, 1))
			assert.Check(t, is.Contains(res.Stdout, "::error::GPU run refused: "))
			assert.Check(t, is.Contains(res.Stdout, tc.wantLog))
			assert.Check(t, is.Contains(res.Summary, "**Refused**"))
			assert.Check(t, is.Equal(res.Outputs["decision"], ""), "no decision a later job could act on")
			assert.Check(t, is.Len(s.RunPod.Requests(), 0), "nothing spent: RunPod never called")
			assert.Check(t, is.Len(s.RunPod.Pods(), 0))
			assertNoSecrets(t, s, res)
		})
	}
}

func TestAuthorizeManualValidation(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	st := s.AuthorizeStep(0, "bob")
	st.Inputs["dispatch-sha"] = harness.MergeSHA
	res := gateRunOK(t, s, st)
	assert.Check(t, is.Equal(res.Outputs["decision"], "run"))
	assert.Check(t, is.Equal(res.Outputs["tested-ref"], harness.MergeSHA))
	assert.Check(t, is.Equal(res.Outputs["head-sha"], harness.MergeSHA))

	st.Inputs["dispatch-sha"] = "main"
	res = harness.RunStep(t, st)
	assert.Check(t, is.Equal(res.ExitCode, 1))
	assert.Check(t, is.Contains(res.Stdout, `manual validation needs a resolved commit SHA, got "main"`))
}

// A change touching none of the configured GPU paths spends nothing: authorize
// skips with the not-required gate, and the gate action publishes it.
func TestGateDocsOnlyChangeIsNotRequired(t *testing.T) {
	s := startCloud(t, testMarket(testHost("h1", harness.A4000, true)), runpodsim.Faults{}, fastConfig+"gpu_paths: [\"src/**\", \"CMakeLists.txt\"]\n")
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "docs",
		MergeCommitSHA: harness.MergeSHA, Files: []string{"README.md", "docs/guide.md"}})
	assert.NilError(t, err)
	authorized := gateRunOK(t, s, s.AuthorizeStep(pr, "bob"))
	assert.Check(t, is.Equal(authorized.Outputs["decision"], "skip"))
	assert.Check(t, is.Equal(authorized.Outputs["gate-kind"], string(gatecheck.KindNotRequired)))
	assert.Check(t, is.Contains(authorized.Outputs["reason"], "none under the configured GPU paths"))
	res := gateRunOK(t, s, s.GateStep(pr, map[string]string{
		"decision": "skip", "gate-kind": authorized.Outputs["gate-kind"], "head-sha": authorized.Outputs["head-sha"],
		"tested-ref": authorized.Outputs["tested-ref"],
	}))
	assert.Check(t, is.Equal(res.Outputs["kind"], string(gatecheck.KindNotRequired)))
	checks := s.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, 1))
	assert.Check(t, is.Equal(checks[0].GetConclusion(), "success"))
	assert.Check(t, is.Equal(checks[0].GetExternalID(), gatecheck.ExternalIDPrefix+harness.MergeSHA+":not-required"))
	assert.Check(t, is.Len(s.RunPod.Pods(), 0), "nothing was spent")

	// The same PR touching a GPU path runs.
	assert.NilError(t, s.GitHub.UpdatePullRequest(cloud.Repository, pr, func(p *githubsim.PullRequestSpec) {
		p.Files = []string{"docs/guide.md", "src/kernels/reduce.cu"}
	}))
	s.RunID++
	assert.Check(t, is.Equal(gateRunOK(t, s, s.AuthorizeStep(pr, "bob")).Outputs["decision"], "run"))
}

// The gate reads price-per-hour by cost's one rule, as cleanup and the
// watchdog do: 0 is an unknown price, never a free GPU, and a negative price
// is refused like any malformed one.
func TestGatePriceByTheOneRule(t *testing.T) {
	s := startCloud(t, testMarket(), runpodsim.Faults{}, fastConfig)
	pr := s.openPR(t)
	inputs := map[string]string{"kind": "paid", "head-sha": harness.HeadSHA, "tested-ref": harness.MergeSHA, "pod-id": "pod7h9k2m4n6p",
		"gpu-type": harness.A4000, "tier": "ampere", "price-per-hour": "0", "startup-seconds": "41", "attempts": "1"}
	gateRunOK(t, s, s.GateStep(pr, inputs))
	checks := s.gateChecks(t, harness.HeadSHA)
	assert.Assert(t, is.Len(checks, 1))
	assert.Check(t, is.Contains(checks[0].GetOutput().GetSummary(), "| ampere | unknown | 41 s | 1 |"))

	inputs["price-per-hour"] = "-0.25"
	res := harness.RunStep(t, s.GateStep(pr, inputs))
	assert.Check(t, is.Equal(res.ExitCode, 1))
	assert.Check(t, is.Contains(res.Stdout, `input price-per-hour = "-0.25": want a positive number of USD per hour up to 1000, or 0 or empty when unknown`))
}
