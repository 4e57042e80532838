// Command reap is the reap action's program for `go run ./actions/reap`; the
// image runs the same function as the multi-call binary's role reap
// (see pkg/actions/reap for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/reap"
)

func main() { actionkit.Main(reap.Run) }
