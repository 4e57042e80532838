package cloud_test

import (
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/registry"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/startup"
)

// TestDefaultPodDownloadsNothingWhileBilling: with the configuration's
// default image, a release build starts pods from its default pod image (the
// official runner image plus the proof, named by digest as the release
// builds it in), and the real startup script on that pod runs the real
// proof and brings its runner online without a single download while the
// pod bills: the proof comes from the image. A development build, whose
// default is the official runner image itself, downloads the proof once;
// every curl and wget call of the pod is counted.
func TestDefaultPodDownloadsNothingWhileBilling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		release       actionkit.ReleaseImages
		wantImage     string
		wantDownloads []string
		wantLog       string
	}{
		{name: "a release: the default pod image carries the proof", release: actionkit.ReleaseImages{Pod: cloud.PodImage},
			wantImage: cloud.PodImage, wantLog: "runpod-gpu: using the CUDA smoke proof the image carries"},
		{name: "a development build: the official runner image downloads it",
			wantImage: cloud.RunnerImage + "@" + cloud.RunnerImageDigest, wantDownloads: []string{"curl -fsS"}, wantLog: "runpod-gpu: fetching the CUDA smoke proof"},
	}
	c := startProcessCloud(t, cloud.Options{Market: market(host("h1", a5000), host("h2", a5000))})
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default() // no image key
			assert.NilError(t, actionkit.ApplyRunnerImage("", tc.release, cfg))
			image, err := (&registry.Resolver{APIURL: c.RegistryURL}).Resolve(context.Background(), cfg.Image)
			assert.NilError(t, err)
			assert.Assert(t, is.Equal(image, tc.wantImage))
			params := c.scriptParams()
			params.ImageProof = c.Processes.ImagePath(image, startup.DefaultImageProof)

			pod := c.createPodFrom(t, "runner-default-"+string(rune('a'+i)), a5000, image, params)
			got := c.settle(t, pod)

			assert.DeepEqual(t, got, outcome{Status: runpod.PodRunning, Runner: "online"})
			log := c.Processes.Log(pod.podID)
			assert.Check(t, is.Contains(log, tc.wantLog))
			assert.Check(t, is.Contains(log, "SMOKE PASS"))
			downloads := c.Processes.Downloads(pod.podID)
			assert.Assert(t, is.Len(downloads, len(tc.wantDownloads)), "the pod's downloads: %q", downloads)
			for j, want := range tc.wantDownloads {
				assert.Check(t, strings.HasPrefix(downloads[j], want), "download %d: %q", j, downloads[j])
				assert.Check(t, is.Contains(downloads[j], c.ProofURL))
			}
		})
	}
}
