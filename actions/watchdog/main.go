// Command watchdog is the watchdog action's program for `go run ./actions/watchdog`; the
// image runs the same function as the multi-call binary's role watchdog
// (see pkg/actions/watchdog for what it does).
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/watchdog"
)

func main() { actionkit.Main(watchdog.Run) }
