package history

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/wire"
)

// t0 is when the synthetic runs of the unit tests start.
var t0 = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

// savedAttempt is synthetic saved evidence of one attempt.
type savedAttempt struct {
	rec       AttemptRecord
	logs      map[string]string // archive files; nil saves no logs (a failed download)
	jobs      []JobInfo         // the attempt's jobs; nil saves laneJobs()
	artifacts []cost.Artifact
}

// Archive file names of the lane's jobs, as GitHub names them.
const (
	provisionLog = "0_" + JobProvision + ".txt"
	gpuLog       = "1_GPU tests.txt"
	cleanupLog   = "2_" + JobCleanup + ".txt"
	gateLog      = "3_" + JobGate + ".txt"
)

// laneJobs are the jobs of one attempt of gpu-lane.yml: the GPU job on the
// pod's runner, the others on hosted runners.
func laneJobs() []JobInfo {
	hosted := func(id int64, name string) JobInfo {
		return JobInfo{ID: id, Name: name, Labels: []string{"ubuntu-latest"}, RunnerName: "GitHub Actions 1", Steps: []string{"Set up job"}}
	}
	return []JobInfo{hosted(1, JobAuthorize), hosted(2, JobProvision), hosted(3, JobWatchdog),
		{ID: 4, Name: "GPU tests", Labels: []string{"runpod-gpu-1-1-c1"}, RunnerName: "runpod-gpu-1-1-c1", Steps: []string{"Set up job", DefaultTestStep}},
		hosted(5, JobGate), hosted(6, JobCleanup)}
}

// completedAttempt is the record of a completed attempt with final downloads.
func completedAttempt(runID int64, attempt int, event string, created time.Time) AttemptRecord {
	return AttemptRecord{
		Repository: "org/app", Workflow: ".github/workflows/" + DefaultWorkflow, RunID: runID, Attempt: attempt,
		Event: event, HeadSHA: strings.Repeat("a", 40), PullRequests: []int{}, CreatedAt: created, StartedAt: created,
		Status: "completed", Conclusion: "success", URL: fmt.Sprintf("https://github.com/org/app/actions/runs/%d/attempts/%d", runID, attempt),
		Logs: Download{State: StateComplete}, Jobs: Download{State: StateComplete}, ArtifactList: Download{State: StateComplete},
	}
}

// writeSaved writes attempts into an evidence directory as a collection would.
func writeSaved(t testing.TB, dir string, attempts ...savedAttempt) {
	t.Helper()
	st := store{dir: dir}
	for _, a := range attempts {
		rec := a.rec
		jobs := a.jobs
		if jobs == nil {
			jobs = laneJobs()
		}
		// Jobs without times ran the attempt's first six hours.
		jobs = append([]JobInfo(nil), jobs...)
		for i := range jobs {
			if jobs[i].StartedAt.IsZero() {
				jobs[i].StartedAt, jobs[i].CompletedAt = rec.CreatedAt, rec.CreatedAt.Add(6*time.Hour)
			}
		}
		if rec.Jobs.State == StateComplete {
			data, err := json.Marshal(jobs)
			assert.NilError(t, err)
			assert.NilError(t, st.writeFile(rec.Key(), jobsFile, data))
		}
		// The lane's cleanup job (the Serverless lane's job) uploads the cost
		// artifacts, an hour into its run, and seals them in its log.
		uploader := JobInfo{ID: 6, Name: JobCleanup, StartedAt: rec.CreatedAt}
		if i := slices.IndexFunc(jobs, func(j JobInfo) bool {
			return laneName(j.Name) && (strings.HasSuffix(j.Name, JobCleanup) || strings.HasSuffix(j.Name, JobServerless))
		}); i >= 0 {
			uploader = jobs[i]
		}
		var seals []string
		for i, art := range a.artifacts {
			body, err := json.Marshal(art)
			assert.NilError(t, err)
			f := ArtifactFile{ID: int64(1000*rec.RunID) + int64(i), Name: cost.JobArtifactName(rec.RunID, rec.Attempt, uploader.ID),
				CreatedAt: uploader.StartedAt.Add(time.Hour), Download: Download{State: StateComplete}}
			assert.NilError(t, st.writeFile(rec.Key(), f.fileName(), zipOf(t, map[string]string{cost.ArtifactFileName: string(body)})))
			rec.Artifacts = append(rec.Artifacts, f)
			seals = append(seals, cost.SealLine(body).Format())
		}
		if a.logs != nil {
			logs := maps.Clone(a.logs)
			if len(seals) > 0 {
				logs["99_"+strings.ReplaceAll(uploader.Name, "/", "")+".txt"] = logText(rec.CreatedAt.Add(time.Hour), seals...)
			}
			assert.NilError(t, st.writeFile(rec.Key(), logsFile, zipOf(t, logs)))
		} else if rec.Logs.State == StateComplete {
			rec.Logs = Download{State: StateFailed, Error: "HTTP 502 Bad Gateway"}
		}
		assert.NilError(t, st.save(rec))
	}
}

// zipOf builds an archive of files, in name order.
func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		assert.NilError(t, err)
		_, err = w.Write([]byte(files[n]))
		assert.NilError(t, err)
	}
	assert.NilError(t, zw.Close())
	return buf.Bytes()
}

// logText stamps lines as GitHub does, one second apart from start.
func logText(start time.Time, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(start.Add(time.Duration(i)*time.Second).Format("2006-01-02T15:04:05.0000000Z") + " " + l + "\n")
	}
	return b.String()
}

func price(perHour float64) cost.Price { return cost.KnownPrice(money.PerHour(perHour), "v2 cost") }

func window(start time.Time, seconds int) cost.Window {
	return cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(start.Add(time.Duration(seconds) * time.Second))}
}

// acceptedReport is a cleanup report of an accepted pod.
func acceptedReport(podID, gpu string, perHour float64, start time.Time, seconds int, rejected ...cost.Attempt) cost.Report {
	return cost.Report{PodID: podID, GPU: gpu, Tier: "full", Price: price(perHour), Window: window(start, seconds), Rejected: rejected}
}

func rejectedAttempt(n int, podID, gpu string, perHour float64, seconds int64) cost.Attempt {
	return cost.Attempt{Number: n, Candidate: fmt.Sprintf("live-%d", n), GPU: gpu, PodID: podID, Price: price(perHour),
		Outcome: cost.OutcomeRejected, Reason: "SMOKE FAIL", Seconds: cost.KnownSeconds(seconds)}
}

func acceptedAttempt(n int, podID, gpu string, perHour float64, startup int64) cost.Attempt {
	return cost.Attempt{Number: n, Candidate: fmt.Sprintf("live-%d", n), GPU: gpu, PodID: podID, Price: price(perHour),
		Outcome: cost.OutcomeAccepted, Seconds: cost.KnownSeconds(startup)}
}

func artifactOf(runID int64, attempt int, trigger cost.Trigger, ref string, r cost.Report) cost.Artifact {
	return cost.Artifact{Run: cost.Run{Repository: "org/app", ID: runID, Attempt: attempt, TestedRef: ref, Trigger: trigger, PRNumber: 1},
		Action: "cleanup", Report: r}
}
