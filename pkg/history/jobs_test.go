package history

import (
	"testing"

	"gotest.tools/v3/assert"
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
