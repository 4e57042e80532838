package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/money"
)

// codeOnly marks invalid examples the JSON Schema cannot reject; the value says why.
const (
	crossField = "code only: compares keys or list items"
	yamlLevel  = "code only: YAML syntax the JSON view cannot see"
	globSyntax = "code only: glob syntax is not expressible in the schema"
)

// invalidCases are the files under testdata/invalid: the key each problem
// names, its line, and whether the JSON Schema rejects the file too (schema
// empty) or only the loader can (schema gives the reason).
var invalidCases = []struct {
	file     string
	wantKey  string
	wantLine int
	schema   string
}{
	{file: "alias", wantKey: "gpu_tiers[1].gpu_ids", wantLine: 6, schema: yamlLevel},
	{file: "attempts-above-limit", wantKey: "max_provision_attempts", wantLine: 5},
	{file: "concurrent-pods-above-limit", wantKey: "max_concurrent_pods", wantLine: 5},
	{file: "concurrent-pods-negative", wantKey: "max_concurrent_pods", wantLine: 5},
	{file: "attempts-below-slots", wantKey: "max_provision_attempts", wantLine: 8, schema: crossField},
	{file: "attempts-float", wantKey: "max_provision_attempts", wantLine: 5},
	{file: "bad-tier-name", wantKey: "gpu_tiers[0].name", wantLine: 3},
	{file: "bad-zone", wantKey: "zones[0]", wantLine: 5},
	{file: "cuda-major-only", wantKey: "min_cuda_version", wantLine: 5},
	{file: "cuda-unquoted", wantKey: "min_cuda_version", wantLine: 5},
	{file: "duplicate-key", wantKey: "max_provision_attempts", wantLine: 6, schema: yamlLevel},
	{file: "duplicate-region", wantKey: "regions[1]", wantLine: 5},
	{file: "duplicate-tier-name", wantKey: "gpu_tiers[1].name", wantLine: 5, schema: crossField},
	{file: "empty-clouds", wantKey: "clouds", wantLine: 5},
	{file: "empty-gpu-ids", wantKey: "gpu_tiers[0].gpu_ids", wantLine: 4},
	{file: "empty-tiers", wantKey: "gpu_tiers", wantLine: 2},
	{file: "failures-above-attempts", wantKey: "max_consecutive_startup_failures", wantLine: 6, schema: crossField},
	{file: "failures-negative", wantKey: "max_consecutive_startup_failures", wantLine: 5},
	{file: "floor-below-baseline", wantKey: "min_cuda_version", wantLine: 5, schema: crossField},
	{file: "gpu-count-zero", wantKey: "gpu_count", wantLine: 5},
	{file: "gpu-id-in-two-tiers", wantKey: "gpu_tiers[1].gpu_ids[1]", wantLine: 6, schema: crossField},
	{file: "gpu-id-shell", wantKey: "gpu_tiers[0].gpu_ids[0]", wantLine: 4},
	{file: "gpu-paths-bad-glob", wantKey: "gpu_paths[0]", wantLine: 5, schema: globSyntax},
	{file: "gpu-paths-empty", wantKey: "gpu_paths", wantLine: 5},
	{file: "gpu-paths-only-excluded", wantKey: "gpu_paths", wantLine: 5},
	{file: "image-shell", wantKey: "image", wantLine: 5},
	{file: "image-short-digest", wantKey: "image", wantLine: 5},
	{file: "lifetime-over-reaper", wantKey: "lifetime_seconds", wantLine: 5},
	{file: "lowercase-country", wantKey: "regions[0]", wantLine: 5},
	{file: "missing-tiers", wantKey: "gpu_tiers", wantLine: 0},
	{file: "not-a-mapping", wantKey: "the config", wantLine: 2},
	{file: "null-value", wantKey: "image", wantLine: 5},
	{file: "nvrtc-http", wantKey: "nvrtc.full.url", wantLine: 7},
	{file: "nvrtc-missing-sha", wantKey: "nvrtc.full.sha256", wantLine: 6},
	{file: "nvrtc-short-sha", wantKey: "nvrtc.baseline.sha256", wantLine: 8},
	{file: "poll-not-below-timeout", wantKey: "startup_poll_seconds", wantLine: 6, schema: crossField},
	{file: "runtime-tiers-inverted", wantKey: "runtime_tiers.baseline", wantLine: 8, schema: crossField},
	{file: "setup-over-lifetime", wantKey: "setup_budget_seconds", wantLine: 5, schema: crossField},
	{file: "sha-unquoted-number", wantKey: "nvrtc.full.sha256", wantLine: 8},
	{file: "spend-zero", wantKey: "max_run_spend_usd", wantLine: 5},
	{file: "spend-nan", wantKey: "max_run_spend_usd", wantLine: 5},
	{file: "network-volume-bad-id", wantKey: "network_volume.id", wantLine: 6},
	{file: "network-volume-bad-fallback", wantKey: "network_volume.when_out_of_stock", wantLine: 7},
	{file: "network-volume-beside-volume", wantKey: "network_volume", wantLine: 5, schema: crossField},
	{file: "budget-empty", wantKey: "budget", wantLine: 5},
	{file: "budget-negative", wantKey: "budget.monthly_usd", wantLine: 7},
	{file: "string-for-list", wantKey: "clouds", wantLine: 5},
	{file: "timeout-overflow", wantKey: "startup_timeout_seconds", wantLine: 5},
	{file: "timeout-zero", wantKey: "startup_timeout_seconds", wantLine: 5},
	{file: "unknown-cloud", wantKey: "clouds[0]", wantLine: 5},
	{file: "unknown-key", wantKey: "(unknown key)", wantLine: 5}, // no misspelling of a key: not repeated
	{file: "unknown-key-typo", wantKey: "min_vram_gbs", wantLine: 5},
	{file: "unknown-nested-key", wantKey: "gpu_tiers[0].gpu_id", wantLine: 4},
	{file: "unknown-nvrtc-tier", wantKey: "nvrtc.(unknown key)", wantLine: 6},
	{file: "unknown-region", wantKey: "regions[0]", wantLine: 5},
	{file: "unknown-volume-key", wantKey: "volume.(unknown key)", wantLine: 7},
	{file: "volume-relative-path", wantKey: "volume.path", wantLine: 7},
	{file: "volume-too-small", wantKey: "volume.size_gb", wantLine: 6},
	{file: "volume-too-large", wantKey: "volume.size_gb", wantLine: 6},
	{file: "disk-too-large", wantKey: "disk_gb", wantLine: 5},
	{file: "vram-in-mb", wantKey: "min_vram_gb", wantLine: 5},
}

func readTestdata(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	assert.NilError(t, err)
	return data
}

// fieldErrors returns every *FieldError joined in err.
func fieldErrors(err error) []*FieldError {
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		var one *FieldError
		if errors.As(err, &one) {
			return []*FieldError{one}
		}
		return nil
	}
	var out []*FieldError
	for _, e := range joined.Unwrap() {
		out = append(out, fieldErrors(e)...)
	}
	return out
}

func TestParseInvalid(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yml")
	assert.NilError(t, err)
	assert.Equal(t, len(files), len(invalidCases), "every file under testdata/invalid needs a case")

	var report strings.Builder
	for _, tc := range invalidCases {
		t.Run(tc.file, func(t *testing.T) {
			source := tc.file + ".yml"
			cfg, err := Parse(readTestdata(t, "invalid/"+source), source)
			assert.Assert(t, is.Nil(cfg))
			assert.Assert(t, err != nil)

			problems := fieldErrors(err)
			assert.Assert(t, len(problems) > 0, "want *FieldError, got %T: %v", err, err)
			for _, p := range problems {
				assert.Equal(t, p.Source, source)
				assert.Assert(t, p.Key != "" && p.Expected != "", "incomplete problem %#v", p)
			}
			assert.Equal(t, problems[0].Key, tc.wantKey)
			assert.Equal(t, problems[0].Line, tc.wantLine)
			// A line without a column would put an annotation at the line's start
			// only by luck; every located problem carries both.
			assert.Check(t, (problems[0].Line > 0) == (problems[0].Column > 0), "line %d, column %d", problems[0].Line, problems[0].Column)
			report.WriteString(err.Error() + "\n")
		})
	}
	golden.Assert(t, report.String(), "invalid-errors.golden")
}

func TestParseSyntaxErrors(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantErr  string
		wantLine int
	}{
		{name: "unclosed quote", input: "image: \"ghcr.io\n", wantErr: `bad.yml: not a valid YAML config: yaml: line 2: found unexpected end of stream`, wantLine: 2},
		{name: "bad indentation", input: "gpu_tiers:\n  - name: a\n gpu_ids: []\n", wantErr: "bad.yml: not a valid YAML config: yaml: line 2: did not find expected key", wantLine: 2},
		{name: "two documents", input: "gpu_count: 1\n---\ngpu_count: 2\n", wantErr: "bad.yml: not a valid YAML config: line 2: a second YAML document; the config is one document", wantLine: 2},
		{name: "tab indentation", input: "gpu_tiers:\n\t- name: a\n", wantErr: "bad.yml: not a valid YAML config: yaml: line 2: found character that cannot start any token", wantLine: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.input), "bad.yml")
			var syntaxErr *SyntaxError
			assert.Assert(t, errors.As(err, &syntaxErr), "got %T: %v", err, err)
			assert.Error(t, err, tc.wantErr)
			assert.Equal(t, syntaxErr.Line, tc.wantLine)
		})
	}
}

func TestParseValid(t *testing.T) {
	ada := GPUTier{Name: "ada", GPUIDs: []string{"NVIDIA GeForce RTX 4090"}}
	ceiling := func(usd float64) *money.Amount { a := money.FromDollars(usd); return &a }
	tests := []struct {
		file string
		want func(c *Config)
	}{
		{file: "minimal.yml", want: func(c *Config) { c.GPUTiers = []GPUTier{ada} }},
		{file: "full.yml", want: func(c *Config) {
			c.GPUTiers = []GPUTier{
				{Name: "ada", GPUIDs: []string{"NVIDIA GeForce RTX 4090", "NVIDIA RTX 6000 Ada Generation"}},
				{Name: "ampere", GPUIDs: []string{"NVIDIA A100 80GB PCIe"}},
			}
			c.Clouds = []Cloud{CloudSecure, CloudCommunity}
			c.Regions = []string{"north_america", "DE"}
			c.Zones = []string{"US-TX-3", "EUR-IS-1"}
			c.GPUCount = 2
			c.MinVRAMGB = 24
			c.MinCUDAVersion = CUDAVersion{12, 8}
			c.RuntimeTiers = RuntimeTiers{Full: CUDAVersion{12, 9}, Baseline: CUDAVersion{12, 8}}
			c.MaxPriceCandidates = 2
			c.MaxProvisionAttempts = 5
			c.MaxConsecutiveStartupFailures = 3
			c.StartupTimeoutSeconds = 600
			c.StartupPollSeconds = 15
			c.CreateDeadlineSeconds = 90
			c.Image = "ghcr.io/actions/actions-runner:2.321.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
			c.DiskGB = 80
			c.Volume = &Volume{SizeGB: 20, Path: "/workspace"}
			c.SetupBudgetSeconds = 1200
			c.LifetimeSeconds = 5400
			c.NVRTC = NVRTCPins{
				Full: &NVRTCPin{
					URL:    "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/cuda-nvrtc-12-9_12.9.86-1_amd64.deb",
					SHA256: "85a12357d391a5d400e1cb1c8f2eecd44be6a2c0b1cc4461b68425683e8c70d2",
				},
				Baseline: &NVRTCPin{
					URL:    "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/cuda-nvrtc-12-8_12.8.93-1_amd64.deb",
					SHA256: "29047624a24301971fbce75dd058191366ff299c9145d190bf98d4bcf6e8dd70",
				},
			}
			c.MaxRunSpendUSD = ceiling(2.5)
			c.Budget = &Budget{DailyUSD: ceiling(20), MonthlyUSD: ceiling(300)}
			c.GPUPaths = []string{"**", "!docs/**", "!**/*.md"}
		}},
		{file: "community-europe.yml", want: func(c *Config) {
			c.GPUTiers = []GPUTier{
				{Name: "consumer", GPUIDs: []string{"NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090"}},
				{Name: "datacenter", GPUIDs: []string{"NVIDIA L40S"}},
				{Name: "hopper", GPUIDs: []string{"NVIDIA H100 80GB HBM3"}},
			}
			c.Clouds = []Cloud{CloudSecure, CloudCommunity}
			c.Regions = []string{"europe", "CA"}
			c.Zones = []string{"CA-MTL-1"}
		}},
		{file: "docs-skip.yml", want: func(c *Config) {
			c.GPUTiers = []GPUTier{{Name: "ada", GPUIDs: []string{"NVIDIA RTX 4000 Ada Generation"}}}
			c.MaxPriceCandidates = 0
			c.MaxProvisionAttempts = 1
			c.MaxConsecutiveStartupFailures = 0
			c.MaxRunSpendUSD = ceiling(1)
			c.GPUPaths = []string{"src/**", "tests/**", "!tests/fixtures/**/*.txt"}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := Parse(readTestdata(t, "valid/"+tc.file), tc.file)
			assert.NilError(t, err)
			want := Default()
			tc.want(want)
			assert.DeepEqual(t, got, want)
		})
	}
}

func TestParseEmptyFileNeedsTiers(t *testing.T) {
	for _, input := range []string{"", "# only a comment\n"} {
		_, err := Parse([]byte(input), "empty.yml")
		assert.Error(t, err, "empty.yml: gpu_tiers: want at least one tier: a list of {name, gpu_ids}")
	}
}

func TestParseMarksDefaultsInCrossFieldErrors(t *testing.T) {
	input := "gpu_tiers:\n  - {name: a, gpu_ids: [x1]}\n  - {name: b, gpu_ids: [x2]}\n  - {name: c, gpu_ids: [x3]}\nmax_price_candidates: 4\n"
	_, err := Parse([]byte(input), "c.yml")
	assert.Error(t, err, "c.yml: max_provision_attempts: got 6 (the default), want at least max_price_candidates + number of gpu_tiers (4 + 3 = 7), so every tier keeps a slot")
}

func TestParseReportsEveryProblem(t *testing.T) {
	input := "gpu_tiers:\n  - name: Bad\n    gpu_ids: [ok]\ngpu_count: 0\nimage: 'a b'\n"
	_, err := Parse([]byte(input), "many.yml")
	var keys []string
	for _, p := range fieldErrors(err) {
		keys = append(keys, p.Key)
	}
	assert.DeepEqual(t, keys, []string{"gpu_tiers[0].name", "gpu_count", "image"})
}

func TestLoad(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "valid", "minimal.yml"))
	assert.NilError(t, err)
	assert.Equal(t, cfg.GPUTiers[0].Name, "ada")

	_, err = Load(filepath.Join(t.TempDir(), "absent.yml"))
	assert.Assert(t, errors.Is(err, fs.ErrNotExist), "got %v", err)

	big := filepath.Join(t.TempDir(), "big.yml")
	assert.NilError(t, os.WriteFile(big, []byte("# "+strings.Repeat("x", MaxFileSize)), 0o600))
	_, err = Load(big)
	var syntaxErr *SyntaxError
	assert.Assert(t, errors.As(err, &syntaxErr), "got %v", err)
	assert.ErrorContains(t, err, "larger than 1048576 bytes")
}

// Config errors never repeat the file's text: the path may name a file that
// is no config at all (a secret given by mistake, or on purpose), and the
// errors go to annotations and a job summary anyone with read access sees.
// Each document hides the marker where a value, a key, an alias or a
// parser's quote would show it.
func TestConfigErrorsNeverEchoTheFile(t *testing.T) {
	const m = "SECRETmarker0123456789"
	tier := "gpu_tiers:\n  - name: ada\n    gpu_ids: [\"NVIDIA L4\"]\n"
	for name, doc := range map[string]string{
		"an env file":              "AWS_SECRET_ACCESS_KEY=" + m + "\n",
		"a scalar document":        m + "\n",
		"an unknown key":           tier + m + ": 1\n",
		"an unknown nested key":    "gpu_tiers:\n  - name: ada\n    gpu_ids: [\"NVIDIA L4\"]\n    " + m + ": x\n",
		"a string value":           tier + "image: \"" + m + "; sh\"\n",
		"a number wanted":          tier + "disk_gb: " + m + "\n",
		"a list item":              tier + "zones: [\"" + m + "\"]\n",
		"a tier name":              "gpu_tiers:\n  - name: " + m + "\n    gpu_ids: [\"NVIDIA L4\"]\n",
		"a duplicate tier name":    "gpu_tiers:\n  - name: " + strings.ToLower(m[:10]) + "\n    gpu_ids: [\"NVIDIA L4\"]\n  - name: " + strings.ToLower(m[:10]) + "\n    gpu_ids: [\"NVIDIA A40\"]\n",
		"a GPU id":                 "gpu_tiers:\n  - name: ada\n    gpu_ids: [\"" + m + "$(x)\"]\n",
		"a URL":                    tier + "nvrtc:\n  full:\n    url: \"http://" + m + ".example/x.deb\"\n    sha256: \"" + strings.Repeat("a", 64) + "\"\n",
		"an alias":                 tier + "zones: *" + m + "\n",
		"an unterminated quote":    tier + "image: \"" + m + "\n  x: [\n",
		"a bad flow sequence":      tier + "zones: [\"EU-RO-1\", " + m + "\n",
		"a tab-indented secret":    tier + "image:\n\t" + m + "\n",
		"a mapping key collection": tier + "? [" + m + "]\n: 1\n",
		"an unknown anchor":        tier + "image: &a x\nzones: *" + m + "x\n",
		"a float for an integer":   tier + "disk_gb: 1234567.25\n",
		"a number as a string key": tier + "image: 98765432123456789\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(doc), "f.yml")
			assert.Assert(t, err != nil, "the document parsed")
			for _, secret := range []string{m, strings.ToLower(m[:10]), "1234567.25", "98765432123456789"} {
				assert.Check(t, !strings.Contains(err.Error(), secret), "the error repeats %q: %v", secret, err)
			}
		})
	}
}
