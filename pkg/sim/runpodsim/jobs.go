package runpodsim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxRunBody is the documented /run body limit.
const maxRunBody = 10 << 20

type jobState string

const (
	jobInQueue    jobState = "IN_QUEUE"
	jobInProgress jobState = "IN_PROGRESS"
	jobCompleted  jobState = "COMPLETED"
	jobFailed     jobState = "FAILED"
	jobCancelled  jobState = "CANCELLED"
	jobTimedOut   jobState = "TIMED_OUT"
)

func (s jobState) terminal() bool {
	return s == jobCompleted || s == jobFailed || s == jobCancelled || s == jobTimedOut
}

type job struct {
	id, endpointID       string
	input                json.RawMessage
	state                jobState
	submitted, started   time.Time
	ended                time.Time
	execTimeout, ttl     time.Duration
	output               json.RawMessage
	errText              string
	cancel               context.CancelFunc
	expired              bool // removed after its TTL while queued: status answers 404
	execTimer, ttlTimer  interface{ Stop() bool }
	startTimer           interface{ Stop() bool }
	requestedPolicyNotes string
}

// JobHost is the Serverless job host (https://api.runpod.ai in production):
//
//	POST /v2/{endpoint}/run            {"input": …, "policy"?: {"executionTimeout", "ttl"}} (ms)
//	GET  /v2/{endpoint}/status/{job}
//	POST /v2/{endpoint}/cancel/{job}
//	GET  /v2/{endpoint}/health
//
// It accepts the key as "Bearer <key>" or bare, answers errors as
// {"error": "..."}, refuses bodies of 10 MB or more with 413, and applies the
// Server's RateLimits, Slow, ServerErrors and Rewrites faults by route
// ("POST /v2/{endpoint}/run", …). Jobs move IN_QUEUE → IN_PROGRESS (after a
// cold start when no worker is up) → COMPLETED or FAILED (the worker's
// answer), CANCELLED, or TIMED_OUT (past the execution timeout, or past the
// TTL while running); a job still queued at its TTL is removed (404).
func (s *Server) JobHost() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v2/{endpoint}/run", s.jobRoute("POST /v2/{endpoint}/run", http.MethodPost, s.runJob))
	mux.HandleFunc("/v2/{endpoint}/status/{job}", s.jobRoute("GET /v2/{endpoint}/status/{job}", http.MethodGet, s.jobStatus))
	mux.HandleFunc("/v2/{endpoint}/cancel/{job}", s.jobRoute("POST /v2/{endpoint}/cancel/{job}", http.MethodPost, s.cancelJob))
	mux.HandleFunc("/v2/{endpoint}/health", s.jobRoute("GET /v2/{endpoint}/health", http.MethodGet, s.jobHealth))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJobError(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
	})
	return mux
}

// JobRequests returns every request the job host answered, in order.
func (s *Server) JobRequests() []RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestRecord(nil), s.sls().jobRequests...)
}

func writeJobError(w http.ResponseWriter, status int, msg string) {
	write(w, response{status: status, body: map[string]string{"error": msg}})
}

func (s *Server) jobRoute(route, method string, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		arrival := s.cfg.clock.Now()
		resp := s.jobRespond(r, route, method, h)
		s.mu.Lock()
		s.sls().jobRequests = append(s.sls().jobRequests, RequestRecord{r.Method, r.URL.Path, route, resp.status, arrival})
		s.mu.Unlock()
		write(w, resp)
	}
}

func jobError(status int, format string, args ...any) response {
	return response{status: status, body: map[string]string{"error": fmt.Sprintf(format, args...)}}
}

func (s *Server) jobRespond(r *http.Request, route, method string, h handler) response {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	token := strings.TrimSpace(strings.TrimPrefix(auth, "Bearer "))
	switch {
	case token == "":
		return jobError(http.StatusUnauthorized, "missing api key")
	case s.cfg.serverless.Faults.JobHostUnauthorized,
		s.cfg.apiKey != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.apiKey)) != 1:
		return jobError(http.StatusUnauthorized, "invalid api key")
	case r.Method != method:
		resp := jobError(http.StatusMethodNotAllowed, "method not allowed")
		resp.header = http.Header{"Allow": {method}}
		return resp
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRunBody+1))
	switch {
	case err != nil:
		return jobError(http.StatusBadRequest, "reading the request body: %v", err)
	case len(body) >= maxRunBody:
		return jobError(http.StatusRequestEntityTooLarge, "request body exceeds the 10 MB limit")
	}
	d := s.decide(route, s.cfg.clock.Now())
	if d.delay > 0 {
		if err := s.cfg.clock.Sleep(r.Context(), d.delay); err != nil {
			return jobError(http.StatusGatewayTimeout, "client gone")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.early.status != 0 {
		return d.early
	}
	now := s.cfg.clock.Now()
	if s.findEndpoint(r.PathValue("endpoint")) == nil {
		return jobError(http.StatusNotFound, "endpoint %s not found", r.PathValue("endpoint"))
	}
	resp := h(r, body, now)
	s.rewrite(route, &resp)
	return resp
}

func (s *Server) runJob(r *http.Request, body []byte, now time.Time) response {
	var req struct {
		Input  json.RawMessage `json:"input"`
		Policy *struct {
			ExecutionTimeout int64 `json:"executionTimeout"`
			TTL              int64 `json:"ttl"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Input) == 0 || string(req.Input) == "null" {
		return jobError(http.StatusBadRequest, "want a JSON body with an input")
	}
	e := s.findEndpoint(r.PathValue("endpoint"))
	j := &job{id: s.newID(streamJobID, 8) + "-" + s.newID(streamJobID, 4) + "-u1", endpointID: e.id, input: req.Input,
		state: jobInQueue, submitted: now, execTimeout: time.Duration(e.timeoutMS) * time.Millisecond, ttl: 24 * time.Hour}
	if p := req.Policy; p != nil {
		if p.ExecutionTimeout > 0 {
			j.execTimeout = time.Duration(p.ExecutionTimeout) * time.Millisecond
		}
		if p.TTL > 0 {
			j.ttl = time.Duration(p.TTL) * time.Millisecond
		}
	}
	s.sls().jobs[j.id] = j
	if !s.cfg.serverless.Faults.StuckJobs {
		j.ttlTimer = s.cfg.clock.AfterFunc(j.ttl, func() { s.expireJob(j) })
	}
	s.schedule(e, now)
	return ok(http.StatusOK, map[string]string{"id": j.id, "status": string(j.state)})
}

// schedule starts the oldest queued job of e when its single worker is free.
func (s *Server) schedule(e *endpoint, now time.Time) {
	if e.max < 1 || e.deleted {
		return
	}
	var next *job
	for _, j := range s.sls().jobs {
		if j.endpointID == e.id && j.state == jobInQueue && j.startTimer == nil && (next == nil || j.submitted.Before(next.submitted)) {
			next = j
		}
	}
	if next == nil || (e.worker != nil && e.worker.busy != nil) {
		return
	}
	w := s.startWorker(e, now)
	w.busy = next
	if w.idleTimer != nil {
		w.idleTimer.Stop()
	}
	wait := max(w.readyAt.Sub(now), 0)
	next.startTimer = s.cfg.clock.AfterFunc(wait, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.beginJob(e, w, next, s.cfg.clock.Now())
	})
}

func (s *Server) beginJob(e *endpoint, w *worker, j *job, now time.Time) {
	if j.state != jobInQueue || e.worker != w {
		return
	}
	j.state, j.started = jobInProgress, now
	ctx, cancel := context.WithCancel(context.Background())
	j.cancel = cancel
	if s.cfg.serverless.Faults.StuckJobs {
		return // no timer, no worker: only a cancel or a deletion ends it
	}
	j.execTimer = s.cfg.clock.AfterFunc(j.execTimeout, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if j.state == jobInProgress {
			s.finishJob(j, jobTimedOut, nil, "job exceeded the execution timeout", s.cfg.clock.Now())
		}
	})
	wj := WorkerJob{EndpointID: e.id, JobID: j.id, Input: j.input, Image: e.image, Env: e.env, ExecutionTimeout: j.execTimeout, GPUType: w.gpuType}
	worker := s.cfg.serverless.Worker
	st := s.sls()
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		var res WorkerResult
		if worker == nil {
			res = WorkerResult{Output: json.RawMessage(`{"ok":true}`)}
		} else {
			res = worker.Run(ctx, wj)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if j.state != jobInProgress {
			return // cancelled or timed out meanwhile
		}
		if res.Error != "" {
			s.finishJob(j, jobFailed, res.Output, res.Error, s.cfg.clock.Now())
			return
		}
		s.finishJob(j, jobCompleted, res.Output, "", s.cfg.clock.Now())
	}()
}

// finishJob ends j, frees its worker (which idles, then stops) and starts the next job.
func (s *Server) finishJob(j *job, state jobState, output json.RawMessage, errText string, now time.Time) {
	j.state, j.output, j.errText, j.ended = state, output, errText, now
	for _, t := range []interface{ Stop() bool }{j.execTimer, j.ttlTimer, j.startTimer} {
		if t != nil {
			t.Stop()
		}
	}
	if j.cancel != nil {
		j.cancel()
	}
	e := s.findEndpoint(j.endpointID)
	if e == nil {
		return
	}
	switch state {
	case jobCompleted:
		e.completed++
	case jobFailed, jobTimedOut:
		e.failed++
	}
	if w := e.worker; w != nil && w.busy == j {
		w.busy = nil
		s.armIdle(e, w, 0)
	}
	s.schedule(e, now)
}

func (s *Server) expireJob(j *job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.clock.Now()
	switch j.state {
	case jobInQueue:
		j.expired = true
		s.finishJob(j, jobCancelled, nil, "", now)
	case jobInProgress:
		s.finishJob(j, jobTimedOut, nil, "job exceeded its TTL", now)
	}
}

func (s *Server) findJob(r *http.Request) *job {
	j := s.sls().jobs[r.PathValue("job")]
	if j == nil || j.expired || j.endpointID != r.PathValue("endpoint") {
		return nil
	}
	return j
}

func (s *Server) renderJob(j *job, now time.Time) map[string]any {
	out := map[string]any{"id": j.id, "status": string(j.state)}
	if !j.started.IsZero() {
		out["delayTime"] = j.started.Sub(j.submitted).Milliseconds()
		end := now
		if !j.ended.IsZero() {
			end = j.ended
		}
		out["executionTime"] = end.Sub(j.started).Milliseconds()
	}
	if len(j.output) > 0 {
		out["output"] = j.output
	}
	if j.errText != "" {
		out["error"] = j.errText
	}
	return out
}

func (s *Server) jobStatus(r *http.Request, body []byte, now time.Time) response {
	j := s.findJob(r)
	if j == nil {
		return jobError(http.StatusNotFound, "job %s not found", r.PathValue("job"))
	}
	return ok(http.StatusOK, s.renderJob(j, now))
}

func (s *Server) cancelJob(r *http.Request, body []byte, now time.Time) response {
	j := s.findJob(r)
	if j == nil {
		return jobError(http.StatusNotFound, "job %s not found", r.PathValue("job"))
	}
	if !j.state.terminal() {
		s.finishJob(j, jobCancelled, nil, "", now)
	}
	return ok(http.StatusOK, map[string]string{"id": j.id, "status": string(j.state)})
}

func (s *Server) jobHealth(r *http.Request, body []byte, now time.Time) response {
	e := s.findEndpoint(r.PathValue("endpoint"))
	jobs := map[string]int{"completed": e.completed, "failed": e.failed, "inProgress": 0, "inQueue": 0, "retried": 0}
	for _, j := range s.sls().jobs {
		if j.endpointID != e.id {
			continue
		}
		switch j.state {
		case jobInQueue:
			jobs["inQueue"]++
		case jobInProgress:
			jobs["inProgress"]++
		}
	}
	workers := map[string]int{"idle": 0, "initializing": 0, "ready": 0, "running": 0, "throttled": 0, "unhealthy": 0}
	if w := e.worker; w != nil {
		switch {
		case now.Before(w.readyAt):
			workers["initializing"]++
		case w.busy != nil:
			workers["running"]++
		default:
			workers["idle"]++
		}
	}
	return ok(http.StatusOK, map[string]any{"jobs": jobs, "workers": workers})
}
