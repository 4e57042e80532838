package rules

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// repWorkflow is the part of a workflow the reputation wiring depends on.
type repWorkflow struct {
	Jobs map[string]struct {
		If          string         `yaml:"if"`
		Needs       any            `yaml:"needs"`
		Environment any            `yaml:"environment"`
		Permissions map[string]any `yaml:"permissions"`
		Steps       []struct {
			ID              string            `yaml:"id"`
			Uses            string            `yaml:"uses"`
			Run             string            `yaml:"run"`
			With            map[string]string `yaml:"with"`
			ContinueOnError any               `yaml:"continue-on-error"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// metaReputationProblems checks the reputation loop's wiring: the cost
// history uploads the record under the one name the lane looks for; the lane
// finds it in a job that holds actions: read and contents: read only (no secret, no
// environment), so the job with the RunPod key gains no permission; that job
// is best effort and provision runs whatever became of it; and provision
// reads the file where its download puts it.
func metaReputationProblems(lane, costHistory string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var l, h repWorkflow
	if err := yaml.Unmarshal([]byte(lane), &l); err != nil {
		return []string{"gpu-lane.yml: " + err.Error()}
	}
	if err := yaml.Unmarshal([]byte(costHistory), &h); err != nil {
		return []string{"cost-history.yml: " + err.Error()}
	}

	uploaded := false
	for _, st := range h.Jobs["report"].Steps {
		if strings.HasPrefix(st.Uses, "actions/upload-artifact@") && st.With["name"] == "runpod-gpu-reputation" {
			uploaded = strings.Contains(st.With["path"], "reputation.json")
		}
	}
	if !uploaded {
		add("cost-history.yml: no step uploads reputation.json as the artifact runpod-gpu-reputation")
	}

	rep, ok := l.Jobs["reputation"]
	if !ok {
		return append(problems, "gpu-lane.yml: no reputation job fetches the record")
	}
	if len(rep.Permissions) != 2 || rep.Permissions["actions"] != "read" || rep.Permissions["contents"] != "read" {
		add("gpu-lane.yml: job reputation has permissions %v; want exactly {actions: read, contents: read}", rep.Permissions)
	}
	if rep.Environment != nil {
		add("gpu-lane.yml: job reputation runs in environment %v; it holds no secret and needs none", rep.Environment)
	}
	fetches := false
	for _, st := range rep.Steps {
		if metaReferencesSecret(st.Run) || metaReferencesSecret(fmt.Sprint(st.With)) {
			add("gpu-lane.yml: job reputation step %q reads a secret", st.ID+st.Uses)
		}
		if st.ContinueOnError != true {
			add("gpu-lane.yml: job reputation step %q can fail the lane; want continue-on-error: true (best effort)", st.ID+st.Uses)
		}
		fetches = fetches || strings.Contains(st.Run, "name=runpod-gpu-reputation")
		if strings.Contains(st.Run, "name=runpod-gpu-reputation") && !strings.Contains(st.Run, "actions/workflows/${REPUTATION_WORKFLOW}/runs") {
			add("gpu-lane.yml: job reputation looks for the artifact outside the cost-history workflow's runs; a lane run's artifact (where PR code ran) could be taken")
		}
	}
	if !fetches {
		add("gpu-lane.yml: job reputation does not look up the artifact runpod-gpu-reputation")
	}

	// A job after provision without a status function gets GitHub's implicit
	// success(), which also waits on the best-effort reputation job upstream.
	for name, job := range l.Jobs {
		if !slices.Contains(metaNeeds(metaJob{Needs: job.Needs}), "provision") {
			continue
		}
		if !strings.Contains(job.If, "always()") && !strings.Contains(job.If, "cancelled()") && !strings.Contains(job.If, "failure()") {
			add("gpu-lane.yml: job %s's if %q has no status function: a failed reputation job would skip it", name, job.If)
		}
	}

	prov := l.Jobs["provision"]
	if _, ok := prov.Permissions["actions"]; ok {
		add("gpu-lane.yml: job provision holds actions: %v; the reputation job reads the history, not the job with the RunPod key", prov.Permissions["actions"])
	}
	if !strings.Contains(prov.If, "!cancelled()") {
		add("gpu-lane.yml: provision's if %q waits on the reputation job's success; want !cancelled() && authorize's decision", prov.If)
	}
	dir, file := "", ""
	for _, st := range prov.Steps {
		if strings.HasPrefix(st.Uses, "actions/download-artifact@") {
			dir = st.With["path"]
			if st.ContinueOnError != true {
				add("gpu-lane.yml: provision's download of the record can fail the lane; want continue-on-error: true")
			}
		}
		if st.ID == "provision" {
			file = st.With["reputation-file"]
		}
	}
	if dir == "" || !strings.HasPrefix(file, strings.TrimSuffix(dir, "/")+"/") {
		add("gpu-lane.yml: provision's reputation-file %q is not where its download puts the record (path %q)", file, dir)
	}
	return problems
}

func TestMetaReputationLoopWiring(t *testing.T) {
	files := metaWorkflowFiles(t)
	assert.Check(t, is.Len(metaReputationProblems(files["gpu-lane.yml"], files["cost-history.yml"]), 0))
}

// TestMetaReputationCheckDetectsMistakes: each planted mistake is found.
func TestMetaReputationCheckDetectsMistakes(t *testing.T) {
	files := metaWorkflowFiles(t)
	lane, hist := files["gpu-lane.yml"], files["cost-history.yml"]
	tests := []struct {
		name      string
		lane      string
		hist      string
		wantEntry string
	}{
		{name: "history uploads under another name",
			hist: strings.Replace(hist, "name: runpod-gpu-reputation\n", "name: reputation\n", 1), wantEntry: "no step uploads reputation.json"},
		{name: "fetch job with a write permission",
			lane:      strings.Replace(lane, "actions: read # the latest runpod-gpu-reputation", "actions: write # the latest runpod-gpu-reputation", 1),
			wantEntry: "want exactly {actions: read, contents: read}"},
		{name: "provision given actions: read",
			lane:      strings.Replace(lane, "pull-requests: read # obsolescence checks before each candidate", "pull-requests: read\n      actions: read", 1),
			wantEntry: "job provision holds actions"},
		{name: "provision waits on the fetch",
			lane:      strings.Replace(lane, "!cancelled() && ", "", 1),
			wantEntry: "waits on the reputation job's success"},
		{name: "the file is read elsewhere",
			lane:      strings.Replace(lane, "reputation-file: runpod-gpu-reputation/reputation.json", "reputation-file: reputation.json", 1),
			wantEntry: "is not where its download puts the record"},
		{name: "the GPU job skipped when the fetch job fails",
			lane:      strings.Replace(lane, "if: ${{ !cancelled() && needs.provision.result == 'success'", "if: ${{ needs.provision.result == 'success'", 1),
			wantEntry: "has no status function"},
		{name: "any run's artifact, a lane run's included",
			lane:      strings.Replace(lane, "actions/workflows/${REPUTATION_WORKFLOW}/runs", "actions/runs", 1),
			wantEntry: "outside the cost-history workflow's runs"},
		{name: "a fetch step that can fail the lane",
			lane:      strings.Replace(lane, "        id: fetch\n        continue-on-error: true\n", "        id: fetch\n", 1),
			wantEntry: "can fail the lane"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, h := lane, hist
			if tc.lane != "" {
				assert.Assert(t, tc.lane != lane, "the mistake was not planted")
				l = tc.lane
			}
			if tc.hist != "" {
				assert.Assert(t, tc.hist != hist, "the mistake was not planted")
				h = tc.hist
			}
			got := strings.Join(metaReputationProblems(l, h), "\n")
			assert.Check(t, is.Contains(got, tc.wantEntry))
		})
	}
}
