// Command serverless-worker is the Go worker of the Serverless lane: the
// pinned Python handler writes the job's input to a file and runs
//
//	serverless-worker --input in.json --output out.json
//
// then returns out.json as the job's output. It loads libcuda.so.1 at run
// time through purego (no cgo), like cuda-smoke, so it is a separate binary
// shipped as a release asset checked by SHA-256. It exits 0 whenever it
// wrote an output (failures are inside it): see worker.RunCLI.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/serverless/worker"
	"github.com/org/runpod-gpu/pkg/smoke"
	"github.com/org/runpod-gpu/pkg/smoke/cudalib"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := worker.StartClean() // first: the tests never see this process's keys
	if err == nil {
		err = worker.RunCLI(ctx, os.Args[1:], os.Getenv, prove)
	}
	if stop(); err != nil {
		fmt.Fprintln(os.Stderr, "serverless-worker:", err)
		os.Exit(2)
	}
}

// prove is the CUDA smoke proof on the real driver (worker links no purego).
func prove(ctx context.Context, cfg smoke.Config, out io.Writer) (*smoke.Report, error) {
	return cudalib.NewProof(cfg, out, os.Getenv).Run(ctx)
}
