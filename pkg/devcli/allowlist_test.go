package devcli

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
)

func TestAllowlistBuildsAValidatedTierBlock(t *testing.T) {
	w := newWorld(t)
	r := w.run("allowlist", "--gpus", "H100,L40S,RTX4090")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	want := `# Reviewed GPU allowlist for .github/runpod-gpu.yml (runpod-gpu allowlist)
gpu_tiers:
    - name: ada
      gpu_ids:
        - NVIDIA GeForce RTX 4090
        - NVIDIA L40S
    - name: hopper
      gpu_ids:
        - NVIDIA H100 PCIe
        - NVIDIA H100 NVL
        - NVIDIA H100 80GB HBM3
`
	assert.Equal(t, r.stdout, want)
	// The block loads with the lane's own config code as it is.
	cfg, err := config.Parse([]byte(r.stdout), "pasted")
	assert.NilError(t, err)
	assert.Equal(t, len(cfg.GPUTiers), 2)

	r = w.run("allowlist", "--gpus", "A100-80GB", "--gpus", "RTX4090,A4000", "--min-vram", "20", "--json")
	assert.Equal(t, r.code, ExitUsage, r.stderr)
	assert.Check(t, is.Contains(r.stderr, `GPU name "A4000" leaves no type with at least 20 GB VRAM`))

	r = w.run("allowlist", "--gpus", "A100-80GB,RTX4090,L4", "--min-vram", "24", "--json")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	var doc struct {
		GPUTiers []config.GPUTier `json:"gpu_tiers"`
	}
	assert.NilError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.DeepEqual(t, doc.GPUTiers, []config.GPUTier{
		{Name: "ada", GPUIDs: []string{"NVIDIA L4", "NVIDIA GeForce RTX 4090"}},
		{Name: "ampere", GPUIDs: []string{"NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-80GB"}},
	})

	for _, tc := range []struct{ args, want string }{
		{"L40X", `GPU name "L40X" matches no GPU type`},
		{"RTX", `GPU name "RTX" is ambiguous`},
	} {
		r := w.run("allowlist", "--gpus", tc.args)
		assert.Equal(t, r.code, ExitUsage)
		assert.Check(t, is.Contains(r.stderr, tc.want))
	}
	r = w.run("allowlist", "--gpus", "L4,L40", "--min-vram", "40")
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, `"L4" leaves no type`))
}

func TestHelpReadsWell(t *testing.T) {
	w := newWorld(t)
	for _, cmd := range [][]string{{"--help"}, {"offers", "--help"}, {"up", "--help"}, {"ls", "--help"}, {"ssh", "--help"}, {"down", "--help"}, {"allowlist", "--help"}} {
		r := w.run(cmd...)
		assert.Equal(t, r.code, ExitOK)
		assert.Check(t, is.Contains(r.stdout, "Usage:"))
		_, flags, _ := strings.Cut(r.stdout, "Flags:")
		assert.Check(t, !containsAny(flags, "--spot", "--k8s", "--port "), "refused flags are not offered in %v help", cmd)
	}
	assert.Check(t, is.Contains(w.run("--help").stdout, "Exit codes: 0 ok, 1 failure, 2 usage, 3 no capacity"))
	r := w.run("completion", "bash")
	assert.Equal(t, r.code, ExitOK)
	assert.Check(t, is.Contains(r.stdout, "bash completion"))
	r = w.run("bogus")
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, `unknown command "bogus"`))
	assert.Equal(t, len(w.sim.Requests()), 0)
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if is.Contains(s, sub)().Success() {
			return true
		}
	}
	return false
}
