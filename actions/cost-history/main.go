// Command cost-history is the cost-history action's program for `go run ./actions/cost-history`; the
// image runs the same function as the multi-call binary's role cost-history
// (see pkg/actions/costhistory for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/costhistory"
)

func main() { actionkit.Main(costhistory.Run) }
