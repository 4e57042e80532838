package market

import (
	"testing"

	"gotest.tools/v3/assert"
)

// Only a pod's log stream is served as a paced stream; every other route
// is answered whole.
func TestLogStreamPod(t *testing.T) {
	for path, want := range map[string]string{
		"/v2/pods/abc123/logs":  "abc123",
		"/v2/pods/abc123":       "",
		"/v2/pods//logs":        "",
		"/v2/pods/abc123/logs/": "",
		"/v2/endpoints/x/logs":  "",
		"/v2/pods":              "",
	} {
		id, ok := logStreamPod(path)
		assert.Equal(t, id, want, path)
		assert.Equal(t, ok, want != "", path)
	}
}
