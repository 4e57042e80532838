package devcli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
)

// appFlags are runpod-gpu app's flags.
type appFlags struct {
	name, org, suite, out     string
	split, orgRunners, noWait bool
	printManifest             bool
	wait, installWait         time.Duration
	repo, dir, saveKey        string
	// forInit: init runs the App step and says what remains itself.
	forInit bool
}

// The waits app and init give the browser steps.
const (
	appCreateWait  = 15 * time.Minute
	appInstallWait = 10 * time.Minute
)

func (a *app) appCreateCmd() *cobra.Command {
	f := appFlags{}
	cmd := &cobra.Command{
		Use:   "app [--org ORG] [--name NAME] [--split] [--repo OWNER/NAME] [--save-key FILE]",
		Short: "Create the lane's GitHub App(s) from a manifest, in one click each, and hand the key to GitHub",
		Long: `app writes a page with GitHub's App-manifest form (POST to
https://github.com/settings/apps/new, or your organization's) filled in with
exactly the permissions the lane's jobs use, and prints where it is: open it,
click Create, and GitHub creates the App. GitHub then sends the browser back
to this command (on 127.0.0.1), which trades the code for the App's id and
private key, held in memory and never printed.

It then waits (--install-wait, printed) for the App's installation on the
repository (--repo, default: the origin of --dir), and hands the key and
the ids straight to GitHub with the token in GH_TOKEN (or GITHUB_TOKEN): the
environment runpod-gpu (created if missing) gets the secret
RUNPOD_GPU_APP_PRIVATE_KEY, and the repository the variables
RUNPOD_GPU_APP_ID and RUNPOD_GPU_APP_INSTALLATION_ID, where the lane's
workflows read them; the gate's ruleset is bound to the App. The key is
written to disk only with --save-key FILE (mode 0600; with --split the runner
App's key goes to FILE.runner). It ends with the remaining steps, in the
order they can be done.

With --split it makes two Apps: a checks App (app-id) that publishes the
gate, and a runner App (runner-app-id) that mints runners. --print-manifest
prints the manifest(s) as JSON and stops; --no-wait writes the page without
waiting (then generate a private key on the App's page).`,
		Example: `  GH_TOKEN=$(gh auth token) runpod-gpu app --org my-org
  runpod-gpu app --split --name "my-org GPU CI" --repo my-org/gpu-lib
  runpod-gpu app --save-key ~/.config/runpod-gpu/app.pem
  runpod-gpu app --print-manifest`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runAppCreate(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "", "the App's name, unique on GitHub (default: runpod-gpu-<--org, else the repository's owner>)")
	fl.StringVar(&f.org, "org", "", "create the App in this organization (default: your user)")
	fl.StringVar(&f.suite, "suite", strings.Split(defaultSuite(), "@")[0], "your copy, OWNER/runpod-gpu: the App's homepage")
	fl.StringVar(&f.out, "out", "", "where the page and the private key(s) go (default: a new temporary directory)")
	fl.BoolVar(&f.split, "split", false, "two Apps: the checks App and the runner App")
	fl.BoolVar(&f.orgRunners, "org-runners", false, "the App that provisions also registers organization runners (runner-scope: org)")
	fl.BoolVar(&f.noWait, "no-wait", false, "write the page and return, without receiving the App's key")
	fl.BoolVar(&f.printManifest, "print-manifest", false, "print the manifest(s) as JSON and stop")
	fl.DurationVar(&f.wait, "wait", appCreateWait, "how long to wait for GitHub to send the browser back")
	fl.DurationVar(&f.installWait, "install-wait", appInstallWait, "how long to wait for the App's installation on the repository")
	fl.StringVar(&f.repo, "repo", "", "the repository the lane runs for, OWNER/NAME (default: the origin of --dir)")
	fl.StringVar(&f.dir, "dir", ".", "the repository checkout whose origin names the repository")
	fl.StringVar(&f.saveKey, "save-key", "", "also write the App's private key to FILE (mode 0600); otherwise it never touches disk")
	return cmd
}

// createdApp is what the manifest conversion returns, less the secrets
// this command does not keep.
type createdApp struct {
	ID      int64  `json:"id"`
	Slug    string `json:"slug"`
	Name    string `json:"name"`
	HTMLURL string `json:"html_url"`
	PEM     string `json:"pem"`
}

func (a *app) runAppCreate(cmd *cobra.Command, f appFlags) error {
	if f.printManifest {
		f.name = appName(f)
		return writeJSON(a.env.Stdout, callers.Manifests(callers.ManifestOptions{Name: f.name, Suite: f.suite, Split: f.split, OrgRunners: f.orgRunners}))
	}
	target, githubStep, err := a.githubRepository(f.repo, f.dir)
	if err != nil {
		return err
	}
	if !f.noWait && githubStep != "" && f.saveKey == "" {
		return fail(ExitUsage, "the App's key would be lost: set GH_TOKEN (GH_TOKEN=$(gh auth token)) so it goes straight to GitHub, and --repo OWNER/NAME outside a checkout, or pass --save-key FILE")
	}
	_, err = a.createApps(cmd.Context(), f, target, githubStep)
	return err
}

// appName is --name, else runpod-gpu-<--org, else the repository's owner>:
// App names are global on GitHub, so never the suite's owner (the same for
// every adopter of the published suite).
func appName(f appFlags) string {
	repoOwner, _, _ := strings.Cut(firstNonEmpty(f.repo, originRepository(f.dir)), "/")
	return firstNonEmpty(f.name, "runpod-gpu-"+firstNonEmpty(f.org, repoOwner, strings.Split(f.suite, "/")[0]))
}

// createApps runs the manifest flow (the page, GitHub's redirect, the code
// traded for the App) and hands the App(s) to GitHub; runpod-gpu app and
// runpod-gpu init (for a repository without an App) share it.
func (a *app) createApps(ctx context.Context, f appFlags, target ghRepository, githubStep string) ([]createdApp, error) {
	f.name = appName(f)
	if !f.noWait && githubStep == "" {
		// Before the browser step: the App's key lives only in memory, so a
		// token that cannot store it must be found while nothing exists yet.
		if err := a.checkGitHubAccess(ctx, target); err != nil {
			return nil, err
		}
	}
	var ln net.Listener
	redirect := ""
	if !f.noWait {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fail(ExitFailure, "listen on 127.0.0.1 for GitHub's redirect: %v (use 'runpod-gpu app --no-wait')", err)
		}
		defer ln.Close()
		redirect = "http://" + ln.Addr().String() + "/created"
	}
	manifests := callers.Manifests(callers.ManifestOptions{Name: f.name, Suite: f.suite, Split: f.split, OrgRunners: f.orgRunners, RedirectURL: redirect})
	_, page, states, err := a.writeManifestPage(f, manifests)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(a.env.Stdout, "Open this page in your browser and click Create for each App:\n  file://%s\n", page)
	if f.noWait {
		fmt.Fprint(a.env.Stdout, "\nThen, on each App's page: Generate a private key, and Install App on your repository.\n")
		return nil, nil
	}
	fmt.Fprintf(a.env.Stdout, "Waiting up to %s for GitHub to send the browser back to %s …\n", f.wait, redirect)
	wctx, cancel := a.bound(ctx, f.wait)
	defer cancel()
	created, err := a.receiveApps(wctx, ln, states)
	if err != nil {
		return nil, err
	}
	return created, a.handOff(ctx, created, f, target, githubStep)
}

// writeManifestPage writes the form page; each App's form carries its own
// state, which GitHub sends back with the code.
func (a *app) writeManifestPage(f appFlags, manifests []callers.Manifest) (dir, page string, states map[string]callers.Manifest, err error) {
	dir = f.out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "runpod-gpu-app-"); err != nil {
			return "", "", nil, fail(ExitFailure, "%v", err)
		}
	}
	if err = os.MkdirAll(dir, 0o700); err != nil {
		return "", "", nil, fail(ExitFailure, "%v", err)
	}
	webURL := firstNonEmpty(a.env.Getenv("GITHUB_WEB_URL"), "https://github.com")
	states = map[string]callers.Manifest{}
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Create the runpod-gpu GitHub App</title></head>\n<body>\n")
	b.WriteString("<h1>Create the runpod-gpu GitHub App</h1>\n<p>Each button posts GitHub's App-manifest form: review the App on GitHub and click <b>Create GitHub App</b>. ")
	b.WriteString("GitHub then sends you back to <code>runpod-gpu app</code>, which keeps the App's private key.</p>\n")
	for _, m := range manifests {
		state, err := randomHex(16)
		if err != nil {
			return "", "", nil, fail(ExitFailure, "%v", err)
		}
		states[state] = m
		body, _ := json.Marshal(m)
		fmt.Fprintf(&b, "<form action=\"%s\" method=\"post\">\n  <p>%s: %s</p>\n  <input type=\"hidden\" name=\"manifest\" value=\"%s\">\n  <button type=\"submit\">Create the App %q</button>\n</form>\n",
			html.EscapeString(callers.CreationURL(webURL, f.org, state)), html.EscapeString(m.Name), html.EscapeString(callers.Levels(m.DefaultPermissions).String()),
			html.EscapeString(string(body)), m.Name)
	}
	b.WriteString("</body></html>\n")
	page, _ = filepath.Abs(filepath.Join(dir, "create-github-app.html"))
	if err = os.WriteFile(page, []byte(b.String()), 0o600); err != nil {
		return "", "", nil, fail(ExitFailure, "%v", err)
	}
	return dir, page, states, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// receiveApps serves GitHub's redirects until every App is created, trading
// each code for the App's id and key.
func (a *app) receiveApps(ctx context.Context, ln net.Listener, states map[string]callers.Manifest) ([]createdApp, error) {
	results := make(chan createdApp, len(states))
	pending := map[string]bool{}
	for s := range states {
		pending[s] = true
	}
	done := map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("/created", func(w http.ResponseWriter, r *http.Request) {
		state, code := r.URL.Query().Get("state"), r.URL.Query().Get("code")
		if !pending[state] || done[state] || code == "" {
			http.Error(w, "runpod-gpu app: this page expects GitHub's redirect after creating the App", http.StatusBadRequest)
			return
		}
		created, err := a.convertManifestCode(ctx, code)
		if err != nil {
			fmt.Fprintf(a.env.Stderr, "runpod-gpu: %v\n", err)
			http.Error(w, "runpod-gpu app: "+err.Error(), http.StatusBadGateway)
			return
		}
		fmt.Fprintf(w, "<!doctype html><p>App %s created (id %d); runpod-gpu app holds its private key. Now <a href=\"%s/installations/new\">install it on your repository</a>, then return to the terminal.</p>",
			html.EscapeString(created.Name), created.ID, html.EscapeString(created.HTMLURL))
		done[state] = true
		results <- created
	})
	srv := &http.Server{Handler: serialHandler(mux), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // Serve ends with ErrServerClosed
	defer srv.Close()
	var created []createdApp
	for len(created) < len(states) {
		select {
		case c := <-results:
			created = append(created, c)
		case <-ctx.Done():
			return created, fail(ExitFailure, "no App was created within the wait (%d of %d): run 'runpod-gpu app' again", len(created), len(states))
		}
	}
	return created, nil
}

// serialHandler answers one request at a time: the state bookkeeping
// above is not shared between requests.
func serialHandler(h http.Handler) http.Handler {
	lock := make(chan struct{}, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lock <- struct{}{}
		defer func() { <-lock }()
		h.ServeHTTP(w, r)
	})
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// convertManifestCode trades the code (POST /app-manifests/{code}/conversions,
// no authentication) for the App's id and private key, kept in memory.
func (a *app) convertManifestCode(ctx context.Context, code string) (createdApp, error) {
	apiURL, err := a.serviceURL("GITHUB_API_URL")
	if err != nil {
		return createdApp{}, err
	}
	api := strings.TrimRight(firstNonEmpty(apiURL, "https://api.github.com"), "/")
	policy := reqpolicy.New(reqpolicy.WithClock(a.env.Clock), reqpolicy.WithSleeper(a.env.Sleep))
	client := &http.Client{Transport: policy.Transport(http.DefaultTransport)}
	if a.env.HTTPClient != nil && a.env.HTTPClient.Transport != nil {
		client.Transport = policy.Transport(a.env.HTTPClient.Transport)
	}
	cctx, cancel := a.bound(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, api+"/app-manifests/"+url.PathEscape(code)+"/conversions", nil)
	if err != nil {
		return createdApp{}, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := client.Do(req)
	if err != nil {
		return createdApp{}, fmt.Errorf("trade the manifest code: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusCreated {
		return createdApp{}, fmt.Errorf("trade the manifest code: GitHub answered %s (a code works once, within an hour)", resp.Status)
	}
	var c createdApp
	if err := json.Unmarshal(data, &c); err != nil || c.ID <= 0 || !slugRE.MatchString(c.Slug) || !strings.Contains(c.PEM, "PRIVATE KEY") {
		return createdApp{}, fmt.Errorf("trade the manifest code: the answer has no usable App id, slug and key")
	}
	return c, nil
}
