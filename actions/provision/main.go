// Command provision is the provision action's program for `go run ./actions/provision`; the
// image runs the same function as the multi-call binary's role provision
// (see pkg/actions/provision for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/provision"
)

func main() { actionkit.Main(provision.Run) }
