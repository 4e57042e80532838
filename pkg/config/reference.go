package config

import (
	"encoding/json"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/mdtable"
)

// keyDoc documents one key. Defaults are read from Default(), never written
// twice, so the reference cannot drift from the code.
type keyDoc struct {
	key  string
	typ  string
	desc string
	// value returns the key's default from Default(); nil when it has none.
	value func(*Config) any
	// noDefault is shown instead when value is nil: "required", "none", ….
	noDefault string
}

// keyDocs is the single table of key metadata, in file order. Tests keep it
// equal to the Config struct and the JSON Schema.
var keyDocs = []keyDoc{
	{key: "gpu_tiers", typ: "list of tiers", noDefault: "required",
		desc: "The reviewed GPU allowlist: live catalog data never adds a GPU outside it. Each tier keeps one provision attempt reserved, so every tier stays reachable."},
	{key: "gpu_tiers[].name", typ: "string", noDefault: "required",
		desc: "Tier name shown in plans, logs and outputs: 1-32 of `a-z 0-9 - _`, starting with a letter; unique."},
	{key: "gpu_tiers[].gpu_ids", typ: "list of strings", noDefault: "required",
		desc: "Exact RunPod GPU ids such as `NVIDIA GeForce RTX 4090`; each id appears in one tier only."},
	{key: "matrix_tiers", typ: "list of tier names", value: func(c *Config) any { return c.MatrixTiers },
		desc: "Tiers one lane tests together, one pod each (say an Ampere and a Hopper tier): the gate passes only when every one passed, a tier that passed for the tested tree is not paid again, and `max_run_spend_usd` covers all of them. Empty: one pod, of whichever reviewed tier is cheapest."},
	{key: "clouds", typ: "list of `SECURE`, `COMMUNITY`", value: func(c *Config) any { return c.Clouds },
		desc: "RunPod clouds offers may come from. With both, secure and community offers compete on price."},
	{key: "regions", typ: "list of strings", value: func(c *Config) any { return c.Regions },
		desc: "Allowed locations: continents (`north_america`, `south_america`, `europe`, `asia`, `middle_east`, `africa`, `oceania`, `antarctica`) or upper-case ISO 3166-1 alpha-2 country codes (`US`); given together they mean either (`[europe, US]` is Europe and the United States). Empty means anywhere."},
	{key: "zones", typ: "list of strings", value: func(c *Config) any { return c.Zones },
		desc: "Allowed RunPod data-center ids such as `US-TX-3`. Empty means any."},
	{key: "gpu_count", typ: "integer, 1-8", value: func(c *Config) any { return c.GPUCount },
		desc: "GPUs per pod."},
	{key: "min_vram_gb", typ: "integer, 1-1024", value: func(c *Config) any { return c.MinVRAMGB },
		desc: "GPU types with less memory per GPU are dropped; the smoke proof checks it again on the host."},
	{key: "min_cuda_version", typ: "string `major.minor`", value: func(c *Config) any { return c.MinCUDAVersion },
		desc: "Open-ended host CUDA floor sent to the catalog and to pod create. Quote it. At least `runtime_tiers.baseline`: hosts below it would always fail the proof."},
	{key: "runtime_tiers", typ: "mapping", value: func(c *Config) any { return c.RuntimeTiers },
		desc: "CUDA runtime tiers of the smoke proof: a driver at or above `full` runs the full tier, else at or above `baseline` the baseline tier, else the host is rejected."},
	{key: "runtime_tiers.full", typ: "string `major.minor`", value: func(c *Config) any { return c.RuntimeTiers.Full },
		desc: "Lowest driver CUDA version of the full tier; at least `baseline`."},
	{key: "runtime_tiers.baseline", typ: "string `major.minor`", value: func(c *Config) any { return c.RuntimeTiers.Baseline },
		desc: "Lowest driver CUDA version the proof accepts."},
	{key: "max_price_candidates", typ: "integer, 0-8", value: func(c *Config) any { return c.MaxPriceCandidates },
		desc: "Live-priced candidates tried first, cheapest first; 0 uses only the static per-tier candidates."},
	{key: "max_provision_attempts", typ: "integer, 1-8", value: func(c *Config) any { return c.MaxProvisionAttempts },
		desc: "Most pods one run creates. At least `max_price_candidates` + the number of tiers."},
	{key: "max_consecutive_startup_failures", typ: "integer, 0-8", value: func(c *Config) any { return c.MaxConsecutiveStartupFailures },
		desc: "Stop after this many created pods in a row never brought a runner online; 0 disables the early stop. At most `max_provision_attempts`."},
	{key: "max_concurrent_pods", typ: "integer, 0-100", value: func(c *Config) any { return c.MaxConcurrentPods },
		desc: "Most live pods of this repository at once, across its lanes (which create at the same time): a lane waits for a free slot before its create (up to an hour), and one that finds its new pod past the maximum deletes it at once and waits again. 0: no maximum beyond the budget."},
	{key: "startup_timeout_seconds", typ: "integer, 1-3600", value: func(c *Config) any { return c.StartupTimeoutSeconds },
		desc: "Each candidate's limit from creation to acceptance; a pod not accepted by then is rejected and deleted. Every wait of its watch (a Retry-After, the shared cooldown) must fit what is left of it."},
	{key: "startup_poll_seconds", typ: "integer, >= 1", value: func(c *Config) any { return c.StartupPollSeconds },
		desc: "Observation cadence while a candidate starts; below `startup_timeout_seconds`."},
	{key: "create_deadline_seconds", typ: "integer, 1-600", value: func(c *Config) any { return c.CreateDeadlineSeconds },
		desc: "Limit on one pod-create call: a 429's wait, reconciliation by name and one informed retry included. A longer pause RunPod asks for (Retry-After on a 429 or a 5xx) is waited out within the provision budget (`max_provision_attempts` × (`startup_timeout_seconds` + 4 min)), even when it outlasts the candidate's `startup_timeout_seconds`; then the pod is looked up by name and the run goes on with the next candidate (a pod found after a pause longer than its startup budget is deleted unwatched, no host's fault), never a second pod of that name."},
	{key: "image", typ: "string", value: func(c *Config) any { return c.Image },
		desc: "Runner image, `registry/path[:tag][@sha256:digest]` with its registry host (a name with a dot, or a port) and in lower case, as a tag is resolved to its digest through that registry once per run: a Docker Hub image is `docker.io/runpod/pytorch:…` (an official one `docker.io/ubuntu:…`), not `runpod/pytorch:…`, which provision has always refused and the key refuses since December 2026 (`runpod-gpu up --image` takes RunPod's own names, shorthand included). Left at this default, a release of the suite starts pods from its default pod image instead: the same runner with the proof inside."},
	{key: "disk_gb", typ: "integer, 1-1024", value: func(c *Config) any { return c.DiskGB },
		desc: "Container disk in GB (wiped if the pod restarts)."},
	{key: "volume", typ: "mapping", noDefault: "none",
		desc: "Optional persistent mount on the pod's host."},
	{key: "volume.size_gb", typ: "integer, 10-4096", noDefault: "required in `volume`",
		desc: "Volume size in GB; RunPod's floor is 10."},
	{key: "volume.path", typ: "string", noDefault: "required in `volume`",
		desc: "Absolute mount path such as `/workspace`."},
	{key: "network_volume", typ: "mapping", noDefault: "none",
		desc: "Optional RunPod network volume of warm data (test data, model weights, compiler caches) every pod mounts, so the paid window downloads none of it. A network volume lives in one data center: the plan then considers only that one and says what the restriction costs against the cheapest candidate elsewhere. The volume must be this API key's account's, checked before any create. Not beside `volume`. The lane never writes it; a refresh workflow does (see the configuration page)."},
	{key: "network_volume.id", typ: "string", noDefault: "required in `network_volume`",
		desc: "The volume's RunPod id, such as `agv6w2qcg7` (`GET /v2/network-volumes` lists yours)."},
	{key: "network_volume.path", typ: "string", value: func(*Config) any { return DefaultNetworkVolumePath },
		desc: "Absolute mount path in the pod; the job finds it in `RUNPOD_GPU_NETWORK_VOLUME` when the volume is mounted."},
	{key: "network_volume.when_out_of_stock", typ: "`wait` or `without_volume`", value: func(*Config) any { return FallbackWait },
		desc: "When the volume's data center has no stock of a reviewed GPU: `wait` re-reads the catalog every minute for up to 30 minutes and creates no pod elsewhere; `without_volume` plans as if no volume were named (the pod may land anywhere, mounts nothing, and the job downloads what it needs)."},
	{key: "setup_budget_seconds", typ: "integer, >= 1", value: func(c *Config) any { return c.SetupBudgetSeconds },
		desc: "Watchdog limit from the accepted pod's start to the real test step; at most `lifetime_seconds`, and at most the sum of the GPU job's set-up steps' `timeout-minutes` (the shipped lane's 15 minutes) so the watchdog is the stricter bound."},
	{key: "lifetime_seconds", typ: "integer, 1-7200", value: func(c *Config) any { return c.LifetimeSeconds },
		desc: "Watchdog limit on the accepted pod's whole life; the reaper reclaims any pod older than 2 hours regardless."},
	{key: "nvrtc", typ: "mapping", noDefault: "none",
		desc: "Optional NVRTC packages per runtime tier; off by default. Without a pin the proof checks the driver, the device and a kernel shipped in it, which is what tests of prebuilt kernels need. Pin one when your tests compile kernels at run time (NVRTC: CuPy's RawKernel, Numba, jitify, PyTorch's JIT fusers): the proof then downloads it in the paid window, checks the SHA-256 before installing, and compiles a kernel for the device, so a host that cannot compile is rejected before your tests run."},
	{key: "nvrtc.full", typ: "mapping", noDefault: "none",
		desc: "NVRTC package for the full tier."},
	{key: "nvrtc.full.url", typ: "string", noDefault: "required in a pin",
		desc: "`https://` URL without query or fragment."},
	{key: "nvrtc.full.sha256", typ: "string", noDefault: "required in a pin",
		desc: "The package's SHA-256, 64 lower-case hex digits."},
	{key: "nvrtc.baseline", typ: "mapping", noDefault: "none",
		desc: "NVRTC package for the baseline tier."},
	{key: "nvrtc.baseline.url", typ: "string", noDefault: "required in a pin",
		desc: "`https://` URL without query or fragment."},
	{key: "nvrtc.baseline.sha256", typ: "string", noDefault: "required in a pin",
		desc: "The package's SHA-256, 64 lower-case hex digits."},
	{key: "max_run_spend_usd", typ: "number, > 0", noDefault: "none",
		desc: "Optional ceiling in US dollars: no pod is created whose worst case (what rejected pods cost + its price × (`startup_timeout_seconds` + `lifetime_seconds`)) could take the run past it. From catalog prices: estimates, not invoices."},
	{key: "budget", typ: "mapping", noDefault: "none",
		desc: "Optional budget of GPU CI, shared by the pod lane and the Serverless lane: before any create, what the RunPod account was billed (else the cost history's record), what is in flight and the create's worst case must stay within it. See the cost model."},
	{key: "budget.daily_usd", typ: "number, > 0", noDefault: "none",
		desc: "US dollars per UTC day."},
	{key: "budget.monthly_usd", typ: "number, > 0", noDefault: "none",
		desc: "US dollars per UTC month."},
	{key: "gpu_paths", typ: "list of globs", value: func(c *Config) any { return c.GPUPaths },
		desc: "Changed files that need the GPU lane (doublestar globs; a leading `!` excludes; the last match decides). A change touching none of them skips the paid path."},
}

// indexRE turns "gpu_tiers[2].name" into the table's "gpu_tiers[].name".
var indexRE = lazyre.Regexp{Pattern: `\[[0-9]+\]`}

// docFor returns the table entry for a key path, indexes ignored.
func docFor(key string) (keyDoc, bool) {
	key = indexRE.ReplaceAllString(key, "[]")
	for _, d := range keyDocs {
		if d.key == key {
			return d, true
		}
	}
	return keyDoc{}, false
}

// hasDefault reports whether the key falls back to a documented default when absent.
func hasDefault(key string) bool {
	d, ok := docFor(key)
	return ok && d.value != nil
}

// ReferenceMarkdown returns the key reference as a Markdown table (key, type,
// default, description), generated from the same table and Default() the
// loader uses, for the configuration page (.github/docs/configuration.md).
func ReferenceMarkdown() string {
	defaults := Default()
	// The type and description are Markdown written here (code spans
	// included), so they go in as given; a test keeps "|" out of them.
	tb := mdtable.New("Key", "Type", "Default", "Description")
	for _, d := range keyDocs {
		def := d.noDefault
		if d.value != nil {
			def = "`" + defaultJSON(d.value(defaults)) + "`"
		}
		tb.Row(mdtable.Code(d.key), d.typ, def, d.desc)
	}
	return tb.String()
}

// defaultJSON renders a default as JSON, which is also valid YAML flow syntax.
func defaultJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		// Every default is plain data; failing here is a programming error tests catch.
		return "?"
	}
	return string(data)
}
