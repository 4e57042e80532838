package runpodsim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Pod statuses, as the API spells them.
const (
	StatusProvisioning = "PROVISIONING"
	StatusStarting     = "STARTING"
	StatusRunning      = "RUNNING"
	StatusExited       = "EXITED"
	StatusError        = "ERROR"
	StatusTerminated   = "TERMINATED"
)

// actionsByStatus is the contract's table of valid pod actions per status.
var actionsByStatus = map[string][]string{
	StatusProvisioning: {"stop", "terminate"},
	StatusStarting:     {"stop", "terminate"},
	StatusRunning:      {"stop", "restart", "terminate"},
	StatusExited:       {"start", "terminate"},
	StatusError:        {"start", "terminate"},
	StatusTerminated:   {},
}

type pod struct {
	seq        int // creation order, from 1
	id, name   string
	image      string
	args       string
	entrypoint []string
	cmd        []string
	env        map[string]string
	ports      []portSpec
	disk       int
	mounts     mountsBody
	registry   *string
	gpuID      string
	gpuCount   int
	cloud      string
	minCuda    string
	allowed    []string
	globalIP   string // "" unless global networking is on
	sshUser    string
	host       *host
	price      float64 // USD per hour for the whole pod, captured at create

	status    string
	createdAt time.Time
	startedAt time.Time // latest container start; zero until the first
	endedAt   time.Time // when it was terminated
	phaseEnd  time.Time // end of PROVISIONING or STARTING
	holdsGPUs bool
	boots     int
	dieInBoot bool          // the current boot ends in ERROR at phaseEnd
	faultDie  bool          // DieDuringBoot selected this pod (first boot only)
	loseAfter time.Duration // runtime turns null this long after each container start
	lostAt    time.Time     // zero when the runtime is not lost
	gen       int           // container generation: exits of older ones are ignored
	exitCode  *int
	pending   []exitReport
	deletes   int // DELETE attempts, for DeleteFailures

	billing    bool
	billedFrom time.Time
	billed     []interval
}

type interval struct{ from, to time.Time }

type portSpec struct {
	private int
	proto   string
	public  int
}

type exitReport struct {
	podID string
	gen   int
	code  int
	at    time.Time
}

type mountsBody struct {
	Persistent *persistentMount `json:"persistent,omitempty"`
	Network    []networkMount   `json:"network,omitempty"`
}

type persistentMount struct {
	Size int    `json:"size"`
	Path string `json:"path"`
}

type networkMount struct {
	VolumeID string `json:"volumeId"`
	Path     string `json:"path"`
}

// createPodBody is CreatePodRequest with the delta fields; the contract has
// already rejected anything else by the time it is decoded.
type createPodBody struct {
	Name       string            `json:"name"`
	Image      string            `json:"image"`
	Args       string            `json:"args"`
	Entrypoint []string          `json:"entrypoint"`
	Cmd        []string          `json:"cmd"`
	Disk       *int              `json:"disk"`
	Ports      []string          `json:"ports"`
	Env        map[string]string `json:"env"`
	Registry   *string           `json:"registry"`
	Cloud      string            `json:"cloud"`
	CPU        json.RawMessage   `json:"cpu"`
	GPU        *struct {
		ID                  string   `json:"id"`
		Count               *int     `json:"count"`
		AllowedCudaVersions []string `json:"allowedCudaVersions"`
		MinCudaVersion      string   `json:"minCudaVersion"`
	} `json:"gpu"`
	DataCenterIDs    []string    `json:"dataCenterIds"`
	GlobalNetworking bool        `json:"globalNetworking"`
	Mounts           *mountsBody `json:"mounts"`
	StartJupyter     bool        `json:"startJupyter"`
	TemplateID       string      `json:"templateId"`
}

// podSpec is a create request that passed every rule; only placement and
// the balance can still refuse it.
type podSpec struct {
	createPodBody
	gpu   *GPUType
	count int
	cloud string
	ports []portSpec
}

func (s *Server) createPod(r *http.Request, body []byte, now time.Time) response {
	spec, bad := s.checkCreate(r, body)
	if bad != nil {
		return *bad
	}
	price := round4(spec.gpu.price(spec.cloud) * float64(spec.count))
	if left := s.cfg.balance - s.spent(now); left < price {
		return problemResponse(http.StatusPaymentRequired, "Your account balance ($%.2f) is too low to rent this pod at $%.2f/hr. Please add funds to your account.", max(left, 0), price)
	}
	seq := len(s.pods) + 1
	h := s.place(spec, seq)
	if h == nil {
		return noCapacity(spec)
	}
	p := s.newPod(spec, h, price, seq, now)
	s.pods = append(s.pods, p)
	s.podByID[p.id] = p
	s.scheduleWake(now)
	resp := ok(http.StatusCreated, s.render(p, now))
	resp.created = true
	return resp
}

func noCapacity(spec podSpec) response {
	return problemResponse(http.StatusBadRequest, "There are no instances currently available for %d x %s on %s cloud with the requested constraints.", spec.count, spec.gpu.ID, spec.cloud)
}

// checkCreate decodes a create body and applies the API's rules: 400 for
// a body that is not JSON, 422 for one the contract rejects, then 400 (or
// 404 for a template) for the cross-field rules the handler enforces.
func (s *Server) checkCreate(r *http.Request, body []byte) (podSpec, *response) {
	fail := func(status int, format string, args ...any) (podSpec, *response) {
		resp := problemResponse(status, format, args...)
		return podSpec{}, &resp
	}
	if resp, valid := s.validateBody(r.Method, r.URL.Path, body); !valid {
		return podSpec{}, &resp
	}
	var spec podSpec
	if err := json.Unmarshal(body, &spec.createPodBody); err != nil {
		// The contract accepted it, so this is a value the decoder cannot hold (e.g. a huge number).
		return fail(http.StatusBadRequest, "request body: %v", err)
	}
	req := spec.createPodBody
	hasCPU := len(req.CPU) > 0 && string(req.CPU) != "null"
	switch {
	case req.TemplateID != "":
		return fail(http.StatusNotFound, "template %q not found", req.TemplateID)
	case (req.GPU == nil) == !hasCPU:
		return fail(http.StatusBadRequest, "exactly one of gpu or cpu must be set")
	case hasCPU:
		return fail(http.StatusBadRequest, "no CPU flavor is available in the simulated market")
	case len(req.GPU.AllowedCudaVersions) > 0 && req.GPU.MinCudaVersion != "":
		return fail(http.StatusBadRequest, "gpu.allowedCudaVersions and gpu.minCudaVersion are mutually exclusive")
	case req.Mounts != nil && req.Mounts.Persistent != nil && len(req.Mounts.Network) > 0:
		return fail(http.StatusBadRequest, "mounts.persistent and mounts.network are mutually exclusive")
	}
	var err error
	if spec.ports, err = parsePorts(req.Ports); err != nil {
		return fail(http.StatusBadRequest, "%v", err)
	}
	if spec.gpu = s.market.gpuByID[req.GPU.ID]; spec.gpu == nil {
		return fail(http.StatusBadRequest, "gpu.id %q is invalid: no such GPU type", req.GPU.ID)
	}
	for _, id := range req.DataCenterIDs {
		if s.market.dcByID[id] == nil {
			return fail(http.StatusBadRequest, "dataCenterIds: %q is invalid: no such data center", id)
		}
	}
	if bad := s.mountVolume(&spec); bad != nil {
		return podSpec{}, bad
	}
	spec.count, spec.cloud = 1, req.Cloud
	if req.GPU.Count != nil {
		spec.count = *req.GPU.Count
	}
	if spec.cloud == "" {
		spec.cloud = Secure
	}
	switch limit := s.market.maxCount(spec.gpu.ID, spec.cloud); {
	case limit == 0:
		resp := noCapacity(spec)
		return podSpec{}, &resp
	case spec.count > limit:
		return fail(http.StatusBadRequest, "gpu.count %d exceeds %d, the largest %s machine with %s", spec.count, limit, spec.cloud, spec.gpu.ID)
	}
	return spec, nil
}

// newPod builds the pod of spec on h; its ids and ports come from the seed.
func (s *Server) newPod(spec podSpec, h *host, price float64, seq int, now time.Time) *pod {
	ids := rand.New(rand.NewPCG(s.cfg.seed, stream(streamPodID, seq)))
	id := randomID(ids, 14)
	for s.podByID[id] != nil {
		id = randomID(ids, 14)
	}
	env := maps.Clone(spec.Env)
	if env == nil {
		env = map[string]string{}
	}
	if _, set := env["JUPYTER_PASSWORD"]; spec.StartJupyter && !set {
		env["JUPYTER_PASSWORD"] = randomID(ids, 16)
	}
	for i := range spec.ports {
		spec.ports[i].public = 10000 + ids.IntN(50000)
	}
	f := s.cfg.faults
	p := &pod{
		seq: seq, id: id, name: spec.Name,
		image: spec.Image, args: spec.Args, entrypoint: spec.Entrypoint, cmd: spec.Cmd,
		env: env, ports: spec.ports, disk: 50, registry: spec.Registry,
		gpuID: spec.gpu.ID, gpuCount: spec.count, cloud: spec.cloud,
		minCuda: spec.GPU.MinCudaVersion, allowed: spec.GPU.AllowedCudaVersions,
		sshUser: fmt.Sprintf("%s-%08x", id, ids.Uint32()),
		host:    h, price: price,
		status: StatusProvisioning, createdAt: now, phaseEnd: now.Add(s.cfg.provisioning),
		holdsGPUs: true,
		faultDie:  f.DieDuringBoot.hits(s.cfg.seed, stream(streamDieDuringBoot, 0), seq),
		loseAfter: h.profile.LosesRuntimeAfter,
	}
	if f.RuntimeLostAfter > 0 && f.LoseRuntime.hits(s.cfg.seed, stream(streamLoseRuntime, 0), seq) {
		p.loseAfter = f.RuntimeLostAfter
	}
	if spec.Disk != nil {
		p.disk = *spec.Disk
	}
	if spec.Mounts != nil {
		p.mounts = *spec.Mounts
	}
	if spec.GlobalNetworking {
		p.globalIP = fmt.Sprintf("10.65.%d.%d", seq/250%250, seq%250+1)
	}
	h.free -= spec.count
	return p
}

// place picks a host for a new pod: among the hosts that satisfy every
// constraint, one drawn from the seed, weighted by free GPUs (busier
// machines are less likely, as a scheduler balancing load would do).
func (s *Server) place(spec podSpec, seq int) *host {
	var eligible []*host
	total := 0
	for _, h := range s.market.hosts {
		p := h.profile
		if p.GPUTypeID != spec.gpu.ID || p.Cloud != spec.cloud || h.free < spec.count ||
			(len(spec.DataCenterIDs) > 0 && !slices.Contains(spec.DataCenterIDs, p.DataCenterID)) ||
			(spec.GlobalNetworking && !s.market.dcByID[p.DataCenterID].GlobalNetwork) ||
			!cudaAllows(h.driver, spec.GPU.MinCudaVersion, spec.GPU.AllowedCudaVersions) {
			continue
		}
		eligible = append(eligible, h)
		total += h.free
	}
	if total == 0 {
		return nil
	}
	n := rand.New(rand.NewPCG(s.cfg.seed, stream(streamPlacement, seq))).IntN(total)
	for _, h := range eligible {
		if n < h.free {
			return h
		}
		n -= h.free
	}
	return eligible[len(eligible)-1]
}

// cudaAllows applies a pod's CUDA constraint (already contract-checked) to a driver.
func cudaAllows(driver cudaVersion, minCuda string, allowed []string) bool {
	if minCuda != "" {
		floor, err := parseVersion(minCuda, false)
		if err != nil || driver.less(floor) {
			return false
		}
	}
	if len(allowed) > 0 {
		return slices.Contains(allowed, driver.String())
	}
	return true
}

func parsePorts(specs []string) ([]portSpec, error) {
	out := make([]portSpec, 0, len(specs))
	for _, spec := range specs {
		num, proto, found := strings.Cut(spec, "/")
		port, err := strconv.Atoi(num)
		if !found || err != nil || port < 1 || port > 65535 || (proto != "http" && proto != "tcp") {
			return nil, fmt.Errorf("ports: %q is invalid: want port/protocol, e.g. 22/tcp or 8888/http", spec)
		}
		out = append(out, portSpec{private: port, proto: proto})
	}
	return out, nil
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func randomID(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = idAlphabet[r.IntN(len(idAlphabet))]
	}
	return string(b)
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// visible reports whether GET can still see p.
func (s *Server) visible(p *pod, now time.Time) bool {
	return p.status != StatusTerminated || now.Sub(p.endedAt) < s.cfg.retention
}

func (s *Server) lookup(r *http.Request, now time.Time) (*pod, *response) {
	p := s.podByID[r.PathValue("id")]
	if p == nil || !s.visible(p, now) {
		resp := problemResponse(http.StatusNotFound, "pod not found")
		return nil, &resp
	}
	return p, nil
}

func (s *Server) getPod(r *http.Request, body []byte, now time.Time) response {
	p, notFound := s.lookup(r, now)
	if notFound != nil {
		return *notFound
	}
	return ok(http.StatusOK, s.render(p, now))
}

// bodiless is h behind the check every GET and DELETE makes first: a body,
// when one is sent, must still be one the contract allows.
func (s *Server) bodiless(h handler) handler {
	return func(r *http.Request, body []byte, now time.Time) response {
		if resp, valid := s.noBody(r, body); !valid {
			return resp
		}
		return h(r, body, now)
	}
}

// decodeBody checks a request body against the contract, then decodes it
// into dst; a body the contract allows but dst cannot hold (a huge number)
// is a 400 naming what was decoded.
func (s *Server) decodeBody(r *http.Request, body []byte, what string, dst any) (response, bool) {
	if resp, valid := s.validateBody(r.Method, r.URL.Path, body); !valid {
		return resp, false
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return problemResponse(http.StatusBadRequest, "%s: %v", what, err), false
	}
	return response{}, true
}

func (s *Server) noBody(r *http.Request, body []byte) (response, bool) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return response{}, true
	}
	return s.validateBody(r.Method, r.URL.Path, body)
}

func (s *Server) deletePod(r *http.Request, body []byte, now time.Time) response {
	p, notFound := s.lookup(r, now)
	if notFound != nil {
		return *notFound
	}
	if p.status == StatusTerminated {
		return problemResponse(http.StatusNotFound, "pod not found")
	}
	return s.terminate(p, now)
}

// terminate deletes p unless DeleteFailures says this attempt fails.
func (s *Server) terminate(p *pod, now time.Time) response {
	p.deletes++
	if f := s.cfg.faults.DeleteFailures; p.deletes <= f.FailFirst {
		status := f.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return problemResponse(status, "failed to terminate pod (simulated); try again later")
	}
	s.stopContainer(p, now)
	p.status, p.endedAt = StatusTerminated, now
	return response{status: http.StatusNoContent}
}

type actionBody struct {
	Action string `json:"action"`
}

func (s *Server) podAction(r *http.Request, body []byte, now time.Time) response {
	var req actionBody
	if resp, decoded := s.decodeBody(r, body, "request body", &req); !decoded {
		return resp
	}
	p, notFound := s.lookup(r, now)
	if notFound != nil {
		return *notFound
	}
	valid := actionsByStatus[p.status]
	if !slices.Contains(valid, req.Action) {
		return problemResponse(http.StatusConflict, "action %q is not valid for a pod in status %s (valid: %s)", req.Action, p.status, strings.Join(valid, ", "))
	}
	switch req.Action {
	case "terminate":
		return s.terminate(p, now)
	case "stop":
		s.stopContainer(p, now)
		p.status = StatusExited
	case "restart":
		s.cfg.runner.Stop(p.id)
		p.gen++ // exits of the old container no longer count
		s.boot(p, now)
	case "start":
		if p.host.free < p.gpuCount {
			return problemResponse(http.StatusBadRequest, "There are not enough free GPUs on the host machine to start this pod.")
		}
		p.host.free -= p.gpuCount
		p.holdsGPUs = true
		p.exitCode = nil
		s.boot(p, now)
	}
	s.scheduleWake(now)
	return ok(http.StatusOK, s.render(p, now))
}

// boot puts p into STARTING from now.
func (s *Server) boot(p *pod, now time.Time) {
	s.startLog(p.id) // a container is coming: its log streams stay open
	p.boots++
	p.status, p.lostAt = StatusStarting, time.Time{}
	bootTime := time.Duration(p.host.profile.BootSeconds) * time.Second
	p.dieInBoot = p.host.profile.DiesDuringBoot || (p.faultDie && p.boots == 1)
	if p.dieInBoot {
		bootTime /= 2
	}
	p.phaseEnd = now.Add(bootTime)
}

// stopContainer ends whatever p runs at t: the container, billing, its hold on GPUs.
func (s *Server) stopContainer(p *pod, t time.Time) {
	if p.status == StatusRunning {
		s.cfg.runner.Stop(p.id)
	}
	s.endLog(p.id)
	p.gen++
	p.lostAt = time.Time{}
	if p.billing {
		p.billed = append(p.billed, interval{p.billedFrom, t})
		p.billing = false
	}
	if p.holdsGPUs {
		p.host.free += p.gpuCount
		p.holdsGPUs = false
	}
}

// settle brings every pod up to now: due phase ends and reported exits, in time order.
func (s *Server) settle(now time.Time) {
	for {
		s.inboxMu.Lock()
		inbox := s.inbox
		s.inbox = nil
		s.inboxMu.Unlock()
		for _, e := range inbox {
			if p := s.podByID[e.podID]; p != nil && e.gen == p.gen {
				p.pending = append(p.pending, e)
			}
		}
		for _, p := range s.pods {
			if p.status != StatusTerminated {
				s.advance(p, now)
			}
		}
		s.inboxMu.Lock()
		more := len(s.inbox) > 0
		s.inboxMu.Unlock()
		if !more {
			break
		}
	}
	s.scheduleWake(now)
}

func (s *Server) advance(p *pod, now time.Time) {
	for {
		phaseDue := (p.status == StatusProvisioning || p.status == StatusStarting) && !p.phaseEnd.After(now)
		var exit *exitReport
		for i := range p.pending {
			if e := &p.pending[i]; e.gen == p.gen && !e.at.After(now) && (exit == nil || e.at.Before(exit.at)) {
				exit = e
			}
		}
		switch {
		case exit != nil && (!phaseDue || exit.at.Before(p.phaseEnd)):
			at, code := exit.at, exit.code
			p.pending = slices.DeleteFunc(p.pending, func(e exitReport) bool { return e.gen <= p.gen && !e.at.After(at) })
			if p.status == StatusRunning {
				s.stopContainer(p, at)
				p.status, p.exitCode = StatusExited, &code
			}
		case phaseDue:
			s.endPhase(p)
		default:
			p.pending = slices.DeleteFunc(p.pending, func(e exitReport) bool { return e.gen != p.gen })
			return
		}
	}
}

// endPhase moves p out of PROVISIONING or STARTING at p.phaseEnd.
func (s *Server) endPhase(p *pod) {
	t := p.phaseEnd
	switch {
	case p.status == StatusProvisioning:
		s.boot(p, t)
	case p.dieInBoot:
		s.stopContainer(p, t)
		p.status = StatusError
	default:
		gen := p.gen
		exited := func(code int) {
			at := s.cfg.clock.Now()
			s.inboxMu.Lock()
			s.inbox = append(s.inbox, exitReport{podID: p.id, gen: gen, code: code, at: at})
			s.inboxMu.Unlock()
			// Applied at once, not at the next request: the pod's log
			// streams end when its container does (in the same clock
			// callback when the lock is free, else right after it).
			if s.mu.TryLock() {
				s.settle(at)
				s.mu.Unlock()
				return
			}
			s.cfg.clock.AfterFunc(0, func() {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.settle(s.cfg.clock.Now())
			})
		}
		if err := s.cfg.runner.Start(s.launch(p, t), exited); err != nil {
			s.stopContainer(p, t)
			p.status = StatusError
			return
		}
		p.status, p.startedAt = StatusRunning, t
		if !p.billing {
			p.billing, p.billedFrom = true, t
		}
		if p.loseAfter > 0 {
			p.lostAt = t.Add(p.loseAfter)
			s.loseContainerAt(p, p.lostAt)
		}
	}
}

func (s *Server) launch(p *pod, t time.Time) Launch {
	return Launch{
		PodID: p.id, PodName: p.name, Image: p.image,
		Entrypoint: slices.Clone(p.entrypoint), Cmd: slices.Clone(p.cmd), Args: p.args,
		Env: maps.Clone(p.env), GPUCount: p.gpuCount,
		MinCudaVersion: p.minCuda, AllowedCudaVersions: slices.Clone(p.allowed),
		Host: p.host.profile, StartedAt: t, Log: s.logger(p.id),
	}
}

// scheduleWake arms one clock timer for the earliest pending phase end, so
// containers start on time even when nobody polls.
func (s *Server) scheduleWake(now time.Time) {
	var next time.Time
	for _, p := range s.pods {
		if (p.status == StatusProvisioning || p.status == StatusStarting) && (next.IsZero() || p.phaseEnd.Before(next)) {
			next = p.phaseEnd
		}
	}
	if next.IsZero() || (s.wakeTimer != nil && !s.wakeAt.After(next)) {
		return
	}
	if s.wakeTimer != nil {
		s.wakeTimer.Stop()
	}
	s.wakeAt = next
	s.wakeTimer = s.cfg.clock.AfterFunc(next.Sub(now), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.wakeTimer = nil
		s.settle(s.cfg.clock.Now())
	})
}

// listPods serves GET /v2/pods with the cursor delta: limit and cursor in, nextCursor out.
func (s *Server) listPods(r *http.Request, body []byte, now time.Time) response {
	q := r.URL.Query()
	pageSize := s.cfg.pageSize
	if raw := q.Get("limit"); q.Has("limit") {
		n, err := parseDigits(raw)
		if err != nil || n < 1 {
			resp := problemResponse(http.StatusUnprocessableEntity, "Request validation failed.")
			resp.problem.Errors = []string{fmt.Sprintf("limit: %q is not a positive integer", raw)}
			return resp
		}
		if pageSize == 0 || n < pageSize {
			pageSize = n
		}
	}
	after := 0
	if raw := q.Get("cursor"); raw != "" {
		seq, err := decodeCursor(raw)
		if err != nil {
			return problemResponse(http.StatusBadRequest, "cursor %q is not a cursor this API issued", raw)
		}
		after = seq
	}
	pods := []podBody{}
	next, last := "", after
	for _, p := range s.pods {
		if p.seq <= after || !s.visible(p, now) || now.Sub(p.createdAt) < s.cfg.faults.ListingDelay {
			continue
		}
		if pageSize > 0 && len(pods) == pageSize {
			next = encodeCursor(last)
			break
		}
		pods = append(pods, s.render(p, now))
		last = p.seq
	}
	return ok(http.StatusOK, listPodsBody{Pods: pods, NextCursor: next})
}

type listPodsBody struct {
	Pods       []podBody `json:"pods"`
	NextCursor string    `json:"nextCursor,omitempty"`
}

// Cursors are opaque to clients; inside they name the last pod of the page by creation order.
func encodeCursor(seq int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("pods-after:" + strconv.Itoa(seq)))
}

func decodeCursor(c string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, err
	}
	num, found := strings.CutPrefix(string(raw), "pods-after:")
	if !found {
		return 0, fmt.Errorf("not a pods cursor")
	}
	return parseDigits(num)
}

// loseContainerAt tells a host runner that implements RuntimeLoser, at lostAt, that p's
// runtime is lost: the API shows the pod RUNNING with a null runtime from then on.
func (s *Server) loseContainerAt(p *pod, lostAt time.Time) {
	loser, ok := s.cfg.runner.(RuntimeLoser)
	if !ok {
		return
	}
	gen := p.gen
	s.cfg.clock.AfterFunc(lostAt.Sub(s.cfg.clock.Now()), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if p.gen == gen && p.lostAt.Equal(lostAt) && p.status == StatusRunning {
			loser.RuntimeLost(p.id)
		}
	})
}
