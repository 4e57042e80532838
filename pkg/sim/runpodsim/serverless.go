package runpodsim

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// The Serverless half of the simulated RunPod: templates and endpoints on the
// management host (REST v2, validated against the contract like pods), and
// the job host (see JobHost) whose workers run jobs through a JobWorker and
// are billed per second from their start to their stop.
//
// Routes added to the management host:
//
//	GET|POST /v2/templates          GET|DELETE /v2/templates/{id}
//	GET|POST /v2/serverless         GET|PATCH|DELETE /v2/serverless/{id}
//
// Semantics: template names are unique (400 on a duplicate); deleting a
// template an endpoint uses answers 400; deleting an endpoint stops its
// worker, cancels its jobs and deletes its template, as RunPod documents.

// JobWorker runs one Serverless job. Run is called on its own goroutine when
// the job starts; ctx is cancelled when the job is cancelled, times out or
// its endpoint is deleted. It must return promptly after that.
type JobWorker interface {
	Run(ctx context.Context, job WorkerJob) WorkerResult
}

// JobWorkerFunc adapts a function to JobWorker.
type JobWorkerFunc func(ctx context.Context, job WorkerJob) WorkerResult

// Run calls f.
func (f JobWorkerFunc) Run(ctx context.Context, job WorkerJob) WorkerResult { return f(ctx, job) }

// WorkerJob is what a worker receives: the job's input and the container its
// template describes.
type WorkerJob struct {
	EndpointID string
	JobID      string
	Input      json.RawMessage
	Image      string
	Env        map[string]string
	// ExecutionTimeout is the provider's bound on this job.
	ExecutionTimeout time.Duration
	// GPUType is the card the worker runs on: a type of the endpoint's pools
	// that its excludedTypes leave (ServerlessConfig.Placement picks one).
	GPUType string
}

// WorkerResult is a handler's answer. A non-empty Error makes the job FAILED
// with Output kept beside it, as the pinned worker SDK does; otherwise it is
// COMPLETED with Output.
type WorkerResult struct {
	Output json.RawMessage
	Error  string
}

// ServerlessConfig configures the Serverless half.
type ServerlessConfig struct {
	// Worker runs jobs; nil completes every job at once with {"ok":true}.
	Worker JobWorker
	// ColdStart is how long a new worker initialises before it takes a job (default 1 s).
	ColdStart time.Duration
	// PricePerHour bills a running worker (default 0.58, AMPERE_16 flex).
	PricePerHour float64
	Faults       ServerlessFaults
	// Placement picks the card a worker runs on among the types the
	// endpoint's pools hold less its exclusions, in the market's order;
	// nil takes the first. Like RunPod, the simulator places a worker on any
	// card of a pool the request does not exclude.
	Placement func(eligible []string) string
}

// ServerlessFaults are the Serverless fault plan.
type ServerlessFaults struct {
	// WorkersMax, when positive, replaces the workers.max of every created
	// endpoint: the live API was seen turning a requested 0 into 3.
	WorkersMax int
	// LostCreates create the template or endpoint and then answer a 5xx.
	LostCreates []ServerlessLostCreate
	// IdleWorkerAtCreate starts a worker when an endpoint is created, with no
	// job: RunPod was seen doing so with min 0 workers, and it bills.
	IdleWorkerAtCreate bool
	// JobHostUnauthorized answers 401 on the job host whatever the key: a key
	// binding that reaches the management host but not api.runpod.ai.
	JobHostUnauthorized bool
	// DeleteFailures makes the first FailFirst DELETEs of each template and
	// endpoint answer Status (default 500); nothing is deleted.
	DeleteFailures DeleteFault
	// StuckJobs start and never end: the worker never answers and the
	// provider enforces neither the execution timeout nor the TTL. Only a
	// cancel or the endpoint's deletion ends them.
	StuckJobs bool
}

// ServerlessLostCreate hits creates of Route ("POST /v2/templates" or "POST
// /v2/serverless"), counted from 1 per route.
type ServerlessLostCreate struct {
	Route  string
	When   Trigger
	Status int // default 502
}

// WithServerless configures the Serverless half.
func WithServerless(c ServerlessConfig) Option { return func(cfg *config) { cfg.serverless = c } }

const (
	streamTemplateID = 40 + iota
	streamEndpointID
	streamJobID
	streamServerlessLost
)

type slsState struct {
	templates   []*template
	endpoints   []*endpoint
	jobs        map[string]*job
	creates     map[string]int // per create route, for LostCreates
	deletes     map[string]int // per resource id, for DeleteFailures
	seq         int
	workers     []*worker
	wg          sync.WaitGroup
	jobRequests []RequestRecord
	hidden      bool // SetServerlessListingHidden
}

// object is what templates and endpoints share: an id, a name unique among
// the live ones, and the deletion that hides them from every read.
type object struct {
	id, name string
	deleted  bool
}

func (o *object) base() *object { return o }

// liveObject is a template or an endpoint.
type liveObject interface{ base() *object }

// findLive is the live object of id; ok is false when there is none.
func findLive[T liveObject](objs []T, id string) (o T, ok bool) {
	for _, o := range objs {
		if b := o.base(); b.id == id && !b.deleted {
			return o, true
		}
	}
	return o, false
}

// byPath is the live object the path's {id} names, or RunPod's 404.
func byPath[T liveObject](objs []T, r *http.Request, kind string) (T, *response) {
	o, found := findLive(objs, r.PathValue("id"))
	if !found {
		resp := problemResponse(http.StatusNotFound, "%s not found", kind)
		return o, &resp
	}
	return o, nil
}

// nameTaken answers 400, as RunPod does, when a live object already has name.
func nameTaken[T liveObject](objs []T, kind, name string) (response, bool) {
	for _, o := range objs {
		if b := o.base(); b.name == name && !b.deleted {
			return problemResponse(http.StatusBadRequest, "%s name %q must be unique", kind, name), true
		}
	}
	return response{}, false
}

// listing is a collection's GET: every live object rendered under key, or
// none while the listing is hidden.
func listing[T liveObject, B any](s *Server, key string, objs func() []T, render func(T) B) handler {
	return func(*http.Request, []byte, time.Time) response {
		out := []B{}
		for _, o := range objs() {
			if !o.base().deleted && !s.sls().hidden {
				out = append(out, render(o))
			}
		}
		return ok(http.StatusOK, map[string]any{key: out})
	}
}

// single is an object's GET: the live object the path names, rendered, or
// RunPod's 404.
func single[T liveObject, B any](objs func() []T, kind string, render func(T) B) handler {
	return func(r *http.Request, _ []byte, _ time.Time) response {
		o, missing := byPath(objs(), r, kind)
		if missing != nil {
			return *missing
		}
		return ok(http.StatusOK, render(o))
	}
}

type template struct {
	object
	image, args      string
	disk             int
	env              map[string]string
	ports            []string
	public, startSSH bool
	startJupyter     bool
	category         string
}

type endpoint struct {
	object
	templateID              string
	image                   string
	disk                    int
	env                     map[string]string
	pools, excluded         []string
	dataCenters             []string
	gpuCount                int
	min, max, idle          int
	timeoutMS               int64
	scaling                 map[string]any
	flashboot               string
	createdAt               time.Time
	worker                  *worker
	completed, failed, retr int
}

type worker struct {
	endpointID  string
	gpuType     string    // the card it runs on
	start, stop time.Time // stop zero while alive
	readyAt     time.Time
	busy        *job
	idleTimer   simclock.Timer
}

func (s *Server) sls() *slsState { return s.slsState }

// registerServerless is the hook New calls: the state and the management routes.
func (s *Server) registerServerless() {
	s.slsState = &slsState{jobs: map[string]*job{}, creates: map[string]int{}, deletes: map[string]int{}}
	templates := func() []*template { return s.sls().templates }
	endpoints := func() []*endpoint { return s.sls().endpoints }
	s.handle("/v2/templates", map[string]handler{http.MethodGet: listing(s, "templates", templates, (*template).render), http.MethodPost: s.createTemplate})
	s.handle("/v2/templates/{id}", map[string]handler{http.MethodGet: single(templates, "template", (*template).render), http.MethodDelete: s.deleteTemplate})
	s.handle("/v2/serverless", map[string]handler{http.MethodGet: listing(s, "endpoints", endpoints, (*endpoint).render), http.MethodPost: s.createEndpoint})
	s.handle("/v2/serverless/{id}", map[string]handler{http.MethodGet: single(endpoints, "endpoint", (*endpoint).render),
		http.MethodPatch: s.patchEndpoint, http.MethodDelete: s.deleteEndpoint})
}

func (s *Server) newID(streamKind, n int) string {
	st := s.sls()
	st.seq++
	return randomID(rand.New(rand.NewPCG(s.cfg.seed, stream(streamKind, st.seq))), n)
}

// lostCreate applies ServerlessFaults.LostCreates to a create that happened.
func (s *Server) lostCreate(route string) (response, bool) {
	st := s.sls()
	st.creates[route]++
	for i, lc := range s.cfg.serverless.Faults.LostCreates {
		if lc.Route == route && lc.When.hits(s.cfg.seed, stream(streamServerlessLost, i), st.creates[route]) {
			status := lc.Status
			if status == 0 {
				status = http.StatusBadGateway
			}
			return problemResponse(status, "upstream service error (simulated) after the resource was created"), true
		}
	}
	return response{}, false
}

func (s *Server) deleteFails(id string) (response, bool) {
	f := s.cfg.serverless.Faults.DeleteFailures
	st := s.sls()
	st.deletes[id]++
	if st.deletes[id] <= f.FailFirst {
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return problemResponse(status, "upstream service error (simulated) while deleting"), true
	}
	return response{}, false
}

// --- templates ---

type templateBody struct {
	ID                  string            `json:"id"`
	Name                string            `json:"name"`
	Image               string            `json:"image"`
	Args                string            `json:"args"`
	Disk                int               `json:"disk"`
	Mounts              map[string]any    `json:"mounts"`
	Ports               []string          `json:"ports"`
	Env                 map[string]string `json:"env"`
	Registry            *string           `json:"registry"`
	Serverless          bool              `json:"serverless"`
	Public              bool              `json:"public"`
	Category            string            `json:"category"`
	StartSSH            bool              `json:"startSsh"`
	StartJupyter        bool              `json:"startJupyter"`
	AllowedCudaVersions []string          `json:"allowedCudaVersions"`
}

func (t *template) render() templateBody {
	return templateBody{ID: t.id, Name: t.name, Image: t.image, Args: t.args, Disk: t.disk, Mounts: map[string]any{},
		Ports: append([]string{}, t.ports...), Env: maps.Clone(t.env), Serverless: true, Public: t.public,
		Category: t.category, StartSSH: t.startSSH, StartJupyter: t.startJupyter, AllowedCudaVersions: []string{}}
}

func (s *Server) findTemplate(id string) *template {
	t, _ := findLive(s.sls().templates, id)
	return t
}

func (s *Server) createTemplate(r *http.Request, body []byte, now time.Time) response {
	var req struct {
		Name, Image, Args, Category string
		Disk                        *int
		Env                         map[string]string
		Ports                       []string
		Serverless, Public          bool
		StartSSH                    *bool `json:"startSsh"`
		StartJupyter                *bool `json:"startJupyter"`
		Mounts                      map[string]any
	}
	if resp, decoded := s.decodeBody(r, body, "decoding the template", &req); !decoded {
		return resp
	}
	if resp, taken := nameTaken(s.sls().templates, "template", req.Name); taken {
		return resp
	}
	if !req.Serverless {
		return problemResponse(http.StatusBadRequest, "the simulator only models serverless templates")
	}
	t := &template{object: object{id: s.newID(streamTemplateID, 10), name: req.Name}, image: req.Image, args: req.Args, disk: 50,
		env: maps.Clone(req.Env), ports: req.Ports, public: req.Public, startSSH: true, startJupyter: true, category: "NVIDIA"}
	override(&t.disk, req.Disk)
	override(&t.startSSH, req.StartSSH)
	override(&t.startJupyter, req.StartJupyter)
	if req.Category != "" {
		t.category = req.Category
	}
	if t.env == nil {
		t.env = map[string]string{}
	}
	s.sls().templates = append(s.sls().templates, t)
	if resp, lost := s.lostCreate("POST /v2/templates"); lost {
		return resp
	}
	return ok(http.StatusCreated, t.render())
}

func (s *Server) deleteTemplate(r *http.Request, body []byte, now time.Time) response {
	t, missing := byPath(s.sls().templates, r, "template")
	if missing != nil {
		return *missing
	}
	for _, e := range s.sls().endpoints {
		if !e.deleted && e.templateID == t.id {
			return problemResponse(http.StatusBadRequest, "template is in use by endpoint %s", e.id)
		}
	}
	if resp, failed := s.deleteFails(t.id); failed {
		return resp
	}
	t.deleted = true
	return response{status: http.StatusNoContent}
}

// --- endpoints ---

func (s *Server) findEndpoint(id string) *endpoint {
	e, _ := findLive(s.sls().endpoints, id)
	return e
}

type workersBody struct {
	Min         int  `json:"min"`
	Max         int  `json:"max"`
	IdleTimeout *int `json:"idleTimeout,omitempty"`
}

func (e *endpoint) render() map[string]any {
	idle := e.idle
	base := "https://api.runpod.ai/v2/" + e.id
	return map[string]any{
		"id": e.id, "name": e.name, "type": "QUEUE",
		"requestUrls": map[string]string{
			"run": base + "/run", "runSync": base + "/runsync", "status": base + "/status/{job_id}",
			"stream": base + "/stream/{job_id}", "cancel": base + "/cancel/{job_id}", "retry": base + "/retry/{job_id}",
			"purgeQueue": base + "/purge-queue", "health": base + "/health",
		},
		"image": e.image, "args": "", "disk": e.disk, "ports": []string{}, "env": maps.Clone(e.env), "registry": nil,
		"gpu": map[string]any{"pools": e.pools, "excludedTypes": append([]string{}, e.excluded...), "count": e.gpuCount,
			"allowedCudaVersions": []string{}, "minCudaVersion": nil},
		"workers": workersBody{Min: e.min, Max: e.max, IdleTimeout: &idle},
		"scaling": e.scaling, "dataCenterIds": append([]string{}, e.dataCenters...), "networkVolumes": []string{},
		"timeout": e.timeoutMS, "flashboot": e.flashboot, "createdAt": rfc3339(e.createdAt),
	}
}

func (s *Server) createEndpoint(r *http.Request, body []byte, now time.Time) response {
	var req struct {
		Name       string
		TemplateID string `json:"templateId"`
		GPU        *struct {
			Pools         []string
			ExcludedTypes []string `json:"excludedTypes"`
			Count         *int
		}
		DataCenterIDs []string `json:"dataCenterIds"`
		Workers       *workersRequest
		Scaling       map[string]any
		Timeout       *int64
		Flashboot     string
	}
	if resp, decoded := s.decodeBody(r, body, "decoding the endpoint", &req); !decoded {
		return resp
	}
	if req.TemplateID == "" || req.GPU == nil {
		return problemResponse(http.StatusBadRequest, "the simulator models GPU endpoints from a template: templateId and gpu are required")
	}
	t := s.findTemplate(req.TemplateID)
	if t == nil {
		return problemResponse(http.StatusNotFound, "template %s not found", req.TemplateID)
	}
	if resp, bad := s.checkGPUSelection(req.GPU.Pools, req.GPU.ExcludedTypes, req.DataCenterIDs); bad {
		return resp
	}
	if resp, taken := nameTaken(s.sls().endpoints, "endpoint", req.Name); taken {
		return resp
	}
	e := &endpoint{object: object{id: s.newID(streamEndpointID, 14), name: req.Name}, templateID: t.id, image: t.image, disk: t.disk,
		env: maps.Clone(t.env), pools: req.GPU.Pools, excluded: req.GPU.ExcludedTypes, dataCenters: req.DataCenterIDs, gpuCount: 1, min: 0, max: 3, idle: 10, timeoutMS: 300000,
		scaling: req.Scaling, flashboot: "OFF", createdAt: now}
	override(&e.gpuCount, req.GPU.Count)
	req.Workers.apply(e)
	override(&e.timeoutMS, req.Timeout)
	if req.Flashboot != "" {
		e.flashboot = req.Flashboot
	}
	if n := s.cfg.serverless.Faults.WorkersMax; n > 0 {
		e.max = n
	}
	s.sls().endpoints = append(s.sls().endpoints, e)
	if s.cfg.serverless.Faults.IdleWorkerAtCreate {
		s.startWorker(e, now)
	}
	if resp, lost := s.lostCreate("POST /v2/serverless"); lost {
		return resp
	}
	return ok(http.StatusCreated, e.render())
}

// override sets *dst to *src when the request named the field (src is set).
func override[T any](dst, src *T) {
	if src != nil {
		*dst = *src
	}
}

// workersRequest is the workers part of an endpoint's create or update: the
// fields it names change, the others stay.
type workersRequest struct {
	Min, Max    *int
	IdleTimeout *int `json:"idleTimeout"`
}

func (w *workersRequest) apply(e *endpoint) {
	if w == nil {
		return
	}
	override(&e.min, w.Min)
	override(&e.max, w.Max)
	override(&e.idle, w.IdleTimeout)
}

func (s *Server) patchEndpoint(r *http.Request, body []byte, now time.Time) response {
	e, missing := byPath(s.sls().endpoints, r, "endpoint")
	if missing != nil {
		return *missing
	}
	var req struct {
		Workers *workersRequest
	}
	if resp, decoded := s.decodeBody(r, body, "decoding the update", &req); !decoded {
		return resp
	}
	req.Workers.apply(e)
	if e.max == 0 && e.worker != nil && e.worker.busy == nil {
		s.stopWorker(e, now)
	}
	return ok(http.StatusOK, e.render())
}

func (s *Server) deleteEndpoint(r *http.Request, body []byte, now time.Time) response {
	e, missing := byPath(s.sls().endpoints, r, "endpoint")
	if missing != nil {
		return *missing
	}
	if resp, failed := s.deleteFails(e.id); failed {
		return resp
	}
	for _, j := range s.sls().jobs {
		if j.endpointID == e.id && !j.state.terminal() {
			s.finishJob(j, jobCancelled, nil, "", now)
		}
	}
	s.stopWorker(e, now)
	e.deleted = true
	if t := s.findTemplate(e.templateID); t != nil {
		t.deleted = true
	}
	return response{status: http.StatusNoContent}
}

// checkGPUSelection answers 400, as RunPod does, for an excluded type that is
// no GPU type of the selected pools and for an unknown data center.
func (s *Server) checkGPUSelection(pools, excluded, dcs []string) (response, bool) {
	members := s.poolMembers(pools)
	for _, x := range excluded {
		if !slices.Contains(members, strings.TrimSpace(x)) {
			return problemResponse(http.StatusBadRequest, "gpu.excludedTypes: %q is not a GPU type in pools %v", x, pools), true
		}
	}
	for _, dc := range dcs {
		if s.market.dcByID[dc] == nil {
			return problemResponse(http.StatusBadRequest, "dataCenterIds: %q is not a data center", dc), true
		}
	}
	return response{}, false
}

// poolMembers lists the GPU types of pools, in the market's order.
func (s *Server) poolMembers(pools []string) []string {
	var out []string
	for _, g := range s.market.gpus {
		if g.Pool != "" && slices.Contains(pools, g.Pool) {
			out = append(out, g.ID)
		}
	}
	return out
}

// placeWorker is the card a new worker of e runs on.
func (s *Server) placeWorker(e *endpoint) string {
	var eligible []string
	for _, id := range s.poolMembers(e.pools) {
		if !slices.Contains(e.excluded, id) {
			eligible = append(eligible, id)
		}
	}
	switch {
	case len(eligible) == 0:
		return ""
	case s.cfg.serverless.Placement != nil:
		return s.cfg.serverless.Placement(eligible)
	}
	return eligible[0]
}

// --- workers and billing ---

func (s *Server) coldStart() time.Duration {
	if d := s.cfg.serverless.ColdStart; d > 0 {
		return d
	}
	return time.Second
}

func (s *Server) startWorker(e *endpoint, now time.Time) *worker {
	if e.worker != nil {
		return e.worker
	}
	w := &worker{endpointID: e.id, gpuType: s.placeWorker(e), start: now, readyAt: now.Add(s.coldStart())}
	e.worker = w
	s.sls().workers = append(s.sls().workers, w)
	s.armIdle(e, w, w.readyAt.Sub(now))
	return w
}

// armIdle stops an idle worker after the endpoint's idle timeout.
func (s *Server) armIdle(e *endpoint, w *worker, after time.Duration) {
	if w.idleTimer != nil {
		w.idleTimer.Stop()
	}
	w.idleTimer = s.cfg.clock.AfterFunc(after+time.Duration(e.idle)*time.Second, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if e.worker == w && w.busy == nil {
			s.stopWorker(e, s.cfg.clock.Now())
		}
	})
}

func (s *Server) stopWorker(e *endpoint, now time.Time) {
	w := e.worker
	if w == nil {
		return
	}
	if w.idleTimer != nil {
		w.idleTimer.Stop()
	}
	w.stop = now
	e.worker = nil
}

// ServerlessBill is what Serverless workers have cost: every worker's life,
// from its start (initialisation bills) to its stop, rounded up to the second.
type ServerlessBill struct {
	Workers     int // workers ever started
	LiveWorkers int // still running now
	Seconds     int64
	Dollars     float64
}

// ServerlessBill returns the Serverless bill so far.
func (s *Server) ServerlessBill() ServerlessBill {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.clock.Now()
	price := s.cfg.serverless.PricePerHour
	if price <= 0 {
		price = 0.58
	}
	var b ServerlessBill
	for _, w := range s.sls().workers {
		b.Workers++
		end := w.stop
		if end.IsZero() {
			end, b.LiveWorkers = now, b.LiveWorkers+1
		}
		b.Seconds += int64(math.Ceil(end.Sub(w.start).Seconds()))
	}
	b.Dollars = round4(float64(b.Seconds) * price / 3600)
	return b
}

// ServerlessResource is a test's view of one template or endpoint.
type ServerlessResource struct {
	Kind    string // "template" or "endpoint"
	ID      string
	Name    string
	Deleted bool
	Env     map[string]string // tests scan it for leaked secrets
}

// ServerlessResources lists every template and endpoint ever created, deleted ones included.
func (s *Server) ServerlessResources() []ServerlessResource {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ServerlessResource
	for _, t := range s.sls().templates {
		out = append(out, ServerlessResource{"template", t.id, t.name, t.deleted, maps.Clone(t.env)})
	}
	for _, e := range s.sls().endpoints {
		out = append(out, ServerlessResource{"endpoint", e.id, e.name, e.deleted, maps.Clone(e.env)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind > out[j].Kind })
	return out
}

// Jobs lists every job submitted, by id, with its state.
func (s *Server) Jobs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for id, j := range s.sls().jobs {
		out[id] = string(j.state)
	}
	return out
}

// WaitServerlessWorkers waits until no JobWorker call is running, so a test on
// a virtual clock can observe a job's end without sleeping.
func (s *Server) WaitServerlessWorkers() { s.sls().wg.Wait() }

func (e *endpoint) String() string { return fmt.Sprintf("endpoint %s (%s)", e.id, e.name) }

// SetServerlessListingHidden hides every template and endpoint from the list
// routes (GET by id still sees them): the eventual listing that leaves a
// lost create unresolved until the provider catches up.
func (s *Server) SetServerlessListingHidden(hidden bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sls().hidden = hidden
}
