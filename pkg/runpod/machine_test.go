package runpod_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// On the simulator, the machine is the host RunPod placed the pod on.
func TestPodMachineNamesTheHost(t *testing.T) {
	sim, err := runpodsim.New(runpodsim.WithAPIKey("rpa_KEY"))
	assert.NilError(t, err)
	ts := httptest.NewServer(sim)
	defer ts.Close()
	c := runpod.New(ts.URL, "rpa_KEY")
	pod, err := c.CreatePod(context.Background(), runpod.CreatePodRequest{Name: "m-1", Image: "img@sha256:abc",
		GPU: &runpod.CreateGPU{ID: "NVIDIA A40", Count: 1}})
	assert.NilError(t, err)
	machine, err := c.PodMachine(context.Background(), pod.ID)
	assert.NilError(t, err)
	info, err := sim.Pod(pod.ID)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(machine, info.HostID))
}

// What the answer says: a machine, none yet, another pod, GraphQL errors,
// no pod at all; a pod id is never spliced into the query.
func TestPodMachineAnswers(t *testing.T) {
	tests := []struct {
		name, answer string
		want         string
		err          error
	}{
		{name: "a machine", answer: `{"data":{"pod":{"id":"pod1","machineId":"m7xk2"}}}`, want: "m7xk2"},
		{name: "not placed yet", answer: `{"data":{"pod":{"id":"pod1","machineId":null}}}`, want: ""},
		{name: "another pod's machine", answer: `{"data":{"pod":{"id":"pod2","machineId":"m1"}}}`, err: runpod.ErrUnusableRecord},
		{name: "GraphQL errors", answer: `{"errors":[{"message":"pod not found"}],"data":{"pod":null}}`, err: runpod.ErrMalformedResponse},
		{name: "no pod", answer: `{"data":{}}`, err: runpod.ErrMalformedResponse},
		{name: "not JSON", answer: `<html>`, err: runpod.ErrMalformedResponse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body struct {
					Query     string
					Variables struct{ Input struct{ PodID string } }
				}
				assert.Check(t, r.URL.Path == "/graphql" && r.Method == http.MethodPost)
				assert.Check(t, json.NewDecoder(r.Body).Decode(&body))
				assert.Check(t, is.Equal(body.Variables.Input.PodID, "pod1"))
				assert.Check(t, !is.Contains(body.Query, "pod1")().Success(), "the id is a variable")
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.answer))
			}))
			defer ts.Close()
			got, err := runpod.New(ts.URL, "rpa_KEY").PodMachine(context.Background(), "pod1")
			if tc.err != nil {
				assert.Check(t, errors.Is(err, tc.err), "%v", err)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(got, tc.want))
		})
	}
	_, err := runpod.New("http://127.0.0.1:1", "rpa_KEY").PodMachine(context.Background(), " ")
	assert.Check(t, errors.Is(err, runpod.ErrInvalidRequest), "%v", err)
}
