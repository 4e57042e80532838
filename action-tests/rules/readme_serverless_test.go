package rules

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/serverless"
)

// TestReadmeListsThePayloadsCredentialPatterns: the README's list of
// credential files a payload never carries is the code's list, in order.
func TestReadmeListsThePayloadsCredentialPatterns(t *testing.T) {
	listed := strings.TrimSpace(readmeSection(t, readmeText(t), "serverless-credentials"))
	var want []string
	for _, p := range serverless.CredentialPatterns {
		want = append(want, "`"+p+"`")
	}
	assert.Equal(t, listed, strings.Join(want, ", "))
}
