package ghapi

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestOnSecretComesBeforeAnyUse: each secret the client comes to hold is
// handed to Options.OnSecret (an action masks it there) before the client
// sends it anywhere or returns it.
func TestOnSecretComesBeforeAnyUse(t *testing.T) {
	const minted = "ghs_MintedInstallationToken0123456789ab"
	const encoded = "eyJULkpJVC5jb25maWciOiJzZWNyZXQtcnVubmVyLWNyZWRlbnRpYWxzIn0="
	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}
	env := newTestEnv(t, func(o *Options) {
		o.Token = ""
		o.App = &AppAuth{AppID: 901, InstallationID: 4242, PrivateKeyPEM: testAppKey(t)}
		o.OnSecret = func(secret string) { record("secret " + secret) }
	})
	env.fake.on("POST", "app/installations/4242/access_tokens", respond(http.StatusCreated, `{"token":"`+minted+`","expires_at":"`+
		time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`))
	env.fake.on("POST", jitPath, func(w http.ResponseWriter, r *http.Request) {
		record("use " + strings.TrimPrefix(r.Header.Get("Authorization"), "token "))
		respondFile(t, http.StatusCreated, "jit_config_created.json")(w, r)
	})

	cfg, err := env.client.GenerateJITConfig(context.Background(), JITRequest{Name: "gpu-c1", Labels: []string{"gpu-c1"}, RunnerGroupID: 1})
	assert.NilError(t, err)
	record("returned " + cfg.EncodedConfig)
	assert.Check(t, is.DeepEqual(events, []string{"secret " + minted, "use " + minted, "secret " + encoded, "returned " + encoded}))
}
