// Command runpod-gpu-actions is the image's one program for every action:
// its first argument, passed by each action.yml's runs.args, names the
// action to run (see pkg/actions.Roles). One binary carries the runtime, TLS,
// go-github and YAML once instead of once per action.
package main

import (
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/actions"
)

func main() { actionkit.MainRoles(actions.Roles()) }
