package runpodsim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// slsSim is the management host, the job host and both clients on one virtual clock.
type slsSim struct {
	*sim
	client *runpod.Client
	jobs   *runpod.JobClient
}

func newSlsSim(t *testing.T, cfg runpodsim.ServerlessConfig, opts ...runpodsim.Option) slsSim {
	t.Helper()
	s := newSim(t, append([]runpodsim.Option{runpodsim.WithServerless(cfg)}, opts...)...)
	jobHost := httptest.NewServer(s.server.JobHost())
	t.Cleanup(jobHost.Close)
	policy := reqpolicy.New(reqpolicy.WithClock(s.clock), reqpolicy.WithSleeper(s.clock.Sleep), reqpolicy.WithJitter(func() float64 { return 0 }))
	return slsSim{sim: s,
		client: runpod.New(s.url, testKey, runpod.WithPolicy(policy)),
		jobs:   runpod.NewJobClient(jobHost.URL, testKey, runpod.WithPolicy(policy))}
}

func templateReq(name string) runpod.CreateTemplateRequest {
	return runpod.CreateTemplateRequest{Name: name, Image: "runpod/pytorch@sha256:" + strings.Repeat("a", 64), Disk: 20,
		Ports: []string{}, Serverless: true, Env: map[string]string{"OWNER": "org/repo"}}
}

func endpointReq(name, tpl string) runpod.CreateEndpointRequest {
	idle, delay := 5, 4.0
	return runpod.CreateEndpointRequest{Name: name, Type: "QUEUE", TemplateID: tpl,
		GPU: &runpod.EndpointGPU{Pools: []string{"AMPERE_16"}, Count: 1}, Workers: runpod.EndpointWorkers{Min: 0, Max: 1, IdleTimeout: &idle},
		Scaling: runpod.EndpointScaling{Type: "QUEUE_DELAY", QueueDelay: &delay}, Timeout: 900000, Flashboot: "OFF"}
}

// The client's requests pass the simulator's contract validation (a 422
// otherwise), and every answer of the new routes is one the contract allows.
func TestServerlessManagementFollowsTheContract(t *testing.T) {
	ctx := context.Background()
	s := newSlsSim(t, runpodsim.ServerlessConfig{})
	tpl, err := s.client.CreateTemplate(ctx, templateReq("rpg-sls-1-tpl"))
	assert.NilError(t, err)
	assert.Check(t, !tpl.Public && tpl.Serverless && tpl.Disk == 20 && !tpl.StartSSH)
	ep, err := s.client.CreateEndpoint(ctx, endpointReq("rpg-sls-1", tpl.ID))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(ep.Workers.Max, 1))
	assert.Check(t, is.Equal(ep.Workers.Min, 0))

	for _, target := range []string{"/v2/templates", "/v2/templates/" + tpl.ID, "/v2/serverless", "/v2/serverless/" + ep.ID} {
		s.do(http.MethodGet, target, nil) // checks the answer against the contract
	}
	s.do(http.MethodPatch, "/v2/serverless/"+ep.ID, map[string]any{"workers": map[string]any{"min": 0, "max": 0}})

	// A duplicate name is refused; a template in use cannot be deleted.
	_, err = s.client.CreateTemplate(ctx, templateReq("rpg-sls-1-tpl"))
	assert.Check(t, errors.Is(err, runpod.ErrBadRequest), "%v", err)
	assert.Check(t, errors.Is(s.client.DeleteTemplate(ctx, tpl.ID), runpod.ErrBadRequest))

	assert.NilError(t, s.client.DeleteEndpoint(ctx, ep.ID))
	assert.Check(t, errors.Is(s.client.DeleteTemplate(ctx, tpl.ID), runpod.ErrNotFound), "deleting the endpoint deleted its template")
	eps, err := s.client.ListEndpoints(ctx)
	assert.NilError(t, err)
	assert.Check(t, is.Len(eps, 0))

	// An unknown field is a 422 from the contract.
	r := s.do(http.MethodPost, "/v2/templates", map[string]any{"name": "x", "image": "y", "bogus": true})
	assert.Check(t, is.Equal(r.status, http.StatusUnprocessableEntity))
}

func TestServerlessFaults(t *testing.T) {
	ctx := context.Background()
	s := newSlsSim(t, runpodsim.ServerlessConfig{Faults: runpodsim.ServerlessFaults{
		WorkersMax:  3,
		LostCreates: []runpodsim.ServerlessLostCreate{{Route: "POST /v2/serverless", When: runpodsim.Trigger{First: 1}}},
	}})
	tpl, err := s.client.CreateTemplate(ctx, templateReq("t"))
	assert.NilError(t, err)
	_, err = s.client.CreateEndpoint(ctx, endpointReq("e", tpl.ID))
	assert.Check(t, errors.Is(err, runpod.ErrServer), "the create's answer is lost: %v", err)
	eps, err := s.client.ListEndpoints(ctx)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(eps, 1), "the endpoint exists anyway")
	assert.Check(t, is.Equal(eps[0].Workers.Max, 3), "the workersMax surprise")
}

func TestServerlessJobLifecycleAndBilling(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	worker := runpodsim.JobWorkerFunc(func(ctx context.Context, j runpodsim.WorkerJob) runpodsim.WorkerResult {
		var in struct{ Fail bool }
		_ = json.Unmarshal(j.Input, &in)
		select {
		case <-release:
		case <-ctx.Done():
			return runpodsim.WorkerResult{Error: "cancelled"}
		}
		if in.Fail {
			return runpodsim.WorkerResult{Output: json.RawMessage(`{"artifact":"x"}`), Error: "tests failed"}
		}
		return runpodsim.WorkerResult{Output: json.RawMessage(`{"ok":true}`)}
	})
	s := newSlsSim(t, runpodsim.ServerlessConfig{Worker: worker, ColdStart: 10 * time.Second})
	tpl, err := s.client.CreateTemplate(ctx, templateReq("t"))
	assert.NilError(t, err)
	ep, err := s.client.CreateEndpoint(ctx, endpointReq("e", tpl.ID))
	assert.NilError(t, err)
	h, err := s.jobs.Health(ctx, ep.ID)
	assert.NilError(t, err)
	assert.Check(t, h.Quiet())

	st, err := s.jobs.Run(ctx, ep.ID, map[string]bool{"fail": true}, runpod.JobPolicy{TTL: 1200000})
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.Status, runpod.JobInQueue))
	s.advance(10 * time.Second)
	st, err = s.jobs.Status(ctx, ep.ID, st.ID)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.Status, runpod.JobInProgress))
	s.advance(50 * time.Second)
	close(release)
	s.server.WaitServerlessWorkers()
	st, err = s.jobs.Status(ctx, ep.ID, st.ID)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(st.Status, runpod.JobFailed))
	assert.Check(t, is.Equal(st.ErrorText(), "tests failed"))
	assert.Check(t, is.Equal(string(st.Output), `{"artifact":"x"}`), "a FAILED job keeps its artifacts")

	h, err = s.jobs.Health(ctx, ep.ID)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(h.Jobs.Failed, 1))
	assert.Check(t, !h.Quiet())

	s.advance(5 * time.Second) // the idle timeout stops the worker
	bill := s.server.ServerlessBill()
	assert.Check(t, is.Equal(bill.LiveWorkers, 0))
	assert.Check(t, is.Equal(bill.Seconds, int64(65)), "cold start, run and idle timeout are billed")
}

func TestServerlessJobTimeoutsAndCancel(t *testing.T) {
	ctx := context.Background()
	block := runpodsim.JobWorkerFunc(func(ctx context.Context, j runpodsim.WorkerJob) runpodsim.WorkerResult {
		<-ctx.Done()
		return runpodsim.WorkerResult{Error: "stopped"}
	})
	s := newSlsSim(t, runpodsim.ServerlessConfig{Worker: block})
	tpl, _ := s.client.CreateTemplate(ctx, templateReq("t"))
	req := endpointReq("e", tpl.ID)
	req.Timeout = 60000
	ep, err := s.client.CreateEndpoint(ctx, req)
	assert.NilError(t, err)

	st, err := s.jobs.Run(ctx, ep.ID, map[string]int{"n": 1}, runpod.JobPolicy{})
	assert.NilError(t, err)
	s.advance(62 * time.Second)
	s.server.WaitServerlessWorkers()
	got, err := s.jobs.Status(ctx, ep.ID, st.ID)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got.Status, runpod.JobTimedOut))

	st, err = s.jobs.Run(ctx, ep.ID, map[string]int{"n": 2}, runpod.JobPolicy{})
	assert.NilError(t, err)
	s.advance(2 * time.Second)
	got, err = s.jobs.Cancel(ctx, ep.ID, st.ID)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got.Status, runpod.JobCancelled))
	s.server.WaitServerlessWorkers()

	// A job still queued at its TTL is gone: max 0 workers never start it.
	_, err = s.client.ScaleEndpoint(ctx, ep.ID, runpod.EndpointWorkers{Min: 0, Max: 0})
	assert.NilError(t, err)
	st, err = s.jobs.Run(ctx, ep.ID, map[string]int{"n": 3}, runpod.JobPolicy{TTL: 30000})
	assert.NilError(t, err)
	s.advance(31 * time.Second)
	_, err = s.jobs.Status(ctx, ep.ID, st.ID)
	assert.Check(t, errors.Is(err, runpod.ErrNotFound), "%v", err)
}

func TestServerlessJobHostRefusals(t *testing.T) {
	ctx := context.Background()
	s := newSlsSim(t, runpodsim.ServerlessConfig{Faults: runpodsim.ServerlessFaults{JobHostUnauthorized: true}})
	tpl, _ := s.client.CreateTemplate(ctx, templateReq("t"))
	ep, err := s.client.CreateEndpoint(ctx, endpointReq("e", tpl.ID))
	assert.NilError(t, err)
	_, err = s.jobs.Health(ctx, ep.ID)
	assert.Check(t, errors.Is(err, runpod.ErrUnauthorized), "%v", err)
	assert.Check(t, !strings.Contains(err.Error(), testKey))

	// Oversized bodies never leave the client.
	_, err = s.jobs.Run(ctx, ep.ID, strings.Repeat("x", runpod.MaxRunBodyBytes), runpod.JobPolicy{})
	assert.Check(t, errors.Is(err, runpod.ErrInvalidRequest), "%v", err)
	assert.Check(t, is.Len(s.server.JobRequests(), 1), "only the health request was sent")
}

var _ simclock.Clock = (*simclock.Virtual)(nil)
