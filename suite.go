// Package runpodgpu holds what the suite ships as files beside its code: its
// reusable workflows, which runpod-gpu rehearse plays as the callers' uses: name them.
package runpodgpu

// The re-run jobs of gpu-lane.yml and the jobs of its four own-job parts are
// written from gpu-lane.yml's first jobs (pkg/lanegen).
//
//go:generate go run ./pkg/cmd/lanegen -dir .github/workflows

import "embed"

// Workflows are the GPU lane's reusable workflows, .github/workflows/gpu-lane*.yml, at the
// version this program was built from.
//
//go:embed .github/workflows/gpu-lane*.yml
var Workflows embed.FS
