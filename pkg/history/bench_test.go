package history

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
)

// BenchmarkSummarize5000Attempts summarizes 5,000 attempts of saved
// evidence — the lane's jobs, their logs archives and cost artifacts, as a
// collection saves them — and reports the time taken and what the report
// summarized: the pods and the dollars. It fails when they are zero: a
// summary that trusts no line measures an empty report.
//
//	go test ./pkg/history -run XXX -bench Summarize
func BenchmarkSummarize5000Attempts(b *testing.B) {
	const attempts = 5000
	dir := b.TempDir()
	start := time.Now()
	writeBenchEvidence(b, dir, attempts)
	b.Logf("wrote %d attempts of evidence in %s", attempts, time.Since(start).Round(time.Millisecond))

	b.Run(fmt.Sprint(attempts), func(b *testing.B) {
		var r *Report
		start, cpuStart := time.Now(), processCPU(b)
		for range b.N {
			var err error
			if r, err = Summarize(dir, nil); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(r); err != nil {
				b.Fatal(err)
			}
			_ = r.Markdown()
		}
		per, cpu := time.Since(start)/time.Duration(b.N), (processCPU(b)-cpuStart)/time.Duration(b.N)
		switch {
		case r.Totals.Attempts != attempts:
			b.Fatalf("summarized %d attempts, want %d", r.Totals.Attempts, attempts)
		case r.Totals.Pods == 0 || r.Totals.Spend.Known <= 0:
			b.Fatalf("summarized %d attempts into %d pods and %s: the evidence was not read, so this measures an empty report", attempts, r.Totals.Pods, r.Totals.Spend)
		}
		b.ReportMetric(float64(per.Milliseconds()), "ms/report")
		b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms/report")
		b.ReportMetric(float64(r.Totals.Pods), "pods")
		b.ReportMetric(r.Totals.Spend.Known.Dollars(), "dollars")
		b.Logf("summarized %d attempts (%d pods, spend %s) in %s", attempts, r.Totals.Pods, r.Totals.Spend, per.Round(time.Millisecond))
	})
}

// processCPU is the CPU time the process has used (user and system, all
// threads): the summary reads attempts in parallel, so its wall time says
// how many cores were free as much as what it cost.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeBenchEvidence writes n attempts shaped like real ones, as a collection
// saves them (writeSaved): the lane's jobs, a provision log with a rejected
// and an accepted candidate, a cleanup cost line, a gate marker, and (for
// most) the cost artifact its cleanup job uploaded.
func writeBenchEvidence(b *testing.B, dir string, n int) {
	saved := make([]savedAttempt, 0, n)
	for i := range n {
		runID := int64(100000 + i)
		at := t0.Add(time.Duration(i) * 7 * time.Minute)
		ref := sha(fmt.Sprint("ref-", i/3)) // each ref runs about three times
		rejected := rejectedAttempt(1, fmt.Sprintf("rej%09d", i), "NVIDIA RTX A4000", 0.25, int64(60+i%120))
		accepted := acceptedAttempt(2, fmt.Sprintf("acc%09d", i), "NVIDIA L4", 0.43, 70)
		report := acceptedReport(accepted.PodID, accepted.GPU, 0.43, at.Add(time.Minute), 400+i%600, rejected)
		marker, _ := gatecheck.FormatExternalID(ref, gatecheck.KindPaid)
		a := savedAttempt{rec: completedAttempt(runID, 1, "pull_request", at), logs: map[string]string{
			provisionLog: logText(at, "plan (3 candidates)", cost.AttemptLine(rejected).Format(), cost.AttemptLine(accepted).Format()),
			gpuLog:       logText(at.Add(2*time.Minute), append([]string{"##[group]Run GPU tests"}, noise(40)...)...),
			cleanupLog:   logText(at.Add(12*time.Minute), "pod deleted", cost.CostLine(report).Format()),
			gateLog:      logText(at.Add(13*time.Minute), "published "+marker+" (https://github.com/org/app/runs/1): ok"),
		}}
		if i%10 != 0 { // some artifacts expired
			a.artifacts = []cost.Artifact{artifactOf(runID, 1, cost.TriggerAutomatic, ref, report)}
		}
		saved = append(saved, a)
	}
	writeSaved(b, dir, saved...)
}
