// Package actions is the table of the suite's actions by role, the name of
// each one's actions/<role> directory. The image carries one multi-call
// program (pkg/cmd/runpod-gpu-actions) instead of one program per action, and
// each action.yml picks its role through runs.args.
//
// Each actions/<role>/ is one action's whole room: its action.yml, its
// README.md, and the Go package that declares its inputs (one struct) and
// outputs, reads them, calls pkg/ for the work and writes the outputs and
// job summary. The packages are named <role>action so that none shares a
// name with the pkg/ package doing its work (provisionaction → pkg/provision).
package actions

import (
	authorizeaction "github.com/org/runpod-gpu/actions/authorize"
	cleanupaction "github.com/org/runpod-gpu/actions/cleanup"
	costhistoryaction "github.com/org/runpod-gpu/actions/cost-history"
	gateaction "github.com/org/runpod-gpu/actions/gate"
	localgateaction "github.com/org/runpod-gpu/actions/local-gate"
	provisionaction "github.com/org/runpod-gpu/actions/provision"
	reapaction "github.com/org/runpod-gpu/actions/reap"
	serverlessaction "github.com/org/runpod-gpu/actions/serverless"
	watchdogaction "github.com/org/runpod-gpu/actions/watchdog"
	"github.com/org/runpod-gpu/pkg/actionkit"
)

// All maps each role to its action. A new action adds its line here and its
// room under actions/.
func All() map[string]actionkit.Action {
	return map[string]actionkit.Action{
		"authorize":    authorizeaction.Action,
		"cleanup":      cleanupaction.Action,
		"cost-history": costhistoryaction.Action,
		"gate":         gateaction.Action,
		"local-gate":   localgateaction.Action,
		"provision":    provisionaction.Action,
		"reap":         reapaction.Action,
		"serverless":   serverlessaction.Action,
		"watchdog":     watchdogaction.Action,
	}
}
