package actionkit

import (
	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/config"
)

// Set by the release build (-ldflags -X), each name@sha256:… of an image the
// release pushed; empty in a development build.
var (
	// defaultCUDARunnerImage is the optional CUDA runner image (the
	// Dockerfile's target runner-cuda).
	defaultCUDARunnerImage string
	// defaultPodImage is the default pod image (target runner): the official
	// runner image plus the proof, so a default pod downloads nothing in the
	// paid window.
	defaultPodImage string
)

// RunnerImageCUDA is the runner-image value that selects the suite's CUDA
// runner image.
const RunnerImageCUDA = "cuda"

// ReleaseImages are the pod images a release build carries (name@sha256:…);
// empty in a development build.
type ReleaseImages struct {
	// Pod replaces the configuration's default image (config.DefaultImage).
	Pod string
	// CUDA is what runner-image: cuda selects.
	CUDA string
}

// RunnerImageInput is the lane's one input for the image pods start from.
// authorize (whose lane digest names the image) and provision (which starts
// the pods) both take it, so a gate is reused only for the image it tested.
type RunnerImageInput struct {
	RunnerImage string `input:"runner-image" default:"" desc:"The image pods start from: empty keeps the configuration's image (by default the suite's pod image of this release: the official runner image with the proof inside, pinned by digest); cuda takes the suite's CUDA runner image of this release (the CUDA runtime, the runner and the proof inside), pinned by digest. Give authorize and provision the same value."`
}

// Apply sets cfg.Image from the runner-image input and this build's release
// images (ApplyRunnerImage).
func (in RunnerImageInput) Apply(cfg *config.Config) error {
	return ApplyRunnerImage(in.RunnerImage, ReleaseImages{Pod: defaultPodImage, CUDA: defaultCUDARunnerImage}, cfg)
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

// ApplyRunnerImage sets cfg.Image from a runner-image value: empty keeps the
// configuration's image, except that the configuration's default (no image
// key) becomes the release's pod image when the build carries one; cuda
// takes the release's CUDA runner image; anything else is refused.
func ApplyRunnerImage(value string, release ReleaseImages, cfg *config.Config) error {
	switch value {
	case "":
		if cfg.Image == config.DefaultImage && release.Pod != "" {
			cfg.Image = release.Pod
		}
		return nil
	case RunnerImageCUDA:
		if release.CUDA == "" {
			return &actionio.InputError{Input: "runner-image", Value: value,
				Expected: "a release build of the suite: this build carries no CUDA runner image (only a release pushes one and names its digest); use the configuration's image key instead"}
		}
		cfg.Image = release.CUDA
		return nil
	}
	return &actionio.InputError{Input: "runner-image", Value: value,
		Expected: `empty (the configuration's image) or "cuda" (the suite's CUDA runner image); a custom image is the configuration's image key`}
}
