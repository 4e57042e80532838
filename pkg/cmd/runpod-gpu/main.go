// Command runpod-gpu is the developer's command line for RunPod GPUs: offers,
// up, ls, ssh, down and allowlist. See package devcli for exit codes.
//
//	go install github.com/org/runpod-gpu/pkg/cmd/runpod-gpu@v1
package main

import (
	"context"
	"os"
	"os/signal"
	"os/user"
	"syscall"

	"github.com/org/runpod-gpu/pkg/devcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	home, _ := os.UserHomeDir()
	// $USER first, so a shared account can still say who started a pod.
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && name == "" {
		name = u.Username
	}
	code := devcli.Main(ctx, devcli.Env{
		Args: os.Args[1:], Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Home: home, User: name,
	})
	stop()
	os.Exit(code)
}
