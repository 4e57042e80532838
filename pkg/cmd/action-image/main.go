// Command action-image builds the action image from the Dockerfile's final
// stage without a Docker daemon, and verifies a built or pushed image against
// it: see actionimage.Usage.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/pkg/actionimage"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := actionimage.RunCLI(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
