package devcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/sim/githubsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// The manifests carry exactly the permissions the lane's jobs use: one App
// with the union, or the split's checks App and runner App; no webhook.
func TestAppManifestHasExactlyTheLanePermissions(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		args []string
		want []callers.Levels
	}{
		{args: nil, want: []callers.Levels{callers.OneApp}},
		{args: []string{"--split"}, want: []callers.Levels{callers.ChecksApp, callers.RunnerApp}},
		{args: []string{"--org-runners"}, want: []callers.Levels{{"actions": "write", "administration": "write", "checks": "write", "contents": "read",
			"pull_requests": "read", "metadata": "read", "organization_self_hosted_runners": "write"}}},
	} {
		r := w.run(append([]string{"app", "--print-manifest", "--suite", "my-org/runpod-gpu"}, tc.args...)...)
		assert.Equal(t, r.code, ExitOK, r.stderr)
		var got []callers.Manifest
		assert.NilError(t, json.Unmarshal([]byte(r.stdout), &got))
		assert.Assert(t, is.Len(got, len(tc.want)))
		for i, m := range got {
			assert.Check(t, is.DeepEqual(m.DefaultPermissions, map[string]string(tc.want[i])), "%v", tc.args)
			assert.Check(t, !m.Public && !m.HookAttributes.Active && len(m.DefaultEvents) == 0)
			assert.Check(t, is.Equal(m.URL, "https://github.com/my-org/runpod-gpu"))
		}
	}
}

// App names are global on GitHub, so the default is the repository owner's,
// never the suite's (the same for every adopter of the published suite).
func TestAppNameDefaultsToTheRepositoryOwner(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"--repo", "octo/gpu-lib"}, want: "runpod-gpu-octo"},
		{args: []string{"--repo", "octo/gpu-lib", "--org", "acme"}, want: "runpod-gpu-acme"},
		{args: []string{"--repo", "octo/gpu-lib", "--name", "octo GPU CI"}, want: "octo GPU CI"},
	} {
		r := w.run(append([]string{"app", "--print-manifest", "--suite", "org/runpod-gpu"}, tc.args...)...)
		assert.Equal(t, r.code, ExitOK, r.stderr)
		var got []callers.Manifest
		assert.NilError(t, json.Unmarshal([]byte(r.stdout), &got))
		assert.Assert(t, is.Len(got, 1))
		assert.Check(t, is.Equal(got[0].Name, tc.want), "%v", tc.args)
	}
}

// syncBuffer is a bytes.Buffer the command and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var formRE = regexp.MustCompile(`<form action="([^"]+)" method="post">\s*<p>[^<]*</p>\s*<input type="hidden" name="manifest" value="([^"]+)">`)

// clickThrough runs runpod-gpu app with args and env, posts each App's form
// to the simulated GitHub as the user's click would, calls installed (when
// set) with each created App's id before GitHub sends the browser back, and
// returns the command's exit code and output.
func clickThrough(t *testing.T, gh *githubsim.Server, env Env, owner string, installed func(appID int64)) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	env.Stdout, env.Stderr = &stdout, &stderr
	code := make(chan int, 1)
	go func() { code <- Main(context.Background(), env) }()
	var page string
	for deadline := time.Now().Add(30 * time.Second); page == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`file://(\S+)`).FindStringSubmatch(stdout.String()); m != nil {
			page = m[1]
		}
		select {
		case c := <-code:
			t.Fatalf("runpod-gpu app ended (%d) before writing the page: %s %s", c, stdout.String(), stderr.String())
		default:
		}
	}
	assert.Assert(t, page != "", "no page: %s %s", stdout.String(), stderr.String())
	data, err := os.ReadFile(page)
	assert.NilError(t, err)
	forms := formRE.FindAllStringSubmatch(string(data), -1)
	for i, form := range forms {
		action, err := url.Parse(html.UnescapeString(form[1]))
		assert.NilError(t, err)
		assert.Check(t, is.Equal(action.Scheme+"://"+action.Host+action.Path, "https://github.example/organizations/"+owner+"/settings/apps/new"))
		// The user clicks Create on GitHub; GitHub sends the browser back.
		appCode, redirect, err := gh.CreateAppFromManifest(owner, []byte(html.UnescapeString(form[2])))
		assert.NilError(t, err)
		if i == 0 {
			resp, err := http.Get(redirect + "?code=" + appCode + "&state=forged")
			assert.NilError(t, err)
			resp.Body.Close()
			assert.Check(t, is.Equal(resp.StatusCode, http.StatusBadRequest), "a state the page did not issue")
		}
		resp, err := http.Get(redirect + "?code=" + url.QueryEscape(appCode) + "&state=" + action.Query().Get("state"))
		assert.NilError(t, err)
		body := new(bytes.Buffer)
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		assert.Check(t, is.Equal(resp.StatusCode, http.StatusOK), body.String())
		assert.Check(t, is.Contains(body.String(), "/installations/new"))
		if installed != nil {
			m := regexp.MustCompile(`\(id (\d+)\)`).FindStringSubmatch(body.String())
			assert.Assert(t, m != nil, body.String())
			id, _ := strconv.ParseInt(m[1], 10, 64)
			installed(id)
		}
	}
	select {
	case c := <-code:
		return c, stdout.String(), stderr.String()
	case <-time.After(30 * time.Second):
		t.Fatal("runpod-gpu app did not return")
	}
	return 0, "", ""
}

// stepOrder returns the positions of each want in the printed steps, failing
// when one is missing.
func stepOrder(t *testing.T, out string, wants ...string) []int {
	t.Helper()
	var at []int
	for _, w := range wants {
		i := strings.Index(out, w)
		assert.Check(t, i >= 0, "missing %q in:\n%s", w, out)
		at = append(at, i)
	}
	return at
}

func ascending(at []int) bool {
	for i := 1; i < len(at); i++ {
		if at[i] <= at[i-1] {
			return false
		}
	}
	return true
}

// Without a GitHub token the key would be lost, so app refuses unless
// --save-key names a file: then each key is written there, mode 0600, and the
// remaining steps come in the order they can be done (the environment init
// creates before a secret set in it by hand).
func TestAppSavesTheKeyOnlyWithSaveKeyAndPrintsStepsInOrder(t *testing.T) {
	w := newWorld(t)
	gh := githubsim.New(githubsim.WithClock(simclock.NewVirtual(time.Now())))
	ts := httptest.NewServer(gh)
	defer ts.Close()
	w.env["GITHUB_API_URL"], w.env["GITHUB_WEB_URL"] = ts.URL, "https://github.example"
	r := w.run("app", "--org", "my-org", "--out", t.TempDir())
	assert.Check(t, is.Equal(r.code, ExitUsage))
	assert.Check(t, is.Contains(r.stderr, "the App's key would be lost: set GH_TOKEN"))

	keyFile := filepath.Join(t.TempDir(), "app.pem")
	assert.NilError(t, os.WriteFile(keyFile+".runner", []byte("old"), 0o644))
	code, stdout, stderr := clickThrough(t, gh, Env{Args: []string{"app", "--org", "my-org", "--split", "--out", t.TempDir(), "--wait", "1m", "--save-key", keyFile},
		Getenv: func(k string) string { return w.env[k] }, Home: w.home}, "my-org", nil)
	assert.Equal(t, code, ExitOK, stderr)
	for _, path := range []string{keyFile, keyFile + ".runner"} {
		info, err := os.Stat(path)
		assert.NilError(t, err)
		assert.Check(t, is.Equal(info.Mode().Perm(), os.FileMode(0o600)), path)
		data, err := os.ReadFile(path)
		assert.NilError(t, err)
		assert.Check(t, is.Contains(string(data), "PRIVATE KEY-----"))
	}
	assert.Check(t, !strings.Contains(stdout, "PRIVATE KEY-----"), "the key is never printed")
	at := stepOrder(t, stdout, "gh variable set RUNPOD_GPU_APP_ID", "runpod-gpu init --workflows CI",
		"gh secret set RUNPOD_GPU_APP_PRIVATE_KEY --env runpod-gpu < "+keyFile+" (the environment exists once init has run)",
		"gh secret set RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY --env runpod-gpu < "+keyFile+".runner", "runpod-gpu doctor")
	assert.Check(t, ascending(at), "steps out of order:\n%s", stdout)
}

// With a token, app waits for the App's installation on the repository and
// hands the key and ids straight to GitHub: the environment's sealed secret
// (the simulated GitHub opens it), the variables where the workflows read
// them, and the gate bound to the App; no key file is written anywhere.
func TestAppHandsTheKeyAndIdsToGitHub(t *testing.T) {
	w := newWorld(t)
	gh := w.withGitHub()
	w.env["GITHUB_WEB_URL"] = "https://github.example"
	out := t.TempDir()
	var appID int64
	code, stdout, stderr := clickThrough(t, gh, Env{Args: []string{"app", "--org", "octo", "--repo", setupRepo, "--out", out, "--wait", "1m"},
		Getenv: func(k string) string { return w.env[k] }, Home: w.home, Clock: w.clock, Sleep: w.clock.Sleep}, "octo",
		func(id int64) {
			appID = id
			assert.NilError(t, gh.AddInstallation(githubsim.Installation{ID: 5001, AppID: id, Account: "octo"}))
		})
	assert.Equal(t, code, ExitOK, stderr)
	assert.Check(t, is.Contains(stdout, "Installed on octo/gpu-lib: installation 5001."))
	key, err := gh.EnvironmentSecret(setupRepo, "runpod-gpu", "RUNPOD_GPU_APP_PRIVATE_KEY")
	assert.NilError(t, err)
	assert.Check(t, is.Contains(key, "BEGIN RSA PRIVATE KEY"))
	assert.Check(t, !strings.Contains(stdout+stderr, key), "the key is never printed")
	vars, _ := gh.Rulesets(setupRepo)
	assert.Assert(t, is.Len(vars, 1))
	assert.Check(t, is.Contains(string(vars[0].Rules[0].Parameters), fmt.Sprintf(`"integration_id":%d`, appID)))
	for name, want := range map[string]string{"RUNPOD_GPU_APP_ID": strconv.FormatInt(appID, 10), "RUNPOD_GPU_APP_INSTALLATION_ID": "5001"} {
		assert.Check(t, is.Contains(stdout, fmt.Sprintf("set the repository variable %s to %q: done", name, want)))
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		assert.Check(t, !strings.Contains(string(data), "PRIVATE KEY"), "a key on disk: %s", f)
	}
	assert.Check(t, !strings.Contains(stdout, "gh secret set"), "nothing left to set by hand")
	at := stepOrder(t, stdout, "Next:", "1. RUNPOD_API_KEY=… runpod-gpu init", "2. merge init's pull request")
	assert.Check(t, ascending(at), "steps out of order:\n%s", stdout)
}

// The wait for the installation is bounded and printed; an App not
// installed in time still gets its key and id on GitHub, and installing it
// comes first among the remaining steps.
func TestAppWaitsBoundedForTheInstallation(t *testing.T) {
	w := newWorld(t)
	gh := w.withGitHub()
	w.env["GITHUB_WEB_URL"] = "https://github.example"
	code, stdout, stderr := clickThrough(t, gh, Env{Args: []string{"app", "--org", "octo", "--repo", setupRepo, "--out", t.TempDir(), "--wait", "1m", "--install-wait", "30s"},
		Getenv: func(k string) string { return w.env[k] }, Home: w.home, Clock: w.clock, Sleep: w.clock.Sleep}, "octo", nil)
	assert.Equal(t, code, ExitOK, stderr)
	at := stepOrder(t, stdout, "Waiting up to 30s for the installation", "Not installed on octo/gpu-lib within 30s.",
		"1. install runpod-gpu-octo on octo/gpu-lib: ", "2. gh variable set RUNPOD_GPU_APP_INSTALLATION_ID --body <the installation id", "3. RUNPOD_API_KEY=… runpod-gpu init")
	assert.Check(t, ascending(at), "out of order:\n%s", stdout)
	_, err := gh.EnvironmentSecret(setupRepo, "runpod-gpu", "RUNPOD_GPU_APP_PRIVATE_KEY")
	assert.NilError(t, err, "the key went to GitHub anyway")
}

// A token that could not store the App's key is refused before the browser
// step: nothing is created on GitHub and no page is written, so no App is
// left behind with a key that only lived in memory.
func TestAppChecksTheTokenBeforeTheAppIsCreated(t *testing.T) {
	w := newWorld(t)
	gh := w.withGitHub("public_repo")
	out := t.TempDir()
	r := w.run("app", "--org", "octo", "--repo", setupRepo, "--out", out, "--wait", "1m")
	assert.Check(t, is.Equal(r.code, ExitFailure), r.stderr)
	assert.Check(t, is.Contains(r.stderr, "lacks the scope(s) repo"))
	assert.Check(t, !strings.Contains(r.stdout, "Open this page"), "no browser step: %s", r.stdout)
	assert.Check(t, is.Equal(writes(gh), 0))
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	assert.Check(t, is.Len(files, 0))
}
