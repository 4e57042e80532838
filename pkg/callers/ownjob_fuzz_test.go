package callers

import (
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/config"
)

// FuzzCheckBuildImage: an image the check accepts is written into the build
// job's container: as exactly that reference, never as more YAML.
func FuzzCheckBuildImage(f *testing.F) {
	for _, s := range []string{"nvidia/cuda:12.6.3-devel-ubuntu22.04", "ghcr.io/o/i@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"localhost:5000/x:1", "nvidia/cuda", "a:latest", "x:1 # y", "x:1\nfoo: bar", "{x: 1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, image string) {
		if CheckBuildImage(image) != nil {
			return
		}
		files, err := Render(Options{Suite: "org/runpod-gpu@v1", Workflows: []string{"CI"}, TestCommand: "./gpu-tests/run.sh",
			BuildCommand: "make archive", BuildImage: image, Tiers: []config.GPUTier{{Name: "ada", GPUIDs: []string{"NVIDIA L40S"}}}})
		if err != nil {
			t.Fatalf("Render refused an accepted image %q: %v", image, err)
		}
		var doc struct {
			Jobs map[string]struct {
				Container string `yaml:"container"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal([]byte(files[0].Text), &doc); err != nil {
			t.Fatalf("image %q: the lane is not YAML: %v", image, err)
		}
		if got := doc.Jobs["build"].Container; got != image {
			t.Fatalf("image %q written as container %q", image, got)
		}
	})
}
