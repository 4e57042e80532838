// Command runpod-gpu-actions is the image's one program for every action:
// its first argument, passed by each action.yml's runs.args, names the
// action to run (see actions.All). One binary carries the runtime, TLS,
// go-github and YAML once instead of once per action.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/runpod-gpu/actions"
	"github.com/org/runpod-gpu/pkg/actionkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := actionkit.RunRole(ctx, os.Args, os.Getenv, os.Stdout, actions.All())
	stop()
	os.Exit(code)
}
