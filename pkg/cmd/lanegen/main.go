// Command lanegen writes the lane's YAML that repeats gpu-lane.yml's jobs:
// its host-fault re-run jobs and the jobs of the four own-job parts; see
// package lanegen. `go generate ./...` runs it from the repository root:
//
//	go run ./pkg/cmd/lanegen [-dir .github/workflows]
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"

	"github.com/org/runpod-gpu/pkg/cmdline"
	"github.com/org/runpod-gpu/pkg/lanegen"
)

func main() {
	dir := flag.String("dir", ".github/workflows", "the workflows directory holding gpu-lane.yml and its parts")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := lanegen.WriteDir(ctx, *dir)
	stop()
	os.Exit(cmdline.ExitCode("lanegen", err, os.Stderr))
}
