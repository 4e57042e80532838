// Command gate is the ci-gpu-gate action: it publishes the "CI GPU gate"
// check run that ends a workflow run, with the evidence it relies on, or
// nothing for a PR whose gate the local relay owns.
package main

import (
	"context"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/gate"
)

func main() { actionkit.Main(run) }

// budget bounds the whole gate, inside the workflow's five-minute step
// timeout: a rate limit asking for a longer wait (Retry-After of an hour)
// fails the step at once with an error saying so, rather than sleeping until
// the runner kills it mid-retry.
const budget = 4 * time.Minute

func run(ctx context.Context, io *actionio.IO) error {
	pr, err := io.Int("pr-number", 0, 0, math.MaxInt32)
	if err != nil {
		return err
	}
	head, err := io.SHA("head-sha", false) // Conclude says when a published gate needs it
	if err != nil {
		return err
	}
	tested, err := io.SHA("tested-ref", false)
	if err != nil {
		return err
	}
	pod, err := podEvidence(io)
	if err != nil {
		return err
	}
	current, err := actionkit.CurrentRun(io)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	gh, err := actionkit.GitHub(ctx, io, "")
	if err != nil {
		return err
	}
	done, err := gate.Conclude(ctx, gh, gate.ConcludeRequest{
		PRNumber: int(pr), Kind: gate.Kind(io.Input("kind")),
		Decision: gate.Outcome(io.Input("decision")), SkipKind: gate.Kind(io.Input("gate-kind")),
		GPUJobResult: gate.JobResult(io.Input("gpu-job-result")),
		Evidence: gate.Evidence{
			HeadSHA: head, TestedRef: tested, CheckName: io.Input("check-name"),
			Reason: io.Input("reason"), Pod: pod, ReusedCheckURL: io.Input("reused-check-url"),
			RunID: current.ID, RunURL: current.URL(),
		},
	})
	if err != nil {
		return err
	}
	checkRunID := "" // empty, not "0", when nothing was published
	if done.CheckRun == nil {
		io.Infof("no gate published: %s", done.Reason)
	} else {
		checkRunID = strconv.FormatInt(done.CheckRun.GetID(), 10)
		io.Infof("published %s (%s): %s", done.CheckRun.GetExternalID(), done.CheckRun.GetHTMLURL(), done.Reason)
	}
	for _, out := range [][2]string{
		{"kind", string(done.Kind)}, {"check-run-id", checkRunID},
		{"check-run-url", done.CheckRun.GetHTMLURL()}, {"external-id", done.CheckRun.GetExternalID()},
	} {
		if err := io.SetOutput(out[0], out[1]); err != nil {
			return err
		}
	}
	return io.AddSummary(done.Summary())
}

// podEvidence reads the accepted pod's outputs of the provision step; no
// pod-id means no pod ran. A cost report that cannot be read is left out with
// a warning: reporting never stops the gate.
func podEvidence(io *actionio.IO) (*gate.PodEvidence, error) {
	id := io.Input("pod-id")
	if id == "" {
		return nil, nil
	}
	startup, err := io.Int("startup-seconds", 0, 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	attempts, err := io.Int("attempts", 1, 1, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	pod := &gate.PodEvidence{ID: id, GPU: io.Input("gpu-type"), Tier: io.Input("tier"),
		StartupSeconds: int(startup), Attempts: int(attempts), PriceUnknown: io.Input("price-per-hour") == ""}
	if !pod.PriceUnknown {
		pod.PricePerHour, err = strconv.ParseFloat(io.Input("price-per-hour"), 64)
		if err != nil || !(pod.PricePerHour >= 0) || math.IsInf(pod.PricePerHour, 1) { // rejects NaN too
			return nil, &actionio.InputError{Input: "price-per-hour", Value: io.Input("price-per-hour"), Expected: "a non-negative price in USD (the provision step's output), or empty when unknown"}
		}
	}
	if io.Input("cost-report-path") != "" {
		// The report goes into a check run anyone with read access sees: only
		// a file of this job's workspace or temp dir, never /etc/passwd or a
		// link to it, and redacted.
		path, err := io.PathInput("cost-report-path", "", actionio.RootWorkspace, actionio.RootTemp)
		if err != nil {
			return nil, err
		}
		report, err := os.ReadFile(path)
		if err != nil {
			io.Warningf("cost-report-path: %v; the gate is published without the cost report", err)
		}
		pod.CostMarkdown = io.Redactor().Redact(string(report))
	}
	return pod, nil
}
