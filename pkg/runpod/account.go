package runpod

import (
	"context"
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
	keys, _, err := decodeArray(ctx, c, cl, &out, &out.Keys, "keys")
	return keys, err
}
