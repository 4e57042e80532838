package gate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/ghapi"
)

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
