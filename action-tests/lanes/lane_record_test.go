package lanes

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/devcli"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/lanerecord"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// shippedLaneRecord plays a pull request's lane through the README caller
// and gpu-lane.yml as shipped, then does what the provision job's "Keep the
// lane record" step does (its with: evaluated against the provision step's
// outputs): the file it names becomes the run's artifact, and the provision
// step's output becomes the "Provision a GPU" job's log. It returns the run.
func shippedLaneRecord(t *testing.T, merge string) (*simulated, shippedRun, int64) {
	t.Helper()
	s := startShippedCloud(t, testHost("h1", harness.A4000, true), testHost("h2", harness.A4000, true))
	pr, err := s.GitHub.AddPullRequest(cloud.Repository, githubsim.PullRequestSpec{Author: "alice", HeadSHA: harness.HeadSHA, HeadRef: "feature",
		MergeCommitSHA: merge})
	assert.NilError(t, err)
	runID, err := s.GitHub.AddWorkflowRun(githubsim.WorkflowRunSpec{Repo: cloud.Repository, WorkflowPath: mainCaller, Event: "workflow_run", HeadSHA: harness.HeadSHA})
	assert.NilError(t, err)
	r := s.runShipped(t, delivery{caller: mainCaller, eventName: "workflow_run", event: workflowRunEvent(pr, harness.HeadSHA),
		sha: strings.Repeat("0", 40), actor: "alice", runID: runID})
	shippedOK(t, r)
	assert.Assert(t, r.provision != nil && r.provision.Outputs["pod-id"] != "", "a pod was accepted:\n%s", r)

	lane := gpuLane(t)
	keep := lane.step(t, "provision", "Keep the lane record")
	assert.Check(t, strings.HasPrefix(keep.Uses, "actions/upload-artifact@"), keep.Uses)
	outputs := map[string]any{}
	for k, v := range r.provision.Outputs {
		outputs[k] = v
	}
	ctx := map[string]any{"steps": map[string]any{"provision": map[string]any{"outputs": outputs}},
		"github": map[string]any{"run_id": float64(runID), "run_attempt": float64(1)}}
	with := stepInputs(t, keep, ctx)
	data, err := os.ReadFile(filepath.Join(s.Workspace, with["path"]))
	assert.NilError(t, err, "the upload step's path %q", with["path"])
	_, err = s.GitHub.AddArtifact(cloud.Repository, runID, githubsim.ArtifactSpec{Name: with["name"], Files: map[string]string{filepath.Base(with["path"]): string(data)}})
	assert.NilError(t, err)
	var log strings.Builder
	for _, line := range strings.Split(r.provision.Stdout, "\n") {
		log.WriteString("2026-12-07T21:00:00.0000000Z " + line + "\n")
	}
	assert.NilError(t, s.GitHub.SetRunLogs(cloud.Repository, runID, 1, map[string]string{"1_" + history.JobProvision + ".txt": log.String()}))
	return s, r, runID
}

// TestAShippedLaneRunLeavesASealedLaneRecord: a finished lane run of the
// shipped gpu-lane.yml leaves the artifact runpod-gpu repro reads, named for
// the run and attempt, parsed by lanerecord, recording the accepted pod's GPU
// type, the digest-pinned image every candidate used, the configuration's
// CUDA floor, the tested ref and the caller's test command; the provision
// job's log seals exactly its bytes.
func TestAShippedLaneRunLeavesASealedLaneRecord(t *testing.T) {
	s, r, runID := shippedLaneRecord(t, harness.MergeSHA)
	// Read back as repro does: over the simulated GitHub's REST API.
	gh, err := ghapi.New(context.Background(), ghapi.Options{BaseURL: s.GitHubURL, Token: cloud.GitHubToken, Owner: cloud.Owner, Repo: cloud.RepoName})
	assert.NilError(t, err)
	arts, err := gh.ListRunArtifacts(context.Background(), runID)
	assert.NilError(t, err)
	var data string
	for _, a := range arts {
		if a.GetName() != lanerecord.ArtifactName(runID, 1) {
			continue
		}
		zipped, err := gh.DownloadArtifact(context.Background(), a.GetID())
		assert.NilError(t, err)
		zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
		assert.NilError(t, err)
		for _, f := range zr.File {
			if f.Name == lanerecord.FileName {
				rc, err := f.Open()
				assert.NilError(t, err)
				b, err := io.ReadAll(rc)
				assert.NilError(t, err)
				data = string(b)
			}
		}
	}
	assert.Assert(t, data != "", "no artifact %s holding %s", lanerecord.ArtifactName(runID, 1), lanerecord.FileName)
	rec, err := lanerecord.Parse([]byte(data))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(rec.GPUType, r.provision.Outputs["gpu-type"]))
	assert.Check(t, is.Equal(rec.GPUType, harness.A4000))
	assert.Check(t, is.Equal(rec.Image, r.provision.Outputs["image"]))
	assert.Check(t, strings.Contains(rec.Image, "@sha256:"), rec.Image)
	assert.Check(t, is.Equal(rec.TestedRef, harness.MergeSHA))
	assert.Check(t, is.Equal(rec.RunID, runID))
	assert.Check(t, is.Equal(rec.Attempt, 1))
	assert.Check(t, is.Equal(rec.TestCommand, r.authorizeInputs["test-command"]))
	assert.Check(t, rec.TestCommand != "", "the README caller's test command is recorded")
	assert.Check(t, is.Equal(rec.TestArchive, ""), "gpu-lane.yml's GPU job fetches the tested ref itself")
	assert.Check(t, is.Contains(r.provision.Stdout, cost.SealLine([]byte(data)).Format()), "the provision step seals the record's bytes")
}

// TestReproFromAShippedLaneRun: runpod-gpu repro, given a finished shipped
// lane run's URL, reads the record that run's provision job wrote and sealed
// (not one written by hand), starts a developer pod with the same GPU type,
// image digest and CUDA floor, puts the tested ref's files on it (git archive
// from the developer's checkout: gpu-lane.yml's GPU job fetched the ref
// itself, so the record names no archive), and --run runs the recorded test
// command there; down deletes the pod.
func TestReproFromAShippedLaneRun(t *testing.T) {
	checkout := t.TempDir()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", checkout, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		assert.NilError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	assert.NilError(t, os.WriteFile(filepath.Join(checkout, "test_gpu.py"), []byte("def test_add(): assert 1 + 1 == 2\n"), 0o644))
	git("add", ".")
	git("commit", "-qm", "the merge commit under test")
	merge := git("rev-parse", "HEAD")

	s, r, runID := shippedLaneRecord(t, merge)
	testCommand := r.authorizeInputs["test-command"]
	home := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIUserKey alice@laptop\n"), 0o644))
	env := map[string]string{"RUNPOD_API_KEY": cloud.RunPodKey, "RUNPOD_API_URL": s.RunPodURL, "GH_TOKEN": cloud.GitHubToken, "GITHUB_API_URL": s.GitHubURL}
	onPod := map[string]string{}
	var ran []string
	cli := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		code := devcli.Main(ctx, devcli.Env{Args: args, Getenv: func(k string) string { return env[k] }, Stdout: &stdout, Stderr: &stderr,
			Home: home, User: "alice",
			RunSSH: func(_ context.Context, argv []string) (int, error) {
				switch argv[0] {
				case "scp": // scp -r DIR host:/root/: DIR's files land under /root/repro
					dir := argv[len(argv)-2]
					return 0, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
						if err != nil || d.IsDir() {
							return err
						}
						data, err := os.ReadFile(path)
						rel, _ := filepath.Rel(dir, path)
						onPod[filepath.ToSlash(rel)] = string(data)
						return err
					})
				case "ssh":
					ran = append(ran, argv[len(argv)-1])
					fmt.Fprintln(&stdout, "test_gpu.py .\n1 passed")
				}
				return 0, nil
			}})
		return code, stdout.String(), stderr.String()
	}
	url := "https://github.com/" + cloud.Repository + "/actions/runs/" + strconv.FormatInt(runID, 10)

	code, _, stderr := cli("repro", url, "--run", "--dir", filepath.Join(checkout, "missing"), "--poll", "200ms")
	assert.Check(t, is.Equal(code, devcli.ExitNotFound), stderr)
	assert.Check(t, is.Contains(stderr, "git fetch origin "+merge))

	code, stdout, stderr := cli("repro", url, "--run", "--dir", checkout, "--poll", "200ms")
	assert.Assert(t, is.Equal(code, devcli.ExitOK), stderr)
	var pod *runpodsim.PodInfo
	for _, p := range s.RunPod.Pods() {
		if p.Name == "repro-"+strconv.FormatInt(runID, 10) {
			pod = &p
		}
	}
	assert.Assert(t, pod != nil, "no repro pod")
	assert.Check(t, is.Equal(pod.GPUTypeID, r.provision.Outputs["gpu-type"]))
	assert.Check(t, is.Equal(pod.Image, r.provision.Outputs["image"]))
	assert.Check(t, is.Equal(onPod["test_gpu.py"], "def test_add(): assert 1 + 1 == 2\n"), "the tested ref's files are on the pod")
	assert.Assert(t, is.Len(ran, 1))
	assert.Check(t, is.Equal(ran[0], "cd "+devcli.ReproDir+" && "+testCommand))
	assert.Check(t, is.Contains(stdout, "1 passed"))

	code, _, stderr = cli("down", pod.Name, "--yes")
	assert.Check(t, is.Equal(code, devcli.ExitOK), stderr)
	for _, p := range s.RunPod.Pods() {
		if p.ID == pod.ID {
			assert.Check(t, !p.TerminatedAt.IsZero(), "down deleted the repro pod")
		}
	}
}
