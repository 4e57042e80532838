package devcli

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

// TestAllowlistHelpExamplesRun runs every example line of allowlist --help
// against the simulated cloud's default market: each must exit 0.
func TestAllowlistHelpExamplesRun(t *testing.T) {
	w := newWorld(t, runpodsim.WithMarket(runpodsim.DefaultMarket()))
	help := w.run("allowlist", "--help")
	assert.Equal(t, help.code, ExitOK, help.stderr)
	_, examples, found := strings.Cut(help.stdout, "Examples:\n")
	assert.Assert(t, found, help.stdout)
	examples, _, _ = strings.Cut(examples, "\n\n")
	ran := 0
	for _, line := range strings.Split(examples, "\n") {
		args := strings.Fields(line)
		if len(args) < 2 || args[0] != "runpod-gpu" {
			continue
		}
		ran++
		r := w.run(args[1:]...)
		assert.Check(t, r.code == ExitOK, "%s: exit %d\n%s", line, r.code, r.stderr)
		assert.Check(t, strings.Contains(r.stdout, "gpu_tiers:"), "%s prints a gpu_tiers block:\n%s", line, r.stdout)
	}
	assert.Check(t, ran >= 2, "allowlist --help has its examples:\n%s", help.stdout)
}
