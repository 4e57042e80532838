package smoke

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/cudaver"
)

// Config is what one proof run checks. ParseConfig builds it from flags and environment.
type Config struct {
	// MinCUDA is the floor for the driver's CUDA API version.
	MinCUDA Version
	// Tiers are the runtime tiers; the driver selects one.
	Tiers Tiers
	// MinVRAMBytes is the least device memory accepted.
	MinVRAMBytes uint64
	// ReportPath is where the JSON report goes; empty means no report.
	ReportPath string
	// NVRTC holds the optional NVRTC package pin per tier; the step runs only when the
	// selected tier has one.
	NVRTC map[TierName]NVRTCPin
	// WorkDir is where a private download and install directory is made; empty means the
	// system temporary directory.
	WorkDir string
}

// Defaults of the flags, from the product spec.
const (
	DefaultMinCUDA   = "12.6"
	DefaultMinVRAMGB = 8
)

// bytesPerGB: "GB" is 10^9 bytes, as card labels and RunPod's catalog count. A "24 GB" RTX 4090
// reports 25.3e9 bytes (23.6 GiB), so reading the minimum as GiB would reject cards the planner
// accepted by their catalog size.
const bytesPerGB = 1e9

// Usage documents the flags; every flag also reads the environment variable shown.
const Usage = `usage: cuda-smoke [flags]

Proves before the runner registers that this host runs CUDA: driver version, runtime tier, a PTX
kernel of the tier's ISA launched and read back, optionally an NVRTC compile, and VRAM.
Prints one line per step, then "SMOKE PASS" (exit 0) or "SMOKE FAIL: <reason>" (exit 1).
Refuses to run while RUNNER_JIT_CONFIG is set. Each flag overrides its environment variable.

  --min-cuda V                 SMOKE_MIN_CUDA               driver CUDA floor (default 12.6)
  --full-tier V                SMOKE_FULL_TIER              CUDA release of the full tier (default 12.8)
  --baseline-tier V            SMOKE_BASELINE_TIER          CUDA release of the baseline tier (default 12.6)
  --min-vram-gb N              SMOKE_MIN_VRAM_GB            least device memory in GB of 10^9 bytes (default 8)
  --report PATH                SMOKE_REPORT                 write a JSON report to PATH
  --nvrtc-url-full URL         SMOKE_NVRTC_URL_FULL         NVRTC package for the full tier (.deb, .tar, .tar.gz)
  --nvrtc-sha256-full HEX      SMOKE_NVRTC_SHA256_FULL      its SHA-256
  --nvrtc-url-baseline URL     SMOKE_NVRTC_URL_BASELINE     NVRTC package for the baseline tier
  --nvrtc-sha256-baseline HEX  SMOKE_NVRTC_SHA256_BASELINE  its SHA-256
  --work-dir DIR               SMOKE_WORK_DIR               where a package is unpacked (default: temp dir)
`

// envName maps a flag name to its environment variable: "min-cuda" → "SMOKE_MIN_CUDA".
func envName(flagName string) string {
	return "SMOKE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ParseConfig reads the flags in args, falling back to the SMOKE_* environment variables read
// through getenv and then to the defaults. Errors are *ConfigError naming the flag and variable;
// -h and --help return flag.ErrHelp.
func ParseConfig(args []string, getenv func(string) string) (Config, error) {
	tiers := []TierName{TierFull, TierBaseline}
	values, err := parseConfigFlags(args, getenv, tiers)
	if err != nil {
		return Config{}, err
	}

	version := func(name string) (Version, error) {
		v, err := cudaver.Parse(*values[name])
		if err != nil {
			return Version{}, &ConfigError{Flag: name, Env: envName(name), Value: *values[name], Want: "want a CUDA version MAJOR.MINOR such as 12.8"}
		}
		return v, nil
	}
	var cfg Config
	if cfg.MinCUDA, err = version("min-cuda"); err != nil {
		return Config{}, err
	}
	if cfg.Tiers.Full, err = version("full-tier"); err != nil {
		return Config{}, err
	}
	if cfg.Tiers.Baseline, err = version("baseline-tier"); err != nil {
		return Config{}, err
	}
	if err := cfg.Tiers.validate(); err != nil {
		return Config{}, err
	}
	if cfg.MinVRAMBytes, err = parseGB(*values["min-vram-gb"]); err != nil {
		return Config{}, &ConfigError{Flag: "min-vram-gb", Env: envName("min-vram-gb"), Value: *values["min-vram-gb"], Want: "want a non-negative number of GB (10^9 bytes) such as 8 or 7.5"}
	}
	cfg.ReportPath = *values["report"]
	cfg.WorkDir = *values["work-dir"]
	cfg.NVRTC = map[TierName]NVRTCPin{}
	for _, tier := range tiers {
		pin := NVRTCPin{
			URL:    strings.TrimSpace(*values["nvrtc-url-"+string(tier)]),
			SHA256: strings.TrimSpace(*values["nvrtc-sha256-"+string(tier)]),
		}
		if err := pin.validate(tier); err != nil {
			return Config{}, err
		}
		if pin.URL != "" {
			cfg.NVRTC[tier] = pin
		}
	}
	return cfg, nil
}

// parseConfigFlags reads the flags, each defaulting to its environment
// variable and then to the built-in default, into values by flag name.
func parseConfigFlags(args []string, getenv func(string) string, tiers []TierName) (map[string]*string, error) {
	fs := flag.NewFlagSet("cuda-smoke", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	values := map[string]*string{}
	def := func(name, fallback string) {
		v := getenv(envName(name))
		if v == "" {
			v = fallback
		}
		values[name] = fs.String(name, v, "")
	}
	def("min-cuda", DefaultMinCUDA)
	def("full-tier", DefaultTiers.Full.String())
	def("baseline-tier", DefaultTiers.Baseline.String())
	def("min-vram-gb", strconv.Itoa(DefaultMinVRAMGB))
	def("report", "")
	def("work-dir", "")
	for _, tier := range tiers {
		def("nvrtc-url-"+string(tier), "")
		def("nvrtc-sha256-"+string(tier), "")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	return values, nil
}

// parseGB parses a non-negative decimal number of GB into bytes.
func parseGB(s string) (uint64, error) {
	gb, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || gb < 0 || math.IsInf(gb, 0) || math.IsNaN(gb) || gb > 1e6 {
		return 0, strconv.ErrSyntax
	}
	return uint64(math.Round(gb * bytesPerGB)), nil
}

// formatGB formats bytes as decimal GB with two decimals and GiB, e.g. "25.39 GB (23.65 GiB)".
func formatGB(bytes uint64) string {
	return fmt.Sprintf("%.2f GB (%.2f GiB)", float64(bytes)/bytesPerGB, float64(bytes)/(1<<30))
}
