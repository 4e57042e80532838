package devcli

import (
	"encoding/json"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
)

// offerRows runs offers --json and returns "instance type @ zone" rows.
func offerRows(t *testing.T, w *world, args ...string) ([]string, result) {
	t.Helper()
	r := w.run(append([]string{"offers", "--json"}, args...)...)
	var offers []offerJSON
	if r.code == ExitOK || r.code == ExitNoCapacity {
		assert.NilError(t, json.Unmarshal([]byte(r.stdout), &offers), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	var rows []string
	for _, o := range offers {
		rows = append(rows, o.InstanceType+" @ "+o.DataCenterID)
	}
	return rows, r
}

func TestOffersOnePerDataCenterCheapestFirst(t *testing.T) {
	w := newWorld(t)
	rows, r := offerRows(t, w, "--gpus", "RTX4090:1")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.DeepEqual(t, rows, []string{
		"NVIDIA GeForce RTX 4090 x1 community @ AP-JP-1",
		"NVIDIA GeForce RTX 4090 x1 community @ US-CA-2",
		"NVIDIA GeForce RTX 4090 x1 secure @ EU-RO-1",
		"NVIDIA GeForce RTX 4090 x1 secure @ EUR-IS-1",
		"NVIDIA GeForce RTX 4090 x1 secure @ US-KS-2",
	})
	// One catalog read per cloud tier, and the data centers once.
	got := w.requests()
	assert.Equal(t, got["GET /v2/catalog/gpus"], 2)
	assert.Equal(t, got["GET /v2/catalog/datacenters"], 1)

	var offers []offerJSON
	assert.NilError(t, json.Unmarshal([]byte(r.stdout), &offers))
	assert.Equal(t, offers[0].Region, "asia")
	assert.Equal(t, offers[0].PricePerHour, money.PerHour(0.34))
	assert.Equal(t, offers[4].Region, "north_america")

	table := w.run("offers", "--gpus", "RTX4090:2", "--cloud", "secure")
	assert.Equal(t, table.code, ExitOK, table.stderr)
	assert.Check(t, is.Contains(table.stdout, "INSTANCE TYPE"))
	assert.Check(t, is.Contains(table.stdout, "NVIDIA GeForce RTX 4090 x2 secure  europe"))
	assert.Check(t, is.Contains(table.stdout, "1.38"), "the price is per pod: 2 × $0.69")
}

func TestOffersFilters(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"continent", []string{"--gpus", "RTX4090", "--region", "europe"}, []string{
			"NVIDIA GeForce RTX 4090 x1 secure @ EU-RO-1", "NVIDIA GeForce RTX 4090 x1 secure @ EUR-IS-1"}},
		{"country codes", []string{"--gpus", "RTX4090", "--region", "US", "--region", "JP"}, []string{
			"NVIDIA GeForce RTX 4090 x1 community @ AP-JP-1", "NVIDIA GeForce RTX 4090 x1 community @ US-CA-2",
			"NVIDIA GeForce RTX 4090 x1 secure @ US-KS-2"}},
		// Continents and countries given together mean either.
		{"a continent and a country", []string{"--gpus", "RTX4090", "--region", "europe", "--region", "US"}, []string{
			"NVIDIA GeForce RTX 4090 x1 community @ US-CA-2", "NVIDIA GeForce RTX 4090 x1 secure @ EU-RO-1",
			"NVIDIA GeForce RTX 4090 x1 secure @ EUR-IS-1", "NVIDIA GeForce RTX 4090 x1 secure @ US-KS-2"}},
		{"zone pins one data center", []string{"--gpus", "RTX4090", "--zone", "eu-ro-1"}, []string{
			"NVIDIA GeForce RTX 4090 x1 secure @ EU-RO-1"}},
		{"community only", []string{"--gpus", "RTX4090", "--cloud", "community"}, []string{
			"NVIDIA GeForce RTX 4090 x1 community @ AP-JP-1", "NVIDIA GeForce RTX 4090 x1 community @ US-CA-2"}},
		{"count beyond the small machines", []string{"--gpus", "RTX4090:8"}, []string{
			"NVIDIA GeForce RTX 4090 x8 secure @ EU-RO-1", "NVIDIA GeForce RTX 4090 x8 secure @ EUR-IS-1",
			"NVIDIA GeForce RTX 4090 x8 secure @ US-KS-2"}},
		{"exact id", []string{"--instance-type", "NVIDIA H100 PCIe"}, []string{
			"NVIDIA H100 PCIe x1 community @ OC-AU-1", "NVIDIA H100 PCIe x1 secure @ US-CA-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, r := offerRows(t, w, tc.args...)
			assert.Equal(t, r.code, ExitOK, r.stderr)
			assert.DeepEqual(t, rows, tc.want)
		})
	}
}

func TestOffersMatchGPUNamesOnWholeTokens(t *testing.T) {
	w := newWorld(t)
	gpusOf := func(rows []string) []string {
		seen := map[string]bool{}
		var out []string
		for _, row := range rows {
			id := row[:strings.Index(row, " x")]
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"L40", []string{"NVIDIA L40"}},
		{"L40S", []string{"NVIDIA L40S"}},
		{"H100", []string{"NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H100 80GB HBM3"}},
		{"A100-80GB", []string{"NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-80GB"}},
		{"RTX4090", []string{"NVIDIA GeForce RTX 4090"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, r := offerRows(t, w, "--gpus", tc.name)
			assert.Equal(t, r.code, ExitOK, r.stderr)
			got := gpusOf(rows)
			for _, id := range tc.want {
				assert.Check(t, is.Contains(got, id))
			}
			assert.Equal(t, len(got), len(tc.want), "%v", got)
		})
	}
	for _, tc := range []struct {
		name, args, want string
	}{
		{"unknown lists the near names", "L40X", `matches no GPU type in the RunPod catalog; known types: "NVIDIA L4", "NVIDIA L40S", "NVIDIA L40"`},
		{"ambiguous lists the candidates", "RTX", `GPU name "RTX" is ambiguous: it matches "NVIDIA RTX A4000"`},
		{"count is validated", "RTX4090:0", "GPU count 0: want 1 to 16"},
		{"malformed", "RTX4090:x", `--gpus "RTX4090:x": want NAME[:COUNT]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.run("offers", "--gpus", tc.args)
			assert.Equal(t, r.code, ExitUsage)
			assert.Check(t, is.Contains(r.stderr, tc.want))
		})
	}
	r := w.run("offers", "--instance-type", "H100")
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, `--instance-type "H100" is not an exact RunPod GPU id; did you mean "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL"?`))
	r = w.run("offers", "--gpus", "H100", "--zone", "XX-NO-1")
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, `--zone "XX-NO-1" is not a RunPod data center; known: AP-JP-1, CA-MTL-1`))
	r = w.run("offers", "--gpus", "H100", "--region", "atlantis")
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, `--region "atlantis": want a continent (north_america`))
}

func TestOffersNothingInStockExitsNoCapacity(t *testing.T) {
	w := newWorld(t)
	rows, r := offerRows(t, w, "--gpus", "H200", "--region", "asia")
	assert.Equal(t, r.code, ExitNoCapacity)
	assert.Equal(t, len(rows), 0)
	assert.Check(t, is.Contains(r.stderr, `no offer for H200 x1 in asia (secure, community cloud): nothing in stock (matched "NVIDIA H200")`))
	// A country the type is not offered in: not an unknown name.
	r = w.run("offers", "--gpus", "H200", "--region", "JP")
	assert.Equal(t, r.code, ExitNoCapacity, r.stderr)
	assert.Check(t, is.Contains(r.stderr, `no offer for H200 x1 in JP (secure, community cloud): nothing in stock (matched "NVIDIA H200")`))
	r = w.run("offers", "--gpus", "H900", "--region", "JP")
	assert.Equal(t, r.code, ExitUsage, r.stderr)
}

func TestRefusedFlagsAreRefusedUpFrontWithTheReason(t *testing.T) {
	for _, tc := range []struct {
		flag []string
		want string
	}{
		{[]string{"--port", "8888"}, "--port is not supported on RunPod: pod ports are published on random public ports"},
		{[]string{"--spot"}, "--spot is not supported on RunPod: the REST API has no interruptible pods"},
		{[]string{"--k8s"}, "--k8s is not supported on RunPod: pods are containers without systemd"},
	} {
		for _, cmd := range [][]string{{"up", "--name", "dev"}, {"offers"}} {
			t.Run(cmd[0]+tc.flag[0], func(t *testing.T) {
				w := newWorld(t)
				args := append(append(append([]string{}, cmd...), "--gpus", "RTX4090:1"), tc.flag...)
				r := w.run(args...)
				assert.Equal(t, r.code, ExitUsage)
				assert.Check(t, is.Contains(r.stderr, tc.want))
				assert.Equal(t, len(w.sim.Requests()), 0, "refused before any API call")
			})
		}
	}
}
