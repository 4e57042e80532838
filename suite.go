// Package runpodgpu holds what the suite ships as files beside its code: its
// reusable workflows, which runpod-gpu rehearse plays as the callers' uses: name them.
package runpodgpu

import "embed"

// Workflows are the GPU lane's reusable workflows, .github/workflows/gpu-lane*.yml, at the
// version this program was built from.
//
//go:embed .github/workflows/gpu-lane*.yml
var Workflows embed.FS
