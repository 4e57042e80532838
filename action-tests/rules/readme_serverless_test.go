package rules

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/serverless"
)

// TestReadmeListsThePayloadsCredentialPatterns: the Serverless page's list of
// credential files a payload never carries is the code's list, in order.
func TestReadmeListsThePayloadsCredentialPatterns(t *testing.T) {
	section, page := docSection(t, "serverless-credentials")
	assert.Check(t, page == docServerless, "the credential list is on %s, not %s", page, docServerless)
	listed := strings.TrimSpace(section)
	var want []string
	for _, p := range serverless.CredentialPatterns {
		want = append(want, "`"+p+"`")
	}
	assert.Equal(t, listed, strings.Join(want, ", "))
}
