// Package rules holds the repository's rules and static checks: the actions'
// metadata and READMEs against their action.yml, the documentation pages'
// YAML, links, tables and commands (docs_test.go), the workflows' lint, permissions and security, the Dockerfile and
// the image's size, the packages' layers and dependencies, and the source
// rules (tables through pkg/mdtable, lazy patterns, start-up cost).
package rules

import (
	"os"
	"testing"

	"github.com/org/runpod-gpu/action-tests/internal/harness"
)

// TestMain builds the image's binary once for the package (harness.Main): the
// start-up and linking checks run it.
func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
