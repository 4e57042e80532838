package actionkit

import (
	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/config"
)

// Set by the release build (-ldflags -X): name@sha256:… of the CUDA runner
// image the release pushed (the Dockerfile's target runner-cuda). Empty in a
// development build.
var defaultCUDARunnerImage string

// RunnerImageCUDA is the runner-image value that selects the suite's CUDA
// runner image.
const RunnerImageCUDA = "cuda"

// RunnerImageInput is the lane's one input for the image pods start from.
// authorize (whose lane digest names the image) and provision (which starts
// the pods) both take it, so a gate is reused only for the image it tested.
type RunnerImageInput struct {
	RunnerImage string `input:"runner-image" default:"" desc:"The image pods start from: empty keeps the configuration's image (by default the official runner image); cuda takes the suite's CUDA runner image of this release (the CUDA runtime, the runner and the proof inside), pinned by digest. Give authorize and provision the same value."`
}

// Apply sets cfg.Image from the runner-image input: unchanged when it is
// empty, the release's CUDA runner image for cuda; anything else is refused.
func (in RunnerImageInput) Apply(cfg *config.Config) error {
	return applyRunnerImage(in.RunnerImage, defaultCUDARunnerImage, cfg)
}

// LaneConfig loads the configuration at path (Config) with the runner-image
// input applied: the lane's configuration as authorize and provision read it.
func LaneConfig(io *actionio.IO, path string, image RunnerImageInput) (*config.Config, error) {
	cfg, err := Config(io, path)
	if err != nil {
		return nil, err
	}
	if err := image.Apply(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

func applyRunnerImage(value, cudaImage string, cfg *config.Config) error {
	switch value {
	case "":
		return nil
	case RunnerImageCUDA:
		if cudaImage == "" {
			return &actionio.InputError{Input: "runner-image", Value: value,
				Expected: "a release build of the suite: this build carries no CUDA runner image (only a release pushes one and names its digest); use the configuration's image key instead"}
		}
		cfg.Image = cudaImage
		return nil
	}
	return &actionio.InputError{Input: "runner-image", Value: value,
		Expected: `empty (the configuration's image) or "cuda" (the suite's CUDA runner image); a custom image is the configuration's image key`}
}
