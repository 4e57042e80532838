// Package config loads and validates the consumer repository's runpod-gpu
// configuration (default .github/runpod-gpu.yml): the reviewed GPU tiers,
// where pods may run, the CUDA floor and runtime tiers of the smoke proof,
// and the attempt, time and spend bounds of a run.
//
// Parsing is strict (unknown keys, nulls and wrongly typed scalars are errors
// with their key and line), and every documented default comes from Default.
// Schema returns the published JSON Schema and ReferenceMarkdown the key
// reference, both kept equal to this package by its tests.
package config

import (
	"slices"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/org/runpod-gpu/pkg/money"
)

// DefaultPath is where the config lives in the consumer repository.
const DefaultPath = ".github/runpod-gpu.yml"

// DefaultImage is the runner image pods start from; provisioning resolves it
// to a digest once per run.
const DefaultImage = "ghcr.io/actions/actions-runner:latest"

// Config is a parsed configuration. Durations are whole seconds, as written in
// the file; the methods StartupTimeout, StartupPoll, CreateDeadline,
// SetupBudget and Lifetime return them as time.Duration.
type Config struct {
	// GPUTiers is the reviewed allowlist: live catalog data never adds a GPU
	// outside it. Required.
	GPUTiers []GPUTier `yaml:"gpu_tiers" json:"gpu_tiers"`
	// MatrixTiers names reviewed tiers one lane tests together, one pod
	// each; empty means one pod of whichever reviewed tier is cheapest.
	MatrixTiers []string `yaml:"matrix_tiers" json:"matrix_tiers"`
	// Clouds are the RunPod clouds offers may come from.
	Clouds []Cloud `yaml:"clouds" json:"clouds"`
	// Regions restricts data centers to continents or ISO country codes; empty means anywhere.
	Regions []string `yaml:"regions" json:"regions"`
	// Zones restricts pods to these data-center ids; empty means any.
	Zones []string `yaml:"zones" json:"zones"`
	// GPUCount is the number of GPUs per pod.
	GPUCount int `yaml:"gpu_count" json:"gpu_count"`
	// MinVRAMGB drops GPU types with less memory and is checked again by the smoke proof.
	MinVRAMGB int `yaml:"min_vram_gb" json:"min_vram_gb"`
	// MinCUDAVersion is the open-ended host CUDA floor for the catalog and pod create.
	MinCUDAVersion CUDAVersion `yaml:"min_cuda_version" json:"min_cuda_version"`
	// RuntimeTiers are the CUDA runtime tiers the smoke proof selects between.
	RuntimeTiers RuntimeTiers `yaml:"runtime_tiers" json:"runtime_tiers"`
	// MaxPriceCandidates caps the live-priced, cheapest-first candidates.
	MaxPriceCandidates int `yaml:"max_price_candidates" json:"max_price_candidates"`
	// MaxProvisionAttempts caps the pods one run may create.
	MaxProvisionAttempts int `yaml:"max_provision_attempts" json:"max_provision_attempts"`
	// MaxConsecutiveStartupFailures stops after this many created-but-never-online pods in a row; 0 disables.
	MaxConsecutiveStartupFailures int `yaml:"max_consecutive_startup_failures" json:"max_consecutive_startup_failures"`
	// MaxConcurrentPods caps the repository's live pods across its lanes, which create at the same time; 0 means no cap.
	MaxConcurrentPods int `yaml:"max_concurrent_pods" json:"max_concurrent_pods"`
	// StartupTimeoutSeconds bounds each candidate from creation to acceptance.
	StartupTimeoutSeconds int `yaml:"startup_timeout_seconds" json:"startup_timeout_seconds"`
	// StartupPollSeconds is the observation cadence while a candidate starts.
	StartupPollSeconds int `yaml:"startup_poll_seconds" json:"startup_poll_seconds"`
	// CreateDeadlineSeconds bounds one pod-create call, retries included.
	CreateDeadlineSeconds int `yaml:"create_deadline_seconds" json:"create_deadline_seconds"`
	// Image is the runner image reference.
	Image string `yaml:"image" json:"image"`
	// DiskGB is the pod's container disk.
	DiskGB int `yaml:"disk_gb" json:"disk_gb"`
	// Volume is an optional persistent mount; nil means none.
	Volume *Volume `yaml:"volume" json:"volume,omitempty"`
	// NetworkVolume is an optional RunPod network volume of warm data every pod mounts; nil means none.
	NetworkVolume *NetworkVolume `yaml:"network_volume" json:"network_volume,omitempty"`
	// SetupBudgetSeconds bounds the accepted pod from its start to the real test step.
	SetupBudgetSeconds int `yaml:"setup_budget_seconds" json:"setup_budget_seconds"`
	// LifetimeSeconds bounds the accepted pod's whole life.
	LifetimeSeconds int `yaml:"lifetime_seconds" json:"lifetime_seconds"`
	// NVRTC optionally pins an NVRTC package per runtime tier for the proof's compile step.
	NVRTC NVRTCPins `yaml:"nvrtc" json:"nvrtc"`
	// MaxRunSpendUSD is an optional ceiling on one run's worst-case spend; nil means none.
	MaxRunSpendUSD *money.Amount `yaml:"max_run_spend_usd" json:"max_run_spend_usd,omitempty"`
	// Budget is the optional daily and monthly budget both lanes share; nil means none.
	Budget *Budget `yaml:"budget" json:"budget,omitempty"`
	// GPUPaths are the globs of changed files that need the GPU lane (see IsGPUPath).
	GPUPaths []string `yaml:"gpu_paths" json:"gpu_paths"`
}

// GPUTier is a named group of exact RunPod GPU type ids reviewed together.
type GPUTier struct {
	// Name identifies the tier in plans, logs and outputs.
	Name string `yaml:"name" json:"name"`
	// GPUIDs are exact RunPod GPU type ids, e.g. "NVIDIA GeForce RTX 4090".
	GPUIDs []string `yaml:"gpu_ids" json:"gpu_ids"`
}

// Cloud is a RunPod cloud, spelled as the API spells it.
type Cloud string

// The RunPod clouds.
const (
	CloudSecure    Cloud = "SECURE"
	CloudCommunity Cloud = "COMMUNITY"
)

// RuntimeTier names a CUDA runtime tier of the smoke proof.
type RuntimeTier string

// The runtime tiers, best first.
const (
	RuntimeFull     RuntimeTier = "full"
	RuntimeBaseline RuntimeTier = "baseline"
)

// RuntimeTiers are the lowest driver CUDA versions of each runtime tier.
type RuntimeTiers struct {
	// Full is the lowest driver CUDA version that gets the full tier.
	Full CUDAVersion `yaml:"full" json:"full"`
	// Baseline is the lowest driver CUDA version the proof accepts at all.
	Baseline CUDAVersion `yaml:"baseline" json:"baseline"`
}

// Select returns the tier the proof runs for a driver's CUDA version: full at
// or above Full, else baseline at or above Baseline, else false.
func (r RuntimeTiers) Select(driver CUDAVersion) (RuntimeTier, bool) {
	switch {
	case driver.AtLeast(r.Full):
		return RuntimeFull, true
	case driver.AtLeast(r.Baseline):
		return RuntimeBaseline, true
	}
	return "", false
}

// Version returns the CUDA version of tier, or the zero value for an unknown tier.
func (r RuntimeTiers) Version(tier RuntimeTier) CUDAVersion {
	switch tier {
	case RuntimeFull:
		return r.Full
	case RuntimeBaseline:
		return r.Baseline
	}
	return CUDAVersion{}
}

// Volume is a persistent mount on the pod's host.
type Volume struct {
	// SizeGB is the volume size; RunPod's floor is 10.
	SizeGB int `yaml:"size_gb" json:"size_gb"`
	// Path is the absolute mount path in the container.
	Path string `yaml:"path" json:"path"`
}

// Budget is GPU CI's budget per UTC day and per UTC month, in US dollars,
// shared by the pod lane and the Serverless lane: before any create each lane
// checks that what the RunPod account was billed, what is in flight and the
// create's worst case stay within it (pkg/budget). It lives in the
// configuration, read from the default branch, so a pull request cannot raise
// it, and both lanes read the same file.
type Budget struct {
	// DailyUSD bounds a UTC day's spend; nil means no daily limit.
	DailyUSD *money.Amount `yaml:"daily_usd" json:"daily_usd,omitempty"`
	// MonthlyUSD bounds a UTC month's spend; nil means no monthly limit.
	MonthlyUSD *money.Amount `yaml:"monthly_usd" json:"monthly_usd,omitempty"`
}

// BudgetLimits returns the configured limits, 0 for one not set, and whether any is set.
func (c *Config) BudgetLimits() (daily, monthly money.Amount, ok bool) {
	if c.Budget == nil {
		return 0, 0, false
	}
	if c.Budget.DailyUSD != nil {
		daily = *c.Budget.DailyUSD
	}
	if c.Budget.MonthlyUSD != nil {
		monthly = *c.Budget.MonthlyUSD
	}
	return daily, monthly, daily > 0 || monthly > 0
}

// NVRTCPins are the optional NVRTC packages per runtime tier; a nil pin skips
// the proof's NVRTC compile step for that tier.
type NVRTCPins struct {
	// Full is the package installed on hosts of the full tier.
	Full *NVRTCPin `yaml:"full" json:"full,omitempty"`
	// Baseline is the package installed on hosts of the baseline tier.
	Baseline *NVRTCPin `yaml:"baseline" json:"baseline,omitempty"`
}

// For returns the pin of tier, or nil when it has none.
func (p NVRTCPins) For(tier RuntimeTier) *NVRTCPin {
	switch tier {
	case RuntimeFull:
		return p.Full
	case RuntimeBaseline:
		return p.Baseline
	}
	return nil
}

// NVRTCPin is a package the pod downloads and checks before installing.
type NVRTCPin struct {
	// URL is an https URL without query or fragment.
	URL string `yaml:"url" json:"url"`
	// SHA256 is the package's lowercase hex SHA-256; a mismatch fails before install.
	SHA256 string `yaml:"sha256" json:"sha256"`
}

// Default returns the documented defaults. It has no GPU tiers: the reviewed
// allowlist is the maintainers' decision, so every file must list one.
func Default() *Config {
	return &Config{
		MatrixTiers:                   []string{},
		Clouds:                        []Cloud{CloudSecure},
		Regions:                       []string{},
		Zones:                         []string{},
		GPUCount:                      1,
		MinVRAMGB:                     8,
		MinCUDAVersion:                CUDAVersion{Major: 12, Minor: 6},
		RuntimeTiers:                  RuntimeTiers{Full: CUDAVersion{Major: 12, Minor: 8}, Baseline: CUDAVersion{Major: 12, Minor: 6}},
		MaxPriceCandidates:            3,
		MaxProvisionAttempts:          6,
		MaxConsecutiveStartupFailures: 2,
		StartupTimeoutSeconds:         420,
		StartupPollSeconds:            10,
		CreateDeadlineSeconds:         60,
		Image:                         DefaultImage,
		DiskGB:                        50,
		SetupBudgetSeconds:            900,
		LifetimeSeconds:               3600,
		GPUPaths:                      []string{"**"},
	}
}

// StartupTimeout is StartupTimeoutSeconds as a duration.
func (c *Config) StartupTimeout() time.Duration { return seconds(c.StartupTimeoutSeconds) }

// StartupPoll is StartupPollSeconds as a duration.
func (c *Config) StartupPoll() time.Duration { return seconds(c.StartupPollSeconds) }

// CreateDeadline is CreateDeadlineSeconds as a duration.
func (c *Config) CreateDeadline() time.Duration { return seconds(c.CreateDeadlineSeconds) }

// SetupBudget is SetupBudgetSeconds as a duration.
func (c *Config) SetupBudget() time.Duration { return seconds(c.SetupBudgetSeconds) }

// Lifetime is LifetimeSeconds as a duration.
func (c *Config) Lifetime() time.Duration { return seconds(c.LifetimeSeconds) }

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

// MaxRunSpend returns max_run_spend_usd, the per-run spend ceiling, and whether one is set.
func (c *Config) MaxRunSpend() (money.Amount, bool) {
	if c.MaxRunSpendUSD == nil {
		return 0, false
	}
	return *c.MaxRunSpendUSD, true
}

// AllowsCloud reports whether offers from cloud may be used.
func (c *Config) AllowsCloud(cloud Cloud) bool { return slices.Contains(c.Clouds, cloud) }

// SplitRegions separates Regions into continents and ISO country codes.
// Together they mean either: a data center on one of the continents or in
// one of the countries (plan.InRegions) — regions [europe, US] is Europe and
// the United States. They are applied to the data-center list, never as the
// catalog's countryCodes filter, which would leave only the countries' stock
// to match the continents against.
func (c *Config) SplitRegions() (continentNames, countries []string) {
	for _, region := range c.Regions {
		if IsContinent(region) {
			continentNames = append(continentNames, region)
		} else {
			countries = append(countries, region)
		}
	}
	return continentNames, countries
}

// TierOf returns the name of the tier listing gpuID, or false when no
// reviewed tier lists it.
func (c *Config) TierOf(gpuID string) (string, bool) {
	for _, tier := range c.GPUTiers {
		for _, id := range tier.GPUIDs {
			if id == gpuID {
				return tier.Name, true
			}
		}
	}
	return "", false
}

// Tier returns the reviewed tier named name, or false when none is.
func (c *Config) Tier(name string) (GPUTier, bool) {
	for _, tier := range c.GPUTiers {
		if tier.Name == name {
			return tier, true
		}
	}
	return GPUTier{}, false
}

// Matrix reports whether the lane tests several tiers together
// (matrix_tiers is set): one pod per named tier instead of one pod in all.
func (c *Config) Matrix() bool { return len(c.MatrixTiers) > 0 }

// IsGPUPath reports whether a changed file (slash-separated, relative to the
// repository root) needs the GPU lane. Patterns are doublestar globs read in
// order; a leading "!" excludes, and the last matching pattern decides, as in
// GitHub's paths filters. A file no pattern matches does not need the GPU.
func (c *Config) IsGPUPath(path string) bool {
	needed := false
	for _, pattern := range c.GPUPaths {
		glob, excluded := cutNegation(pattern)
		// Patterns are validated on load; a malformed one here simply never matches.
		if ok, err := doublestar.Match(glob, path); err == nil && ok {
			needed = !excluded
		}
	}
	return needed
}

func cutNegation(pattern string) (glob string, excluded bool) {
	if len(pattern) > 0 && pattern[0] == '!' {
		return pattern[1:], true
	}
	return pattern, false
}
