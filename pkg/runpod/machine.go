package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// podMachineQuery reads the machine RunPod placed a pod on. REST v2's pod
// has no machine; GraphQL's Pod has machineId, as REST v1's pod record does
// (runpodctl and runpod-python read it there). The pod id travels as a
// variable, never spliced into the query.
const podMachineQuery = `query podMachine($input: PodFilter!) { pod(input: $input) { id machineId } }`

// PodMachine returns RunPod's id of the machine a pod was placed on (POST
// /graphql on the API host, one request): "" when RunPod does not say (yet).
// The machine is what a host's reputation is about: one bad machine among
// good ones in a data center. No create parameter pins or excludes a
// machine, so this is how a lane learns where its pod landed.
func (c *Client) PodMachine(ctx context.Context, podID string) (string, error) {
	op := "read the machine of pod " + podID
	if err := checkPodID(op, podID); err != nil {
		return "", err
	}
	body := map[string]any{"query": podMachineQuery, "variables": map[string]any{"input": map[string]string{"podId": podID}}}
	status, data, err := c.send(ctx, call{op: op, method: http.MethodPost, path: "/graphql", body: body})
	if err != nil {
		return "", err
	}
	var out struct {
		Data *struct {
			Pod *struct {
				ID        string  `json:"id"`
				MachineID *string `json:"machineId"`
			} `json:"pod"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", c.malformed(op, status, err)
	}
	if len(out.Errors) > 0 {
		msgs := make([]string, len(out.Errors))
		for i, e := range out.Errors {
			msgs[i] = e.Message
		}
		return "", c.malformed(op, status, errors.New("GraphQL: "+strings.Join(msgs, "; ")))
	}
	switch {
	case out.Data == nil || out.Data.Pod == nil:
		return "", c.malformed(op, status, errors.New(`no "data.pod" in the answer`))
	case out.Data.Pod.ID != podID:
		// Another pod's machine would be blamed for this one's failure.
		return "", c.unusable(op, fmt.Sprintf("the answer describes pod %q", out.Data.Pod.ID))
	case out.Data.Pod.MachineID == nil:
		return "", nil
	}
	return strings.TrimSpace(*out.Data.Pod.MachineID), nil
}
