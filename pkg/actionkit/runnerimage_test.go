package actionkit

import (
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
)

func TestApplyRunnerImage(t *testing.T) {
	const released = "ghcr.io/org/runpod-gpu-runner-cuda@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		name, value, cudaImage string
		wantImage              string
		wantErr                string
	}{
		{name: "empty keeps the configuration's", value: "", cudaImage: released, wantImage: config.DefaultImage},
		{name: "cuda takes the release's image", value: "cuda", cudaImage: released, wantImage: released},
		{name: "a development build has none", value: "cuda", wantErr: "this build carries no CUDA runner image"},
		{name: "a reference is the configuration's business", value: "nvidia/cuda:12.8.1-runtime-ubuntu24.04", cudaImage: released,
			wantErr: `input runner-image = "nvidia/cuda:12.8.1-runtime-ubuntu24.04": want empty (the configuration's image) or "cuda"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{Image: config.DefaultImage}
			err := applyRunnerImage(tc.value, tc.cudaImage, cfg)
			if tc.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tc.wantErr))
				assert.Check(t, is.Equal(cfg.Image, config.DefaultImage), "a refused value changes nothing")
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(cfg.Image, tc.wantImage))
		})
	}
}
