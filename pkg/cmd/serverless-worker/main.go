// Command serverless-worker is the Go worker of the Serverless lane: the
// pinned Python handler writes the job's input to a file and runs
//
//	serverless-worker --input in.json --output out.json
//
// then returns out.json as the job's output. It loads libcuda.so.1 at run
// time through purego (no cgo), like cuda-smoke, so it is a separate binary
// from the actions' static ones and ships as a release asset checked by
// SHA-256. It exits 0 whenever it wrote an output (failures are inside it).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
	"github.com/org/runpod-gpu/pkg/serverless/worker"
	"github.com/org/runpod-gpu/pkg/smoke"
	"github.com/org/runpod-gpu/pkg/smoke/cudalib"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "serverless-worker:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serverless-worker", flag.ContinueOnError)
	inPath := fs.String("input", "", "job input JSON file")
	outPath := fs.String("output", "", "where the output JSON goes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *inPath == "" || *outPath == "" {
		return fmt.Errorf("--input and --output are required")
	}
	data, err := os.ReadFile(*inPath)
	if err != nil {
		return err
	}
	var in jobwire.JobInput
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("input: %v", err)
	}
	work, err := os.MkdirTemp("", "rpg-worker-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	out := worker.Run(ctx, in, worker.Deps{WorkDir: work, Now: time.Now, Getenv: os.Getenv,
		Prove: func(ctx context.Context, cfg smoke.Config, w io.Writer) (*smoke.Report, error) {
			return cudalib.NewProof(cfg, w, os.Getenv).Run(ctx)
		}})
	encoded, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(*outPath, encoded, 0o600)
}
