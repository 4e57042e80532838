package runpodsim_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// GraphQL's myself query shows the balance left after what pods spent, what
// running pods spend per hour, and the spend limit; other fields and queries
// are GraphQL errors.
func TestGraphQLMyselfShowsTheBalance(t *testing.T) {
	s := newSim(t, runpodsim.WithBalance(20), runpodsim.WithSpendLimit(30))
	var got struct {
		Data struct {
			Myself map[string]any `json:"myself"`
		} `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	s.do(http.MethodPost, "/graphql", map[string]string{"query": "query { myself { clientBalance, currentSpendPerHr spendLimit } }"}).decode(t, &got)
	assert.Check(t, is.DeepEqual(got.Data.Myself, map[string]any{"clientBalance": 20.0, "currentSpendPerHr": 0.0, "spendLimit": 30.0}))

	s.mustCreate(podRequest("p1", a40))
	s.clock.Advance(time.Minute) // the pod runs and bills
	s.do(http.MethodPost, "/graphql", map[string]string{"query": "{ myself { currentSpendPerHr } }"}).decode(t, &got)
	assert.Check(t, got.Data.Myself["currentSpendPerHr"].(float64) > 0, "a billing pod spends")

	status, body := graphqlPost(t, s, `{"query":"{ myself { password } }"}`)
	assert.Check(t, is.Equal(status, http.StatusBadRequest))
	assert.Check(t, is.Contains(body, `Cannot query field \"password\" on type \"User\"`))
	status, body = graphqlPost(t, s, `{"query":"{ gpuTypes { id } }"}`)
	assert.Check(t, is.Equal(status, http.StatusOK))
	assert.Check(t, is.Contains(body, `"errors"`))
}

// graphqlPost sends a GraphQL body as RunPod's clients do.
func graphqlPost(t *testing.T, s *sim, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+"/graphql", strings.NewReader(body))
	assert.NilError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	assert.NilError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	assert.NilError(t, err)
	return resp.StatusCode, string(data)
}

// GraphQL's pod query names the machine (host) a pod was placed on, with the
// pod id as a variable or inline; an unknown pod is null with an error, an
// unknown field a GraphQL error.
func TestGraphQLPodNamesItsMachine(t *testing.T) {
	s := newSim(t)
	p := s.mustCreate(podRequest("p1", a40))
	info, err := s.server.Pod(p.ID)
	assert.NilError(t, err)
	type answer struct {
		Data struct {
			Pod *struct{ ID, MachineID string } `json:"pod"`
		} `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	for _, body := range []map[string]any{
		{"query": "query q($input: PodFilter!) { pod(input: $input) { id machineId } }", "variables": map[string]any{"input": map[string]string{"podId": p.ID}}},
		{"query": `query { pod(input: {podId: "` + p.ID + `"}) { id, machineId } }`},
	} {
		var got answer
		s.do(http.MethodPost, "/graphql", body).decode(t, &got)
		assert.Assert(t, got.Data.Pod != nil, "%v", got.Errors)
		assert.Check(t, is.Equal(got.Data.Pod.ID, p.ID))
		assert.Check(t, is.Equal(got.Data.Pod.MachineID, info.HostID))
	}
	var missing answer
	s.do(http.MethodPost, "/graphql", map[string]any{"query": `{ pod(input: {podId: "nosuchpod"}) { id machineId } }`}).decode(t, &missing)
	assert.Check(t, missing.Data.Pod == nil && len(missing.Errors) == 1)
	status, body := graphqlPost(t, s, `{"query":"{ pod(input: {podId: \"`+p.ID+`\"}) { env } }"}`)
	assert.Check(t, is.Equal(status, http.StatusBadRequest))
	assert.Check(t, is.Contains(body, `Cannot query field \"env\" on type \"Pod\"`))
}
