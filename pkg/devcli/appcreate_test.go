package devcli

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
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

// The one click: the page posts the manifest form to GitHub; once the App
// is created GitHub sends the browser back with a code, which the command
// trades for the App's id and private key, saved 0600 and never printed.
func TestAppCreatedFromTheManifestInOneClick(t *testing.T) {
	w := newWorld(t)
	gh := githubsim.New(githubsim.WithClock(simclock.NewVirtual(time.Now())))
	ts := httptest.NewServer(gh)
	defer ts.Close()
	w.env["GITHUB_API_URL"], w.env["GITHUB_WEB_URL"] = ts.URL, "https://github.example"
	out := t.TempDir()
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- Main(context.Background(), Env{Args: []string{"app", "--org", "my-org", "--split", "--out", out, "--wait", "1m"},
			Getenv: func(k string) string { return w.env[k] }, Stdout: &stdout, Stderr: &stderr, Home: w.home})
	}()
	var page string
	for deadline := time.Now().Add(30 * time.Second); page == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`file://(\S+)`).FindStringSubmatch(stdout.String()); m != nil {
			page = m[1]
		}
	}
	assert.Assert(t, page != "", "no page: %s %s", stdout.String(), stderr.String())
	data, err := os.ReadFile(page)
	assert.NilError(t, err)
	forms := formRE.FindAllStringSubmatch(string(data), -1)
	assert.Assert(t, is.Len(forms, 2), "%s", data)

	for i, form := range forms {
		action, err := url.Parse(html.UnescapeString(form[1]))
		assert.NilError(t, err)
		assert.Check(t, is.Equal(action.Scheme+"://"+action.Host+action.Path, "https://github.example/organizations/my-org/settings/apps/new"))
		// The user clicks Create on GitHub; GitHub sends the browser back.
		appCode, redirect, err := gh.CreateAppFromManifest("my-org", []byte(html.UnescapeString(form[2])))
		assert.NilError(t, err)
		back := redirect + "?code=" + url.QueryEscape(appCode) + "&state=" + action.Query().Get("state")
		if i == 0 {
			resp, err := http.Get(redirect + "?code=" + appCode + "&state=forged")
			assert.NilError(t, err)
			resp.Body.Close()
			assert.Check(t, is.Equal(resp.StatusCode, http.StatusBadRequest), "a state the page did not issue")
		}
		resp, err := http.Get(back)
		assert.NilError(t, err)
		body := new(bytes.Buffer)
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		assert.Check(t, is.Equal(resp.StatusCode, http.StatusOK), body.String())
		assert.Check(t, is.Contains(body.String(), "/installations/new"))
	}
	select {
	case c := <-code:
		assert.Equal(t, c, ExitOK, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("runpod-gpu app did not return")
	}
	text := stdout.String()
	assert.Check(t, is.Contains(text, "gh variable set RUNPOD_GPU_APP_ID"))
	assert.Check(t, is.Contains(text, "gh secret set RUNPOD_GPU_RUNNER_APP_PRIVATE_KEY --env runpod-gpu"))
	assert.Check(t, !strings.Contains(text, "PRIVATE KEY-----"), "the key is never printed")
	keys, _ := os.ReadDir(out)
	var pems int
	for _, k := range keys {
		if strings.HasSuffix(k.Name(), ".private-key.pem") {
			pems++
			info, err := k.Info()
			assert.NilError(t, err)
			assert.Check(t, is.Equal(info.Mode().Perm(), os.FileMode(0o600)))
		}
	}
	assert.Check(t, is.Equal(pems, 2))
}
