// Command gate is the gate action's program for `go run ./actions/gate`; the
// image runs the same function as the multi-call binary's role gate
// (see pkg/actions/gate for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/gate"
)

func main() { actionkit.Main(gate.Run) }
