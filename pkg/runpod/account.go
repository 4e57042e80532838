package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// ListSSHKeys reads the SSH public keys registered on the account (GET
// /v2/account/ssh-keys), so a pod can be given them along with the user's
// own key. The client deliberately has no call that writes the list (PUT
// replaces the whole set): tools built on it can never drop a user's keys.
func (c *Client) ListSSHKeys(ctx context.Context) ([]string, error) {
	var out struct {
		Keys *[]string `json:"keys"`
	}
	cl := call{op: "list account SSH keys", method: http.MethodGet, path: "/v2/account/ssh-keys"}
	status, data, err := c.send(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, c.malformed(cl.op, status, err)
	}
	if out.Keys == nil {
		return nil, c.malformed(cl.op, status, errNoKeys)
	}
	return *out.Keys, nil
}

var errNoKeys = errors.New(`no "keys" array in the answer`)
