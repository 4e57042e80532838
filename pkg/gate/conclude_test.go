package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/money"
)

// fakePublisher serves one PR and records the check runs it is asked to create.
type fakePublisher struct {
	pr      *github.PullRequest
	readErr error
	reads   int
	created []ghapi.CheckRunInput
}

func (f *fakePublisher) GetPullRequest(context.Context, int) (*github.PullRequest, error) {
	f.reads++
	return f.pr, f.readErr
}

func (f *fakePublisher) CreateCheckRun(_ context.Context, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	f.created = append(f.created, in)
	id := int64(500 + len(f.created))
	return &github.CheckRun{ID: github.Int64(id), Name: github.String(in.Name), ExternalID: github.String(in.ExternalID),
		Conclusion: github.String(in.Conclusion), HTMLURL: github.String(fmt.Sprintf("https://github.com/o/r/runs/%d", id))}, nil
}

func TestResolveKind(t *testing.T) {
	tests := []struct {
		name       string
		req        ConcludeRequest
		wantKind   gatecheck.Kind
		wantReason string
		wantErr    string
	}{
		{name: "explicit kind alone", req: ConcludeRequest{Kind: gatecheck.KindNotRequired}, wantKind: gatecheck.KindNotRequired},
		{name: "explicit kind agreeing with the decision", req: ConcludeRequest{Kind: gatecheck.KindFailed, Decision: OutcomeRun, GPUJobResult: JobFailure}, wantKind: gatecheck.KindFailed},
		// Inconsistent inputs: never a success for a run that did not succeed.
		{name: "explicit success beside a failed GPU job", req: ConcludeRequest{Kind: gatecheck.KindNotRequired, Decision: OutcomeRun, GPUJobResult: JobFailure},
			wantErr: `input kind = "not-required": want what decision "run" and gpu-job-result "failure" choose (failed)`},
		{name: "explicit paid beside a cancelled GPU job", req: ConcludeRequest{Kind: gatecheck.KindPaid, GPUJobResult: JobCancelled, Decision: OutcomeRun},
			wantErr: `input kind = "paid": want what decision "run" and gpu-job-result "cancelled" choose (failed)`},
		{name: "explicit paid beside a skip that publishes nothing", req: ConcludeRequest{Kind: gatecheck.KindPaid, Decision: OutcomeSkip},
			wantErr: `choose (no gate)`},
		{name: "explicit kind with a bad decision", req: ConcludeRequest{Kind: gatecheck.KindPaid, Decision: "maybe"}, wantErr: `input decision = "maybe"`},
		{name: "explicit serverless in the pod lane", req: ConcludeRequest{Kind: gatecheck.KindServerless, Lane: LanePod}, wantErr: `input kind = "serverless": want a kind of the pod lane`},
		{name: "explicit paid in the Serverless lane", req: ConcludeRequest{Kind: gatecheck.KindPaid, Lane: LaneServerless}, wantErr: `input kind = "paid": want a kind of the serverless lane`},
		{name: "reuse beside a GPU job that ran", req: ConcludeRequest{Decision: OutcomeReuse, GPUJobResult: JobSuccess},
			wantErr: `input gpu-job-result = "success": want skipped or empty: decision reuse runs no GPU job`},
		{name: "skip beside a GPU job that failed", req: ConcludeRequest{Decision: OutcomeSkip, SkipKind: gatecheck.KindNotRequired, GPUJobResult: JobFailure},
			wantErr: `input gpu-job-result = "failure": want skipped or empty: decision skip runs no GPU job`},
		{name: "explicit local refused", req: ConcludeRequest{Kind: gatecheck.KindLocal}, wantErr: `input kind = "local": want paid, serverless, reused, failed, not-required or skipped (local gates come from the local-gate relay`},
		{name: "explicit unknown refused", req: ConcludeRequest{Kind: "free"}, wantErr: `input kind = "free": want one of paid, reused`},
		{name: "reuse", req: ConcludeRequest{Decision: OutcomeReuse, GPUJobResult: JobSkipped}, wantKind: gatecheck.KindReused, wantReason: "authorize found an earlier passing gate"},
		{name: "skip publishing not-required", req: ConcludeRequest{Decision: OutcomeSkip, SkipKind: gatecheck.KindNotRequired}, wantKind: gatecheck.KindNotRequired},
		{name: "skip publishing nothing", req: ConcludeRequest{Decision: OutcomeSkip}, wantReason: "publishes no gate"},
		{name: "skip with local kind refused", req: ConcludeRequest{Decision: OutcomeSkip, SkipKind: gatecheck.KindLocal}, wantErr: `input gate-kind = "local"`},
		{name: "run succeeded", req: ConcludeRequest{Decision: OutcomeRun, GPUJobResult: JobSuccess}, wantKind: gatecheck.KindPaid, wantReason: "succeeded"},
		{name: "run failed", req: ConcludeRequest{Decision: OutcomeRun, GPUJobResult: JobFailure}, wantKind: gatecheck.KindFailed, wantReason: "failed"},
		{name: "run cancelled fails closed", req: ConcludeRequest{Decision: OutcomeRun, GPUJobResult: JobCancelled}, wantKind: gatecheck.KindFailed, wantReason: "cancelled"},
		{name: "serverless lane succeeded", req: ConcludeRequest{Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobSuccess}, wantKind: gatecheck.KindServerless, wantReason: "Serverless job succeeded"},
		{name: "serverless lane failed", req: ConcludeRequest{Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobFailure}, wantKind: gatecheck.KindFailed},
		{name: "serverless lane skipped is never a reuse", req: ConcludeRequest{Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobSkipped,
			Evidence: gatecheck.Evidence{ReusedCheckURL: "https://github.com/o/r/runs/99"}}, wantKind: gatecheck.KindFailed, wantReason: "never ran the tests"},
		{name: "pod lane named", req: ConcludeRequest{Decision: OutcomeRun, Lane: LanePod, GPUJobResult: JobSuccess}, wantKind: gatecheck.KindPaid},
		{name: "unknown lane refused", req: ConcludeRequest{Decision: OutcomeRun, Lane: "lambda", GPUJobResult: JobSuccess}, wantErr: `input lane = "lambda": want pod or serverless`},
		{name: "explicit serverless", req: ConcludeRequest{Kind: gatecheck.KindServerless}, wantKind: gatecheck.KindServerless},
		{name: "GPU job skipped after provision reused", req: ConcludeRequest{Decision: OutcomeRun, GPUJobResult: JobSkipped,
			Evidence: gatecheck.Evidence{ReusedCheckURL: "https://github.com/o/r/runs/99"}}, wantKind: gatecheck.KindReused, wantReason: "provision found"},
		{name: "GPU job skipped without a runner fails closed", req: ConcludeRequest{Decision: OutcomeRun, GPUJobResult: JobSkipped},
			wantKind: gatecheck.KindFailed, wantReason: "did not hand it a runner"},
		{name: "run without a job result", req: ConcludeRequest{Decision: OutcomeRun}, wantErr: "input gpu-job-result is empty: want the GPU test job's result"},
		{name: "run with an odd job result", req: ConcludeRequest{Decision: OutcomeRun, GPUJobResult: "neutral"}, wantErr: `input gpu-job-result = "neutral": want success, failure, cancelled or skipped`},
		{name: "no decision and no kind", req: ConcludeRequest{GPUJobResult: JobSuccess}, wantErr: "input decision is empty: want run, reuse or skip"},
		{name: "unknown decision", req: ConcludeRequest{Decision: "maybe"}, wantErr: `input decision = "maybe": want run, reuse or skip`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, reason, err := tc.req.ResolveKind()
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				var reqErr *RequestError
				assert.Check(t, errors.As(err, &reqErr), "a bad request is a *RequestError")
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, kind, tc.wantKind)
			assert.Check(t, is.Contains(reason, tc.wantReason))
		})
	}
}

func TestConclude(t *testing.T) {
	pod := &gatecheck.PodEvidence{ID: "pod7h9k2m4n6p", GPU: "NVIDIA RTX A4000", Tier: "ampere", PricePerHour: money.PerHour(0.25), StartupSeconds: 40, Attempts: 1}
	sls := &gatecheck.ServerlessEvidence{PayloadSHA256: payloadSHA, JobID: "job-1", JobStatus: "COMPLETED", GPUPool: "AMPERE_16", CUDAExecuted: true}
	labelled := pullRequest(func(p *github.PullRequest) {
		p.Labels = []*github.Label{{Name: github.String("GPU-Validated-Locally")}}
	})
	tests := []struct {
		name        string
		req         ConcludeRequest
		gh          *fakePublisher
		wantKind    gatecheck.Kind
		wantExtID   string
		wantSummary []string
		wantNothing string // reason when nothing is published
		wantErr     string
		wantReads   int
	}{
		{name: "paid names the pod", req: ConcludeRequest{PRNumber: 7, Decision: OutcomeRun, GPUJobResult: JobSuccess, Evidence: gatecheck.Evidence{Pod: pod}},
			wantKind: gatecheck.KindPaid, wantExtID: gatecheck.ExternalIDPrefix + merge + ":paid", wantSummary: []string{"`pod7h9k2m4n6p`", "| 0.25 |"}, wantReads: 1},
		{name: "failed gives the job result, the detail and the re-run command",
			req:      ConcludeRequest{PRNumber: 7, Decision: OutcomeRun, GPUJobResult: JobFailure, Evidence: gatecheck.Evidence{Pod: pod, Reason: "tests exited 1"}},
			wantKind: gatecheck.KindFailed, wantExtID: gatecheck.ExternalIDPrefix + merge + ":failed",
			wantSummary: []string{"Reason: the GPU test job failed: tests exited 1", "gh run rerun 9100 --failed"}, wantReads: 1},
		{name: "an explicit failed states only the reason given", req: ConcludeRequest{Kind: gatecheck.KindFailed, Evidence: gatecheck.Evidence{Reason: "tests exited 1"}},
			wantKind: gatecheck.KindFailed, wantSummary: []string{"Tested ref: `" + merge + "` (on head `" + head + "`)\n\nReason: tests exited 1\n"}},
		{name: "reused links the earlier gate", req: ConcludeRequest{PRNumber: 7, Decision: OutcomeReuse, Evidence: gatecheck.Evidence{ReusedCheckURL: "https://github.com/o/r/runs/99"}},
			wantKind: gatecheck.KindReused, wantExtID: gatecheck.ExternalIDPrefix + merge + ":reused", wantSummary: []string{"Evidence: https://github.com/o/r/runs/99"}, wantReads: 1},
		{name: "not-required keeps authorize's reason", req: ConcludeRequest{PRNumber: 7, Decision: OutcomeSkip, SkipKind: gatecheck.KindNotRequired,
			Evidence: gatecheck.Evidence{Reason: "PR #7 changes 2 file(s), none under the configured GPU paths"}},
			wantKind: gatecheck.KindNotRequired, wantSummary: []string{"none under the configured GPU paths"}, wantReads: 1},
		{name: "unknown price is shown unknown", req: ConcludeRequest{Kind: gatecheck.KindPaid, Evidence: gatecheck.Evidence{Pod: &gatecheck.PodEvidence{ID: "p", PriceUnknown: true}}},
			wantKind: gatecheck.KindPaid, wantSummary: []string{"| unknown |"}},
		{name: "manual validation does not read a PR", req: ConcludeRequest{Decision: OutcomeRun, GPUJobResult: JobSuccess, Evidence: gatecheck.Evidence{Pod: pod}},
			wantKind: gatecheck.KindPaid},
		{name: "labelled PR gets nothing", req: ConcludeRequest{PRNumber: 7, Decision: OutcomeRun, GPUJobResult: JobSuccess, Evidence: gatecheck.Evidence{Pod: pod}},
			gh: &fakePublisher{pr: labelled}, wantNothing: "labelled gpu-validated-locally: the local relay publishes the gate", wantReads: 1},
		{name: "skip without a kind reads nothing and publishes nothing", req: ConcludeRequest{PRNumber: 7, Decision: OutcomeSkip},
			wantNothing: "publishes no gate"},
		{name: "unreadable PR publishes nothing", req: ConcludeRequest{PRNumber: 7, Kind: gatecheck.KindFailed},
			gh: &fakePublisher{readErr: errors.New("502 Bad Gateway")}, wantErr: "re-read PR #7 for the gpu-validated-locally label (nothing published", wantReads: 1},
		{name: "paid without a pod", req: ConcludeRequest{PRNumber: 7, Decision: OutcomeRun, GPUJobResult: JobSuccess},
			wantErr: "input pod-id is empty: want the accepted pod's id"},
		{name: "reused without the earlier gate", req: ConcludeRequest{Kind: gatecheck.KindReused}, wantErr: "input reused-check-url is empty"},
		{name: "serverless records the payload", req: ConcludeRequest{PRNumber: 7, Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobSuccess, Evidence: gatecheck.Evidence{Serverless: sls}},
			wantKind: gatecheck.KindServerless, wantSummary: []string{"Payload SHA-256: `" + payloadSHA + "`"}, wantReads: 1},
		{name: "serverless failure records the payload", req: ConcludeRequest{Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobFailure,
			Evidence: gatecheck.Evidence{Serverless: &gatecheck.ServerlessEvidence{PayloadSHA256: payloadSHA, JobStatus: "FAILED"}}},
			wantKind: gatecheck.KindFailed, wantSummary: []string{"Reason: the GPU test job failed", "Payload SHA-256: `" + payloadSHA + "`"}},
		{name: "serverless without the payload", req: ConcludeRequest{Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobSuccess},
			wantErr: "input payload-sha256 is empty: want the payload's SHA-256"},
		{name: "serverless with a bad payload sum", req: ConcludeRequest{Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobFailure,
			Evidence: gatecheck.Evidence{Serverless: &gatecheck.ServerlessEvidence{PayloadSHA256: "not-a-sum"}}}, wantErr: `input payload-sha256 = "not-a-sum": want 64 lowercase hex`},
		{name: "serverless without the CUDA proof", req: ConcludeRequest{Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobSuccess,
			Evidence: gatecheck.Evidence{Serverless: &gatecheck.ServerlessEvidence{PayloadSHA256: payloadSHA}}}, wantErr: `input cuda-executed = "false": want true`},
		{name: "a reused gate with a pod", req: ConcludeRequest{Decision: OutcomeReuse, Evidence: gatecheck.Evidence{Pod: pod, ReusedCheckURL: "https://github.com/o/r/runs/99"}},
			wantErr: `input pod-id = "pod7h9k2m4n6p": want empty: a reused gate paid for no pod`},
		{name: "a not-required gate with a pod", req: ConcludeRequest{Decision: OutcomeSkip, SkipKind: gatecheck.KindNotRequired, Evidence: gatecheck.Evidence{Pod: pod}},
			wantErr: `input pod-id = "pod7h9k2m4n6p": want empty: a not-required gate paid for no pod`},
		{name: "a serverless gate with a pod", req: ConcludeRequest{Decision: OutcomeRun, Lane: LaneServerless, GPUJobResult: JobSuccess, Evidence: gatecheck.Evidence{Pod: pod, Serverless: sls}},
			wantErr: `input pod-id = "pod7h9k2m4n6p": want empty: a serverless gate paid for no pod`},
		{name: "a failed gate with both lanes' evidence", req: ConcludeRequest{Decision: OutcomeRun, GPUJobResult: JobFailure, Evidence: gatecheck.Evidence{Pod: pod, Serverless: sls}},
			wantErr: "want empty beside the Serverless job's evidence"},
		{name: "a reused gate with a Serverless job", req: ConcludeRequest{Kind: gatecheck.KindReused, Evidence: gatecheck.Evidence{Serverless: sls, ReusedCheckURL: "https://github.com/o/r/runs/99"}},
			wantErr: `input payload-sha256 = "` + payloadSHA + `": want empty, with job-id: a reused gate ran no Serverless job`},
		{name: "tested ref not a SHA", req: ConcludeRequest{Kind: gatecheck.KindFailed, Evidence: gatecheck.Evidence{TestedRef: "main"}}, wantErr: `input tested-ref = "main": want the full commit SHA`},
		{name: "head not a SHA", req: ConcludeRequest{Kind: gatecheck.KindFailed, Evidence: gatecheck.Evidence{HeadSHA: "HEAD"}}, wantErr: `input head-sha = "HEAD"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gh := tc.gh
			if gh == nil {
				gh = &fakePublisher{pr: pullRequest()}
			}
			req := tc.req
			if req.Evidence.HeadSHA == "" {
				req.Evidence.HeadSHA = head
			}
			if req.Evidence.TestedRef == "" {
				req.Evidence.TestedRef = merge
			}
			req.Evidence.RunID, req.Evidence.RunURL = 9100, "https://github.com/o/r/actions/runs/9100/attempts/1"
			done, err := Conclude(context.Background(), gh, req)
			assert.Check(t, is.Equal(gh.reads, tc.wantReads), "PR reads")
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Check(t, is.Len(gh.created, 0), "nothing published on error")
				return
			}
			assert.NilError(t, err)
			if tc.wantNothing != "" {
				assert.Check(t, is.Len(gh.created, 0))
				assert.Check(t, done.CheckRun == nil && done.Kind == "")
				assert.Check(t, is.Contains(done.Reason, tc.wantNothing))
				return
			}
			assert.Assert(t, is.Len(gh.created, 1))
			in := gh.created[0]
			assert.Equal(t, done.Kind, tc.wantKind)
			assert.Equal(t, in.ExternalID, gatecheck.ExternalIDPrefix+merge+":"+string(tc.wantKind))
			assert.Equal(t, done.CheckRun.GetExternalID(), in.ExternalID)
			assert.Equal(t, in.HeadSHA, head)
			for _, want := range tc.wantSummary {
				assert.Check(t, is.Contains(in.Summary, want))
			}
		})
	}
}

func TestConcludedSummaryGolden(t *testing.T) {
	published := Concluded{Kind: gatecheck.KindReused, Reason: "authorize found an earlier passing gate for this tested ref",
		CheckRun: &github.CheckRun{Name: github.String(gatecheck.DefaultCheckName), HTMLURL: github.String("https://github.com/o/r/runs/501"),
			Conclusion: github.String("success"), ExternalID: github.String(gatecheck.ExternalIDPrefix + merge + ":reused")}}
	nothing := Concluded{Reason: "PR #7 is labelled gpu-validated-locally: the local relay publishes the gate"}
	golden.Assert(t, published.Summary()+"\n"+nothing.Summary(), "conclude-summary.golden")
}

// FuzzResolveKind feeds the gate action's inputs as a workflow could set them:
// whatever they are, a derived gate is never a success for a run whose GPU job
// did not succeed, and never a local gate.
func FuzzResolveKind(f *testing.F) {
	f.Add("", "run", "", "success", "")
	f.Add("", "run", "", "skipped", "https://github.com/o/r/runs/1")
	f.Add("", "skip", "not-required", "", "")
	f.Add("local", "", "", "", "")
	f.Fuzz(func(t *testing.T, kind, decision, skipKind, result, reusedURL string) {
		r := ConcludeRequest{Kind: gatecheck.Kind(kind), Decision: Outcome(decision), SkipKind: gatecheck.Kind(skipKind), GPUJobResult: JobResult(result),
			Evidence: gatecheck.Evidence{ReusedCheckURL: reusedURL}}
		got, _, err := r.ResolveKind()
		if err != nil {
			var reqErr *RequestError
			if !errors.As(err, &reqErr) {
				t.Fatalf("error %v is not a *RequestError", err)
			}
			return
		}
		if got == gatecheck.KindLocal || (got != "" && !got.Known()) {
			t.Fatalf("resolved %q", got)
		}
		if kind == "" && r.Decision == OutcomeRun && r.GPUJobResult != JobSuccess && got == gatecheck.KindPaid {
			t.Fatalf("GPU job %q published as paid", result)
		}
		if kind == "" && r.Decision == OutcomeRun && got == gatecheck.KindReused && reusedURL == "" {
			t.Fatal("reused without the earlier gate")
		}
	})
}

// A paid or failed gate records the tree key only when the pod provably ran
// the keyed lane's image; other kinds keep the key they were given.
func TestConcludeKeepsTheTreeKeyOnlyForTheKeyedImage(t *testing.T) {
	key := &gatecheck.TreeKey{Tree: strings.Repeat("7", 40), Lane: strings.Repeat("1", 64)}
	const img, other = "ghcr.io/o/runner@sha256:aaaa", "ghcr.io/o/runner@sha256:bbbb"
	v1 := func(k gatecheck.Kind) string { return "runpod-gpu-gate:v1:" + merge + ":" + string(k) }
	v2 := func(k gatecheck.Kind) string {
		return "runpod-gpu-gate:v2:" + merge + ":" + string(k) + ":" + key.String()
	}
	note := func(image, lane string) string {
		return `the pod's image "` + image + `" is not the keyed lane's "` + lane + `", so the gate records no tree key`
	}
	tests := []struct {
		name              string
		decision          Outcome
		result            JobResult
		key               *gatecheck.TreeKey
		image, laneImage  string
		wantID, wantNote  string
		wantNoteInSummary bool
	}{
		{name: "paid on the keyed image keeps the key", decision: OutcomeRun, result: JobSuccess, key: key, image: img, laneImage: img, wantID: v2(gatecheck.KindPaid)},
		{name: "paid on another image drops it", decision: OutcomeRun, result: JobSuccess, key: key, image: other, laneImage: img, wantID: v1(gatecheck.KindPaid), wantNote: note(other, img)},
		{name: "paid with no image known drops it", decision: OutcomeRun, result: JobSuccess, key: key, wantID: v1(gatecheck.KindPaid), wantNote: note("", "")},
		{name: "failed on another image drops it", decision: OutcomeRun, result: JobFailure, key: key, image: other, laneImage: img, wantID: v1(gatecheck.KindFailed), wantNote: note(other, img)},
		{name: "reused keeps its key whatever the images", decision: OutcomeReuse, key: key, image: other, laneImage: img, wantID: v2(gatecheck.KindReused)},
		{name: "no key: nothing to drop, no note", decision: OutcomeRun, result: JobSuccess, image: other, laneImage: img, wantID: v1(gatecheck.KindPaid)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePublisher{}
			e := gatecheck.Evidence{HeadSHA: head, TestedRef: merge, Key: tc.key, Pod: &gatecheck.PodEvidence{ID: "pod1", GPU: "RTX A4000"}, ReusedCheckURL: "https://github.com/o/r/runs/9"}
			if tc.decision == OutcomeReuse {
				e.Pod = nil // a reused gate paid for no pod
			}

			c, err := Conclude(context.Background(), f, ConcludeRequest{Decision: tc.decision, GPUJobResult: tc.result, Evidence: e, Image: tc.image, LaneImage: tc.laneImage})

			assert.NilError(t, err)
			assert.Equal(t, len(f.created), 1)
			assert.Equal(t, f.created[0].ExternalID, tc.wantID)
			assert.Equal(t, f.reads, 0, "PR 0: no re-read")
			if tc.wantNote != "" {
				assert.Check(t, strings.HasSuffix(c.Reason, ": "+tc.wantNote), c.Reason)
			} else {
				assert.Check(t, !strings.Contains(c.Reason, "records no tree key"), c.Reason)
			}
		})
	}
}

// updatingPublisher is a fakePublisher that can also complete in-progress gates.
type updatingPublisher struct {
	fakePublisher
	updateErr error
	updated   map[int64]ghapi.CheckRunInput
}

func (u *updatingPublisher) UpdateCheckRun(_ context.Context, id int64, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	if u.updateErr != nil {
		return nil, u.updateErr
	}
	u.updated[id] = in
	return &github.CheckRun{ID: github.Int64(id)}, nil
}

// A PR labelled for the local relay gets no gate from the paid workflow, but
// this lane's in-progress gate is completed as skipped, never left running;
// a completion that fails is an error.
func TestConcludeLocalLabelCompletesTheInProgressGate(t *testing.T) {
	labelled := pullRequest(func(p *github.PullRequest) { p.Labels = []*github.Label{{Name: github.String(gatecheck.LocalLabel)}} })
	const why = "PR #7 is labelled gpu-validated-locally: the local relay publishes the gate"
	req := ConcludeRequest{PRNumber: 7, Decision: OutcomeRun, GPUJobResult: JobSuccess,
		Evidence: gatecheck.Evidence{HeadSHA: head, TestedRef: merge, Pod: &gatecheck.PodEvidence{ID: "pod1"}, CheckRunID: 42}}

	u := &updatingPublisher{fakePublisher: fakePublisher{pr: labelled}, updated: map[int64]ghapi.CheckRunInput{}}
	c, err := Conclude(context.Background(), u, req)
	assert.NilError(t, err)
	assert.Equal(t, c.Reason, why)
	assert.Check(t, c.CheckRun == nil)
	assert.Equal(t, len(u.created), 0)
	assert.Equal(t, u.updated[42].Conclusion, "neutral")
	assert.Equal(t, u.updated[42].ExternalID, "runpod-gpu-gate:v1:"+merge+":skipped")
	assert.Check(t, strings.Contains(u.updated[42].Summary, why))

	u = &updatingPublisher{fakePublisher: fakePublisher{pr: labelled}, updateErr: errors.New("404 Not Found"), updated: map[int64]ghapi.CheckRunInput{}}
	_, err = Conclude(context.Background(), u, req)
	assert.Error(t, err, "publish skipped gate: complete in-progress gate 42: 404 Not Found")
}

// followPublisher is a fakePublisher that lists and updates check runs:
// the PR's head moved to prHead; follow gates wait on both heads.
type followPublisher struct {
	fakePublisher
	runs    map[string][]*github.CheckRun
	updated map[int64]ghapi.CheckRunInput
}

func (f *followPublisher) ListCheckRunsForRef(_ context.Context, ref, _ string, _ int) ([]*github.CheckRun, error) {
	return f.runs[ref], nil
}

func (f *followPublisher) UpdateCheckRun(_ context.Context, id int64, in ghapi.CheckRunInput) (*github.CheckRun, error) {
	f.updated[id] = in
	return &github.CheckRun{ID: github.Int64(id), Status: github.String(in.Status), Conclusion: github.String(in.Conclusion),
		HTMLURL: github.String(fmt.Sprintf("https://github.com/o/r/runs/%d", id)), ExternalID: github.String(in.ExternalID),
		App: &github.App{ID: github.Int64(ourApp)}}, nil
}

// The leader's gate completes the follow gates that wait for its stake, on
// its head and on the PR's head now, with its result; a lane without a stake
// has no followers and completes nothing.
func TestConcludeCompletesFollowers(t *testing.T) {
	pod := &gatecheck.PodEvidence{ID: "pod7h9k2m4n6p", GPU: "NVIDIA RTX A4000"}
	moved := strings.Repeat("e", 40)
	follow := func(id int64, on string, leader int64) *github.CheckRun {
		return &github.CheckRun{ID: github.Int64(id), HeadSHA: github.String(on), Name: github.String(gatecheck.DefaultCheckName), Status: github.String("queued"),
			ExternalID: github.String(fmt.Sprintf("%s%d:%s%s:paid", gatecheck.FollowPrefix, leader, gatecheck.ExternalIDPrefix, merge)),
			App:        &github.App{ID: github.Int64(ourApp)}}
	}
	for _, tc := range []struct {
		name      string
		staked    int64
		result    JobResult
		wantIDs   []int64
		wantConcl string
	}{
		{name: "a passed leader: its followers pass as reused", staked: 40, result: JobSuccess, wantIDs: []int64{41, 42}, wantConcl: "success"},
		{name: "a failed leader: its followers fail", staked: 40, result: JobFailure, wantIDs: []int64{41, 42}, wantConcl: "failure"},
		{name: "no stake: no followers", result: JobSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &followPublisher{fakePublisher: fakePublisher{pr: pullRequest(func(p *github.PullRequest) { p.Head.SHA = github.String(moved) })},
				runs:    map[string][]*github.CheckRun{head: {follow(41, head, 40), follow(43, head, 50)}, moved: {follow(42, moved, 40)}},
				updated: map[int64]ghapi.CheckRunInput{}}
			done, err := Conclude(context.Background(), f, ConcludeRequest{PRNumber: 7, Decision: OutcomeRun, GPUJobResult: tc.result,
				Evidence: gatecheck.Evidence{HeadSHA: head, TestedRef: merge, Pod: pod, CheckRunID: tc.staked}})
			assert.NilError(t, err)
			assert.NilError(t, done.FollowersErr)
			var ids []int64
			for _, r := range done.Followers.Completed {
				ids = append(ids, r.GetID())
				assert.Check(t, is.Equal(f.updated[r.GetID()].Conclusion, tc.wantConcl))
			}
			assert.Check(t, is.DeepEqual(ids, tc.wantIDs))
			_, younger := f.updated[43]
			assert.Check(t, !younger, "a follower of a younger leader is that leader's")
			if len(tc.wantIDs) > 0 {
				assert.Check(t, is.Contains(done.Summary(), "Completed 2 follow gate(s) of lanes that waited for this one"))
			}
		})
	}
}
