package rules

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// repFetchScript is the run script of gpu-lane.yml's reputation fetch.
func repFetchScript(t *testing.T) string {
	t.Helper()
	var l repWorkflow
	assert.NilError(t, yaml.Unmarshal([]byte(metaWorkflowFiles(t)["gpu-lane.yml"]), &l))
	for _, st := range l.Jobs["reputation"].Steps {
		if st.ID == "fetch" {
			return st.Run
		}
	}
	t.Fatal("gpu-lane.yml's reputation job has no step fetch")
	return ""
}

// repStandInGH answers `gh api ENDPOINT [--jq FILTER]` from files named after
// the endpoint's path ("/" as "_"), through jq as gh's --jq does, and records
// every endpoint asked for. An unknown endpoint is GitHub's 404.
const repStandInGH = `#!/bin/bash
set -euo pipefail
[ "$1" = api ] || { echo "gh (stand-in): only api" >&2; exit 2; }
endpoint=$2
filter=.
if [ "${3:-}" = --jq ]; then filter=$4; fi
printf '%s\n' "$endpoint" >> "$FIXTURES/calls"
file="$FIXTURES/$(printf '%s' "${endpoint%%\?*}" | tr '/' '_')"
[ -f "$file" ] || { echo "gh: Not Found (HTTP 404)" >&2; exit 1; }
case $endpoint in
  */zip) cat "$file" ;;
  *) jq -r "$filter" "$file" ;;
esac
`

// repRun is one run of the cost-history workflow as the runs list shows it.
type repRun struct {
	id         int64
	event      string
	branch     string
	onDefault  bool   // its commit is on the default branch
	record     string // its runpod-gpu-reputation artifact's reputation.json; "" for none
	fork       bool
	createdDay int
}

func (r repRun) sha() string { return fmt.Sprintf("%040x", r.id) }

// TestReputationFetchTakesOnlyTheDefaultBranchsRecord plays the reputation
// job's fetch with a stand-in gh over a runs list where the newest runs are
// planted: a pull_request run whose head branch is named like the default
// branch, a dispatch on a tag of that name (a commit not on the branch), a
// push. Only a schedule or dispatch run on the default branch's commits is
// used, and a record larger than a record can be is refused.
func TestReputationFetchTakesOnlyTheDefaultBranchsRecord(t *testing.T) {
	for _, tool := range []string{"bash", "jq", "unzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	const good = `{"version":1,"observations":[{"at":"2026-10-06T09:00:00Z","gpu":"NVIDIA L4","dataCenter":"EU-RO-1","ok":true,"seconds":40}]}`
	forged := func(who string) string { return strings.Replace(good, "EU-RO-1", "FORGED-"+who, 1) }
	planted := []repRun{
		{id: 901, event: "pull_request", branch: "main", onDefault: false, record: forged("pr"), createdDay: 9},
		{id: 902, event: "workflow_dispatch", branch: "main", onDefault: false, record: forged("tag"), createdDay: 8},
		{id: 903, event: "push", branch: "main", onDefault: true, record: forged("push"), createdDay: 7},
		{id: 904, event: "schedule", branch: "main", onDefault: true, record: forged("fork"), fork: true, createdDay: 6},
	}
	tests := []struct {
		name      string
		runs      []repRun
		want      string // the fetched record; "" for none
		wantNote  string
		neverRead []int64 // runs whose artifacts must not even be listed
	}{
		{name: "the scheduled run's record, under newer planted runs",
			runs: append(planted[:len(planted):len(planted)], repRun{id: 905, event: "schedule", branch: "main", onDefault: true, record: good, createdDay: 5}),
			want: good, neverRead: []int64{901, 903, 904}},
		{name: "a dispatch on the default branch",
			runs: append(planted[:len(planted):len(planted)], repRun{id: 906, event: "workflow_dispatch", branch: "main", onDefault: true, record: good, createdDay: 5}),
			want: good},
		{name: "only planted runs", runs: planted, wantNote: "::notice::no runpod-gpu-reputation artifact of cost-history.yml on main yet"},
		{name: "a record larger than a record can be",
			runs:     []repRun{{id: 907, event: "schedule", branch: "main", onDefault: true, record: good + strings.Repeat(" ", 3<<20), createdDay: 5}},
			wantNote: "::warning::artifact 9070 holds no reputation.json of 1 to 2097152 bytes: not used"},
	}
	script := repFetchScript(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fixtures, bin, work := t.TempDir(), t.TempDir(), t.TempDir()
			assert.NilError(t, os.WriteFile(filepath.Join(bin, "gh"), []byte(repStandInGH), 0o755))
			repWriteFixtures(t, fixtures, tc.runs)
			output := filepath.Join(t.TempDir(), "output")
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FIXTURES="+fixtures, "GITHUB_OUTPUT="+output,
				"GITHUB_REPOSITORY=org/app", "DEFAULT_BRANCH=main", "REPUTATION_WORKFLOW=cost-history.yml", "GH_TOKEN=x")
			out, err := cmd.CombinedOutput()
			assert.NilError(t, err, "%s", out)
			recorded, _ := os.ReadFile(output)
			got, readErr := os.ReadFile(filepath.Join(work, "runpod-gpu-reputation", "reputation.json"))
			if tc.want != "" {
				assert.NilError(t, readErr, "%s", out)
				assert.Equal(t, string(got), tc.want)
				assert.Equal(t, string(recorded), "found=true\n")
			} else {
				assert.Check(t, readErr != nil, "a record was fetched: %s", got)
				assert.Check(t, is.Equal(string(recorded), ""))
				assert.Check(t, is.Contains(string(out), tc.wantNote))
			}
			calls, _ := os.ReadFile(filepath.Join(fixtures, "calls"))
			for _, id := range tc.neverRead {
				assert.Check(t, !strings.Contains(string(calls), fmt.Sprintf("runs/%d/artifacts", id)), "run %d's artifacts were listed:\n%s", id, calls)
			}
		})
	}
}

// repWriteFixtures lays out what GitHub would answer about runs.
func repWriteFixtures(t *testing.T, dir string, runs []repRun) {
	t.Helper()
	write := func(endpoint string, v any) {
		var data []byte
		if b, ok := v.([]byte); ok {
			data = b
		} else {
			var err error
			data, err = json.Marshal(v)
			assert.NilError(t, err)
		}
		assert.NilError(t, os.WriteFile(filepath.Join(dir, strings.ReplaceAll(endpoint, "/", "_")), data, 0o644))
	}
	var listed []map[string]any
	for _, r := range runs {
		head := 1
		if r.fork {
			head = 2
		}
		listed = append(listed, map[string]any{"id": r.id, "event": r.event, "head_branch": r.branch, "head_sha": r.sha(),
			"created_at": fmt.Sprintf("2026-10-%02dT06:17:00Z", r.createdDay), "repository": map[string]any{"id": 1},
			"head_repository": map[string]any{"id": head}})
		status := "diverged"
		if r.onDefault {
			status = "ahead"
		}
		write(fmt.Sprintf("repos/org/app/compare/%s...main", r.sha()), map[string]any{"status": status})
		if r.record == "" {
			continue
		}
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.Create("reputation.json")
		assert.NilError(t, err)
		_, err = w.Write([]byte(r.record))
		assert.NilError(t, err)
		assert.NilError(t, zw.Close())
		artifact := r.id * 10
		write(fmt.Sprintf("repos/org/app/actions/runs/%d/artifacts", r.id), map[string]any{"artifacts": []map[string]any{{
			"id": artifact, "expired": false, "size_in_bytes": buf.Len(), "created_at": "2026-10-06T06:30:00Z"}}})
		write(fmt.Sprintf("repos/org/app/actions/artifacts/%d/zip", artifact), buf.Bytes())
	}
	write("repos/org/app/actions/workflows/cost-history.yml/runs", map[string]any{"workflow_runs": listed})
}
