package smoke

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Report is the JSON record of one proof run, written to Config.ReportPath whatever the result.
type Report struct {
	// Result is "pass" or "fail".
	Result string `json:"result"`
	// Reason is the failure, as on the SMOKE FAIL line.
	Reason string `json:"reason,omitempty"`
	// DriverVersion is the driver's CUDA API version; DriverVersionCode its raw encoding.
	DriverVersion     Version `json:"driver_version,omitzero"`
	DriverVersionCode int     `json:"driver_version_code,omitempty"`
	// Tier is the selected runtime tier, TierCUDA its release and PTXISA the ISA emitted for it.
	Tier     TierName `json:"tier,omitempty"`
	TierCUDA Version  `json:"tier_cuda,omitzero"`
	PTXISA   ISA      `json:"ptx_isa,omitzero"`
	// PTXTarget is the ".target" of the hand-written PTX, e.g. "sm_89".
	PTXTarget string `json:"ptx_target,omitempty"`
	// Device describes the device proven.
	Device *DeviceReport `json:"device,omitempty"`
	// NVRTC describes the NVRTC step, when it ran.
	NVRTC *NVRTCReport `json:"nvrtc,omitempty"`
	// Steps lists every step attempted, in order.
	Steps []StepReport `json:"steps"`
	// DurationMS is the whole run's wall time.
	DurationMS float64 `json:"duration_ms"`
}

// DeviceReport describes the device the proof ran on.
type DeviceReport struct {
	Ordinal           int               `json:"ordinal"`
	Name              string            `json:"name"`
	ComputeCapability ComputeCapability `json:"compute_capability,omitzero"`
	VRAMBytes         uint64            `json:"vram_bytes"`
	MinVRAMBytes      uint64            `json:"min_vram_bytes"`
}

// NVRTCReport describes the NVRTC step.
type NVRTCReport struct {
	PackageURL    string  `json:"package_url"`
	PackageSHA256 string  `json:"package_sha256"`
	PackageBytes  int64   `json:"package_bytes,omitempty"`
	Version       Version `json:"version,omitzero"`
	Architecture  string  `json:"architecture,omitempty"`
	PTXISA        ISA     `json:"ptx_isa,omitzero"`
	PTXTarget     string  `json:"ptx_target,omitempty"`
}

// StepReport is one step's outcome.
type StepReport struct {
	Name       string  `json:"name"`
	OK         bool    `json:"ok"`
	Detail     string  `json:"detail"`
	DurationMS float64 `json:"duration_ms"`
}

// milliseconds converts d to fractional milliseconds at microsecond precision.
func milliseconds(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond).Microseconds()) / 1000
}

// writeReport writes r as indented JSON (see appendJSON) to path through a temporary file in the same directory,
// so a reader never sees half a report.
func writeReport(path string, r *Report) error {
	data, err := r.appendJSON(nil)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cuda-smoke-report-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// WriteVerdict prints the last line of a run: "SMOKE PASS" when err is nil, otherwise
// "SMOKE FAIL: <reason>" on one line.
func WriteVerdict(w io.Writer, err error) {
	if err == nil {
		fmt.Fprintln(w, "SMOKE PASS")
		return
	}
	fmt.Fprintln(w, "SMOKE FAIL: "+oneLine(err.Error()))
}

// maxLineBytes bounds one output line, so a long compiler log cannot flood the pod's log.
const maxLineBytes = 2000

// oneLine folds s onto one line and bounds its length: the output is one line per step.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(s)
	if len(s) > maxLineBytes {
		cut := maxLineBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
