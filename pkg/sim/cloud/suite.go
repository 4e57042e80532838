package cloud

import (
	"strings"

	"github.com/org/runpod-gpu/pkg/sim/githubsim"
)

// The published suite as the simulated cloud hosts it on request: what
// runpod-gpu doctor reads of the suite a repository's callers pin (the
// release's provision action naming the action image by digest, and the
// release environment whose reviewers guard it), and the image itself in
// the simulated registry, with the default pod image a release pushes beside
// it.
const (
	// SuiteRepository is the published suite, OWNER/runpod-gpu.
	SuiteRepository = Owner + "/runpod-gpu"
	// SuiteRef is the release the callers pin.
	SuiteRef = "v1"
	// SuiteImageRepoTag is the action image's repository and tag in the registry.
	SuiteImageRepoTag = SuiteRepository + ":" + SuiteRef + ".0.0"
	// SuiteReleaseReviewer is the one required reviewer of the suite's release environment.
	SuiteReleaseReviewer = MaintainerBob
)

// SuiteImageDigest is the digest the suite's actions name and the simulated
// registry answers for SuiteImageRepoTag.
var SuiteImageDigest = "sha256:" + strings.Repeat("a7", 32)

// PodImageDigest is the digest of the suite's default pod image, which the
// simulated registry answers for PodImageRepoTag.
var PodImageDigest = "sha256:" + strings.Repeat("b8", 32)

// PodImageRepoTag is the default pod image's repository and the tag the
// release pushes it under (its major tag, which the callers pin).
const PodImageRepoTag = SuiteRepository + "-runner:" + SuiteRef

// PodImage is the suite's default pod image as a release builds it into the
// actions (name@sha256:…): the official runner image plus the proof. In
// process mode its pods carry the cloud's proof at startup.DefaultImageProof
// (seen at ProcessHosts.ImagePath), as the Dockerfile's target runner
// copies it there.
var PodImage = "ghcr.io/" + SuiteRepository + "-runner@" + PodImageDigest

// PublishSuite adds the published suite's repository to the simulated
// GitHub: the provision action of release SuiteRef naming
// ghcr.io/SuiteRepository@SuiteImageDigest, and the environment release
// with SuiteReleaseReviewer as required reviewer. Scenarios that never read
// the suite leave it out, so their ids stay as they were.
func (c *Cloud) PublishSuite() error {
	owner, name, _ := strings.Cut(SuiteRepository, "/")
	if err := c.GitHub.AddRepo(githubsim.Repo{Owner: owner, Name: name}); err != nil {
		return err
	}
	action := "name: RunPod GPU provision\nruns:\n  using: docker\n  image: docker://ghcr.io/" + SuiteRepository + "@" + SuiteImageDigest + "\n"
	if err := c.GitHub.SetFile(SuiteRepository, SuiteRef, "actions/provision/action.yml", action); err != nil {
		return err
	}
	return c.GitHub.SetEnvironment(SuiteRepository, githubsim.Environment{Name: "release", Tags: []string{"v*"},
		Reviewers: []string{SuiteReleaseReviewer}})
}
