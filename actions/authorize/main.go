// Command authorize is the authorize action's program for `go run ./actions/authorize`; the
// image runs the same function as the multi-call binary's role authorize
// (see pkg/actions/authorize for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/authorize"
)

func main() { actionkit.Main(authorize.Run) }
