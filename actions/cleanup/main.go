// Command cleanup is the cleanup action's program for `go run ./actions/cleanup`; the
// image runs the same function as the multi-call binary's role cleanup
// (see pkg/actions/cleanup for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/cleanup"
)

func main() { actionkit.Main(cleanup.Run) }
