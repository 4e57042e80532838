package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// maxProofBytes is the proof's size target, 3 MB in decimal (the stricter reading): every pod
// downloads it in the paid window before its runner can register.
const maxProofBytes = 3_000_000

// releaseBuild is the proof's build line in the Dockerfile, the one the release publishes;
// the test builds with exactly these flags so the size it checks is the size pods download.
const releaseBuild = `CGO_ENABLED=0 GOOS=linux GOARCH=amd64 \
      go build -C /src -trimpath -buildvcs=false -ldflags "-s -w" -o /out/cuda-smoke ./pkg/cmd/cuda-smoke`

// TestProofStaysSmall builds the proof as the release does (CGO_ENABLED=0,
// -trimpath, -ldflags "-s -w") and checks its size and that no HTTP or TLS
// stack is linked in (NVRTC packages are fetched with curl): net/http and
// crypto/tls were half of the former 6.6 MB. encoding/json was another
// 200 kB; the report is written by hand (pkg/smoke/reportjson.go).
func TestProofStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the proof")
	}
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "..", "Dockerfile"))
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(dockerfile), releaseBuild),
		"the Dockerfile no longer builds the proof as this test does; update releaseBuild and the build below together")
	deps, err := exec.Command("go", "list", "-deps", ".").Output()
	assert.NilError(t, err)
	for _, heavy := range []string{"net/http", "crypto/tls", "crypto/x509", "net", "encoding/json"} {
		for _, dep := range strings.Fields(string(deps)) {
			assert.Check(t, dep != heavy, "the proof imports %s", heavy)
		}
	}
	out := filepath.Join(t.TempDir(), "cuda-smoke")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", out, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	msg, err := build.CombinedOutput()
	assert.NilError(t, err, "%s", msg)
	info, err := os.Stat(out)
	assert.NilError(t, err)
	t.Logf("proof: %d bytes", info.Size())
	assert.Check(t, info.Size() <= maxProofBytes, "the proof is %d bytes; want at most %d", info.Size(), maxProofBytes)
}
