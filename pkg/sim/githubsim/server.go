package githubsim

import (
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
)

// ActionsAppID is the app id of the GitHub Actions app, whose installation token is GITHUB_TOKEN.
const ActionsAppID int64 = 15368

// maxBodyBytes bounds request bodies; GitHub's own limits are far below what tests send.
const maxBodyBytes = 4 << 20

// Identity is who a token acts as: a user (AppID 0) or a GitHub App installation.
type Identity struct {
	// Login is the user login, or for an App its bot login ("<slug>[bot]" when empty).
	Login string
	// AppID is the GitHub App behind an installation token; 0 for a user token.
	AppID int64
	// AppSlug is the App's URL name, shown in check runs' app object.
	AppSlug string
}

// ActionsIdentity is the identity of a workflow's GITHUB_TOKEN.
func ActionsIdentity() Identity {
	return Identity{Login: "github-actions[bot]", AppID: ActionsAppID, AppSlug: "github-actions"}
}

func (id Identity) normalized() Identity {
	if id.AppID != 0 && id.AppSlug == "" {
		id.AppSlug = "app-" + itoa(id.AppID)
	}
	if id.Login == "" && id.AppID != 0 {
		id.Login = id.AppSlug + "[bot]"
	}
	return id
}

// Option configures a Server.
type Option func(*Server)

// WithClock makes the server read time only from c, the simulation's only source
// of time; tests and benchmarks pass a *simclock.Virtual, which moves only when
// told to. The default is the wall clock.
func WithClock(c clock.Clock) Option { return func(s *Server) { s.clock = c } }

// WithSeed seeds the streams that secrets, tokens and probabilistic faults draw from.
func WithSeed(seed uint64) Option { return func(s *Server) { s.seed = seed } }

// WithToken accepts token as a bearer credential acting as id.
func WithToken(token string, id Identity) Option {
	return func(s *Server) { s.tokens[token] = &credential{who: id.normalized()} }
}

// WithApp registers a GitHub App whose JWTs may mint installation tokens.
func WithApp(app App) Option { return func(s *Server) { s.apps[app.ID] = app } }

// WithRateLimit sets the primary rate limit: requests per identity per hour (default 5000).
func WithRateLimit(perHour int) Option { return func(s *Server) { s.rateLimit = perHour } }

// WithFault installs a fault rule from the start; see Server.AddFault.
func WithFault(f Fault) Option {
	return func(s *Server) { s.faults = append(s.faults, &faultRule{Fault: f}) }
}

// Server is the simulated GitHub. It is safe for concurrent use.
type Server struct {
	mu        sync.Mutex
	mux       *http.ServeMux
	clock     clock.Clock
	seed      uint64
	secrets   *rand.Rand // JIT secrets, tokens, download keys
	faultRand *rand.Rand // probabilistic faults, separate so minting never shifts fault draws
	webURL    string
	rateLimit int
	lastID    int64

	tokens          map[string]*credential
	apps            map[int64]App
	rate            map[string]*rateWindow
	users           map[string]*user
	stableIDs       map[string]int64
	repos           map[string]*repo
	runnerGroups    map[int64]string
	runners         []*runner
	jitSecrets      map[string]*runner
	everyRunner     map[int64]*runner // by id, including removed ones
	checkRuns       []*checkRun
	checkSuites     map[string]int64
	workflowRuns    []*workflowRun
	jobs            map[int64]*job
	lostJobs        []*job                    // in progress on a runner that went offline; see external.go
	runnerLost      time.Duration             // how long a lost runner's job stays in progress
	runtimes        map[string]*runtimeGrant  // ACTIONS_RUNTIME_TOKEN → its run; see results.go
	uploads         map[string]*pendingUpload // signed upload key → its artifact; see results.go
	waiting         []*job                    // queued jobs with labels, waiting for a runner
	running         []*job                    // jobs whose steps follow the clock
	artifacts       []*artifact
	blobs           map[string]*blob
	faults          []*faultRule
	rewrites        []*rewriteRule         // see rewrites.go
	commits         map[string]*gitCommit  // "owner/name@sha" → tree and parents; see trees.go
	compares        map[string][]string    // "owner/name@base...head" → files changed; see trees.go
	installations   map[int64]Installation // see installations.go
	setups          map[string]*repoSetup  // see setup.go
	rulesets        map[string]*repoRules  // see rulesets.go
	setupWrites     map[string]*repoWrites // see setupwrite.go
	tokenScopes     map[string][]string    // classic tokens' OAuth scopes; see setupwrite.go
	pendingApps     map[string]*pendingApp // manifest codes; see manifests.go
	orgRunnerGroups map[string]RunnerGroup // "org/id" → group; see setup.go
	requests        []Request
	dispatches      []Dispatch
	cancellations   []Cancellation
}

// New returns a Server with no repositories; add them with AddRepo.
func New(opts ...Option) *Server {
	s := &Server{
		clock:        clock.Wall{},
		webURL:       "https://github.com",
		rateLimit:    5000,
		tokens:       map[string]*credential{},
		apps:         map[int64]App{},
		rate:         map[string]*rateWindow{},
		users:        map[string]*user{},
		stableIDs:    map[string]int64{},
		repos:        map[string]*repo{},
		runnerGroups: map[int64]string{1: "Default"},
		jitSecrets:   map[string]*runner{},
		everyRunner:  map[int64]*runner{},
		checkSuites:  map[string]int64{},
		jobs:         map[int64]*job{},
		blobs:        map[string]*blob{},
		runnerLost:   RunnerLostTimeout,
		runtimes:     map[string]*runtimeGrant{},
		uploads:      map[string]*pendingUpload{},
	}
	for _, opt := range opts {
		opt(s)
	}
	if s.clock == nil {
		s.clock = clock.Wall{}
	}
	if s.rateLimit < 1 {
		s.rateLimit = 5000
	}
	s.secrets = rand.New(rand.NewChaCha8(seedBytes(s.seed, 1)))
	s.faultRand = rand.New(rand.NewChaCha8(seedBytes(s.seed, 2)))
	s.routes()
	return s
}

func seedBytes(seed uint64, stream byte) [32]byte {
	var b [32]byte
	for i := range 8 {
		b[i] = byte(seed >> (8 * i))
	}
	b[31] = stream
	return b
}

// ServeHTTP answers one API request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// nextID hands out one id sequence for every kind of object, so an id passed where another
// kind was expected finds nothing instead of a wrong object.
func (s *Server) nextID() int64 {
	s.lastID++
	return s.lastID
}

// stableID gives an object known only by name (a label, a fork) the same id every time.
func (s *Server) stableID(key string) int64 {
	id, ok := s.stableIDs[key]
	if !ok {
		id = s.nextID()
		s.stableIDs[key] = id
	}
	return id
}

// Request is one API call the server answered, as recorded for tests that count calls.
// Credentials and bodies are never recorded.
type Request struct {
	Method string
	Path   string
	Query  string
	Status int
	// Login is the identity that made the call; empty when it was not authenticated.
	Login string
	At    time.Time
}

// Requests returns every request answered so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// CountRequests counts answered requests whose method matches (empty matches any) and whose
// path matches pattern in path.Match syntax (for example "/repos/*/*/actions/runners").
func (s *Server) CountRequests(method, pattern string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if method != "" && r.Method != method {
			continue
		}
		if ok, _ := path.Match(pattern, r.Path); ok {
			n++
		}
	}
	return n
}

// authMode says how an endpoint authenticates its caller.
type authMode int

const (
	authToken  authMode = iota // a token from WithToken or a minted installation token
	authAppJWT                 // a JWT signed by a registered App's key
	authNone                   // /_sim/ endpoints: the JIT config or download key is the credential
)

// call is one request being answered; handlers fill in the reply.
type call struct {
	s      *Server
	r      *http.Request
	now    time.Time
	who    Identity
	scope  repoScope // the installation token's repositories; nil: all
	body   []byte
	apiURL string
	status int
	header http.Header
	out    []byte
}

type handler func(c *call) error

func (s *Server) handle(pattern string, mode authMode, h handler) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
		c := &call{s: s, r: r, body: body, header: http.Header{}, apiURL: apiURL(r)}
		s.mu.Lock()
		c.now = s.clock.Now()
		s.advance(c.now)
		switch {
		case err != nil:
			c.fail(newError(http.StatusBadRequest, ErrInvalid, "Problems reading the body"))
		case len(body) > maxBodyBytes:
			c.fail(newError(http.StatusRequestEntityTooLarge, ErrInvalid, "Request body too large"))
		default:
			s.serve(c, mode, h)
			s.rewriteAnswer(c)
			s.conditional(c)
		}
		s.requests = append(s.requests, Request{
			Method: r.Method, Path: loggedPath(r), Query: r.URL.RawQuery,
			Status: c.status, Login: c.who.Login, At: c.now,
		})
		s.mu.Unlock()

		// Written after unlocking so a slow client never stalls the simulation.
		for k, v := range c.header {
			w.Header()[k] = v
		}
		w.WriteHeader(c.status)
		_, _ = w.Write(c.out)
	})
}

// loggedPath is the path as the request log keeps it: download keys are credentials, so
// they are left out.
func loggedPath(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, "/_sim/blobs/") {
		return "/_sim/blobs/{key}"
	}
	if strings.HasPrefix(r.URL.Path, "/_sim/uploads/") {
		return "/_sim/uploads/{key}"
	}
	return r.URL.Path
}

func (s *Server) serve(c *call, mode authMode, h handler) {
	if s.injectFault(c) {
		return
	}
	switch mode {
	case authToken:
		if err := s.authenticate(c); err != nil {
			c.fail(err)
			return
		}
		if err := s.countRate(c); err != nil {
			c.fail(err)
			return
		}
	case authAppJWT:
		if err := s.authenticateApp(c); err != nil {
			c.fail(err)
			return
		}
	}
	if err := h(c); err != nil {
		c.fail(err)
	}
}

func apiURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// errorBody is GitHub's error document.
type errorBody struct {
	Message          string `json:"message"`
	DocumentationURL string `json:"documentation_url"`
	Status           string `json:"status"`
}

func (c *call) fail(err error) {
	var e *Error
	if !errors.As(err, &e) {
		e = newError(http.StatusInternalServerError, err, "Server Error")
	}
	msg := e.Message
	if e.Status == http.StatusNotFound {
		msg = "Not Found" // GitHub never says which part was missing.
	}
	doc := e.docURL
	if doc == "" {
		doc = docsURL
	}
	c.writeJSON(e.Status, errorBody{Message: msg, DocumentationURL: doc, Status: itoa(int64(e.Status))})
}

const docsURL = "https://docs.github.com/rest"

func (c *call) writeJSON(status int, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		// Every reply is built from the simulator's own types; failing here is a simulator bug.
		status, out = http.StatusInternalServerError, []byte(`{"message":"Server Error"}`)
	}
	c.header.Set("Content-Type", "application/json; charset=utf-8")
	c.status, c.out = status, out
}

// repoAndID is the call's repository and the positive integer its path's
// param names (a run, job, pull request or issue number).
func (c *call) repoAndID(param string) (*repo, int64, error) {
	rp, err := c.repo()
	if err != nil {
		return nil, 0, err
	}
	id, err := pathInt(c, param)
	return rp, id, err
}

// getOne answers a GET of one object: the object find reads from the path,
// rendered, or find's error.
func getOne[T, J any](c *call, find func(*call) (T, error), render func(T) J) error {
	v, err := find(c)
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusOK, render(v))
	return nil
}

// repoObject is the object of the call's repository whose id the path's
// param names, or a 404 naming what.
func repoObject[T any](c *call, param, what string, all []T, key func(T) (int64, *repo)) (T, error) {
	var none T
	rp, id, err := c.repoAndID(param)
	if err != nil {
		return none, err
	}
	for _, v := range all {
		if vid, vrp := key(v); vid == id && vrp == rp {
			return v, nil
		}
	}
	return none, notFound("%s %d", what, id)
}

func (c *call) noContent(status int) {
	c.status, c.out = status, nil
}

func (c *call) redirect(location string) {
	c.header.Set("Location", location)
	c.status, c.out = http.StatusFound, nil
}

// decode reads a JSON object body into v; bad JSON is GitHub's 400 "Problems parsing JSON".
func (c *call) decode(v any) error {
	if len(strings.TrimSpace(string(c.body))) == 0 {
		return newError(http.StatusBadRequest, ErrInvalid, "Problems parsing JSON")
	}
	if err := json.Unmarshal(c.body, v); err != nil {
		return newError(http.StatusBadRequest, ErrInvalid, "Problems parsing JSON")
	}
	return nil
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.handle("/", authToken, func(c *call) error { return notFound("no route for %s %s", c.r.Method, c.r.URL.Path) })

	s.handle("POST /app/installations/{installation_id}/access_tokens", authAppJWT, s.createInstallationToken)

	s.handle("POST /repos/{owner}/{repo}/actions/runners/generate-jitconfig", authToken, s.generateJITConfig)
	s.handle("POST /orgs/{org}/actions/runners/generate-jitconfig", authToken, s.generateJITConfig)
	s.handle("GET /repos/{owner}/{repo}/actions/runners", authToken, s.listRunners)
	s.handle("GET /orgs/{org}/actions/runners", authToken, s.listRunners)
	s.handle("GET /repos/{owner}/{repo}/actions/runners/{runner_id}", authToken, s.getRunner)
	s.handle("GET /orgs/{org}/actions/runners/{runner_id}", authToken, s.getRunner)
	s.handle("DELETE /repos/{owner}/{repo}/actions/runners/{runner_id}", authToken, s.deleteRunner)
	s.handle("DELETE /orgs/{org}/actions/runners/{runner_id}", authToken, s.deleteRunner)

	s.handle("POST /repos/{owner}/{repo}/check-runs", authToken, s.createCheckRun)
	s.handle("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", authToken, s.updateCheckRun)
	s.handle("GET /repos/{owner}/{repo}/check-runs/{check_run_id}", authToken, s.getCheckRun)
	s.handle("GET /repos/{owner}/{repo}/commits/{ref...}", authToken, s.listCheckRunsForRef)
	s.handle("GET /repos/{owner}/{repo}/git/commits/{commit_sha}", authToken, s.getGitCommit)
	s.handle("GET /repos/{owner}/{repo}/compare/{basehead}", authToken, s.compareCommits)

	s.handle("GET /repos/{owner}/{repo}/pulls/{pull_number}", authToken, s.getPullRequest)
	s.handle("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", authToken, s.listPullRequestFiles)
	s.handle("GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews", authToken, s.listPullRequestReviews)
	s.handle("POST /graphql", authToken, s.graphql)
	s.handle("POST /api/graphql", authToken, s.graphql)
	s.handle("GET /repos/{owner}/{repo}/issues/{issue_number}/comments", authToken, s.listIssueComments)
	s.handle("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", authToken, s.createIssueComment)
	s.handle("GET /repos/{owner}/{repo}/collaborators/{username}/permission", authToken, s.getPermission)

	s.handle("GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}", authToken, s.getWorkflow)
	s.handle("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", authToken, s.dispatchWorkflow)
	s.handle("GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", authToken, s.listWorkflowRuns)
	s.handle("GET /repos/{owner}/{repo}/actions/runs", authToken, s.listWorkflowRuns)
	s.handle("GET /repos/{owner}/{repo}/actions/runs/{run_id}", authToken, s.getWorkflowRun)
	s.handle("GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}", authToken, s.getWorkflowRun)
	s.handle("GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs", authToken, s.listJobs)
	s.handle("GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs", authToken, s.listJobs)
	s.handle("GET /repos/{owner}/{repo}/actions/jobs/{job_id}", authToken, s.getJob)
	s.handle("POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel", authToken, s.cancelWorkflowRun)
	s.handle("GET /repos/{owner}/{repo}/actions/runs/{run_id}/logs", authToken, s.downloadRunLogs)
	s.handle("GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/logs", authToken, s.downloadRunLogs)

	s.handle("GET /repos/{owner}/{repo}/actions/artifacts", authToken, s.listArtifacts)
	s.handle("GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", authToken, s.listArtifacts)
	s.handle("GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}", authToken, s.getArtifact)
	s.handle("GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}", authToken, s.downloadArtifact)

	s.handle("POST /_sim/runners/connect", authNone, s.connectRunner)
	s.handle("POST /_sim/runners/disconnect", authNone, s.disconnectRunner)
	s.handle("GET /_sim/blobs/{key}", authNone, s.getBlob)
	s.installationRoutes()
	s.resultsRoutes()
	s.setupRoutes()
	s.rulesetRoutes()
	s.setupWriteRoutes()
	s.mergeRoutes()
	s.manifestRoutes()
}
