package market

import (
	"testing"

	"gotest.tools/v3/assert"
)

// Only a pod's log stream is refused in process; every other route reaches
// the simulated cloud.
func TestIsLogStream(t *testing.T) {
	for path, want := range map[string]bool{
		"/v2/pods/abc123/logs":  true,
		"/v2/pods/abc123":       false,
		"/v2/pods//logs":        false,
		"/v2/pods/abc123/logs/": false,
		"/v2/endpoints/x/logs":  false,
		"/v2/pods":              false,
	} {
		assert.Equal(t, isLogStream(path), want, path)
	}
}
