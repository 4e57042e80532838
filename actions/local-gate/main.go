// Command local-gate is the local-gate action's program for `go run ./actions/local-gate`; the
// image runs the same function as the multi-call binary's role local-gate
// (see pkg/actions/localgate for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/localgate"
)

func main() { actionkit.Main(localgate.Run) }
