package localgate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// laneDuration is what the stepping clock makes every lane take.
const laneDuration = 12*time.Minute + 3*time.Second

// stepClock advances by step on every reading, so the lane's start and end
// readings are exactly step apart.
type stepClock struct {
	now  time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	now := c.now
	c.now = c.now.Add(c.step)
	return now
}

// git runs git in dir with a fixed identity and dates, so commits (and the
// golden comment naming them) are the same on every run.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Maintainer", "GIT_AUTHOR_EMAIL=maint@example.com", "GIT_AUTHOR_DATE=2026-03-01T12:00:00Z",
		"GIT_COMMITTER_NAME=Maintainer", "GIT_COMMITTER_EMAIL=maint@example.com", "GIT_COMMITTER_DATE=2026-03-01T12:00:00Z",
	)
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	assert.NilError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	assert.NilError(t, os.WriteFile(path, []byte(content), mode))
}

// localSetup is a maintainer's checkout at the head of a labelled PR, with
// stand-ins for nvidia-smi and the GPU lane first on PATH.
type localSetup struct {
	*fixture
	pr      int
	repoDir string
	sha     string
	bin     string
	// laneRecord is where the stand-in lane writes the directory it ran in.
	laneRecord string
	opts       LocalOptions
	laneOutput *bytes.Buffer
}

// Lane stand-in behaviours.
const (
	lanePass = "exit 0"
	laneFail = "echo 'FAILED test_kernel' >&2; exit 4"
	laneHang = "exec sleep 60"
)

func newLocalSetup(t *testing.T) *localSetup {
	t.Helper()
	// Keep the machine's git configuration out of the repositories under test.
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")

	f := newFixture(t)
	s := &localSetup{fixture: f, repoDir: t.TempDir(), bin: t.TempDir(), laneOutput: &bytes.Buffer{}}
	s.laneRecord = filepath.Join(t.TempDir(), "lane-ran-in")

	git(t, s.repoDir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(s.repoDir, "tracked.txt"), "kernels\n", 0o644)
	writeFile(t, filepath.Join(s.repoDir, ".gitignore"), "build/\n", 0o644)
	git(t, s.repoDir, "add", ".")
	git(t, s.repoDir, "commit", "-q", "-m", "Faster kernels")
	// Ignored build output: git status is clean, and the lane must not see it.
	writeFile(t, filepath.Join(s.repoDir, "build", "cache"), "stale\n", 0o644)
	s.sha = git(t, s.repoDir, "rev-parse", "HEAD")

	var err error
	s.pr, err = f.srv.AddPullRequest(repoFull, githubsim.PullRequestSpec{
		Title: "Faster kernels", Author: "maint", HeadRef: "feature", HeadSHA: s.sha, Labels: []string{gatecheck.LocalLabel},
	})
	assert.NilError(t, err)

	s.standInNvidiaSMI(t, false)
	s.standInLane(t, lanePass)
	t.Setenv("PATH", s.bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	s.opts = LocalOptions{
		RepoDir: s.repoDir, Repository: repoFull, PRNumber: s.pr, Command: []string{"gpu-lane", "--all"},
		TempDir: t.TempDir(), LaneOutput: s.laneOutput, Now: (&stepClock{now: start, step: laneDuration}).Now,
	}
	return s
}

func (s *localSetup) standInNvidiaSMI(t *testing.T, broken bool) {
	t.Helper()
	script := "#!/bin/sh\n"
	if broken {
		script += "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\" >&2\nexit 9\n"
	}
	script += "if [ \"$1\" = --query-gpu=name,driver_version ] && [ \"$2\" = --format=csv,noheader ]; then\n" +
		"  echo 'NVIDIA GeForce RTX 4090, 550.54.14'\n  exit 0\nfi\n" +
		"cat <<'EOF'\n" + nvidiaSMIBanner + "EOF\n"
	writeFile(t, filepath.Join(s.bin, "nvidia-smi"), script, 0o755)
}

// standInLane writes the lane: it records where it ran, checks it sees the
// commit and not the checkout's ignored files, prints to both streams, then
// behaves as told.
func (s *localSetup) standInLane(t *testing.T, behaviour string) {
	t.Helper()
	script := "#!/bin/sh\n" +
		"pwd > '" + s.laneRecord + "'\n" +
		"echo \"lane stdout: $*\"\n" +
		"echo 'lane stderr' >&2\n" +
		"test -f tracked.txt || { echo 'tracked.txt missing' >&2; exit 2; }\n" +
		"test ! -e build/cache || { echo 'ignored build output leaked into the worktree' >&2; exit 3; }\n" +
		"test -z \"${GH_TOKEN}${GITHUB_TOKEN}\" || { echo 'a GitHub credential leaked into the lane' >&2; exit 5; }\n" +
		behaviour + "\n"
	writeFile(t, filepath.Join(s.bin, "gpu-lane"), script, 0o755)
}

// assertNothingSent checks no comment was posted and no relay dispatched.
func (s *localSetup) assertNothingSent(t *testing.T) {
	t.Helper()
	comments, err := s.srv.IssueComments(repoFull, s.pr)
	assert.NilError(t, err)
	assert.Check(t, is.Len(comments, 0), "evidence was posted")
	assert.Check(t, is.Len(s.srv.Dispatches(), 0), "the relay was dispatched")
}

// laneRanIn returns the directory the lane ran in, or "" when it never ran.
func (s *localSetup) laneRanIn(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(s.laneRecord)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	assert.NilError(t, err)
	return strings.TrimSpace(string(b))
}

// assertWorktreeGone checks the lane's worktree was removed and unregistered.
func (s *localSetup) assertWorktreeGone(t *testing.T) {
	t.Helper()
	ranIn := s.laneRanIn(t)
	assert.Assert(t, ranIn != "", "the lane never ran")
	_, err := os.Stat(ranIn)
	assert.Check(t, errors.Is(err, os.ErrNotExist), "worktree %s still exists", ranIn)
	list := git(t, s.repoDir, "worktree", "list", "--porcelain")
	assert.Check(t, is.Equal(strings.Count(list, "worktree "), 1), "worktrees left registered:\n%s", list)
}

func TestRunPostsEvidenceAndDispatchesRelay(t *testing.T) {
	s := newLocalSetup(t)
	s.opts.LogFile = filepath.Join(t.TempDir(), "lane.log")
	var progress bytes.Buffer
	s.opts.Progress = &progress

	got, err := Run(ctx, s.client(t, maintainerToken), s.opts)
	assert.NilError(t, err)

	comments, err := s.srv.IssueComments(repoFull, s.pr)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(comments, 1))
	assert.Equal(t, comments[0].Author, "maint")
	assert.Equal(t, comments[0].ID, got.CommentID)
	golden.Assert(t, comments[0].Body, "local-comment.golden")

	dispatches := s.srv.Dispatches()
	assert.Assert(t, is.Len(dispatches, 1))
	assert.Equal(t, dispatches[0].WorkflowPath, ".github/workflows/local-gpu-gate.yml")
	assert.Equal(t, dispatches[0].Ref, "main")
	assert.Equal(t, dispatches[0].Actor, "maint")
	assert.DeepEqual(t, dispatches[0].Inputs, map[string]any{
		"pr-number": "1", "sha": s.sha, "comment-id": strconv.FormatInt(comments[0].ID, 10),
	})
	assert.DeepEqual(t, got.Inputs, dispatches[0].Inputs)

	// The digest is of exactly the bytes the lane printed, which the log keeps.
	log, err := os.ReadFile(s.opts.LogFile)
	assert.NilError(t, err)
	assert.Equal(t, string(log), "lane stdout: --all\nlane stderr\n")
	assert.Equal(t, s.laneOutput.String(), string(log))
	digest := sha256.Sum256(log)
	assert.Equal(t, got.Evidence.LogSHA256, hex.EncodeToString(digest[:]))
	assert.Equal(t, got.Evidence.Duration, laneDuration)

	// The lane ran in its own worktree, not the checkout, and nothing of it is left.
	assert.Check(t, s.laneRanIn(t) != s.repoDir)
	s.assertWorktreeGone(t)
	assert.Check(t, is.Contains(progress.String(), "GPU: NVIDIA GeForce RTX 4090, driver 550.54.14, CUDA 12.4"))

	// What the local command sent is exactly what the relay accepts.
	published, err := Relay(ctx, s.client(t, actionsToken), RelayRequest{
		Repository: repoFull, PRNumber: s.pr, SHA: dispatches[0].Inputs["sha"].(string), CommentID: got.CommentID,
		Dispatcher: dispatches[0].Actor, Event: "workflow_dispatch", WorkflowRef: "refs/heads/" + dispatches[0].Ref,
	}, PublishOptions{CompletedAt: start})
	assert.NilError(t, err)
	assert.Equal(t, published.Evidence, got.Evidence)
	assert.Equal(t, published.ExternalID, "local-gpu-gate:v1:"+s.sha)
}

func TestRunRefuses(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(t *testing.T, s *localSetup)
		wantCheck Check
		wantErr   string
	}{
		{
			name: "modified tracked file",
			setup: func(t *testing.T, s *localSetup) {
				writeFile(t, filepath.Join(s.repoDir, "tracked.txt"), "edited\n", 0o644)
			},
			wantCheck: CheckWorktreeClean,
			wantErr:   "has changes; commit and push them, or stash them:  M tracked.txt",
		},
		{
			name:      "untracked file",
			setup:     func(t *testing.T, s *localSetup) { writeFile(t, filepath.Join(s.repoDir, "notes.md"), "todo\n", 0o644) },
			wantCheck: CheckWorktreeClean,
			wantErr:   "?? notes.md",
		},
		{
			name: "commit not the PR's head",
			setup: func(t *testing.T, s *localSetup) {
				s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = pushSHA })
			},
			wantCheck: CheckHeadSHA,
			wantErr:   "'s head is " + pushSHA + ", not ",
		},
		{
			name: "local commit not pushed",
			setup: func(t *testing.T, s *localSetup) {
				git(t, s.repoDir, "commit", "-q", "--allow-empty", "-m", "unpushed")
			},
			wantCheck: CheckHeadSHA,
			wantErr:   "PR #1's head is ",
		},
		{
			name: "no label",
			setup: func(t *testing.T, s *localSetup) {
				s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.Labels = nil })
			},
			wantCheck: CheckLabel,
			wantErr:   "PR #1 is not labelled gpu-validated-locally; add the label first",
		},
		{
			name: "fork",
			setup: func(t *testing.T, s *localSetup) {
				s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadRepo = "mallory/gpu-lib" })
			},
			wantCheck: CheckOrigin,
			wantErr:   "PR #1 comes from the fork mallory/gpu-lib, not from octo/gpu-lib: its code would run on this machine",
		},
		{
			name: "closed",
			setup: func(t *testing.T, s *localSetup) {
				s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.State = "closed" })
			},
			wantCheck: CheckPRState,
			wantErr:   "PR #1 is closed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newLocalSetup(t)
			tc.setup(t, s)

			_, err := Run(ctx, s.client(t, maintainerToken), s.opts)
			assert.Assert(t, errors.Is(err, ErrRefused), "got %v", err)
			assert.Equal(t, CheckOf(err), tc.wantCheck)
			assert.ErrorContains(t, err, tc.wantErr)
			assert.Check(t, is.Equal(s.laneRanIn(t), ""), "the lane ran")
			s.assertNothingSent(t)
		})
	}
}

func TestRunFailingLanePostsNothing(t *testing.T) {
	tests := []struct {
		name         string
		behaviour    string
		timeout      time.Duration
		wantTimedOut bool
		wantErr      string
	}{
		{name: "non-zero exit", behaviour: laneFail, wantErr: "GPU lane gpu-lane --all failed after 12m3s: exit status 4; no evidence posted, relay not dispatched"},
		{name: "timeout", behaviour: laneHang, timeout: 200 * time.Millisecond, wantTimedOut: true, wantErr: "GPU lane gpu-lane --all timed out after 12m3s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newLocalSetup(t)
			s.standInLane(t, tc.behaviour)
			s.opts.Timeout = tc.timeout

			_, err := Run(ctx, s.client(t, maintainerToken), s.opts)
			var lane *LaneError
			assert.Assert(t, errors.As(err, &lane), "got %v", err)
			assert.Check(t, errors.Is(err, ErrLaneFailed))
			assert.Check(t, is.Equal(lane.TimedOut, tc.wantTimedOut))
			assert.ErrorContains(t, err, tc.wantErr)
			s.assertNothingSent(t)
			s.assertWorktreeGone(t)
		})
	}
}

func TestRunWithoutWorkingGPU(t *testing.T) {
	s := newLocalSetup(t)
	s.standInNvidiaSMI(t, true)

	_, err := Run(ctx, s.client(t, maintainerToken), s.opts)
	assert.ErrorContains(t, err, "query the GPU: nvidia-smi --query-gpu=name,driver_version --format=csv,noheader: exit status 9: NVIDIA-SMI has failed")
	assert.Check(t, is.Equal(s.laneRanIn(t), ""), "the lane ran without a GPU")
	s.assertNothingSent(t)
}

// pushDuringLane pushes to the PR when the local command re-reads it after the lane.
type pushDuringLane struct {
	LocalClient
	reads int
	push  func()
}

func (p *pushDuringLane) GetPullRequest(ctx context.Context, number int) (*github.PullRequest, error) {
	if p.reads++; p.reads == 2 {
		p.push()
	}
	return p.LocalClient.GetPullRequest(ctx, number)
}

func TestRunHeadMovedDuringLane(t *testing.T) {
	s := newLocalSetup(t)
	gh := &pushDuringLane{LocalClient: s.client(t, maintainerToken), push: func() {
		s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadSHA = pushSHA })
	}}

	_, err := Run(ctx, gh, s.opts)
	assert.Equal(t, CheckOf(err), CheckHeadSHA)
	assert.ErrorContains(t, err, "the lane passed, but local GPU gate refused (head-sha): PR #1's head is "+pushSHA)
	s.assertNothingSent(t)
}

func TestRunDispatchFailureSaysHowToFinish(t *testing.T) {
	s := newLocalSetup(t)
	s.opts.Workflow, s.opts.Ref = "missing.yml", "release"

	got, err := Run(ctx, s.client(t, maintainerToken), s.opts)
	assert.ErrorContains(t, err, "evidence posted at "+got.CommentURL+", but dispatching missing.yml failed (dispatch it by hand with pr-number=1 sha="+s.sha)
	comments, cerr := s.srv.IssueComments(repoFull, s.pr)
	assert.NilError(t, cerr)
	assert.Check(t, is.Len(comments, 1))
	assert.Check(t, is.Len(s.srv.Dispatches(), 0))
}

func TestRunRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*LocalOptions)
		wantErr string
	}{
		{"no command", func(o *LocalOptions) { o.Command = nil }, "lane command is empty"},
		{"no PR", func(o *LocalOptions) { o.PRNumber = 0 }, "PR number 0: want a positive number"},
		{"bad repository", func(o *LocalOptions) { o.Repository = "gpu-lib" }, `repository "gpu-lib": want owner/name`},
		{"negative timeout", func(o *LocalOptions) { o.Timeout = -time.Second }, "timeout -1s: want a positive duration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := LocalOptions{Repository: repoFull, PRNumber: 1, Command: []string{"true"}}
			tc.change(&opts)
			_, err := Run(ctx, nil, opts)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// With -allow-fork a maintainer validates a fork PR's head locally; the lane
// (the fork's code) never sees the command's GitHub token.
func TestRunValidatesAForkWhenAllowed(t *testing.T) {
	s := newLocalSetup(t)
	t.Setenv("GH_TOKEN", maintainerToken)
	t.Setenv("GITHUB_TOKEN", maintainerToken)
	s.updatePR(t, s.pr, func(p *githubsim.PullRequestSpec) { p.HeadRepo, p.Author = "mallory/gpu-lib", "mallory" })
	s.opts.AllowFork = true

	got, err := Run(ctx, s.client(t, maintainerToken), s.opts)
	assert.NilError(t, err, "lane output: %s", s.laneOutput)
	assert.Check(t, is.Equal(got.Evidence.SHA, s.sha))
	assert.Check(t, is.Len(s.srv.Dispatches(), 1))
	assert.Check(t, !strings.Contains(s.laneOutput.String(), maintainerToken))
}

func TestLaneEnvDropsGitHubCredentials(t *testing.T) {
	got := LaneEnv([]string{"PATH=/bin", "GH_TOKEN=a", "GITHUB_TOKEN=b", "GH_ENTERPRISE_TOKEN=c", "GITHUB_ENTERPRISE_TOKEN=d", "GH_TOKENISH=e", "CUDA_VISIBLE_DEVICES=0"})
	assert.DeepEqual(t, got, []string{"PATH=/bin", "GH_TOKENISH=e", "CUDA_VISIBLE_DEVICES=0"})
}
