// Command serverless is the serverless action's program for `go run ./actions/serverless`; the
// image runs the same function as the multi-call binary's role serverless
// (see pkg/actions/serverless for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/serverless"
)

func main() { actionkit.Main(serverless.Run) }
