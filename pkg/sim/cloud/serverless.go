package cloud

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cudaver"
	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/serverless/worker"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/smoke"
)

// The Serverless worker asset simcloud's users pass to setup: the simulated
// cloud never downloads it (its worker is ServerlessWorker), but the lane
// checks the URL and checksum as it does for the real release asset.
const (
	SimWorkerURL    = "https://simcloud.invalid/releases/serverless-worker"
	SimWorkerSHA256 = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"
)

// ServerlessWorker runs each Serverless job as the lane's Go worker does —
// the payload checked and unpacked, the test command run in it, the results
// packed under the size cap — on this machine, with a model of the CUDA proof
// on the card the simulator placed the worker on (a simulated driver 12.8).
// The tests see only PATH, as the real worker gives them a clean environment.
type ServerlessWorker struct {
	Dir string // parent of each job's private directory; "" means the system's
}

// Run runs one job.
func (w ServerlessWorker) Run(ctx context.Context, job runpodsim.WorkerJob) runpodsim.WorkerResult {
	var in jobwire.JobInput
	if err := json.Unmarshal(job.Input, &in); err != nil {
		return runpodsim.WorkerResult{Error: "handler: the job input is not the worker's JSON: " + err.Error()}
	}
	dir, err := os.MkdirTemp(w.Dir, "simcloud-job-")
	if err != nil {
		return runpodsim.WorkerResult{Error: "handler: " + err.Error()}
	}
	defer os.RemoveAll(dir)
	out := worker.Run(ctx, in, worker.Deps{WorkDir: dir, Prove: modelProof(job.GPUType), Now: time.Now,
		Getenv: func(string) string { return "" }, Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH")} }})
	data, err := json.Marshal(out)
	if err != nil {
		return runpodsim.WorkerResult{Error: "handler: " + err.Error()}
	}
	return runpodsim.WorkerResult{Output: data, Error: out.Error}
}

// modelProof is the CUDA proof's model: it passes on the placed card and
// writes the report the real proof writes.
func modelProof(device string) worker.Prover {
	return func(_ context.Context, cfg smoke.Config, out io.Writer) (*smoke.Report, error) {
		driver, _ := cudaver.Parse("12.8")
		r := &smoke.Report{Result: "pass", DriverVersion: driver, DriverVersionCode: driver.Code(), Tier: "full",
			Device: &smoke.DeviceReport{Name: device, VRAMBytes: 16 << 30}, Steps: []smoke.StepReport{{Name: "kernel", OK: true, Detail: "simulated by simcloud"}}}
		fmt.Fprintf(out, "[ OK ] simulated CUDA proof on %s (simcloud's model: no GPU was used)\nSMOKE PASS\n", strings.TrimSpace(device))
		if cfg.ReportPath != "" {
			data, err := json.MarshalIndent(r, "", "  ")
			if err == nil {
				err = os.WriteFile(cfg.ReportPath, append(data, '\n'), 0o644)
			}
			if err != nil {
				return r, err
			}
		}
		return r, nil
	}
}
