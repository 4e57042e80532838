package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
)

// BenchmarkSummarize5000Attempts summarizes 5,000 attempts of saved
// evidence — logs archives and cost artifacts — and prints the time taken.
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
		start := time.Now()
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
		per := time.Since(start) / time.Duration(b.N)
		if r.Totals.Attempts != attempts {
			b.Fatalf("summarized %d attempts, want %d", r.Totals.Attempts, attempts)
		}
		b.ReportMetric(float64(per.Milliseconds()), "ms/report")
		b.Logf("summarized %d attempts (%d pods, spend %s) in %s", attempts, r.Totals.Pods, r.Totals.Spend, per.Round(time.Millisecond))
	})
}

// writeBenchEvidence writes n attempts shaped like real ones: a provision log
// with a rejected and an accepted candidate, a cleanup cost line, a gate
// marker, and (for most) the cost artifact.
func writeBenchEvidence(b *testing.B, dir string, n int) {
	st := store{dir: dir}
	for i := range n {
		runID := int64(100000 + i)
		at := t0.Add(time.Duration(i) * 7 * time.Minute)
		ref := sha(fmt.Sprint("ref-", i/3)) // each ref runs about three times
		rejected := rejectedAttempt(1, fmt.Sprintf("rej%09d", i), "NVIDIA RTX A4000", 0.25, int64(60+i%120))
		accepted := acceptedAttempt(2, fmt.Sprintf("acc%09d", i), "NVIDIA L4", 0.43, 70)
		report := acceptedReport(accepted.PodID, accepted.GPU, 0.43, at.Add(time.Minute), 400+i%600, rejected)
		marker, _ := gatecheck.FormatExternalID(ref, gatecheck.KindPaid)
		logs := map[string]string{
			provisionLog: logText(at, "plan (3 candidates)", cost.AttemptLine(rejected).Format(), cost.AttemptLine(accepted).Format()),
			gpuLog:       logText(at.Add(2*time.Minute), append([]string{"##[group]Run GPU tests"}, noise(40)...)...),
			cleanupLog:   logText(at.Add(12*time.Minute), "pod deleted", cost.CostLine(report).Format()),
			gateLog:      logText(at.Add(13*time.Minute), "published "+marker+" (https://github.com/org/app/runs/1): ok"),
		}
		rec := completedAttempt(runID, 1, "pull_request", at)
		rec.Schema = recordSchema
		mustWrite(b, st, rec.Key(), logsFile, zipOf(b, logs))
		if i%10 != 0 { // some artifacts expired
			body, _ := json.Marshal(artifactOf(runID, 1, cost.TriggerAutomatic, ref, report))
			f := ArtifactFile{ID: runID, Name: cost.ArtifactName(runID, 1), Download: Download{State: StateComplete}}
			mustWrite(b, st, rec.Key(), f.fileName(), zipOf(b, map[string]string{cost.ArtifactFileName: string(body)}))
			rec.Artifacts = []ArtifactFile{f}
		}
		data, _ := json.Marshal(rec)
		mustWrite(b, st, rec.Key(), recordFile, data)
	}
}

// mustWrite writes a file without the atomic rename: the setup is not what is measured.
func mustWrite(b *testing.B, st store, k AttemptKey, name string, data []byte) {
	if err := os.MkdirAll(st.attemptDir(k), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.attemptDir(k), name), data, 0o644); err != nil {
		b.Fatal(err)
	}
}
