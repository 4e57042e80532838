package cudalib

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/org/runpod-gpu/pkg/smoke"
)

// RunCLI is the cuda-smoke program (pkg/cmd/cuda-smoke): it parses the
// configuration from args and getenv and runs the proof on the real libraries.
// Every failure, a bad flag included, ends the output with a
// "SMOKE FAIL: <reason>" line; --help prints smoke.Usage and succeeds.
func RunCLI(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string) error {
	cfg, err := smoke.ParseConfig(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, smoke.Usage)
		return nil
	}
	if err != nil {
		smoke.WriteVerdict(stdout, fmt.Errorf("config: %w", err))
		return err
	}
	_, err = NewProof(cfg, stdout, getenv).Run(ctx)
	return err
}
