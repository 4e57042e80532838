package rehearse

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// cudaExample is the worked CUDA project a team copies.
const cudaExample = "../../examples/cuda-vector-add"

// The CUDA example's own files, as they are in the repository, rehearse
// green: its CI in progress starts the lane, the hosted build job (CUDA's
// devel container) and the four parts run, the GPU job runs on the
// simulated pod's runner with its download, retry, unpack and test steps,
// and the gate passes.
func TestCUDAExampleRehearsesGreen(t *testing.T) {
	r := rehearse(t, cudaExample)
	assertGreen(t, r, "authorize", "build", "provision", "watchdog", "gpu", "finish", "finish / gate")
	p := r.Played[0]
	assert.Check(t, is.Equal(p.Workflow, ".github/workflows/runpod-gpu.yml"))
	assert.Check(t, is.Equal(p.CI, "CI"), "the example's CI workflow starts the lane")
}

// standInNVCC writes an nvcc for this machine's PATH, since the hosted job's CUDA container
// is not started: -c and --lib write placeholders, a link writes the test as a script that
// prints what the real test prints (a line per size, then "N passed, N failed") and exits
// as it does, so run.sh's tee and exit status are exercised.
func standInNVCC(t *testing.T, lines []string, exit int) string {
	t.Helper()
	bin := t.TempDir()
	test := "#!/bin/sh\n"
	for _, l := range lines {
		test += fmt.Sprintf("echo '%s'\n", l)
	}
	test += fmt.Sprintf("exit %d\n", exit)
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "vector_add_test.stand-in"), []byte(test), 0o755))
	nvcc := `#!/bin/sh
# nvcc stand-in: the real test binary needs a GPU.
out= kind=link
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    -c) kind=object ;;
    --lib) kind=lib ;;
  esac
  shift
done
[ -n "$out" ] || { echo "nvcc stand-in: no -o" >&2; exit 2; }
if [ "$kind" = link ]; then
  cp "$(dirname "$0")/vector_add_test.stand-in" "$out"
else
  echo "$kind" >"$out"
fi
`
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "nvcc"), []byte(nvcc), 0o755))
	return bin
}

// gpuJobLog downloads the GPU job's log from the simulated GitHub as a user would: the run's
// jobs, then the job's logs (GitHub's 302 to a short-lived URL).
func gpuJobLog(ctx context.Context, s *stage, name string) (string, error) {
	gh := github.NewClient(nil).WithAuthToken(cloud.GitHubToken)
	base, err := url.Parse(s.cloud.GitHubURL + "/")
	if err != nil {
		return "", err
	}
	gh.BaseURL = base
	owner, repo, _ := strings.Cut(cloud.Repository, "/")
	jobs, _, err := gh.Actions.ListWorkflowJobs(ctx, owner, repo, s.runID, &github.ListWorkflowJobsOptions{Filter: "all"})
	if err != nil {
		return "", err
	}
	for _, j := range jobs.Jobs {
		if j.GetName() != name {
			continue
		}
		u, _, err := gh.Actions.GetWorkflowJobLogs(ctx, owner, repo, j.GetID(), 1)
		if err != nil {
			return "", err
		}
		resp, err := http.Get(u.String())
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		data, err := io.ReadAll(resp.Body)
		return string(data), err
	}
	return "", fmt.Errorf("run %d has no job %q", s.runID, name)
}

// The CUDA example's steps run for real (issue 38 point 4): the hosted build job runs the
// example's Makefile with a stand-in nvcc (the job's CUDA container is not started) and
// uploads gpu-tests.tar.gz through the simulated GitHub's results service; the GPU job on the
// simulated pod downloads it, unpacks it and runs tests/run.sh; its results, the GPU job's
// last step, reach the job's log, which the test downloads from the simulated GitHub. Tests
// that fail there fail the GPU job and the gate.
func TestCUDAExampleGPUJobStepsRunForReal(t *testing.T) {
	for _, tc := range []struct {
		name             string
		lines            []string
		exit             int
		wantGPU, wantLog string
	}{
		{name: "tests pass", lines: []string{"device 0: stand-in, compute capability 8.6", "ok   n=1", "ok   n=1000", "ok   n=1048577", "3 passed, 0 failed"},
			wantGPU: "success", wantLog: "3 passed, 0 failed"},
		{name: "a test fails", lines: []string{"device 0: stand-in, compute capability 8.6", "ok   n=1", "FAIL n=1000: 1 element(s) differ", "ok   n=1048577", "2 passed, 1 failed"},
			exit: 1, wantGPU: "failure", wantLog: "2 passed, 1 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", standInNVCC(t, tc.lines, tc.exit)+string(os.PathListSeparator)+os.Getenv("PATH"))
			var steps strings.Builder
			var jobLog string
			var logErr error
			o := Options{Dir: cudaExample, RealSteps: true, StepsLog: &steps, played: func(s *stage) {
				jobLog, logErr = gpuJobLog(context.Background(), s, "GPU tests")
			}}
			r, err := Run(context.Background(), o)
			assert.NilError(t, err, steps.String())
			var text strings.Builder
			r.WriteText(&text)
			assert.Assert(t, is.Len(r.Played, 1), text.String())
			results := map[string]string{}
			for _, j := range r.Played[0].Jobs {
				results[j.ID] = j.Result
			}
			assert.Check(t, is.Equal(results["build"], "success"), "%s\n%s", text.String(), steps.String())
			assert.Check(t, is.Equal(results["gpu"], tc.wantGPU), "%s\n%s", text.String(), steps.String())
			assert.Assert(t, r.Played[0].Gate != nil, text.String())
			assert.Check(t, is.Equal(r.Played[0].Gate.Conclusion, tc.wantGPU), text.String())

			assert.NilError(t, logErr, steps.String())
			assert.Check(t, is.Contains(jobLog, tc.wantLog), "the GPU job's log on the simulated GitHub:\n%s", jobLog)
			for _, l := range tc.lines {
				assert.Check(t, is.Contains(jobLog, l+"\n"), "run.sh printed what the test printed")
			}
			_, err = os.Stat(filepath.Join(cudaExample, "gpu-tests.tar.gz"))
			assert.Check(t, os.IsNotExist(err), "the build ran in a copy of the example")
		})
	}
}
