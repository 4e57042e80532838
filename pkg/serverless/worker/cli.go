package worker

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// RunCLI is the serverless-worker program (pkg/cmd/serverless-worker): it
// reads the job input from --input, runs it in a temporary work directory
// with prove as the CUDA proof, and writes the job output to --output. An
// error means no output was written; a failed job is inside the output.
func RunCLI(ctx context.Context, args []string, getenv func(string) string, prove Prover) error {
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
	out := Run(ctx, in, Deps{WorkDir: work, Now: time.Now, Getenv: getenv, Prove: prove})
	encoded, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(*outPath, encoded, 0o600)
}
