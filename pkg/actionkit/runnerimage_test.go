package actionkit

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
)

func TestApplyRunnerImage(t *testing.T) {
	const (
		cuda   = "ghcr.io/org/runpod-gpu-runner-cuda@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		pod    = "ghcr.io/org/runpod-gpu-runner@sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
		ownTag = "ghcr.io/actions/actions-runner:2.336.0"
	)
	released := ReleaseImages{Pod: pod, CUDA: cuda}
	tests := []struct {
		name, value, configImage string
		release                  ReleaseImages
		wantImage                string
		wantErr                  string
	}{
		{name: "a release's default is its pod image, which carries the proof", value: "", release: released, wantImage: pod},
		{name: "a development build keeps the official runner image", value: "", wantImage: config.DefaultImage},
		{name: "an image the configuration names is kept", value: "", configImage: ownTag, release: released, wantImage: ownTag},
		{name: "cuda takes the release's image", value: "cuda", release: released, wantImage: cuda},
		{name: "a development build has no CUDA image", value: "cuda", release: ReleaseImages{Pod: pod}, wantErr: "this build carries no CUDA runner image"},
		{name: "a reference is the configuration's business", value: "nvidia/cuda:12.8.1-runtime-ubuntu24.04", release: released,
			wantErr: `input runner-image = "nvidia/cuda:12.8.1-runtime-ubuntu24.04": want empty (the configuration's image) or "cuda"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{Image: config.DefaultImage}
			if tc.configImage != "" {
				cfg.Image = tc.configImage
			}
			before := cfg.Image
			err := ApplyRunnerImage(tc.value, tc.release, cfg)
			if tc.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tc.wantErr))
				assert.Check(t, is.Equal(cfg.Image, before), "a refused value changes nothing")
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(cfg.Image, tc.wantImage))
		})
	}
}
