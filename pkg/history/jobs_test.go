package history

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
)

func TestJobTrust(t *testing.T) {
	hosted := func(name string) JobInfo {
		return JobInfo{Name: name, Labels: []string{"ubuntu-latest"}, RunnerName: "GitHub Actions 3"}
	}
	onPod := func(name string) JobInfo {
		return JobInfo{Name: name, Labels: []string{"runpod-gpu-9-1-c1"}, RunnerName: "runpod-gpu-9-1-c1"}
	}
	tests := []struct {
		name    string
		jobs    []JobInfo
		archive string // a job name as the logs archive spells it
		want    bool
	}{
		{name: "a lane job on a hosted runner", jobs: laneJobs(), archive: JobCleanup, want: true},
		{name: "a called lane job, without the slash", jobs: []JobInfo{hosted("gpu / " + JobProvision)}, archive: "gpu  " + JobProvision, want: true},
		{name: "a called lane job, slash replaced", jobs: []JobInfo{hosted("gpu / " + JobProvision)}, archive: "gpu _ " + JobProvision, want: true},
		{name: "GitHub's suffix for a second file of one name", jobs: []JobInfo{hosted(JobWatchdog)}, archive: JobWatchdog + " (1)", want: true},
		{name: "the GPU job", jobs: laneJobs(), archive: "GPU tests"},
		{name: "a lane name on the pod's runner", jobs: []JobInfo{onPod(JobWatchdog)}, archive: JobWatchdog},
		{name: "a lane name with the test step", jobs: []JobInfo{{Name: JobCleanup, Labels: []string{"gpu-box"}, Steps: []string{DefaultTestStep}}}, archive: JobCleanup},
		{name: "a lane name that a pod job shares", jobs: []JobInfo{hosted(JobWatchdog), onPod(JobWatchdog)}, archive: JobWatchdog},
		{name: "a job that is not the lane's", jobs: []JobInfo{hosted("lint")}, archive: "lint"},
		{name: "a name that only ends like a lane job", jobs: []JobInfo{hosted("NotWatchdog")}, archive: "NotWatchdog"},
		{name: "a job the list does not have", jobs: laneJobs(), archive: "Provision a GPU 2"},
		{name: "no jobs listed", archive: JobProvision},
		{name: "an archive file of no job", jobs: laneJobs(), archive: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, newJobTrust(tc.jobs).trusts(tc.archive), tc.want)
		})
	}
}

// A cost artifact counts only when its name claims one of the attempt's lane
// jobs that was running when the artifact was created: any job of the run
// can upload an artifact of any name, the GPU job's pull-request code
// included, and the artifact itself records no uploader.
func TestLaneArtifactTrustsOnlyTheLaneJobsUploads(t *testing.T) {
	k := AttemptKey{RunID: 9, Attempt: 2}
	jobs := laneJobs() // ids 1-6: the GPU job is 4, cleanup 6
	jobs = append(jobs, JobInfo{ID: 7, Name: "Lint", Labels: []string{"ubuntu-latest"}, RunnerName: "GitHub Actions 9"})
	for i := range jobs {
		jobs[i].StartedAt, jobs[i].CompletedAt = t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i+1)*time.Minute)
	}
	cleanup := jobs[5]
	inCleanup := cleanup.StartedAt.Add(30 * time.Second)
	tests := []struct {
		name    string
		file    ArtifactFile
		jobs    []JobInfo
		wantWhy string // "" means counted
	}{
		{name: "the cleanup job's upload", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 6), CreatedAt: inCleanup}},
		{name: "at the very start and end of the job", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 6), CreatedAt: cleanup.CompletedAt}},
		{name: "a name without a job", file: ArtifactFile{Name: cost.ArtifactName(9, 2), CreatedAt: inCleanup},
			wantWhy: "its name claims no job of this attempt"},
		{name: "the GPU job claims itself", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 4), CreatedAt: jobs[3].StartedAt},
			wantWhy: "job 4 (GPU tests) is not one of the lane's own jobs"},
		{name: "another job of the run", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 7), CreatedAt: jobs[6].StartedAt},
			wantWhy: "job 7 (Lint) is not one of the lane's own jobs"},
		{name: "a job of another attempt", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 77), CreatedAt: inCleanup},
			wantWhy: "job 77 is not a job of this attempt"},
		{name: "another attempt's name", file: ArtifactFile{Name: cost.JobArtifactName(9, 1, 6), CreatedAt: inCleanup},
			wantWhy: "its name claims no job of this attempt"},
		{name: "claims cleanup, created while the GPU job ran", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 6), CreatedAt: jobs[3].StartedAt},
			wantWhy: "while job 6 (" + JobCleanup + ") ran from"},
		{name: "claims cleanup, created after it ended", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 6), CreatedAt: cleanup.CompletedAt.Add(time.Second)},
			wantWhy: "while job 6 (" + JobCleanup + ") ran from"},
		{name: "evidence of an earlier version", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 6)},
			wantWhy: "the evidence does not say when it was uploaded"},
		{name: "a lane name on the pod's runner", file: ArtifactFile{Name: cost.JobArtifactName(9, 2, 8), CreatedAt: inCleanup},
			jobs:    []JobInfo{{ID: 8, Name: JobCleanup, RunnerName: "runpod-gpu-9-2-c1", StartedAt: t0, CompletedAt: t0.Add(time.Hour)}},
			wantWhy: "is not one of the lane's own jobs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js := jobs
			if tc.jobs != nil {
				js = tc.jobs
			}
			why := laneArtifact(tc.file, k, js)
			if tc.wantWhy == "" {
				assert.Equal(t, why, "")
				return
			}
			assert.Check(t, is.Contains(why, tc.wantWhy))
		})
	}
}

// A forged cost artifact (a pricey pod the GPU job's code made up, named as
// the cleanup job's upload but created while the GPU job ran) never reaches
// the report: the attempt's cost is the real artifact's.
func TestHistoryIgnoresAForgedCostArtifact(t *testing.T) {
	dir := t.TempDir()
	created := t0
	real := acceptedReport("realpod", "NVIDIA L4", 0.36, created, 600)
	writeSaved(t, dir, savedAttempt{rec: completedAttempt(9, 1, "pull_request", created),
		logs: map[string]string{provisionLog: ""}, artifacts: []cost.Artifact{artifactOf(9, 1, cost.TriggerAutomatic, refA, real)}})
	st := store{dir: dir}
	rec, ok, err := st.load(AttemptKey{RunID: 9, Attempt: 1})
	assert.NilError(t, err)
	assert.Assert(t, ok)
	forged := artifactOf(9, 1, cost.TriggerAutomatic, refA, acceptedReport("forgedpod", "NVIDIA H100", 99, created, 36000))
	body, err := json.Marshal(forged)
	assert.NilError(t, err)
	// Named as the cleanup job's upload, but created before that job ran.
	f := ArtifactFile{ID: 777, Name: cost.JobArtifactName(9, 1, 6), CreatedAt: created.Add(-time.Minute), Download: Download{State: StateComplete}}
	assert.NilError(t, st.writeFile(rec.Key(), f.fileName(), zipOf(t, map[string]string{cost.ArtifactFileName: string(body)})))
	rec.Artifacts = append([]ArtifactFile{f}, rec.Artifacts...)
	assert.NilError(t, st.save(rec))

	a := readAttempt(st, rec, nil)
	var pods []string
	for _, p := range a.Pods {
		pods = append(pods, p.ID+" "+string(p.Source))
	}
	assert.DeepEqual(t, pods, []string{"realpod artifact"})
	assert.Check(t, is.Contains(strings.Join(a.Warnings, "\n"), "cost artifact "+f.Name+" ignored: it was created at"))
}
