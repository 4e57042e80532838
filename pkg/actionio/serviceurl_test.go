package actionio

import (
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// A service URL carries the action's credential to its host: https only,
// no user info (the URL itself would carry a credential into logs), plain
// http only on loopback, where the simulated cloud serves.
func TestServiceURLAcceptsOnlyHTTPSWithoutUserInfo(t *testing.T) {
	tests := []struct {
		value     string
		wantErr   string // "" accepts
		wantShown string // the value an error may show
	}{
		{value: "https://api.runpod.io"},
		{value: "https://proxy.example.com:8443/runpod/"},
		{value: "http://127.0.0.1:41234"},
		{value: "http://[::1]:8080/v2"},
		{value: "http://localhost:9000"},
		{value: "http://api.runpod.io", wantErr: "not scheme http on api.runpod.io", wantShown: "http://api.runpod.io"},
		{value: "http://127.0.0.1.evil.example", wantErr: "not scheme http on 127.0.0.1.evil.example"},
		{value: "ftp://api.runpod.io", wantErr: "not scheme ftp"},
		{value: "https://user:s3cr3t@api.runpod.io/v2", wantErr: "not user info", wantShown: "https://***@api.runpod.io/v2"},
		{value: "https://s3cr3t@api.runpod.io", wantErr: "not user info", wantShown: "https://***@api.runpod.io"},
		{value: "https://api.runpod.io/?token=s3cr3t", wantErr: "not a query or fragment"},
		{value: "https://api.runpod.io/#x", wantErr: "not a query or fragment"},
		{value: "api.runpod.io", wantErr: ServiceURLForm},
		{value: "https://", wantErr: ServiceURLForm},
		{value: "https://api.runpod.io/ x", wantErr: ServiceURLForm},
		{value: "mailto:x@example.com", wantErr: ServiceURLForm},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			var u ServiceURL
			err := u.UnmarshalText([]byte(tc.value))
			if tc.wantErr == "" {
				assert.NilError(t, err)
				assert.Equal(t, u.String(), tc.value)
				return
			}
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, is.Equal(u.String(), ""), "a refused value is not kept")
			var shown interface{ Shown() string }
			assert.Assert(t, errors.As(err, &shown))
			if tc.wantShown != "" {
				assert.Check(t, is.Equal(shown.Shown(), tc.wantShown))
			}
			assert.Check(t, !strings.Contains(err.Error()+shown.Shown(), "s3cr3t") || strings.Contains(tc.value, "?"), "the credential is shown")
		})
	}
}

// Read as an input, a refused URL's error names the input without the
// credential the URL held.
func TestServiceURLInputErrorHidesUserInfo(t *testing.T) {
	type inputs struct {
		URL ServiceURL `input:"runpod-api-url" default:"https://api.runpod.io"`
	}
	r := newRunner(t, map[string]string{"runpod-api-url": "https://me:hunter2@api.runpod.io"})
	_, err := ReadInputs[inputs](r.io)
	assert.Check(t, is.ErrorContains(err, `input runpod-api-url = "https://***@api.runpod.io": want an https:// URL without user info`))
	assert.Check(t, !strings.Contains(err.Error(), "hunter2"))

	r = newRunner(t, map[string]string{})
	in, err := ReadInputs[inputs](r.io)
	assert.NilError(t, err)
	assert.Equal(t, in.URL.String(), "https://api.runpod.io", "the default is a valid URL")
}
