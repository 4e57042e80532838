// Command gpucheck turns a cuda-smoke JSON report into the GPU check's one
// result line (see run.sh beside it):
//
//	GPU-CHECK driver=12.8 tier=full cc=9.0 vram_gb=150.1 seconds=0.42 result=PASS
//
// Values the report does not hold print as "-". It exits 0 only for PASS.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/org/runpod-gpu/pkg/smoke"
)

func main() {
	pass, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpucheck:", err)
		os.Exit(2)
	}
	if !pass {
		os.Exit(1)
	}
}

// run prints the result line for the report named by -report; pass is true
// only when the proof exited 0 (-exit-code) and its report says "pass".
func run(args []string, stdout, stderr io.Writer) (pass bool, err error) {
	flags := flag.NewFlagSet("gpucheck", flag.ContinueOnError)
	flags.SetOutput(stderr)
	reportPath := flags.String("report", "", "the proof's JSON report (--report of cuda-smoke)")
	exitCode := flags.Int("exit-code", 0, "the proof's exit status")
	if err := flags.Parse(args); err != nil {
		return false, err
	}
	if *reportPath == "" {
		return false, errors.New("-report is required: the path of cuda-smoke's JSON report")
	}
	var report smoke.Report
	data, err := os.ReadFile(*reportPath)
	if err == nil {
		err = json.Unmarshal(data, &report)
	}
	if err != nil {
		// A proof that crashed leaves no report: that is a failed check, not a usage error.
		fmt.Fprintf(stderr, "gpucheck: no usable report: %v\n", err)
		report = smoke.Report{}
	}
	pass = *exitCode == 0 && report.Result == "pass"
	fmt.Fprintln(stdout, Line(report, pass))
	return pass, nil
}

// Line is the result line for report; pass decides PASS or FAIL.
func Line(report smoke.Report, pass bool) string {
	driver, tier, cc, vram, seconds := "-", "-", "-", "-", "-"
	if report.DriverVersion != (smoke.Version{}) {
		driver = report.DriverVersion.String()
	}
	if report.Tier == smoke.TierFull || report.Tier == smoke.TierBaseline {
		tier = string(report.Tier) // anything else would not be one word on the line
	}
	if d := report.Device; d != nil {
		if d.ComputeCapability != (smoke.ComputeCapability{}) {
			cc = d.ComputeCapability.String()
		}
		if d.VRAMBytes > 0 {
			vram = fmt.Sprintf("%.1f", float64(d.VRAMBytes)/1e9) // GB of 10^9 bytes, as the proof counts
		}
	}
	if report.DurationMS > 0 {
		seconds = fmt.Sprintf("%.2f", report.DurationMS/1000)
	}
	result := "FAIL"
	if pass {
		result = "PASS"
	}
	return fmt.Sprintf("GPU-CHECK driver=%s tier=%s cc=%s vram_gb=%s seconds=%s result=%s", driver, tier, cc, vram, seconds, result)
}
