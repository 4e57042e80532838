// Command simcloud serves the simulated cloud (RunPod, GitHub, the image
// registry and the proof download) on loopback for manual use: point the
// actions, curl or gh at the URLs it prints, with the key and token it prints.
// It runs until interrupted.
//
//	go run ./pkg/cmd/simcloud -mode process -seed 7
//
// In model mode pods are decided from their host profiles; in process mode
// each pod runs the real startup script and CUDA smoke proof against stand-ins
// (needs gcc and the go tool, and runs from inside this repository). Both run
// on the real clock.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "simcloud:", err)
		os.Exit(2)
	}
}

// run starts the cloud, prints how to reach it and serves until ctx ends.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("simcloud", flag.ContinueOnError)
	flags.SetOutput(stdout)
	mode := flags.String("mode", "model", "how pods run: model (decided from host profiles) or process (the real startup script and proof)")
	seed := flags.Uint64("seed", 1, "seed of every random choice (placement, ids, faults)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	opts := cloud.Options{Seed: *seed, Clock: simclock.Real{}}
	switch *mode {
	case "model":
	case "process":
		opts.Mode = cloud.ModeProcess
	default:
		return fmt.Errorf("-mode %q: want model or process", *mode)
	}
	c, err := cloud.Start(opts)
	if err != nil {
		return err
	}
	defer c.Close()

	// Keys are the provision action's input names, so values can be pasted as inputs.
	lines := [][2]string{
		{"mode", fmt.Sprintf("%s (seed %d, real clock)", *mode, *seed)},
		{"runpod-api-url", c.RunPodURL}, {"runpod-api-key", cloud.RunPodKey},
		{"github-api-url", c.GitHubURL}, {"github-token", cloud.GitHubToken}, {"repository", cloud.Repository},
		{"registry-api-url", c.RegistryURL}, {"proof-url", c.ProofURL}, {"proof-sha256", c.ProofSHA256},
	}
	if c.Processes != nil {
		lines = append(lines, [2]string{"runner-dir", c.Processes.RunnerDir()})
	}
	for _, l := range lines {
		fmt.Fprintf(stdout, "%-17s %s\n", l[0]+":", l[1])
	}
	fmt.Fprintln(stdout, "simcloud: serving; interrupt (Ctrl-C) to stop")
	<-ctx.Done()
	return nil
}
