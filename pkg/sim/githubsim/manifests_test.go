package githubsim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// A manifest's code trades once for the App's id, slug and key; GitHub
// refuses a manifest without a name or with a bad permission level.
func TestManifestCodeConvertsOnce(t *testing.T) {
	f := newFixture(t)
	code, redirect, err := f.srv.CreateAppFromManifest("octo", []byte(`{"name":"Octo GPU CI","url":"https://github.com/octo/runpod-gpu",
		"redirect_url":"http://127.0.0.1:9/created","hook_attributes":{"url":"https://github.com/octo/runpod-gpu","active":false},
		"default_permissions":{"checks":"write","metadata":"read"}}`))
	assert.NilError(t, err)
	assert.Check(t, is.Equal(redirect, "http://127.0.0.1:9/created"))
	rec, body := serveDirect(t, f.srv, http.MethodPost, "/app-manifests/"+code+"/conversions", "", nil)
	assert.Equal(t, rec.Code, http.StatusCreated, string(body))
	var app struct {
		ID   int64  `json:"id"`
		Slug string `json:"slug"`
		PEM  string `json:"pem"`
	}
	assert.NilError(t, json.Unmarshal(body, &app))
	assert.Check(t, app.ID > 0)
	assert.Check(t, is.Equal(app.Slug, "octo-gpu-ci"))
	assert.Check(t, strings.HasPrefix(app.PEM, "-----BEGIN RSA PRIVATE KEY-----"))
	rec, _ = serveDirect(t, f.srv, http.MethodPost, "/app-manifests/"+code+"/conversions", "", nil)
	assert.Check(t, is.Equal(rec.Code, http.StatusNotFound), "a code works once")

	for manifest, want := range map[string]string{
		`{"url":"https://x.test"}`:    "name is required",
		`{"name":"x","url":"x.test"}`: "must be a full URL",
		`{"name":"x","url":"https://x.test","default_permissions":{"a":"admin"}}`: "is not read or write",
	} {
		_, _, err := f.srv.CreateAppFromManifest("octo", []byte(manifest))
		assert.Check(t, is.ErrorContains(err, want))
	}
}
