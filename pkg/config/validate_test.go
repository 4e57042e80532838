package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/money"
)

// validConfig is Default plus the one thing a file must add.
func validConfig() *Config {
	c := Default()
	c.GPUTiers = []GPUTier{
		{Name: "ada", GPUIDs: []string{"NVIDIA GeForce RTX 4090"}},
		{Name: "ampere", GPUIDs: []string{"NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-80GB"}},
	}
	return c
}

func TestValidate(t *testing.T) {
	zero, negative := money.Amount(0), -money.Dollar/2
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantErr string
	}{
		{name: "defaults plus tiers", mutate: func(*Config) {}},
		{name: "default alone lacks tiers", mutate: func(c *Config) { c.GPUTiers = nil },
			wantErr: "gpu_tiers: want at least one tier: a list of {name, gpu_ids}"},
		{name: "unset CUDA floor", mutate: func(c *Config) { c.MinCUDAVersion = CUDAVersion{} },
			wantErr: `min_cuda_version: got "", want a CUDA version "major.minor" such as "12.6"`},
		{name: "CUDA component too large", mutate: func(c *Config) { c.RuntimeTiers.Full = CUDAVersion{Major: 12, Minor: 1000} },
			wantErr: `runtime_tiers.full: got "12.1000", want a CUDA version "major.minor" such as "12.6"`},
		{name: "floor above full is allowed", mutate: func(c *Config) { c.MinCUDAVersion = CUDAVersion{13, 0} }},
		{name: "full equal to baseline is allowed", mutate: func(c *Config) { c.RuntimeTiers.Full = CUDAVersion{12, 6} }},
		{name: "attempts zero", mutate: func(c *Config) { c.MaxProvisionAttempts = 0 },
			wantErr: "max_provision_attempts: got 0, want an integer from 1 to 8"},
		{name: "too many tiers for the attempt limit", mutate: func(c *Config) {
			c.MaxPriceCandidates = 0
			c.GPUTiers = nil
			for _, name := range strings.Fields("a b c d e f g h i") {
				c.GPUTiers = append(c.GPUTiers, GPUTier{Name: name, GPUIDs: []string{"gpu " + name}})
			}
		}, wantErr: "max_provision_attempts: got 6, want at least max_price_candidates + number of gpu_tiers (0 + 9 = 9), so every tier keeps a slot"},
		{name: "price candidates above limit", mutate: func(c *Config) { c.MaxPriceCandidates = 9 },
			wantErr: "max_price_candidates: got 9, want an integer from 0 to 8\n" +
				"max_provision_attempts: got 6, want at least max_price_candidates + number of gpu_tiers (9 + 2 = 11), so every tier keeps a slot"},
		{name: "duplicate GPU id in one tier", mutate: func(c *Config) { c.GPUTiers[1].GPUIDs[1] = c.GPUTiers[1].GPUIDs[0] },
			wantErr: `gpu_tiers[1].gpu_ids[1]: got "NVIDIA A100 80GB PCIe", want a GPU id listed once across all tiers (gpu_tiers[1] lists it)`},
		{name: "GPU id with trailing space", mutate: func(c *Config) { c.GPUTiers[0].GPUIDs[0] = "NVIDIA L4 " },
			wantErr: `gpu_tiers[0].gpu_ids[0]: got "NVIDIA L4 ", want ` + gpuIDForm},
		{name: "tier name too long", mutate: func(c *Config) { c.GPUTiers[0].Name = strings.Repeat("a", 33) },
			wantErr: `gpu_tiers[0].name: got "` + strings.Repeat("a", 33) + `", want ` + tierNameForm},
		{name: "matrix of two reviewed tiers", mutate: func(c *Config) { c.MatrixTiers = []string{"ampere", "ada"} }},
		{name: "matrix naming an unreviewed tier", mutate: func(c *Config) { c.MatrixTiers = []string{"ada", "hopper"} },
			wantErr: `matrix_tiers[1]: got "hopper", want the name of a tier in gpu_tiers (ada, ampere)`},
		{name: "matrix naming a tier twice", mutate: func(c *Config) { c.MatrixTiers = []string{"ada", "ampere", "ada"} },
			wantErr: `matrix_tiers[2]: got "ada", want a tier listed once (matrix_tiers[0] lists it)`},
		{name: "duplicate cloud", mutate: func(c *Config) { c.Clouds = []Cloud{CloudSecure, CloudSecure} },
			wantErr: `clouds[1]: got "SECURE", want each cloud listed once`},
		{name: "duplicate zone", mutate: func(c *Config) { c.Zones = []string{"US-TX-3", "US-TX-3"} },
			wantErr: `zones[1]: got "US-TX-3", want each zone listed once`},
		{name: "zero ceiling", mutate: func(c *Config) { c.MaxRunSpendUSD = &zero },
			wantErr: "max_run_spend_usd: got 0, want a positive number of US dollars, or omit the key for no ceiling"},
		{name: "negative daily budget", mutate: func(c *Config) { c.Budget = &Budget{DailyUSD: &negative} },
			wantErr: "budget.daily_usd: got -0.5, want a positive number of US dollars, or omit the key"},
		{name: "absolute GPU path", mutate: func(c *Config) { c.GPUPaths = []string{"/src/**"} },
			wantErr: `gpu_paths[0]: got "/src/**", want a glob relative to the repository root, such as "src/**" or "!docs/**"`},
		{name: "bare exclusion mark", mutate: func(c *Config) { c.GPUPaths = []string{"**", "!"} },
			wantErr: `gpu_paths[1]: got "!", want a glob relative to the repository root, such as "src/**" or "!docs/**"`},
		{name: "volume path with dot-dot", mutate: func(c *Config) { c.Volume = &Volume{SizeGB: 10, Path: "/data/../etc"} },
			wantErr: `volume.path: got "/data/../etc", want an absolute path such as /workspace (letters, digits and ._- in each part, no . or .. parts, at most 255 characters)`},
		{name: "URL with query", mutate: func(c *Config) {
			c.NVRTC.Full = &NVRTCPin{URL: "https://example.com/a.deb?x=1&y=2", SHA256: strings.Repeat("a", 64)}
		}, wantErr: `nvrtc.full.url: got "https://example.com/a.deb?x=1&y=2", want ` + urlForm},
		{name: "URL with credentials", mutate: func(c *Config) {
			c.NVRTC.Baseline = &NVRTCPin{URL: "https://user:pw@example.com/a.deb", SHA256: strings.Repeat("a", 64)}
		}, wantErr: `nvrtc.baseline.url: got "https://user:pw@example.com/a.deb", want ` + urlForm},
		{name: "upper-case checksum", mutate: func(c *Config) {
			c.NVRTC.Full = &NVRTCPin{URL: "https://example.com/a.deb", SHA256: strings.Repeat("A", 64)}
		}, wantErr: `nvrtc.full.sha256: got "` + strings.Repeat("A", 64) + `", want 64 lower-case hex digits`},
		{name: "image with upper-case path", mutate: func(c *Config) { c.Image = "ghcr.io/Actions/runner:latest" },
			wantErr: `image: got "ghcr.io/Actions/runner:latest", want ` + imageForm},
		{name: "image without its registry host", mutate: func(c *Config) { c.Image = "myorg/runner:latest" },
			wantErr: `image: got "myorg/runner:latest", want ` + imageForm},
		{name: "image of one name", mutate: func(c *Config) { c.Image = "runner" },
			wantErr: `image: got "runner", want ` + imageForm},
		{name: "image on a host with neither dot nor port", mutate: func(c *Config) { c.Image = "localhost/runner" },
			wantErr: `image: got "localhost/runner", want ` + imageForm},
		{name: "image with registry port and digest", mutate: func(c *Config) {
			c.Image = "localhost:5000/runner@sha256:" + strings.Repeat("0", 64)
		}},
		{name: "long value is shortened", mutate: func(c *Config) { c.Image = strings.Repeat("x", 300) },
			wantErr: `image: got "` + strings.Repeat("x", 80) + `…", want ` + imageForm},
		{name: "poll and timeout both broken", mutate: func(c *Config) { c.StartupTimeoutSeconds, c.StartupPollSeconds = 0, 0 },
			wantErr: "startup_timeout_seconds: got 0, want an integer from 1 to 3600\n" +
				"startup_poll_seconds: got 0, want a positive integer below startup_timeout_seconds (0)"},
		{name: "disk zero", mutate: func(c *Config) { c.DiskGB = 0 },
			wantErr: "disk_gb: got 0, want an integer from 1 to 1024"},
		{name: "disk over a terabyte", mutate: func(c *Config) { c.DiskGB = MaxDiskGB + 1 },
			wantErr: "disk_gb: got 1025, want an integer from 1 to 1024"},
		{name: "disk at the maximum", mutate: func(c *Config) { c.DiskGB = MaxDiskGB }},
		{name: "volume over the maximum", mutate: func(c *Config) { c.Volume = &Volume{SizeGB: MaxVolumeSizeGB + 1, Path: "/workspace"} },
			wantErr: "volume.size_gb: got 4097, want an integer from 10 (RunPod's floor) to 4096"},
		{name: "volume at the maximum", mutate: func(c *Config) { c.Volume = &Volume{SizeGB: MaxVolumeSizeGB, Path: "/workspace"} }},
		{name: "create deadline zero", mutate: func(c *Config) { c.CreateDeadlineSeconds = 0 },
			wantErr: "create_deadline_seconds: got 0, want an integer from 1 to 600"},
		{name: "create deadline over ten minutes", mutate: func(c *Config) { c.CreateDeadlineSeconds = 601 },
			wantErr: "create_deadline_seconds: got 601, want an integer from 1 to 600"},
		{name: "startup timeout that overflows a duration", mutate: func(c *Config) { c.StartupTimeoutSeconds = 1 << 40 },
			wantErr: "startup_timeout_seconds: got 1099511627776, want an integer from 1 to 3600"},
		{name: "startup timeout of an hour is the limit", mutate: func(c *Config) {
			c.StartupTimeoutSeconds, c.MaxPriceCandidates, c.MaxProvisionAttempts = 3600, 2, 4 // 4 × 64 + 20 = 276 minutes
		}},
		{name: "a provisioning past GitHub's 6-hour job limit", mutate: func(c *Config) { c.StartupTimeoutSeconds = 3600 },
			wantErr: "startup_timeout_seconds: got 3600, want at most 3160: the provision job tests 1 tier(s) × max_provision_attempts 6 in turn, " +
				"each candidate up to startup_timeout_seconds + 4m0s, plus 20m0s, and must fit GitHub's 360-minute job limit (it would take up to 404 minutes); lower it, max_provision_attempts or matrix_tiers"},
		{name: "a matrix past GitHub's 6-hour job limit", mutate: func(c *Config) {
			c.MatrixTiers, c.StartupTimeoutSeconds, c.MaxProvisionAttempts = []string{"ada", "ampere"}, 1800, 8
		}, wantErr: "startup_timeout_seconds: got 1800, want at most 1035: the provision job tests 2 tier(s) × max_provision_attempts 8 in turn, " +
			"each candidate up to startup_timeout_seconds + 4m0s, plus 20m0s, and must fit GitHub's 360-minute job limit (it would take up to 564 minutes); " +
			"lower it, max_provision_attempts or matrix_tiers"},
		{name: "a matrix of two at the defaults fits", mutate: func(c *Config) { c.MatrixTiers = []string{"ada", "ampere"} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mutate(c)
			err := c.Validate()
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Error(t, err, tc.wantErr)
			var fieldErr *FieldError
			assert.Assert(t, errors.As(err, &fieldErr))
		})
	}
}

func TestFieldErrorFormat(t *testing.T) {
	tests := []struct {
		err  FieldError
		want string
	}{
		{err: FieldError{Key: "k", Value: "1", Expected: "2"}, want: "k: got 1, want 2"},
		{err: FieldError{Source: "f.yml", Key: "k", Expected: "2"}, want: "f.yml: k: want 2"},
		{err: FieldError{Source: "f.yml", Line: 3, Key: "k", Value: `"v"`, Expected: "2"}, want: `f.yml:3: k: got "v", want 2`},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.err.Error(), tc.want)
	}
}

func TestRuntimeTiersSelect(t *testing.T) {
	tiers := Default().RuntimeTiers
	tests := []struct {
		driver CUDAVersion
		want   RuntimeTier
		wantOK bool
	}{
		{driver: CUDAVersion{13, 2}, want: RuntimeFull, wantOK: true},
		{driver: CUDAVersion{12, 8}, want: RuntimeFull, wantOK: true},
		{driver: CUDAVersion{12, 7}, want: RuntimeBaseline, wantOK: true},
		{driver: CUDAVersion{12, 6}, want: RuntimeBaseline, wantOK: true},
		{driver: CUDAVersion{12, 5}, wantOK: false},
	}
	for _, tc := range tests {
		got, ok := tiers.Select(tc.driver)
		assert.Equal(t, got, tc.want, "driver %s", tc.driver)
		assert.Equal(t, ok, tc.wantOK, "driver %s", tc.driver)
		if ok {
			assert.Assert(t, tc.driver.AtLeast(tiers.Version(got)))
		}
	}
	assert.Equal(t, tiers.Version("other"), CUDAVersion{})
}

func TestIsGPUPath(t *testing.T) {
	c := validConfig()
	c.GPUPaths = []string{"**", "!docs/**", "!**/*.md", "docs/kernels/**"}
	tests := []struct {
		path string
		want bool
	}{
		{path: "src/kernel.cu", want: true},
		{path: "README.md", want: false},
		{path: "docs/guide.html", want: false},
		{path: "docs/kernels/bench.py", want: true},
		{path: "docs/kernels/notes.md", want: true},
	}
	for _, tc := range tests {
		assert.Equal(t, c.IsGPUPath(tc.path), tc.want, tc.path)
	}
	c.GPUPaths = []string{"src/**"}
	assert.Assert(t, !c.IsGPUPath("tests/a_test.go"), "unmatched files do not need the GPU")
}

func TestConfigAccessors(t *testing.T) {
	c := validConfig()
	c.Regions = []string{"europe", "US", "asia", "CA"}
	continentNames, countries := c.SplitRegions()
	assert.DeepEqual(t, continentNames, []string{"europe", "asia"})
	assert.DeepEqual(t, countries, []string{"US", "CA"})

	tier, ok := c.TierOf("NVIDIA A100-SXM4-80GB")
	assert.Equal(t, tier, "ampere")
	assert.Assert(t, ok)
	_, ok = c.TierOf("NVIDIA H100 80GB HBM3")
	assert.Assert(t, !ok, "unreviewed GPUs belong to no tier")

	assert.Assert(t, c.AllowsCloud(CloudSecure))
	assert.Assert(t, !c.AllowsCloud(CloudCommunity), "community cloud is off by default")

	assert.Equal(t, c.StartupTimeout(), 420*time.Second)
	assert.Equal(t, c.StartupPoll(), 10*time.Second)
	assert.Equal(t, c.CreateDeadline(), time.Minute)
	assert.Equal(t, c.SetupBudget(), 15*time.Minute)
	assert.Equal(t, c.Lifetime(), time.Hour)

	_, set := c.MaxRunSpend()
	assert.Assert(t, !set)
	usd := 4*money.Dollar + 50*money.Cent
	c.MaxRunSpendUSD = &usd
	got, set := c.MaxRunSpend()
	assert.Assert(t, set)
	assert.Equal(t, got, 4*money.Dollar+50*money.Cent)

	assert.Assert(t, c.NVRTC.For(RuntimeFull) == nil)
	pin := &NVRTCPin{URL: "https://example.com/n.deb", SHA256: strings.Repeat("b", 64)}
	c.NVRTC.Baseline = pin
	assert.Equal(t, c.NVRTC.For(RuntimeBaseline), pin)
}

func TestRegions(t *testing.T) {
	assert.Equal(t, len(countryCodes), 249, "officially assigned ISO 3166-1 alpha-2 codes")
	assert.Assert(t, slices.IsSorted(countryCodes), "IsCountryCode binary-searches the list")
	assert.Assert(t, IsCountryCode("US") && IsCountryCode("AX") && IsCountryCode("ZW"))
	assert.Assert(t, !IsCountryCode("us") && !IsCountryCode("UK") && !IsCountryCode("EU"))
	assert.Assert(t, IsContinent("north_america") && !IsContinent("NORTH_AMERICA"))
	for _, c := range Continents() {
		assert.Assert(t, !IsCountryCode(c), "continent %q must not read as a country", c)
	}
}
