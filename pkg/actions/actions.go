// Package actions is the table of every action's run function by role, the
// name of its actions/<role> directory: the image carries one multi-call
// binary (cmd/runpod-gpu-actions) instead of one program per action, and each
// action.yml picks its role through runs.args.
package actions

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions/authorize"
	"github.com/org/runpod-gpu/pkg/actions/cleanup"
	"github.com/org/runpod-gpu/pkg/actions/costhistory"
	"github.com/org/runpod-gpu/pkg/actions/gate"
	"github.com/org/runpod-gpu/pkg/actions/localgate"
	"github.com/org/runpod-gpu/pkg/actions/provision"
	"github.com/org/runpod-gpu/pkg/actions/reap"
	"github.com/org/runpod-gpu/pkg/actions/serverless"
	"github.com/org/runpod-gpu/pkg/actions/watchdog"
)

// Binary is the multi-call binary's path in the image: every action.yml's
// runs.entrypoint.
const Binary = "/runpod-gpu-actions"

// Roles maps each role to the run function its actions/<role>/main.go hands to
// actionkit.Main, so both run the same code. A new action adds its line here.
func Roles() map[string]actionkit.RunFunc {
	return map[string]actionkit.RunFunc{
		"authorize":    authorize.Run,
		"cleanup":      cleanup.Run,
		"cost-history": costhistory.Run,
		"gate":         gate.Run,
		"local-gate":   localgate.Run,
		"provision":    provision.Run,
		"reap":         reap.Run,
		"serverless":   serverless.Run,
		"watchdog":     watchdog.Run,
	}
}
