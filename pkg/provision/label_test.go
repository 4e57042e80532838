package provision

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

func TestNewRunnerLabel(t *testing.T) {
	tests := []struct {
		name      string
		prefix    string
		run       int64
		attempt   int
		candidate int
		want      string // pattern of the label; "" when an error is wanted
		wantErr   string
	}{
		{name: "default prefix", prefix: "runpod-gpu", run: 9100, attempt: 1, candidate: 1, want: `^runpod-gpu-9100-1-c1-[0-9a-f]{16}$`},
		{name: "largest run id fits", prefix: "runpod-gpu", run: 1<<63 - 1, attempt: 99, candidate: 8, want: `^runpod-gpu-9223372036854775807-99-c8-[0-9a-f]{16}$`},
		{name: "prefix too long for the runner name", prefix: strings.Repeat("p", 40), run: 9100, attempt: 1, candidate: 1,
			wantErr: "makes a 67-character runner name for run 9100 attempt 1; GitHub allows 64: want a prefix of at most 37 characters"},
		{name: "empty prefix", prefix: "", run: 1, attempt: 1, candidate: 1, wantErr: `runner-label-prefix: got ""`},
		{name: "comma in prefix", prefix: "gpu,self-hosted", run: 1, attempt: 1, candidate: 1, wantErr: `runner-label-prefix: got "gpu,self-hosted"; want letters`},
		{name: "space in prefix", prefix: "gpu lane", run: 1, attempt: 1, candidate: 1, wantErr: "want letters, digits"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bool{}
			for i := 0; i < 64; i++ {
				label, err := NewRunnerLabel(tc.prefix, tc.run, tc.attempt, tc.candidate)
				if tc.wantErr != "" {
					assert.ErrorContains(t, err, tc.wantErr)
					return
				}
				assert.NilError(t, err)
				assert.Check(t, is.Regexp(tc.want, label))
				assert.Check(t, len(label) <= MaxRunnerNameLen, "%d characters", len(label))
				assert.Check(t, !seen[label], "label %s drawn twice: the nonce must differ on every call", label)
				seen[label] = true
			}
		})
	}
}

// A failing random source never yields a guessable label.
func TestNewRunnerLabelWithoutRandomnessFails(t *testing.T) {
	old := randRead
	t.Cleanup(func() { randRead = old })
	randRead = func([]byte) (int, error) { return 0, errors.New("entropy unavailable") }
	_, err := NewRunnerLabel("runpod-gpu", 1, 1, 1)
	assert.ErrorContains(t, err, "refusing a guessable label")
}

// Every candidate of a run gets its own nonce, so no two runners share a label.
func TestEveryCandidateHasItsOwnNonce(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
	res, err := s.run(t)
	assert.NilError(t, err)
	var names []string
	for _, r := range s.cloud.GitHub.Runners() {
		names = append(names, r.Name)
	}
	assert.Assert(t, res.Accepted != nil)
	assert.Check(t, is.Regexp(`^runpod-gpu-7001-1-c2-[0-9a-f]{16}$`, res.Accepted.RunnerLabel))
	assert.DeepEqual(t, names, []string{res.Accepted.RunnerLabel})
}

// A runner that is busy when it comes online runs someone else's job: the
// lane's GPU job is only queued after acceptance. The pod is deleted and the
// run stops without trying another candidate.
func TestRunnerBusyAtAcceptanceIsRejected(t *testing.T) {
	old := randRead
	t.Cleanup(func() { randRead = old })
	// A leaked nonce: the attacker's job asks for exactly the label provision will mint.
	nonce := bytes.Repeat([]byte{0xab}, NonceBytes)
	randRead = func(b []byte) (int, error) { return io.ReadFull(bytes.NewReader(nonce), b) }
	const leaked = "runpod-gpu-7001-1-c1-abababababababab"

	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000), host("h2", a5000))}, nil)
	foreign, err := s.cloud.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: ".github/workflows/fork-pr.yml",
		Event: "pull_request", Jobs: []githubsim.JobSpec{{Name: "grab", Labels: []string{leaked},
			Steps: []githubsim.StepSpec{{Name: "mine", Duration: 1 << 40}}}}})
	assert.NilError(t, err)

	res, err := s.run(t)
	assert.Check(t, errors.Is(err, ErrRunnerTaken), "%v", err)
	assert.Check(t, is.ErrorContains(err, "runner "+leaked+" was already busy with a job"))
	assert.Check(t, res.Accepted == nil)
	assert.DeepEqual(t, outcomes(res), []string{"live-1 RTX A4000 rejected"})
	assert.Check(t, is.Len(s.livePods(t), 0), "the taken pod is deleted, and no other is created")
	jobs, err := s.cloud.GitHub.Jobs(cloud.Repository, foreign, 0)
	assert.NilError(t, err)
	assert.Equal(t, jobs[0].RunnerName, leaked, "the foreign job did take the runner")
}

// TestLabelPrefixAtGitHubsLimit: a label of exactly 64 characters is allowed;
// one more is refused, naming the length and the longest prefix that fits.
func TestLabelPrefixAtGitHubsLimit(t *testing.T) {
	// "-9100-1-c1-" and the 16-hex nonce are 27 characters: a 37-character prefix makes 64.
	assert.NilError(t, CheckLabelPrefix(strings.Repeat("p", 37), 9100, 1, 1))
	label, err := NewRunnerLabel(strings.Repeat("p", 37), 9100, 1, 1)
	assert.NilError(t, err)
	assert.Check(t, is.Len(label, MaxRunnerNameLen))

	err = CheckLabelPrefix(strings.Repeat("p", 38), 9100, 1, 1)
	assert.Check(t, is.Error(err, `runner-label-prefix: "`+strings.Repeat("p", 38)+
		`" makes a 65-character runner name for run 9100 attempt 1; GitHub allows 64: want a prefix of at most 37 characters`))
}

// A run checks its longest label before anything is created: the last
// candidate number it can reach (after the candidates of earlier runs of its
// lane, CandidateBase) decides, here 100, one digit more than the first.
func TestRunRefusesAPrefixItsLastCandidateCannotFit(t *testing.T) {
	for _, tt := range []struct {
		prefix  int // length
		wantErr string
	}{
		// "-7001-1-c100-" and the 16-hex nonce are 29 characters.
		{prefix: 35},
		{prefix: 36, wantErr: "makes a 65-character runner name for run 7001 attempt 1; GitHub allows 64: want a prefix of at most 35 characters"},
	} {
		t.Run(strconv.Itoa(tt.prefix), func(t *testing.T) {
			s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000) // 2 attempts
			s.req.LabelPrefix, s.req.CandidateBase = strings.Repeat("p", tt.prefix), 98

			_, err := s.run(t)

			if tt.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, is.ErrorContains(err, tt.wantErr))
			assert.Check(t, is.Equal(countRoute(s, "POST /v2/pods"), 0), "nothing created")
		})
	}
}

// A plan is numbered after the candidates of its lane's earlier runs, so
// each pod name and label is new; with none it keeps plan.Build's numbers.
func TestRenumberFollowsTheLanesEarlierCandidates(t *testing.T) {
	p := plan.Plan{Candidates: []plan.Candidate{{N: 1}, {N: 2}, {N: 3}}}
	numbers := func(p plan.Plan) []int {
		var ns []int
		for _, c := range p.Candidates {
			ns = append(ns, c.N)
		}
		return ns
	}
	assert.Check(t, is.DeepEqual(numbers(renumber(p, 0)), []int{1, 2, 3}))
	assert.Check(t, is.DeepEqual(numbers(renumber(p, 4)), []int{5, 6, 7}))
	assert.Check(t, is.DeepEqual(numbers(p), []int{1, 2, 3}), "the given plan is left as it was")
}
