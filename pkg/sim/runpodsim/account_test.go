package runpodsim_test

import (
	"net/http"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

const aliceKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlice alice@laptop"

func TestAccountSSHKeysAreListedAndReplacedOnlyByPut(t *testing.T) {
	s := newSim(t, runpodsim.WithSSHKeys(aliceKey))
	var got struct{ Keys []string }
	s.do(http.MethodGet, "/v2/account/ssh-keys", nil).decode(t, &got)
	assert.DeepEqual(t, got.Keys, []string{aliceKey})

	// Creating pods leaves the account's keys alone.
	s.mustCreate(podRequest("p1", a40))
	assert.DeepEqual(t, s.server.SSHKeys(), []string{aliceKey})

	bad := s.do(http.MethodPut, "/v2/account/ssh-keys", map[string]any{"keys": "not a list"})
	assert.Equal(t, bad.status, http.StatusUnprocessableEntity)
	assert.DeepEqual(t, s.server.SSHKeys(), []string{aliceKey})

	r := s.do(http.MethodPut, "/v2/account/ssh-keys", map[string]any{"keys": []string{}})
	assert.Equal(t, r.status, http.StatusOK)
	assert.DeepEqual(t, s.server.SSHKeys(), []string{})
	s.do(http.MethodGet, "/v2/account/ssh-keys", nil).decode(t, &got)
	assert.Check(t, is.Len(got.Keys, 0))
}

func TestAccountSSHKeysDefaultToNone(t *testing.T) {
	s := newSim(t)
	r := s.do(http.MethodGet, "/v2/account/ssh-keys", nil)
	assert.Equal(t, string(r.body), "{\"keys\":[]}\n")
	unauth := newSim(t)
	unauth.key = ""
	assert.Equal(t, unauth.do(http.MethodGet, "/v2/account/ssh-keys", nil).status, http.StatusUnauthorized)
}
