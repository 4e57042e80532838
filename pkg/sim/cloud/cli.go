package cloud

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/org/runpod-gpu/pkg/sim/simclock"
)

// RunCLI is the simcloud program (pkg/cmd/simcloud): it starts the cloud in
// the -mode and with the -seed args give, on the real clock, prints how to
// reach it to stdout and serves until ctx ends. -h is flag.ErrHelp.
func RunCLI(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("simcloud", flag.ContinueOnError)
	flags.SetOutput(stdout)
	mode := flags.String("mode", "model", "how pods run: model (decided from host profiles) or process (the real startup script and proof)")
	seed := flags.Uint64("seed", 1, "seed of every random choice (placement, ids, faults)")
	envFile := flags.String("env", "", "also write the `file` of shell exports the developer's command line reads "+
		"(RUNPOD_API_KEY, RUNPOD_API_URL, RUNPOD_JOB_URL, RPG_WORKER_URL, RPG_WORKER_SHA256), once serving")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	opts := Options{Seed: *seed, Clock: simclock.Real{}}
	switch *mode {
	case "model":
	case "process":
		opts.Mode = ModeProcess
	default:
		return fmt.Errorf("-mode %q: want model or process", *mode)
	}
	c, err := Start(opts)
	if err != nil {
		return err
	}
	defer c.Close()

	// Keys are the provision action's input names, so values can be pasted as inputs.
	lines := [][2]string{
		{"mode", fmt.Sprintf("%s (seed %d, real clock)", *mode, *seed)},
		{"runpod-api-url", c.RunPodURL}, {"runpod-api-key", RunPodKey}, {"runpod-job-url", c.JobURL},
		{"worker-url", SimWorkerURL}, {"worker-sha256", SimWorkerSHA256},
		{"github-api-url", c.GitHubURL}, {"github-token", GitHubToken}, {"repository", Repository},
		{"registry-api-url", c.RegistryURL}, {"proof-url", c.ProofURL}, {"proof-sha256", c.ProofSHA256},
	}
	if c.Processes != nil {
		lines = append(lines, [2]string{"runner-dir", c.Processes.RunnerDir()})
	}
	for _, l := range lines {
		fmt.Fprintf(stdout, "%-17s %s\n", l[0]+":", l[1])
	}
	if *envFile != "" {
		if err := writeEnvFile(*envFile, c); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-17s %s\n", "env:", *envFile)
	}
	fmt.Fprintln(stdout, "simcloud: serving; interrupt (Ctrl-C) to stop")
	<-ctx.Done()
	return nil
}

// writeEnvFile writes the exports that point the developer's command line
// (runpod-gpu) at c, atomically: a shell waiting for the file never reads half of it.
func writeEnvFile(path string, c *Cloud) error {
	var b strings.Builder
	for _, kv := range [][2]string{{"RUNPOD_API_KEY", RunPodKey}, {"RUNPOD_API_URL", c.RunPodURL}, {"RUNPOD_JOB_URL", c.JobURL},
		{"RPG_WORKER_URL", SimWorkerURL}, {"RPG_WORKER_SHA256", SimWorkerSHA256}} {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], kv[1])
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
