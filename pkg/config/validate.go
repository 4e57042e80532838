package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/money"
)

// FieldError is one problem with one key. Validate and Parse return every
// problem joined; find them with errors.As.
type FieldError struct {
	// Source names the file, when the config came from one.
	Source string
	// Line is the key's line in Source, or 0 when unknown or absent.
	Line int
	// Column is the key's 1-based column on Line, or 0 when unknown: where an
	// editor or a GitHub annotation puts the cursor.
	Column int
	// Key is the dotted path, e.g. "gpu_tiers[1].name".
	Key string
	// Value is the offending value as shown to the user (strings quoted), or
	// "" when the key is missing.
	Value string
	// Expected says what the key must be.
	Expected string
	// Suggestion is the known key an unknown one was probably meant to be,
	// or "" when none is close.
	Suggestion string
}

// Error formats "source:line: key: got value, want expected", followed by
// "; did you mean `suggestion`?" when there is one.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Key)
	if e.Value != "" {
		b.WriteString(": got " + e.Value + ", want ")
	} else {
		b.WriteString(": want ")
	}
	b.WriteString(e.Expected)
	if e.Suggestion != "" {
		b.WriteString("; did you mean `" + e.Suggestion + "`?")
	}
	return b.String()
}

// Bounds that the invariants and the schema share.
const (
	// MaxProvisionAttemptsLimit caps pods per run: more only adds paid failures.
	MaxProvisionAttemptsLimit = 8
	// MaxConcurrentPodsLimit caps max_concurrent_pods: more lanes than
	// GitHub runs at once (its 100 queued runs) cannot be waiting.
	MaxConcurrentPodsLimit = 100
	// MaxGPUCount is the most GPUs one pod may ask for.
	MaxGPUCount = 8
	// MaxMinVRAMGB catches a floor given in MB instead of GB.
	MaxMinVRAMGB = 1024
	// MaxLifetimeSeconds matches the reaper, which reclaims any pod older than 2 hours.
	MaxLifetimeSeconds = 7200
	// MaxStartupTimeoutSeconds caps one candidate's paid boot: an hour is far
	// past any healthy start, and a bound keeps every duration and the
	// worst-case spend finite (a huge value once overflowed time.Duration).
	MaxStartupTimeoutSeconds = 3600
	// MaxCreateDeadlineSeconds caps one create call, retries and reconciliation included.
	MaxCreateDeadlineSeconds = 600
	// MinVolumeSizeGB is RunPod's floor for a persistent mount.
	MinVolumeSizeGB = 10
	// MaxDiskGB and MaxVolumeSizeGB cap what one pod's disks may ask for: a
	// test run needs tens of GB, a mistyped size (MB for GB) bills storage
	// and narrows placement to the few hosts that have it.
	MaxDiskGB       = 1024
	MaxVolumeSizeGB = 4096
	// maxValueRunes keeps echoed values short in messages.
	maxValueRunes = 80
)

// Patterns shared by the validator and the JSON Schema (a test keeps the
// schema's $defs equal to them). They allow nothing a shell would interpret:
// these values reach the pod's startup script.
const (
	tierNamePattern   = `^[a-z][a-z0-9_-]{0,31}$`
	gpuIDPattern      = `^[A-Za-z0-9](?:[A-Za-z0-9 ._()+/-]{0,126}[A-Za-z0-9)])?$`
	zonePattern       = `^[A-Z]{2,4}-[A-Z]{2,4}-[0-9]{1,3}$`
	sha256Pattern     = `^[0-9a-f]{64}$`
	volumePathPattern = `^(?:/[A-Za-z0-9_][A-Za-z0-9._-]*)+$`
	httpsURLPattern   = `^https://[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%+:@=,-]*)*$`
	// imagePattern is the OCI distribution reference grammar
	// ([registry[:port]/]path[:tag][@sha256:digest]), restricted to sha256 digests.
	// An image reference in registry.Parse's grammar, which provision
	// resolves it with (FuzzConfigImageIsParsed holds the two equal): the
	// registry host is required (RunPod pulls the reference as written, so
	// no Docker Hub shorthand), lower-case, with a dot or a port.
	imagePattern = `^(?:[a-z0-9][a-z0-9.-]*\.[a-z0-9.-]*[a-z0-9](?::[0-9]+)?|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?:[0-9]+)/` +
		`[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*` +
		`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$`
	maxImageLength      = 255
	maxVolumePathLength = 255
	maxURLLength        = 2048
)

var (
	tierNameRE   = lazyre.Regexp{Pattern: tierNamePattern}
	gpuIDRE      = lazyre.Regexp{Pattern: gpuIDPattern}
	zoneRE       = lazyre.Regexp{Pattern: zonePattern}
	sha256RE     = lazyre.Regexp{Pattern: sha256Pattern}
	volumePathRE = lazyre.Regexp{Pattern: volumePathPattern}
	httpsURLRE   = lazyre.Regexp{Pattern: httpsURLPattern}
	imageRE      = lazyre.Regexp{Pattern: imagePattern}
)

// Expected forms, shared by several checks.
const (
	cudaForm     = `a CUDA version "major.minor" such as "12.6"`
	tierNameForm = "a name of 1-32 lower-case letters, digits, '-' or '_', starting with a letter"
	gpuIDForm    = `an exact RunPod GPU id such as "NVIDIA GeForce RTX 4090" (letters, digits, spaces and ._()+/-)`
	imageForm    = "an image reference with its registry host, host/path[:tag][@sha256:<64 hex>], such as " + DefaultImage + " (host and path in lower case; no Docker Hub shorthand; at most 255 characters)"
	urlForm      = "an https URL without query, fragment or credentials (at most 2048 characters)"
	sha256Form   = "64 lower-case hex digits"
)

// Validate checks every invariant and returns all problems joined, each a
// *FieldError naming the key and the expected form; nil when valid. Besides
// per-key forms and ranges it checks across keys: tier names unique, GPU ids
// disjoint, max_provision_attempts >= max_price_candidates + tiers,
// max_consecutive_startup_failures <= attempts, runtime_tiers.baseline <= full,
// min_cuda_version >= baseline, poll < startup timeout, setup budget <= lifetime.
func (c *Config) Validate() error {
	problems := c.problems()
	if len(problems) == 0 {
		return nil
	}
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// problems lists every broken invariant in key order.
func (c *Config) problems() []*FieldError {
	v := &validator{}
	v.tiers(c.GPUTiers)
	v.matrix(c)
	v.clouds(c.Clouds)
	v.regions(c.Regions)
	v.zones(c.Zones)
	v.intRange("gpu_count", c.GPUCount, 1, MaxGPUCount)
	v.intRange("min_vram_gb", c.MinVRAMGB, 1, MaxMinVRAMGB)
	v.cuda(c)
	v.attempts(c)
	v.timing(c)
	v.image(c.Image)
	v.intRange("disk_gb", c.DiskGB, 1, MaxDiskGB)
	v.volume(c.Volume)
	v.networkVolume(c) // networkvolume.go
	v.nvrtc("nvrtc.full", c.NVRTC.Full)
	v.nvrtc("nvrtc.baseline", c.NVRTC.Baseline)
	v.spend(c.MaxRunSpendUSD)
	v.budget(c.Budget)
	v.gpuPaths(c.GPUPaths)
	v.provisioning(c)
	return v.problems
}

// validator collects problems so a user fixes a file in one round.
type validator struct {
	problems []*FieldError
}

func (v *validator) add(key, value, expected string) {
	v.problems = append(v.problems, &FieldError{Key: key, Value: value, Expected: expected})
}

// quote shows a string value, shortened so hostile input cannot flood a log.
func quote(s string) string { return strconv.Quote(truncate(s)) }

func truncate(s string) string {
	if utf8.RuneCountInString(s) > maxValueRunes {
		return string([]rune(s)[:maxValueRunes]) + "…"
	}
	return s
}

func (v *validator) intRange(key string, n, lo, hi int) {
	if n < lo || n > hi {
		v.add(key, strconv.Itoa(n), fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
}

func (v *validator) tiers(tiers []GPUTier) {
	if len(tiers) == 0 {
		v.add("gpu_tiers", "", "at least one tier: a list of {name, gpu_ids}")
		return
	}
	tierOfName := map[string]int{}
	tierOfID := map[string]int{}
	for i, tier := range tiers {
		key := fmt.Sprintf("gpu_tiers[%d]", i)
		switch first, seen := tierOfName[tier.Name]; {
		case !tierNameRE.MatchString(tier.Name):
			v.add(key+".name", quote(tier.Name), tierNameForm)
		case seen:
			v.add(key+".name", quote(tier.Name), fmt.Sprintf("a name not used by another tier (gpu_tiers[%d] has it)", first))
		default:
			tierOfName[tier.Name] = i
		}
		if len(tier.GPUIDs) == 0 {
			v.add(key+".gpu_ids", "", "at least one RunPod GPU id")
		}
		for j, id := range tier.GPUIDs {
			idKey := fmt.Sprintf("%s.gpu_ids[%d]", key, j)
			switch owner, seen := tierOfID[id]; {
			case !gpuIDRE.MatchString(id):
				v.add(idKey, quote(id), gpuIDForm)
			case seen:
				v.add(idKey, quote(id), fmt.Sprintf("a GPU id listed once across all tiers (gpu_tiers[%d] lists it)", owner))
			default:
				tierOfID[id] = i
			}
		}
	}
}

// matrix checks matrix_tiers: each a reviewed tier's name, listed once.
func (v *validator) matrix(c *Config) {
	seen := map[string]int{}
	for i, name := range c.MatrixTiers {
		key := fmt.Sprintf("matrix_tiers[%d]", i)
		_, reviewed := c.Tier(name)
		switch first, dup := seen[name]; {
		case !reviewed:
			v.add(key, quote(name), "the name of a tier in gpu_tiers ("+tierNames(c.GPUTiers)+")")
		case dup:
			v.add(key, quote(name), fmt.Sprintf("a tier listed once (matrix_tiers[%d] lists it)", first))
		default:
			seen[name] = i
		}
	}
}

func tierNames(tiers []GPUTier) string {
	names := make([]string, len(tiers))
	for i, t := range tiers {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func (v *validator) clouds(clouds []Cloud) {
	if len(clouds) == 0 {
		v.add("clouds", "", "at least one of SECURE, COMMUNITY")
	}
	seen := map[Cloud]bool{}
	for i, cloud := range clouds {
		key := fmt.Sprintf("clouds[%d]", i)
		switch {
		case cloud != CloudSecure && cloud != CloudCommunity:
			v.add(key, quote(string(cloud)), "SECURE or COMMUNITY")
		case seen[cloud]:
			v.add(key, quote(string(cloud)), "each cloud listed once")
		}
		seen[cloud] = true
	}
}

func (v *validator) regions(regions []string) {
	seen := map[string]bool{}
	for i, region := range regions {
		key := fmt.Sprintf("regions[%d]", i)
		switch {
		case !IsContinent(region) && !IsCountryCode(region):
			v.add(key, quote(region), "a continent ("+strings.Join(continents, ", ")+") or an upper-case ISO 3166-1 alpha-2 country code such as US")
		case seen[region]:
			v.add(key, quote(region), "each region listed once")
		}
		seen[region] = true
	}
}

func (v *validator) zones(zones []string) {
	seen := map[string]bool{}
	for i, zone := range zones {
		key := fmt.Sprintf("zones[%d]", i)
		switch {
		case !zoneRE.MatchString(zone):
			v.add(key, quote(zone), "a RunPod data-center id such as US-TX-3 or EUR-IS-1")
		case seen[zone]:
			v.add(key, quote(zone), "each zone listed once")
		}
		seen[zone] = true
	}
}

// cuda checks the three versions and their order. The floor may not sit below
// baseline: RunPod would then offer hosts whose driver the proof must reject,
// and each of those pods is paid for nothing. A floor above baseline only
// narrows the hosts, which is the maintainers' call.
func (v *validator) cuda(c *Config) {
	floor, full, baseline := c.MinCUDAVersion, c.RuntimeTiers.Full, c.RuntimeTiers.Baseline
	wellFormed := true
	for _, version := range []struct {
		key   string
		value CUDAVersion
	}{{"min_cuda_version", floor}, {"runtime_tiers.full", full}, {"runtime_tiers.baseline", baseline}} {
		if !version.value.valid() {
			v.add(version.key, quote(version.value.String()), cudaForm)
			wellFormed = false
		}
	}
	if !wellFormed {
		return
	}
	if baseline.Compare(full) > 0 {
		v.add("runtime_tiers.baseline", quote(baseline.String()), fmt.Sprintf("a version at or below runtime_tiers.full (%s)", full))
	}
	if floor.Compare(baseline) < 0 {
		v.add("min_cuda_version", quote(floor.String()),
			fmt.Sprintf("a version at or above runtime_tiers.baseline (%s): hosts below it always fail the smoke proof", baseline))
	}
}

func (v *validator) attempts(c *Config) {
	v.intRange("max_price_candidates", c.MaxPriceCandidates, 0, MaxProvisionAttemptsLimit)
	v.intRange("max_concurrent_pods", c.MaxConcurrentPods, 0, MaxConcurrentPodsLimit)
	attempts := c.MaxProvisionAttempts
	attemptsValid := attempts >= 1 && attempts <= MaxProvisionAttemptsLimit
	need := c.MaxPriceCandidates + len(c.GPUTiers)
	switch {
	case !attemptsValid:
		v.intRange("max_provision_attempts", attempts, 1, MaxProvisionAttemptsLimit)
	case attempts < need:
		v.add("max_provision_attempts", strconv.Itoa(attempts), fmt.Sprintf(
			"at least max_price_candidates + number of gpu_tiers (%d + %d = %d), so every tier keeps a slot",
			c.MaxPriceCandidates, len(c.GPUTiers), need))
	}
	// A stop later than the last attempt would never fire: 0 is the way to disable it.
	failures := c.MaxConsecutiveStartupFailures
	if failures < 0 || failures > MaxProvisionAttemptsLimit || (attemptsValid && failures > attempts) {
		v.add("max_consecutive_startup_failures", strconv.Itoa(failures),
			fmt.Sprintf("0 (no early stop) or an integer from 1 to max_provision_attempts (%d)", attempts))
	}
}

func (v *validator) timing(c *Config) {
	timeout := c.StartupTimeoutSeconds
	v.intRange("startup_timeout_seconds", timeout, 1, MaxStartupTimeoutSeconds)
	if poll := c.StartupPollSeconds; poll < 1 || (timeout >= 1 && poll >= timeout) {
		v.add("startup_poll_seconds", strconv.Itoa(poll),
			fmt.Sprintf("a positive integer below startup_timeout_seconds (%d)", timeout))
	}
	v.intRange("create_deadline_seconds", c.CreateDeadlineSeconds, 1, MaxCreateDeadlineSeconds)
	lifetime := c.LifetimeSeconds
	v.intRange("lifetime_seconds", lifetime, 1, MaxLifetimeSeconds)
	if budget := c.SetupBudgetSeconds; budget < 1 || (lifetime >= 1 && budget > lifetime) {
		v.add("setup_budget_seconds", strconv.Itoa(budget),
			fmt.Sprintf("a positive integer at most lifetime_seconds (%d)", lifetime))
	}
}

func (v *validator) image(image string) {
	if len(image) > maxImageLength || !imageRE.MatchString(image) {
		v.add("image", quote(image), imageForm)
	}
}

func (v *validator) volume(volume *Volume) {
	if volume == nil {
		return
	}
	if volume.SizeGB < MinVolumeSizeGB || volume.SizeGB > MaxVolumeSizeGB {
		v.add("volume.size_gb", strconv.Itoa(volume.SizeGB), fmt.Sprintf("an integer from %d (RunPod's floor) to %d", MinVolumeSizeGB, MaxVolumeSizeGB))
	}
	if len(volume.Path) > maxVolumePathLength || !volumePathRE.MatchString(volume.Path) {
		v.add("volume.path", quote(volume.Path), "an absolute path such as /workspace (letters, digits and ._- in each part, no . or .. parts, at most 255 characters)")
	}
}

func (v *validator) nvrtc(key string, pin *NVRTCPin) {
	if pin == nil {
		return
	}
	if len(pin.URL) > maxURLLength || !httpsURLRE.MatchString(pin.URL) {
		v.add(key+".url", quote(pin.URL), urlForm)
	}
	if !sha256RE.MatchString(pin.SHA256) {
		v.add(key+".sha256", quote(pin.SHA256), sha256Form)
	}
}

func (v *validator) spend(ceiling *money.Amount) {
	if ceiling == nil {
		return
	}
	if *ceiling <= 0 {
		v.add("max_run_spend_usd", dollarsAsWritten(*ceiling), "a positive number of US dollars, or omit the key for no ceiling")
	}
}

// dollarsAsWritten renders an amount as the YAML number a file would hold: "-1", "0.5".
func dollarsAsWritten(a money.Amount) string { return strconv.FormatFloat(a.Dollars(), 'g', -1, 64) }

func (v *validator) budget(b *Budget) {
	if b == nil {
		return
	}
	if b.DailyUSD == nil && b.MonthlyUSD == nil {
		v.add("budget", "{}", "daily_usd, monthly_usd or both, or omit the key for no budget")
	}
	for _, l := range []struct {
		key   string
		limit *money.Amount
	}{{"budget.daily_usd", b.DailyUSD}, {"budget.monthly_usd", b.MonthlyUSD}} {
		if l.limit != nil && *l.limit <= 0 {
			v.add(l.key, dollarsAsWritten(*l.limit), "a positive number of US dollars, or omit the key")
		}
	}
}

func (v *validator) gpuPaths(patterns []string) {
	if len(patterns) == 0 {
		v.add("gpu_paths", "", `at least one glob; "**" means every change needs the GPU`)
		return
	}
	included := false
	for i, pattern := range patterns {
		glob, excluded := cutNegation(pattern)
		included = included || !excluded
		if glob == "" || strings.HasPrefix(glob, "/") || !doublestar.ValidatePattern(glob) {
			v.add(fmt.Sprintf("gpu_paths[%d]", i), quote(pattern), `a glob relative to the repository root, such as "src/**" or "!docs/**"`)
		}
	}
	if !included {
		v.add("gpu_paths", "", `at least one glob without "!": exclusions alone match nothing`)
	}
}

// Expected forms of the values below, for checks outside a configuration
// file (action inputs, command-line flags) that take the same values.
const (
	ImageForm    = imageForm
	TierNameForm = tierNameForm
	GPUIDForm    = gpuIDForm
)

// ValidImage reports whether s is an image reference the configuration's
// image key accepts (ImageForm).
func ValidImage(s string) bool { return len(s) <= maxImageLength && imageRE.MatchString(s) }

// ValidTierName reports whether s is a tier name the configuration accepts.
func ValidTierName(s string) bool { return tierNameRE.MatchString(s) }

// ValidGPUID reports whether s has the form of a RunPod GPU id (GPUIDForm).
func ValidGPUID(s string) bool { return gpuIDRE.MatchString(s) }
