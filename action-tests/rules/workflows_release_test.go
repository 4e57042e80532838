package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// releaseRefusalStep is the id of release.yml's step that refuses a version
// already published.
const releaseRefusalStep = "version"

// releaseWorkflow is the part of release.yml the publishing guards depend on.
type releaseWorkflow struct {
	Jobs map[string]struct {
		Environment any `yaml:"environment"`
		Steps       []struct {
			ID   string `yaml:"id"`
			Name string `yaml:"name"`
			Uses string `yaml:"uses"`
			Run  string `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// metaReleaseProblems checks that pushing a version tag cannot by itself move
// v1 for every consumer, and that a published version never moves: the
// publishing job waits in an environment (whose required reviewers the README
// documents); before anything is built, pushed or tagged it refuses a version
// already published; the version tag is pushed only with a lease on the tag
// that was pushed (only the major tag is forced); and no release asset is
// ever overwritten.
func metaReleaseProblems(text string) []string {
	var problems []string
	var wf releaseWorkflow
	if err := yaml.Unmarshal([]byte(text), &wf); err != nil {
		return []string{"release.yml: " + err.Error()}
	}
	job, ok := wf.Jobs["release"]
	if !ok {
		return []string{"release.yml: no release job"}
	}
	if env, _ := job.Environment.(string); strings.TrimSpace(env) == "" {
		problems = append(problems, "release.yml: job release runs in no environment: a pushed tag moves v1 with nobody's approval")
	}
	refused := false
	for _, st := range job.Steps {
		what := st.Name + st.Uses
		if st.ID == releaseRefusalStep {
			refused = strings.Contains(st.Run, "releases/tags/${VERSION}") && strings.Contains(st.Run, "exit 1")
			continue
		}
		publishes := strings.HasPrefix(st.Uses, "docker/build-push-action@") || strings.Contains(st.Run, "git push") ||
			strings.Contains(st.Run, "gh release")
		if publishes && !refused {
			problems = append(problems, "release.yml: step "+what+" publishes before the step refusing a published version")
		}
		if strings.Contains(st.Run, "--clobber") {
			problems = append(problems, "release.yml: step "+what+" overwrites release assets (--clobber)")
		}
		for _, line := range strings.Split(st.Run, "\n") {
			if !strings.Contains(line, "git push") || !strings.Contains(line, "refs/tags/${VERSION}") {
				continue
			}
			if !strings.Contains(line, "--force-with-lease=\"refs/tags/${VERSION}:") {
				problems = append(problems, "release.yml: step "+what+" pushes the version tag without a lease on the pushed tag: "+strings.TrimSpace(line))
			}
			if strings.Contains(line, "--force ") || strings.Contains(line, " -f ") || strings.Contains(line, "+refs/tags/${VERSION}") {
				problems = append(problems, "release.yml: step "+what+" forces the version tag: "+strings.TrimSpace(line))
			}
		}
	}
	if !refused {
		problems = append(problems, "release.yml: no step "+releaseRefusalStep+" refuses a version already published")
	}
	return problems
}

func TestMetaReleaseNeverMovesAPublishedVersion(t *testing.T) {
	assert.Check(t, is.Len(metaReleaseProblems(metaWorkflowFiles(t)["release.yml"]), 0))
}

// TestMetaReleaseCheckDetectsMistakes: each planted mistake is found.
func TestMetaReleaseCheckDetectsMistakes(t *testing.T) {
	text := metaWorkflowFiles(t)["release.yml"]
	tests := []struct {
		name, old, new, want string
	}{
		{name: "no environment", old: "    environment: release\n", new: "", want: "runs in no environment"},
		{name: "no refusal", old: "        id: version\n", new: "        id: versions\n", want: "publishes before the step refusing"},
		{name: "the version tag forced", old: `--force-with-lease="refs/tags/${VERSION}:${PUSHED_TAG}"`, new: "--force",
			want: "without a lease on the pushed tag"},
		{name: "assets overwritten", old: `gh release create "$VERSION" "${ASSETS[@]}"`, new: `gh release upload "$VERSION" "${ASSETS[@]}" --clobber`,
			want: "overwrites release assets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Assert(t, strings.Contains(text, tc.old), "release.yml no longer holds %q", tc.old)
			problems := metaReleaseProblems(strings.Replace(text, tc.old, tc.new, 1))
			assert.Check(t, is.Contains(strings.Join(problems, "\n"), tc.want), "%v", problems)
		})
	}
}

// releaseRefusalScript is the run script of release.yml's refusal step.
func releaseRefusalScript(t *testing.T) string {
	t.Helper()
	var wf releaseWorkflow
	assert.NilError(t, yaml.Unmarshal([]byte(metaWorkflowFiles(t)["release.yml"]), &wf))
	for _, st := range wf.Jobs["release"].Steps {
		if st.ID == releaseRefusalStep {
			return st.Run
		}
	}
	t.Fatalf("release.yml has no step %s", releaseRefusalStep)
	return ""
}

// TestMetaReleaseRefusesAPublishedVersion plays the refusal step in a
// repository whose version tag was pushed, with a stand-in gh answering
// GitHub's release lookup: only a version GitHub says is unknown (404) and
// whose tag is not on a release commit yet goes on, with the pushed tag
// recorded for the lease.
func TestMetaReleaseRefusesAPublishedVersion(t *testing.T) {
	for _, tool := range []string{"bash", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	tests := []struct {
		name      string
		subject   string // of the tagged commit
		gh        string // the stand-in gh's body
		wantOK    bool
		wantError string
	}{
		{name: "a new version", subject: "Add a feature", gh: `echo "gh: Not Found (HTTP 404)" >&2; exit 1`, wantOK: true},
		{name: "already published", subject: "Add a feature", gh: `echo "https://github.com/org/runpod-gpu/releases/tag/v1.2.3"`,
			wantError: "v1.2.3 is already published (https://github.com/org/runpod-gpu/releases/tag/v1.2.3): a published version never moves"},
		{name: "a re-run after the tag moved", subject: "Release v1.2.3: pin the workflows' inner references to 0123", gh: `echo "gh: Not Found (HTTP 404)" >&2; exit 1`,
			wantError: "v1.2.3 already points at a release commit"},
		{name: "GitHub cannot tell", subject: "Add a feature", gh: `echo "gh: Server Error (HTTP 502)" >&2; exit 1`,
			wantError: "cannot tell whether v1.2.3 is published"},
	}
	script := releaseRefusalScript(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo, bin := t.TempDir(), t.TempDir()
			git := func(args ...string) {
				cmd := exec.Command("git", args...)
				cmd.Dir = repo
				cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
				out, err := cmd.CombinedOutput()
				assert.NilError(t, err, "git %v: %s", args, out)
			}
			git("init", "--quiet")
			git("commit", "--quiet", "--allow-empty", "--message", tc.subject)
			git("tag", "--annotate", "v1.2.3", "--message", "v1.2.3")
			assert.NilError(t, os.WriteFile(filepath.Join(bin, "gh"), []byte("#!/bin/bash\n"+tc.gh+"\n"), 0o755))
			output := filepath.Join(t.TempDir(), "output")
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "VERSION=v1.2.3",
				"GITHUB_REPOSITORY=org/runpod-gpu", "GITHUB_OUTPUT="+output)
			out, err := cmd.CombinedOutput()
			recorded, _ := os.ReadFile(output)
			if tc.wantOK {
				assert.NilError(t, err, "%s", out)
				assert.Check(t, is.Regexp(`^pushed-tag=[0-9a-f]{40}\n$`, string(recorded)))
				return
			}
			assert.Check(t, err != nil, "the step accepted it:\n%s", out)
			assert.Check(t, is.Contains(string(out), "::error::"+tc.wantError))
			assert.Check(t, is.Equal(string(recorded), ""), "a refused version records no tag to push")
		})
	}
}
